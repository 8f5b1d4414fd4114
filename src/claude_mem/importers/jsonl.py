"""Our own export (docs/export-format.md), both ways: `claude-mem export` writes it (`export_lines`,
`write_atomically`) and `claude-mem import jsonl` reads it back (`JsonlSource`), streamed both ways.

Writing: line 1 is the header; then each session in turn (oldest first) followed by its prompts,
observations and summaries; then the manual notes. Every row comes from one read snapshot and in an
order that depends on the memory alone, so exporting the same memory twice — here, or after an
import into another data dir — gives byte-identical files.

Reading: each session and the rows that follow it are written in ONE transaction (a crash leaves no
session half-imported) and matched by uid, so importing a file twice adds nothing. Free text goes
through the same secret redaction as everything the hooks capture. A line that cannot be read — cut
short, not JSON, too long, a record of the wrong shape, a row whose session is nowhere — is reported
with its file and line number and skipped; everything else is imported. A header of a newer format
version refuses the whole file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from claude_mem import paths
from claude_mem.importers import export_format
from claude_mem.importers.export_format import FormatError, Record, RecordError
from claude_mem.importers.lines import numbered
from claude_mem.importers.source import ImportReport, Progress, Table, quiet
from claude_mem.store import Store, portable
from claude_mem.store.portable import PortableRow

MAX_LINE_BYTES = 16 * 2**20
# Rows of no session (manual notes) are written this many to a transaction.
NOTES_PER_TRANSACTION = 500
SKIPPED = "line(s) skipped"

# -- export -------------------------------------------------------------------------------------------

# Characters that some line splitters (Python's str.splitlines, JavaScript) take for line ends; JSON
# escapes the control characters among them, these three are written as \u escapes here.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def dumps(record: Record) -> str:
    """One line of the file (without its newline): UTF-8 text, no line break inside, whatever splits it."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).translate(_LINE_BREAKS)


class _Stream:
    """A row stream that can be looked at before it is taken from."""

    def __init__(self, rows: Iterator[PortableRow]) -> None:
        self.rows = rows
        self.head = next(rows, None)

    def take_while_session(self, uid: str) -> Iterator[PortableRow]:
        while self.head is not None and self.head["session_uid"] == uid:
            yield self.head
            self.head = next(self.rows, None)


def export_lines(db: Store, project: str | None = None, since: str | None = None) -> Iterator[str]:
    """The lines of an export of `project` (None: every project) since `since` (store time format)."""
    scope = portable.Scope(project, since)
    with portable.snapshot(db):
        counts, as_of = portable.counts(db, scope)
        yield dumps(export_format.header(counts, as_of, project, since))
        children = (("prompt", _Stream(portable.prompts(db, scope))),
                    ("observation", _Stream(portable.observations(db, scope))),
                    ("summary", _Stream(portable.summaries(db, scope))))
        for session in portable.sessions(db, scope):
            yield dumps(export_format.to_record("session", session))
            for kind, stream in children:
                for row in stream.take_while_session(session["uid"]):
                    yield dumps(export_format.to_record(kind, row))
        left = [kind for kind, stream in children if stream.head is not None]
        if left:  # every stream is ordered like the sessions; a row left over would be lost silently
            raise RuntimeError(f"export out of order: {', '.join(left)} rows left after the last session")
        for note in portable.notes(db, scope):
            yield dumps(export_format.to_record("observation", note))


def write_atomically(path: str, lines: Iterable[str]) -> int:
    """Write `lines` to `path` (mode 0600) so that it is whole or absent: a temp file beside it, synced,
    then renamed over it. Returns the number of lines."""
    directory = os.path.dirname(os.path.abspath(path))
    temp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    count = 0
    try:
        with open(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8",
                  newline="\n") as handle:
            for line in lines:
                handle.write(line)
                handle.write("\n")
                count += 1
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
    return count


# -- import -------------------------------------------------------------------------------------------


class _Group:
    """The rows of one session (or a batch of manual notes) waiting for their transaction."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, PortableRow]] = []
        self.lines: list[int] = []
        self.has_session = False

    def add(self, line: int, kind: str, row: PortableRow) -> None:
        self.rows.append((kind, row))
        self.lines.append(line)
        self.has_session = self.has_session or kind == "session"


def _parse(line: bytes) -> object:
    try:
        return json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise RecordError(f"not UTF-8 text (byte {exc.start + 1})") from None
    except ValueError as exc:  # json.JSONDecodeError, RecursionError is not one: caught below
        message = getattr(exc, "msg", str(exc))
        if isinstance(exc, json.JSONDecodeError):  # "Expecting value", "Unterminated string starting at", …
            message += f"{'' if message.endswith(' at') else ' at'} column {exc.colno}"
        raise RecordError(f"not valid JSON ({message}; the line may be cut short)") from None
    except RecursionError:
        raise RecordError("not valid JSON (nested too deeply)") from None


@dataclass(frozen=True)
class JsonlSource:
    """A file written by `claude-mem export`, here or on another machine."""

    path: str
    name = "jsonl"
    unit = "bytes"
    dry_run_writes = False  # a dry run reads what a run would match (portable.Plan), at read speed

    def size(self) -> int:
        return os.path.getsize(self.path)

    def run(self, db: Store, *, dry_run: bool = False, progress: Progress = quiet) -> ImportReport:
        """Import the file; FormatError when it cannot be read as a whole (not an export, or of a newer
        version), before anything is written."""
        report = ImportReport(self.path, dry_run)
        plan = portable.Plan() if dry_run else None
        with paths.open_regular(self.path) as handle:
            lines = numbered(handle, MAX_LINE_BYTES)
            announced = self._header(next(lines, (1, 0, b"")))
            records, group = 0, _Group()
            for number, consumed, line in lines:
                if line is None:
                    self._skip(report, number, f"longer than {MAX_LINE_BYTES // 2**20} MiB; skipped")
                    continue
                if not line.strip():
                    continue
                try:
                    kind, row = export_format.from_record(_parse(line))
                    if kind == "observation":
                        export_format.rehashed(row)
                except RecordError as exc:
                    self._skip(report, number, f"{exc}; skipped")
                    continue
                records += 1
                if kind == "session" or (not group.has_session and len(group.rows) >= NOTES_PER_TRANSACTION):
                    self._flush(db, group, report, plan)
                    group = _Group()
                group.add(number, kind, row)
                progress(consumed)
            self._flush(db, group, report, plan)
        if announced is not None and records < announced:
            self._skip(report, None, f"the header announces {announced} records but only {records} could be read"
                                     " (is the file cut short?)")
        rows = [(table, str(report.added[table]), str(report.present[table])) for table in portable.TABLES.values()]
        report.table = Table(("", "added", "already here"), tuple(rows))
        return report

    def _header(self, first: tuple[int, int, bytes | None]) -> int | None:
        """The records the header of the file announces (None: it does not say); FormatError when line 1
        is no header this version can read."""
        line = first[2]
        if line is None:
            raise FormatError(f"{self.path}: not a {export_format.FORMAT} file (line 1 is too long to be its header);"
                              " nothing imported")
        try:
            header = export_format.check_header(_parse(line.rstrip(b"\r\n")))
        except (RecordError, FormatError) as exc:
            raise FormatError(f"{self.path}: {exc}; nothing imported") from None
        counts = header.get("counts")
        if isinstance(counts, dict) and all(isinstance(n, int) for n in counts.values()):
            return sum(counts.values())
        return None

    def _skip(self, report: ImportReport, line: int | None, message: str) -> None:
        report.skip(SKIPPED, f"{self.path}:{line}: {message}" if line else f"{self.path}: {message}")

    def _flush(self, db: Store, group: _Group, report: ImportReport, plan: portable.Plan | None) -> None:
        if not group.rows:
            return
        outcomes = plan.classify(db, group.rows) if plan else portable.write_group(db, group.rows)
        for (kind, row), line, outcome in zip(group.rows, group.lines, outcomes):
            table = portable.TABLES[kind]
            if outcome == portable.ADDED:
                report.added[table] += 1
            elif outcome == portable.PRESENT:
                report.present[table] += 1
            else:
                self._skip(report, line, f"{kind} {row['uid']} names session {row.get('session_uid')}, which is"
                                         " neither in this file before it nor stored here; skipped")
