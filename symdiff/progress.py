"""A rich progress bar as a `(done, total)` callback, shown on stderr only on a terminal."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int], None]]:
    """Yield a callback that advances a progress bar; silent when stderr is not a terminal."""
    console = Console(stderr=True)
    if not sys.stderr.isatty():
        yield lambda done, total: None
        return
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
