// symdiff ui: the live timeline. Plain JavaScript, no build step, nothing from the network.
//
// The server sends the view's records over one EventSource (server-sent events): the
// window's backlog first, then each record as it is recorded. The page keeps them in one
// array sorted oldest to newest and shows it newest first in a virtual list: only the rows
// on screen (and a few beyond) exist in the DOM, so 10,000 records or a 5,000-file burst
// cost one render of ~40 rows per animation frame.
"use strict";

(() => {
  const ROW_H = 30;          // must match --row in ui.css
  const OVERSCAN = 8;        // rows rendered above and below the visible ones
  const KEEP = 50000;        // records kept in the page; the oldest are dropped beyond
  const SYMS_SHOWN = 6;      // symbol chips in one row; the rest is "+N"
  const HEAT_CELLS = 80;     // files in the heat strip
  const ORIGINS = ["agent", "edit", "git", "watch", "scan", "commit"];

  const $ = (id) => document.getElementById(id);
  const els = {
    list: $("list"), spacer: $("spacer"), rows: $("rows"), empty: $("empty"),
    conn: $("conn"), counts: $("counts"), root: $("root"), watched: $("watched"),
    scope: $("f-scope"), origin: $("f-origin"), path: $("f-path"), since: $("f-since"),
    group: $("f-group"), session: $("f-session"), turn: $("f-turn"), turns: $("turns"),
    problem: $("problem"), heat: $("heat"), heatLabel: $("heat-label"),
    title: $("d-title"), meta: $("d-meta"), history: $("d-history"), diff: $("d-diff"),
    close: $("d-close"),
  };

  const state = {
    records: [],             // oldest first (by timestamp, then version)
    heat: new Map(),         // path -> changes in view
    dropped: 0,
    source: null,
    selected: null,          // version of the selected record
    dirty: false,
    heatDirty: false,
    sessions: [],            // the workspace's agent sessions, with their turns
  };
  // What tests and the benchmark read: how much arrived, and what rendering cost.
  const stats = { received: 0, renders: 0, lastRenderMs: 0, maxRenderMs: 0, lastBatchMs: 0 };
  window.symdiffUi = { state, stats, rowHtml: (r, i) => rowHtml(r, i) };

  // ---- text helpers ---------------------------------------------------------------------

  const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);

  // Formatters made once: toLocale*String builds a new one on every call (milliseconds each).
  const HMS = new Intl.DateTimeFormat([], { hour: "2-digit", minute: "2-digit",
    second: "2-digit", hour12: false });
  const DAY = new Intl.DateTimeFormat([], { month: "short", day: "numeric" });
  const NUM = new Intl.NumberFormat();
  const times = new Map();  // timestamp -> its text in the list (the same for many rows)

  function localTime(ts) {
    const today = new Date().toDateString();
    const key = today + ts;
    let text = times.get(key);
    if (text === undefined) {
      const d = new Date(ts);
      const hms = HMS.format(d);
      text = d.toDateString() === today ? hms : DAY.format(d) + " " + hms.slice(0, 5);
      if (times.size > 100000) times.clear();
      times.set(key, text);
    }
    return text;
  }

  function who(r) {
    const info = r.origin_info || {};
    if (r.origin === "git" && info.operation) return "git " + info.operation;
    if (r.origin === "agent") {
      return `agent ${info.agent || ""} t${info.turn ?? "?"} ${info.tool || ""}`.replace(/\s+/g, " ");
    }
    if (r.origin === "edit") {
      const c = info.client;
      const name = c && typeof c === "object" ? c.name : c;
      return name ? "edit by " + name : "edit";
    }
    return r.origin;
  }

  const pathOf = (r) => (r.old_path ? r.old_path + " → " + r.path : r.path);
  const CT = { add: "added", modify: "modified", delete: "deleted", rename: "renamed" };

  // ---- filters (kept in the URL's #fragment, so a reload keeps them) -------------------

  function readView() {
    const origins = [...els.origin.querySelectorAll("input")].filter((i) => i.checked)
      .map((i) => i.value);
    const group = els.group.value;
    return {
      scope: els.scope.value,
      since: els.since.value,
      origin: group ? [group] : origins.length === ORIGINS.length ? [] : origins,
      path: els.path.value.split(/\s+/).filter(Boolean),
      session: els.session.value,
      turn: els.session.value ? els.turn.value : "",
    };
  }

  function writeView(v) {
    els.scope.value = v.scope || "all";
    const since = v.since || "24h";
    if (![...els.since.options].some((o) => o.value === since)) {
      els.since.add(new Option(since, since));  // a window a link asks for (e.g. 90m)
    }
    els.since.value = since;
    const group = (v.origin || []).length === 1 && GROUPS.includes(v.origin[0]) ? v.origin[0] : "";
    els.group.value = group;
    const on = new Set(!group && v.origin && v.origin.length ? v.origin : ORIGINS);
    for (const i of els.origin.querySelectorAll("input")) {
      i.checked = on.has(i.value);
      i.disabled = !!group;
    }
    els.path.value = (v.path || []).join(" ");
    chooseSession(v.session || "", v.turn || "");
  }

  function viewFromHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    return {
      scope: h.get("scope") || "all", since: h.get("since") || "24h",
      origin: h.getAll("origin"),
      path: h.getAll("path"),
      session: h.get("session") || "", turn: h.get("turn") || "",
    };
  }

  function viewToQuery(v) {
    const q = new URLSearchParams({ scope: v.scope, since: v.since });
    for (const o of v.origin) q.append("origin", o);
    for (const p of v.path) q.append("path", p);
    if (v.session) q.set("session", v.session);
    if (v.session && v.turn) q.set("turn", v.turn);
    return q;
  }

  // ---- agent sessions: a session and turn narrow the list to what that agent did ---------

  const GROUPS = ["person", "agent"];

  async function loadSessions() {
    try {
      // Not getJson: a click's read must not drop this one (nor this one a click's).
      const response = await fetch("/api/sessions", { credentials: "same-origin" });
      if (!response.ok) return;
      state.sessions = (await response.json()).sessions;
    } catch (err) {
      return;  // no sessions shown; the list still works
    }
    const chosen = els.session.value, turn = els.turn.value;
    els.session.replaceChildren(new Option("every session", ""));
    for (const s of [...state.sessions].reverse()) {
      const label = `${s.agent} ${s.session.slice(0, 12)}${s.model ? " · " + s.model : ""}` +
        ` · ${s.turns.length} turn${s.turns.length === 1 ? "" : "s"}`;
      els.session.add(new Option(label, s.session));
    }
    chooseSession(chosen, turn);
  }

  function chooseSession(session, turn) {
    if (session && ![...els.session.options].some((o) => o.value === session)) {
      els.session.add(new Option(session, session));  // a link to a session not listed yet
    }
    els.session.value = session;
    const s = state.sessions.find((x) => x.session === session);
    els.turn.replaceChildren(new Option("every turn", ""));
    for (const t of s ? s.turns : []) els.turn.add(new Option("turn " + t.turn, String(t.turn)));
    if (turn && ![...els.turn.options].some((o) => o.value === turn)) {
      els.turn.add(new Option("turn " + turn, turn));
    }
    els.turn.value = session ? turn : "";
    els.turn.disabled = !session;
    showTurns(s);
  }

  function showTurns(s) {
    els.turns.hidden = !s;
    if (!s) return els.turns.replaceChildren();
    const chosen = els.turn.value;
    els.turns.innerHTML = `<span class="session">${esc(s.agent)} session ${esc(s.session)}` +
      `${s.model ? " · " + esc(s.model) : ""} · ${esc(localTime(s.started))} → ` +
      `${s.ended ? esc(localTime(s.ended)) : "open"}</span>` +
      s.turns.map((t) => {
        const by = Object.entries(t.by_origin).map(([k, n]) => `${k} ${n}`).join(", ") || "no changes";
        return `<button type="button" class="turn" data-turn="${t.turn}" ` +
          `aria-pressed="${String(chosen === String(t.turn))}" title="${esc(t.started)} → ` +
          `${esc(t.ended || "open")}">turn ${t.turn} · ${t.files} files · ${t.symbols} symbols` +
          ` · ${esc(by)}</button><button type="button" class="undo" data-turn="${t.turn}" ` +
          `title="what undoing this turn would write (a dry run; the page writes nothing)">` +
          `undo preview</button>`;
      }).join("");
  }

  // The undo's dry run (docs/agents.md): the patch from the files now to after the undo, a
  // symbol-level summary, and the conflicts. The page only shows it: `symdiff undo --apply`
  // (or the MCP tool undo_turn) writes.
  async function openUndo(session, turn) {
    state.selected = null;
    schedule(false);
    els.close.hidden = false;
    els.title.textContent = `Undo preview: session ${session} turn ${turn}`;
    els.meta.textContent = "";
    els.history.textContent = "";
    els.diff.innerHTML = `<span class="note">loading…</span>`;
    document.body.dataset.detail = "undo";
    try {
      const body = await getJson("/api/undo?" + new URLSearchParams({ session, turn }));
      if (!body) return;
      const files = body.files.map((f) => `<li><span class="ct">${esc(f.change_type)}</span> ` +
        `${esc(f.path)} <span class="n">+${f.lines_added} −${f.lines_removed}</span> ` +
        f.symbols.map((x) => `<span class="sym ${esc(x.change_type)}">${esc(x.name)}</span>`)
          .join(" ") + "</li>").join("");
      const conflicts = body.conflicts.map((c) => `<li class="conflict">conflict in ` +
        `${esc(c.path)}: ${esc(c.reason)}</li>`).join("");
      els.meta.innerHTML = `<div class="undo-note">${body.records.length} records of the turn; ` +
        `${body.conflicts.length ? "conflicts: nothing would be written" : "no conflict"}. ` +
        `Apply with <code>symdiff undo --session ${esc(session)} --turn ${esc(turn)} --apply` +
        `</code>.</div><ul class="undo-files">${conflicts}${files}</ul>`;
      showDiff(body.patch, null, "nothing to undo");
    } catch (err) { detailError(err); }
  }

  // ---- the stream ------------------------------------------------------------------------

  function setConn(s, text) {
    els.conn.dataset.state = s;
    els.conn.textContent = text || s;
    document.body.dataset.conn = s;
  }

  function clear() {
    forgetRows();
    state.records = [];
    state.heat = new Map();
    state.dropped = 0;
    stats.received = 0;
    els.list.scrollTop = 0;
    schedule(true);
  }

  function connect() {
    const v = readView();
    const q = viewToQuery(v);
    history.replaceState(null, "", location.pathname + "#" + q.toString());
    if (state.source) state.source.close();
    els.problem.textContent = "";
    clear();
    setConn("connecting");
    if (!v.origin.length && [...els.origin.querySelectorAll("input")].every((i) => !i.checked)) {
      setConn("stopped", "no origin chosen");
      return;
    }
    const source = new EventSource("/api/events?" + q.toString());
    state.source = source;
    source.addEventListener("hello", (e) => {
      const d = JSON.parse(e.data);
      if (!d.resumed) clear();
      els.root.textContent = d.root;
      els.root.title = "records since " + new Date(d.start).toLocaleString();
      showWatched(d.watched);
      setConn(d.resumed ? "live" : "loading", d.resumed ? "live" : "loading");
    });
    source.addEventListener("records", (e) => add(JSON.parse(e.data).records));
    source.addEventListener("live", () => setConn("live"));
    source.addEventListener("status", (e) => showWatched(JSON.parse(e.data).watched));
    source.addEventListener("trouble", (e) => setConn("reconnecting", JSON.parse(e.data).message));
    source.addEventListener("problem", (e) => {
      els.problem.textContent = JSON.parse(e.data).message;
      source.close();
      setConn("stopped", "filter refused");
    });
    source.onerror = () => {
      if (source.readyState !== EventSource.CLOSED) setConn("reconnecting", "reconnecting");
    };
  }

  function showWatched(on) {
    els.watched.dataset.on = on ? "1" : "0";
    els.watched.textContent = on ? "daemon watching" : "no daemon: run symdiff watch";
  }

  const newer = (a, b) => a.timestamp > b.timestamp
    || (a.timestamp === b.timestamp && a.version > b.version);

  function add(batch) {
    const t0 = performance.now();
    const recs = state.records;
    const before = recs.length;
    let sorted = true;
    for (const r of batch) {
      if (recs.length && !newer(r, recs[recs.length - 1])) sorted = false;
      recs.push(r);
      state.heat.set(r.path, (state.heat.get(r.path) || 0) + 1);
    }
    if (!sorted) recs.sort((a, b) => (newer(a, b) ? 1 : newer(b, a) ? -1 : 0));
    if (recs.length > KEEP) {
      const gone = recs.splice(0, recs.length - KEEP);
      for (const r of gone) {
        const n = state.heat.get(r.path) - 1;
        if (n > 0) state.heat.set(r.path, n); else state.heat.delete(r.path);
      }
      state.dropped += gone.length;
    }
    stats.received += batch.length;
    // A reader scrolled down into older records keeps them where they are.
    if (els.list.scrollTop > 0) els.list.scrollTop += (recs.length - before) * ROW_H;
    stats.lastBatchMs = performance.now() - t0;
    schedule(true);
  }

  // ---- rendering -------------------------------------------------------------------------

  let frame = 0;
  function schedule(heat) {
    state.dirty = true;
    if (heat) state.heatDirty = true;
    if (!frame) frame = requestAnimationFrame(render);
  }

  function symChips(r, limit) {
    const syms = r.symbols || [];
    let html = "";
    for (let i = 0; i < syms.length && i < limit; i++) {
      const s = syms[i];
      const label = s.renamed_from ? s.renamed_from + " → " + s.name : s.name;
      html += `<span class="sym ${esc(s.change_type)}" data-sym="${i}" title="${esc(s.kind)} ` +
        `${esc(s.name)}: ${esc(s.change_type.replace("_", " "))} (lines ${s.start_line}-` +
        `${s.end_line})">${esc(label)}</span>`;
    }
    if (syms.length > limit) html += `<span class="more">+${syms.length - limit}</span>`;
    return html;
  }

  function rowHtml(r, i) {
    const sel = r.version === state.selected ? " selected" : "";
    return `<div class="row${sel}" data-i="${i}" data-version="${r.version}">` +
      `<span class="t" title="${esc(r.timestamp)}">${esc(localTime(r.timestamp))}</span>` +
      `<span class="who o-${esc(r.origin)}"><span class="badge">${esc(who(r))}</span></span>` +
      `<span class="ct ct-${esc(r.change_type)}">${esc(CT[r.change_type] || r.change_type)}</span>` +
      `<span class="p" title="${esc(pathOf(r))}"><bdi>${esc(pathOf(r))}</bdi></span>` +
      `<span class="n"><span class="add">+${r.lines_added}</span> ` +
      `<span class="del">−${r.lines_removed}</span></span>` +
      `<span class="syms">${symChips(r, SYMS_SHOWN)}</span></div>`;
  }

  function byVersion(version) {
    for (let i = state.records.length - 1; i >= 0; i--) {
      if (state.records[i].version === version) return state.records[i];
    }
    return null;
  }

  // The record shown at display index i (0: the newest).
  const at = (i) => state.records[state.records.length - 1 - i];

  // The rows in the DOM, by record version. A row that stays on screen is kept and only moved
  // (its transform), so a record arriving at the top or a scroll by a few rows builds only the
  // rows that come into view; the rows stay in display order in the DOM.
  let onScreen = new Map();
  const template = document.createElement("template");

  function placeRows(first, last) {
    const next = new Map();
    const fresh = [];
    let html = "";
    for (let i = first; i < last; i++) {
      const r = at(i);
      const el = onScreen.get(r.version);
      if (el && el.classList.contains("selected") === (r.version === state.selected)) {
        onScreen.delete(r.version);
        next.set(r.version, el);
        if (el.dataset.i !== String(i)) move(el, i);
      } else {
        fresh.push(i);
        html += rowHtml(r, i);
      }
    }
    for (const el of onScreen.values()) el.remove();  // off screen, or to be rebuilt
    if (fresh.length && !next.size) {  // a jump: every row is new, in order
      template.innerHTML = html;
      const made = [...template.content.children];
      made.forEach((el, k) => {
        move(el, fresh[k]);
        next.set(at(fresh[k]).version, el);
      });
      els.rows.append(template.content);
    } else if (fresh.length) {
      template.innerHTML = html;
      const made = [...template.content.children];
      // Insert from the bottom up, each before the row shown below it.
      for (let k = made.length - 1; k >= 0; k--) {
        const i = fresh[k];
        const r = at(i);
        move(made[k], i);
        const below = i + 1 < last ? next.get(at(i + 1).version) : null;
        els.rows.insertBefore(made[k], below || null);
        next.set(r.version, made[k]);
      }
    }
    onScreen = next;
  }

  function move(el, i) {
    el.dataset.i = String(i);
    el.style.top = `${i * ROW_H}px`;
  }

  function forgetRows() {
    onScreen = new Map();
    els.rows.textContent = "";
  }

  function render() {
    frame = 0;
    if (!state.dirty) return;
    state.dirty = false;
    const t0 = performance.now();
    const n = state.records.length;
    // Read the layout before writing to it: a read after a write forces a layout of its own.
    const top = els.list.scrollTop;
    const height = els.list.clientHeight || 600;
    els.spacer.style.height = n * ROW_H + "px";
    const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    const last = Math.min(n, Math.ceil((top + height) / ROW_H) + OVERSCAN);
    placeRows(first, last);
    els.empty.hidden = n > 0;
    const dropped = state.dropped ? ` (${NUM.format(state.dropped)} older dropped)` : "";
    els.counts.textContent = `${NUM.format(n)} changes · ${NUM.format(state.heat.size)}` +
      ` files${dropped}`;
    document.body.dataset.count = String(n);
    if (state.heatDirty) renderHeat();
    const ms = performance.now() - t0;
    stats.renders++;
    stats.lastRenderMs = ms;
    stats.maxRenderMs = Math.max(stats.maxRenderMs, ms);
  }

  function renderHeat() {
    state.heatDirty = false;
    const files = [...state.heat.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const top = files.slice(0, HEAT_CELLS);
    const max = top.length ? top[0][1] : 1;
    let html = "";
    for (const [path, count] of top) {
      // Heat on a log scale: one change is pale, the busiest file deep red (once it changed
      // eight times or more: a few single changes are not a hot spot).
      const x = Math.log(1 + count) / Math.log(1 + Math.max(max, 8));
      const light = Math.round(92 - x * 50);
      html += `<span class="cell" data-path="${esc(path)}" title="${esc(path)}: ${count} ` +
        `change${count === 1 ? "" : "s"}" data-hsl="${light}"></span>`;
    }
    els.heat.innerHTML = html;
    for (const cell of els.heat.children) {
      cell.style.background = `hsl(12, 85%, ${cell.dataset.hsl}%)`;
    }
    const more = files.length > HEAT_CELLS ? `, top ${HEAT_CELLS}` : "";
    els.heatLabel.textContent = `${NUM.format(files.length)} files${more}`;
  }

  // ---- the detail panel: a record's diff, a symbol's diff and history ------------------

  const KEYWORDS = {
    python: "and as assert async await break class continue def del elif else except False " +
      "finally for from global if import in is lambda None nonlocal not or pass raise return " +
      "self True try while with yield match case",
    go: "break case chan const continue default defer else fallthrough for func go goto if " +
      "import interface map package range return select struct switch type var nil true false",
    rust: "as async await break const continue crate dyn else enum extern false fn for if impl " +
      "in let loop match mod move mut pub ref return self Self static struct super trait true " +
      "type unsafe use where while",
    c: "auto break case char const continue default do double else enum extern float for goto " +
      "if inline int long register return short signed sizeof static struct switch typedef " +
      "union unsigned void volatile while class namespace template typename public private " +
      "protected virtual override new delete this true false nullptr bool",
    java: "abstract boolean break byte case catch char class const continue default do double " +
      "else enum extends final finally float for if implements import instanceof int " +
      "interface long native new package private protected public return short static super " +
      "switch synchronized this throw throws try void volatile while true false null var " +
      "record fun val when object override internal data",
    js: "async await break case catch class const continue debugger default delete do else " +
      "export extends false finally for from function if import in instanceof interface let " +
      "new null of return static super switch this throw true try type typeof undefined var " +
      "void while yield enum implements private public readonly",
    ruby: "alias and begin break case class def defined do else elsif end ensure false for if " +
      "in module next nil not or redo rescue retry return self super then true undef unless " +
      "until when while yield",
  };
  const FAMILY = {
    python: "python", go: "go", rust: "rust", c: "c", cpp: "c", c_sharp: "java", csharp: "java",
    java: "java", kotlin: "java", scala: "java", swift: "java", javascript: "js",
    typescript: "js", tsx: "js", jsx: "js", ruby: "ruby", php: "js",
  };
  const HASH_COMMENTS = new Set(["python", "ruby"]);
  const keywordSets = {};
  function keywords(language) {
    const family = FAMILY[language] || "js";
    if (!keywordSets[family]) keywordSets[family] = new Set(KEYWORDS[family].split(" "));
    return keywordSets[family];
  }

  const TOKEN_HASH = /(#.*$)|("(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?)|(\b\d[\d_]*(?:\.\d+)?\b)|([A-Za-z_]\w*)/g;
  const TOKEN_SLASH = /(\/\/.*$|\/\*.*?(?:\*\/|$))|("(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|`(?:[^`\\]|\\.)*`?)|(\b\d[\d_]*(?:\.\d+)?\b)|([A-Za-z_]\w*)/g;

  function highlightCode(code, language) {
    if (!language) return esc(code);
    const re = HASH_COMMENTS.has(language) ? TOKEN_HASH : TOKEN_SLASH;
    const kw = keywords(language);
    re.lastIndex = 0;
    let out = "";
    let last = 0;
    let m;
    while ((m = re.exec(code)) !== null) {
      if (m[0] === "") { re.lastIndex++; continue; }
      out += esc(code.slice(last, m.index));
      const text = esc(m[0]);
      if (m[1]) out += `<span class="c">${text}</span>`;
      else if (m[2]) out += `<span class="s">${text}</span>`;
      else if (m[3]) out += `<span class="num">${text}</span>`;
      else if (kw.has(m[4])) out += `<span class="k">${text}</span>`;
      else out += text;
      last = re.lastIndex;
    }
    return out + esc(code.slice(last));
  }

  function highlightDiff(text, language) {
    const lines = text.split("\n");
    if (lines.length && lines[lines.length - 1] === "") lines.pop();
    let html = "";
    for (const line of lines) {
      const c = line[0];
      if (line.startsWith("@@")) html += `<span class="l h">${esc(line)}</span>`;
      else if (/^(diff |index |--- |\+\+\+ |new file|deleted file|similarity|rename |old mode|new mode|Binary )/.test(line)) {
        html += `<span class="l m">${esc(line)}</span>`;
      } else if (c === "+" || c === "-" || c === " ") {
        const cls = c === "+" ? " a" : c === "-" ? " d" : "";
        html += `<span class="l${cls}">${esc(c)}${highlightCode(line.slice(1), language)}</span>`;
      } else html += `<span class="l m">${esc(line)}</span>`;
    }
    return html;
  }

  function showDiff(text, language, note) {
    if (text) els.diff.innerHTML = highlightDiff(text, language);
    else els.diff.innerHTML = `<span class="note">${esc(note || "no text to show")}</span>`;
    els.diff.scrollTop = 0;
  }

  let asked = 0;  // answers to older clicks are dropped
  async function getJson(url) {
    const ticket = ++asked;
    const response = await fetch(url, { credentials: "same-origin" });
    const body = await response.json();
    if (ticket !== asked) return null;
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }

  function detailError(err) {
    els.meta.textContent = "";
    els.history.textContent = "";
    els.diff.innerHTML = `<span class="note">${esc(err.message)}</span>`;
  }

  function metaHtml(r) {
    return `<span>${esc(new Date(r.timestamp).toLocaleString())}</span>` +
      `<span class="badge o-${esc(r.origin)}">${esc(who(r))}</span>` +
      `<span>${esc(CT[r.change_type] || r.change_type)}</span>` +
      `<span><span class="add">+${r.lines_added}</span> <span class="del">−${r.lines_removed}` +
      `</span></span><span>${esc(r.scope)}</span>` +
      (r.language ? `<span>${esc(r.language)}</span>` : "") +
      (r.git && r.git.branch ? `<span>on ${esc(r.git.branch)}</span>` : "");
  }

  async function openRecord(r) {
    state.selected = r.version;
    schedule(false);
    els.close.hidden = false;
    els.title.textContent = pathOf(r);
    els.meta.innerHTML = metaHtml(r) + (r.symbols.length
      ? `<div class="syms-list">${symChips(r, r.symbols.length)}</div>` : "");
    els.meta.dataset.version = r.version;
    els.history.textContent = "";
    els.diff.innerHTML = `<span class="note">loading…</span>`;
    document.body.dataset.detail = "record";
    const q = new URLSearchParams({ version: r.version, path: r.path, timestamp: r.timestamp });
    try {
      const body = await getJson("/api/change?" + q.toString());
      if (!body) return;
      showDiff(body.patch, r.language, r.change_type === "rename" && !body.patch
        ? "renamed, content unchanged" : "no text to show (binary, or kept by hash only)");
      if (body.truncated) els.diff.insertAdjacentHTML("beforeend",
        `<span class="note">… cut at 1 MiB</span>`);
    } catch (err) { detailError(err); }
  }

  async function openSymbol(r, s, version) {
    state.selected = r.version;
    schedule(false);
    els.close.hidden = false;
    els.title.textContent = `${s.name} (${s.kind}) in ${r.path}`;
    els.meta.innerHTML = `<span class="sym ${esc(s.change_type)}">` +
      `${esc(s.change_type.replace("_", " "))}</span>` + metaHtml(r);
    els.history.textContent = "";
    els.diff.innerHTML = `<span class="note">loading…</span>`;
    document.body.dataset.detail = "symbol";
    const q = new URLSearchParams({ name: s.name, path: r.path, version: version || r.version });
    try {
      const body = await getJson("/api/symbol?" + q.toString());
      if (!body) return;
      showHistory(body, r, s);
      showDiff(body.diff, r.language, body.note);
    } catch (err) { detailError(err); }
  }

  function showHistory(body, r, s) {
    const h = body.history;
    if (h.status !== "found") {
      const why = h.status === "ambiguous"
        ? `${h.candidates.length} definitions have this name here`
        : "no recorded version" + (h.suggestions.length ? "; did you mean " +
          h.suggestions.join(", ") + "?" : "");
      els.history.innerHTML = `<p class="note">${esc(why)}</p>`;
      return;
    }
    let rows = "";
    for (const v of h.versions) {
      const sel = v.version === body.version ? " selected" : "";
      rows += `<tr class="${sel.trim()}" data-version="${v.version}">` +
        `<td>${esc(localTime(v.timestamp))}</td>` +
        `<td><span class="sym ${esc(v.change_type)}">${esc(v.change_type.replace("_", " "))}` +
        `</span></td><td><span class="badge o-${esc(v.origin)}">${esc(who(v))}</span></td>` +
        `<td>${esc(v.path)}:${v.start_line}-${v.end_line}</td></tr>`;
    }
    const more = h.more ? "<p class=\"note\">older versions not shown</p>" : "";
    els.history.innerHTML = `<table><tbody>${rows}</tbody></table>${more}`;
    for (const tr of els.history.querySelectorAll("tr")) {
      tr.addEventListener("click", () => {
        const v = Number(tr.dataset.version);
        const known = h.versions.find((x) => x.version === v);
        openSymbol(r, { ...s, change_type: known.change_type }, v);
      });
    }
  }

  function closeDetail() {
    state.selected = null;
    els.close.hidden = true;
    els.title.textContent = "Click a change to see its diff, or a symbol for its own diff and history.";
    els.meta.textContent = "";
    els.history.textContent = "";
    els.diff.textContent = "";
    delete document.body.dataset.detail;
    schedule(false);
  }

  // ---- wiring ----------------------------------------------------------------------------

  els.rows.addEventListener("click", (e) => {
    const row = e.target.closest(".row");
    if (!row) return;
    const r = byVersion(Number(row.dataset.version));
    if (!r) return;
    const chip = e.target.closest(".sym");
    if (chip) openSymbol(r, r.symbols[Number(chip.dataset.sym)]);
    else openRecord(r);
  });
  els.meta.addEventListener("click", (e) => {
    const chip = e.target.closest(".sym[data-sym]");
    const r = byVersion(Number(els.meta.dataset.version));
    if (chip && r) openSymbol(r, r.symbols[Number(chip.dataset.sym)]);
  });
  els.heat.addEventListener("click", (e) => {
    const cell = e.target.closest(".cell");
    if (!cell) return;
    // A gitignore pattern naming exactly this file: anchored, its special characters escaped.
    els.path.value = "/" + cell.dataset.path.replace(/[*?[\]\\!# ]/g, "\\$&");
    connect();
  });
  els.list.addEventListener("scroll", () => schedule(false), { passive: true });
  window.addEventListener("resize", () => schedule(false));
  els.close.addEventListener("click", closeDetail);
  for (const el of [els.scope, els.since]) el.addEventListener("change", connect);
  els.origin.addEventListener("change", connect);
  els.group.addEventListener("change", () => {
    for (const i of els.origin.querySelectorAll("input")) i.disabled = !!els.group.value;
    connect();
  });
  els.session.addEventListener("change", () => {
    chooseSession(els.session.value, "");
    connect();
  });
  els.session.addEventListener("focus", loadSessions);
  els.turn.addEventListener("change", () => {
    showTurns(state.sessions.find((x) => x.session === els.session.value));
    connect();
  });
  els.turns.addEventListener("click", (e) => {
    const undo = e.target.closest(".undo");
    if (undo) return openUndo(els.session.value, undo.dataset.turn);
    const b = e.target.closest(".turn");
    if (!b) return;
    els.turn.value = b.getAttribute("aria-pressed") === "true" ? "" : b.dataset.turn;
    showTurns(state.sessions.find((x) => x.session === els.session.value));
    connect();
  });
  let typing = 0;
  els.path.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(connect, 400);
  });
  document.getElementById("filters").addEventListener("submit", (e) => {
    e.preventDefault();
    connect();
  });

  // The token came in the URL once (it is now a cookie): take it out of the address bar.
  if (location.search) history.replaceState(null, "", location.pathname + location.hash);
  // A link or the back button that changes the #fragment changes the view.
  window.addEventListener("hashchange", () => {
    writeView(viewFromHash());
    connect();
  });
  writeView(viewFromHash());
  connect();
  loadSessions();
})();
