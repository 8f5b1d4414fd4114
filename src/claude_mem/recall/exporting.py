"""`claude-mem export`: memory as versioned JSONL (docs/export-format.md), streamed in constant memory.

Line 1 is the header; then each session in turn (oldest first) followed by its prompts,
observations and summaries; then the manual notes. Every row comes from one read snapshot and in an
order that depends on the memory alone, so exporting the same memory twice — here, or after an
import into another data dir — gives byte-identical files.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator

from claude_mem.recall import export_format
from claude_mem.store import portable

# Characters that some line splitters (Python's str.splitlines, JavaScript) take for line ends; JSON
# escapes the control characters among them, these three are written as \u escapes here.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def dumps(record: dict) -> str:
    """One line of the file (without its newline): UTF-8 text, no line break inside, whatever splits it."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).translate(_LINE_BREAKS)


class _Stream:
    """A row stream that can be looked at before it is taken from."""

    def __init__(self, rows: Iterator[dict]) -> None:
        self.rows = rows
        self.head = next(rows, None)

    def take_while_session(self, uid: str) -> Iterator[dict]:
        while self.head is not None and self.head["session_uid"] == uid:
            yield self.head
            self.head = next(self.rows, None)


def export_lines(conn: sqlite3.Connection, project: str | None = None, since: str | None = None) -> Iterator[str]:
    """The lines of an export of `project` (None: every project) since `since` (store time format)."""
    scope = portable.Scope(project, since)
    with portable.snapshot(conn):
        counts, as_of = portable.counts(conn, scope)
        yield dumps(export_format.header(counts, as_of, project, since))
        children = (("prompt", _Stream(portable.prompts(conn, scope))),
                    ("observation", _Stream(portable.observations(conn, scope))),
                    ("summary", _Stream(portable.summaries(conn, scope))))
        for session in portable.sessions(conn, scope):
            yield dumps(export_format.to_record("session", session))
            for kind, stream in children:
                for row in stream.take_while_session(session["uid"]):
                    yield dumps(export_format.to_record(kind, row))
        left = [kind for kind, stream in children if stream.head is not None]
        if left:  # every stream is ordered like the sessions; a row left over would be lost silently
            raise RuntimeError(f"export out of order: {', '.join(left)} rows left after the last session")
        for note in portable.notes(conn, scope):
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
