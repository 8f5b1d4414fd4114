"""Reading a JSONL file one line at a time, whatever is in it.

Streamed: one line in memory at a time, and a line longer than the reader's limit is skipped without
ever being held whole. A line that is not a JSON object (truncated by a crash, binary junk, not
UTF-8) is reported with its file and line number and skipped; the rest of the file still reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from claude_mem import paths

MAX_LINE_BYTES = 64 * 2**20
CHUNK = 2**20
# Lines this long that start with one of these types are bookkeeping (full API request bodies,
# system-prompt snapshots): recognised by their first bytes instead of being parsed.
BIG_LINE = 64 * 2**10
SKIM_TYPES = (b"api-request-blob", b"api-request-shape", b"api-request")

Problem = Callable[[int, str], None]


def numbered(handle: BinaryIO, max_line_bytes: int) -> Iterator[tuple[int, int, bytes | None]]:
    """(line number, bytes read so far, the line with its line end) for each line of `handle`; None as
    the line when it holds more than `max_line_bytes` (its rest is read in bounded pieces and dropped)."""
    number = consumed = 0
    while True:
        raw = handle.readline(max_line_bytes + 1)
        if not raw:
            return
        number += 1
        consumed += len(raw)
        if len(raw) <= max_line_bytes or raw.endswith(b"\n"):
            yield number, consumed, raw
            continue
        while raw and not raw.endswith(b"\n"):
            raw = handle.readline(CHUNK)
            consumed += len(raw)
        yield number, consumed, None


def _skimmed(line: bytes) -> str | None:
    """The type of a big bookkeeping line that needs no parsing, from its first bytes."""
    if len(line) < BIG_LINE or not line.startswith(b'{"type":"') or not line.rstrip().endswith(b"}"):
        return None
    head = line[9:40]
    for name in SKIM_TYPES:
        if head.startswith(name + b'"'):
            return name.decode()
    return None


def objects(path: str, problem: Problem, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each JSON object line of `path`; `problem(line, message)` for the rest.

    OSError (missing, unreadable, not a regular file: a device or FIFO is never read) propagates: the caller
    reports the file."""
    with paths.open_regular(path) as handle:
        for number, _, line in numbered(handle, max_line_bytes):
            if line is None:
                problem(number, f"line longer than {max_line_bytes // 2**20 or max_line_bytes} "
                                f"{'MB' if max_line_bytes >= 2**20 else 'bytes'}, skipped")
                continue
            if not line.strip():
                continue
            skimmed = _skimmed(line)
            if skimmed is not None:
                yield number, {"type": skimmed}
                continue
            try:
                value = json.loads(line)
            except UnicodeDecodeError:
                problem(number, "not UTF-8 text, skipped")
                continue
            except ValueError:
                ending = "" if line.endswith(b"\n") else " (the file ends inside it)"
                problem(number, f"not a complete JSON line{ending}, skipped")
                continue
            except RecursionError:
                problem(number, "JSON nested too deeply, skipped")
                continue
            if not isinstance(value, dict):
                problem(number, f"a JSON {type(value).__name__}, not an object, skipped")
                continue
            yield number, value
