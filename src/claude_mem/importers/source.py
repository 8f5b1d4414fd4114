"""What every importer shares: the `Source` protocol, the `ImportReport` it returns, and `run`, which
opens our store the way a (dry) run needs it and hands it to the source.

A source reads one kind of history and writes what it finds through the store's own writers. The
three share little else, and that is the protocol: a name, a measure of its size for a progress bar,
a dry run, a progress callback, and a report — what was added, what was stored already, what was
left out on purpose (notes), and what could not be read (problems, and a count of each kind of
shortfall, which makes the import incomplete). The CLI shows every report the same way.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from claude_mem import paths, store
from claude_mem.store import Store


class Progress(Protocol):
    """Told how far a run has come: `done` of the source's `size()` units, and a short note."""

    def __call__(self, done: int, detail: str = "") -> None: ...


def quiet(done: int, detail: str = "") -> None:
    """A progress callback that shows nothing."""


@dataclass(frozen=True)
class Table:
    """A table of counts to show: a header, then one row of cells per project (or per kind)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass
class ImportReport:
    """What an import did (in a dry run: would do), in the one shape every source reports.

    `added` and `present` count rows (or events) by kind; `skipped` counts, by what, the shortfalls
    that make the import incomplete (`"line(s) skipped"`: 3), each one named in `problems` with its
    place; `notes` say where things went and what was left out on purpose."""

    source: str  # what was read: a file, a database, folders of transcripts
    dry_run: bool = False
    title: str = ""  # the first line shown; by default what was read and whether it was written
    added: Counter[str] = field(default_factory=Counter)
    present: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    table: Table | None = None

    def __post_init__(self) -> None:
        if not self.title:
            self.title = f"{'would import (dry run, nothing written)' if self.dry_run else 'imported'}: {self.source}"

    def skip(self, what: str, problem: str | None = None, count: int = 1) -> None:
        """Count `count` of `what` ("line(s) skipped") left out, and name the problem."""
        self.skipped[what] += count
        if problem is not None:
            self.problems.append(problem)

    @property
    def incomplete(self) -> bool:
        """Whether anything was left out because it could not be read (exit code 1)."""
        return any(count > 0 for count in self.skipped.values())

    @property
    def shortfall(self) -> str:
        """`3 row(s) skipped, 4 field(s) imported empty; everything else was imported`, or ''."""
        parts = [f"{count} {what}" for what, count in self.skipped.items() if count > 0]
        if not parts:
            return ""
        return f"{', '.join(parts)}; everything else was {'checked' if self.dry_run else 'imported'}"


class Source(Protocol):
    """One kind of history that `claude-mem import NAME` brings in."""

    name: str  # the subcommand, shown while it runs
    unit: str  # what `size()` and progress count: "sessions", "rows" or "bytes"
    dry_run_writes: bool  # a dry run writes and rolls back, so it needs a writable store (none does now)

    def size(self) -> int | None:
        """How many units there are to read (None: unknown)."""
        ...

    def run(self, db: Store, *, dry_run: bool = False, progress: Progress = quiet) -> ImportReport:
        """Import into `db` (a dry run: write nothing that stays) and report."""
        ...


def open_store(data_dir: str, *, dry_run: bool, writes: bool) -> Store:
    """Our store as an import needs it. A dry run never creates, migrates or changes a database: it
    reads the one there is (read-only, unless the source's dry run `writes` and rolls back), and with
    none yet an empty one in memory, where everything is new."""
    if not dry_run:
        return store.open(data_dir)
    if not os.path.exists(paths.db_path(data_dir)):
        return store.open(path=":memory:")
    return store.open(data_dir, readonly=not writes)


def run(source: Source, data_dir: str, *, dry_run: bool = False, progress: Progress = quiet) -> ImportReport:
    """Import `source` into the store of `data_dir`."""
    with open_store(data_dir, dry_run=dry_run, writes=source.dry_run_writes) as db:
        return source.run(db, dry_run=dry_run, progress=progress)
