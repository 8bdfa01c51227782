"""A rich progress bar as a `(done, total)` callback, shown on stderr only on a terminal, and
only for a pass that lasts: one that ends within `SHOW_AFTER_S` never flashes a bar."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

SHOW_AFTER_S = 0.5


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int], None]]:
    """Yield a callback that advances a progress bar; silent when stderr is not a terminal.

    While the bar shows, what is written to `sys.stderr` (log lines) prints above it.
    """
    if not sys.stderr.isatty():
        yield lambda done, total: None
        return
    started = time.monotonic()
    with ExitStack() as stack:
        bar: Progress | None = None
        task = None

        def update(done: int, total: int) -> None:
            nonlocal bar, task
            if bar is None:
                if time.monotonic() - started < SHOW_AFTER_S or done >= total:
                    return
                bar = stack.enter_context(Progress(
                    TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=Console(stderr=True), transient=True))
                task = bar.add_task(label, total=total, completed=done)
            assert task is not None
            bar.update(task, completed=done, total=total)

        yield update
