"""One progress bar for long work: a context manager yielding the ``(description, done, total)``
callback that runs, demos and extractions report through. It draws on stderr, so stdout stays
clean for results."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from chatledger.cli._app import stderr

ProgressCallback = Callable[[str, int, int], None]


@contextmanager
def progress_bar(first: str) -> Iterator[ProgressCallback]:
    columns = (
        # markup=False: descriptions carry model names, which are data.
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(
        *columns, console=stderr, transient=True, disable=not stderr.is_terminal
    ) as progress:
        task = progress.add_task(first, total=None)

        def update(description: str, done: int, total: int) -> None:
            # total 0: a step without a count (the bar pulses).
            progress.update(task, description=description, completed=done, total=total or None)

        yield update
