"""Go duration parsing: a faithful port of Go's `time.ParseDuration` (src/time/format.go).

The port works on the UTF-8 bytes of the input, as Go does, and keeps Go's unsigned 64-bit
arithmetic, its float64 fraction scaling and its error texts, so that every string yields the
same nanoseconds or the same message as Go's own parser.
"""

from __future__ import annotations

import json

from symdiff.errors import DurationError, InvalidArgs

_UINT64 = (1 << 64) - 1
_LIMIT = 1 << 63

_UNITS: dict[bytes, int] = {
    b"ns": 1,
    b"us": 1_000,
    "µs".encode(): 1_000,  # U+00B5 micro sign
    "μs".encode(): 1_000,  # U+03BC Greek small letter mu
    b"ms": 1_000_000,
    b"s": 1_000_000_000,
    b"m": 60 * 1_000_000_000,
    b"h": 3600 * 1_000_000_000,
}

_DIGITS = frozenset(b"0123456789")


def go_quote(raw: bytes) -> str:
    """Quote bytes as Go's time package does: non-ASCII and control bytes become `\\xNN`."""
    out = ['"']
    for byte in raw:
        if byte >= 0x80 or byte < 0x20:
            # Go escapes every byte of a non-ASCII rune (valid or not) the same way.
            out.append(f"\\x{byte:02x}")
        elif byte in (0x22, 0x5C):
            out.append("\\" + chr(byte))
        else:
            out.append(chr(byte))
    out.append('"')
    return "".join(out)


def _to_bytes(text: str | bytes) -> bytes:
    """The bytes Go would see; undecodable bytes smuggled in as surrogates come back as bytes."""
    if isinstance(text, bytes):
        return text
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def _invalid(orig: bytes) -> DurationError:
    """Go's generic error; built only when raised, since quoting costs the input's length."""
    return DurationError(f"time: invalid duration {go_quote(orig)}")


def _leading_int(s: bytes, i: int) -> tuple[int, int] | None:
    """Go's leadingInt: the digits' value at `i` and the index after them; None on overflow."""
    x = 0
    while i < len(s) and s[i] in _DIGITS:
        if x > _LIMIT // 10:
            return None
        x = x * 10 + (s[i] - 0x30)
        if x > _LIMIT:
            return None
        i += 1
    return x, i


def _leading_fraction(s: bytes, i: int) -> tuple[int, float, int]:
    """Go's leadingFraction: digits, scale, next index; on overflow it stops gaining precision."""
    x = 0
    scale = 1.0
    overflow = False
    while i < len(s) and s[i] in _DIGITS:
        if not overflow:
            if x > (_LIMIT - 1) // 10:
                overflow = True
            else:
                y = x * 10 + (s[i] - 0x30)
                if y > _LIMIT:
                    overflow = True
                else:
                    x = y
                    scale *= 10
        i += 1
    return x, scale, i


def _term(s: bytes, i: int, orig: bytes) -> tuple[int, int]:
    """One `[0-9]*(.[0-9]*)?unit` term starting at `i`: its nanoseconds and the index after it."""
    if not (s[i] == 0x2E or s[i] in _DIGITS):
        raise _invalid(orig)
    leading = _leading_int(s, i)
    if leading is None:
        raise _invalid(orig)
    v, after = leading
    pre = after != i
    i = after
    f, scale, post = 0, 1.0, False
    if i < len(s) and s[i] == 0x2E:
        f, scale, after = _leading_fraction(s, i + 1)
        post = after != i + 1
        i = after
    if not pre and not post:
        raise _invalid(orig)
    unit_start = i
    while i < len(s) and not (s[i] == 0x2E or s[i] in _DIGITS):
        i += 1
    if i == unit_start:
        raise DurationError(f"time: missing unit in duration {go_quote(orig)}")
    unit_text = s[unit_start:i]
    unit = _UNITS.get(unit_text)
    if unit is None:
        raise DurationError(
            f"time: unknown unit {go_quote(unit_text)} in duration {go_quote(orig)}"
        )
    if v > _LIMIT // unit:
        raise _invalid(orig)
    v *= unit
    if f > 0:
        # Go scales in float64 and truncates on the conversion back to uint64.
        v += int(float(f) * (float(unit) / scale))
        if v > _LIMIT:
            raise _invalid(orig)
    return v, i


def parse_go_duration(text: str | bytes) -> int:
    """Parse a Go duration string into nanoseconds exactly as Go's `time.ParseDuration` does."""
    orig = _to_bytes(text)
    s = orig
    neg = False
    if s[:1] in (b"-", b"+"):
        neg = s[:1] == b"-"
        s = s[1:]
    if s == b"0":
        return 0
    if not s:
        raise _invalid(orig)
    d = 0
    i = 0
    while i < len(s):
        v, i = _term(s, i, orig)
        # uint64 addition: 2^63 + 2^63 wraps to 0 in Go, and so it does here.
        d = (d + v) & _UINT64
        if d > _LIMIT:
            raise _invalid(orig)
    if neg:
        return -d
    if d > _LIMIT - 1:
        raise _invalid(orig)
    return d


def parse_duration_arg(text: str, *, name: str, hint: str = "", floor: str | None = None) -> int:
    """Nanoseconds of the duration argument `name`: a Go duration, never negative (nor shorter
    than `floor`, a duration, when given).

    Raises DurationError (`name: <Go's reason><hint>`) for a string Go does not parse, and
    InvalidArgs for a negative (or too short) one.
    """
    try:
        ns = parse_go_duration(text)
    except DurationError as err:
        raise DurationError(f"{name}: {err.reason}{hint}") from err
    if floor is not None and ns < parse_go_duration(floor):
        raise InvalidArgs(f"{name} must be at least {floor}, got {json.dumps(text)}")
    if ns < 0:
        raise InvalidArgs(f"{name} must not be negative, got {json.dumps(text)}")
    return ns
