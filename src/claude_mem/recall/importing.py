"""`claude-mem import jsonl`: an export read back (docs/export-format.md), streamed.

Each session and the rows that follow it are written in ONE transaction (a crash leaves no session
half-imported) and matched by uid, so importing a file twice adds nothing. Free text goes through
the same secret redaction as everything the hooks capture. A line that cannot be read — cut short,
not JSON, too long, a record of the wrong shape, a row whose session is nowhere — is reported with
its file and line number and skipped; everything else is imported. A header of a newer format
version refuses the whole file.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO

from claude_mem.recall import export_format
from claude_mem.recall.export_format import FormatError, RecordError
from claude_mem.store import portable

MAX_LINE_BYTES = 16 * 1024 * 1024
# Rows of no session (manual notes) are written this many to a transaction.
NOTES_PER_TRANSACTION = 500
KINDS = {"session": "sessions", "prompt": "prompts", "observation": "observations", "summary": "summaries"}


@dataclass
class ImportReport:
    """What an import did: per table, rows added and rows already present; the lines it skipped."""

    path: str
    dry_run: bool = False
    header: dict = field(default_factory=dict)
    added: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS.values(), 0))
    present: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS.values(), 0))
    problems: list[str] = field(default_factory=list)
    skipped: int = 0

    def skip(self, line: int | None, message: str) -> None:
        self.skipped += 1
        self.problems.append(f"{self.path}:{line}: {message}" if line else f"{self.path}: {message}")


class _Group:
    """The rows of one session (or a batch of manual notes) waiting for their transaction."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, dict]] = []
        self.lines: list[int] = []
        self.has_session = False

    def add(self, line: int, kind: str, row: dict) -> None:
        self.rows.append((kind, row))
        self.lines.append(line)
        self.has_session = self.has_session or kind == "session"


def _next_line(handle: BinaryIO) -> tuple[int, bytes | None]:
    """The next line (without its newline) and the bytes consumed; None as the line when it was too long."""
    raw = handle.readline(MAX_LINE_BYTES + 1)
    consumed = len(raw)
    if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n"):
        return consumed, raw.rstrip(b"\r\n")
    while raw and not raw.endswith(b"\n"):  # drop the rest of an overlong line, in bounded pieces
        raw = handle.readline(MAX_LINE_BYTES)
        consumed += len(raw)
    return consumed, None


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


def import_jsonl(conn: sqlite3.Connection, path: str, dry_run: bool = False,
                 progress: Callable[[int], None] | None = None) -> ImportReport:
    """Import the export at `path`; `progress` is told the bytes read so far. FormatError when the file
    as a whole cannot be read (not an export, or of a newer version)."""
    report = ImportReport(path=path, dry_run=dry_run)
    with open(path, "rb") as handle:
        consumed, first = _next_line(handle)
        if first is None:
            raise FormatError(f"{path}: not a {export_format.FORMAT} file (line 1 is too long to be its header)")
        try:
            report.header = export_format.check_header(_parse(first))
        except (RecordError, FormatError) as exc:
            raise FormatError(f"{path}: {exc}") from None
        number, records, group = 1, 0, _Group()
        while True:
            size, line = _next_line(handle)
            if not size:
                break
            number += 1
            consumed += size
            if line is None:
                report.skip(number, f"longer than {MAX_LINE_BYTES // 2**20} MiB; skipped")
                continue
            if not line.strip():
                continue
            try:
                kind, row = export_format.from_record(_parse(line))
            except RecordError as exc:
                report.skip(number, f"{exc}; skipped")
                continue
            records += 1
            if kind == "session" or (not group.has_session and len(group.rows) >= NOTES_PER_TRANSACTION):
                _flush(conn, group, report)
                group = _Group()
            group.add(number, kind, row)
            if progress is not None:
                progress(consumed)
        _flush(conn, group, report)
    announced = report.header.get("counts")
    if isinstance(announced, dict) and all(isinstance(n, int) for n in announced.values()):
        expected = sum(announced.values())
        if records < expected:
            report.skip(None, f"the header announces {expected} records but only {records} could be read"
                              " (is the file cut short?)")
    return report


def _flush(conn: sqlite3.Connection, group: _Group, report: ImportReport) -> None:
    if not group.rows:
        return
    outcomes = portable.write_group(conn, group.rows, dry_run=report.dry_run)
    for (kind, row), line, outcome in zip(group.rows, group.lines, outcomes):
        table = KINDS[kind]
        if outcome == portable.ADDED:
            report.added[table] += 1
        elif outcome == portable.PRESENT:
            report.present[table] += 1
        else:
            report.skip(line, f"{kind} {row['uid']} names session {row.get('session_uid')}, which is neither"
                              " in this file before it nor stored here; skipped")
