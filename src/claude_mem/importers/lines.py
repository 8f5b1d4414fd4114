"""Reading a JSONL file one object at a time, whatever is in it.

Streamed: one line in memory at a time, and a line longer than `MAX_LINE_BYTES` is skipped without
ever being held whole. A line that is not a JSON object (truncated by a crash, binary junk, not
UTF-8) is reported with its file and line number and skipped; the rest of the file still reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import BinaryIO

MAX_LINE_BYTES = 64 * 2**20
CHUNK = 2**20
# Lines this long that start with one of these types are bookkeeping (full API request bodies,
# system-prompt snapshots): recognised by their first bytes instead of being parsed.
BIG_LINE = 64 * 2**10
SKIM_TYPES = (b"api-request-blob", b"api-request-shape", b"api-request")

Problem = Callable[[int, str], None]


def _skip_rest(handle: BinaryIO, line: bytes) -> None:
    while line and not line.endswith(b"\n"):
        line = handle.readline(CHUNK)


def _skimmed(line: bytes) -> str | None:
    """The type of a big bookkeeping line that needs no parsing, from its first bytes."""
    if len(line) < BIG_LINE or not line.startswith(b'{"type":"') or not line.rstrip().endswith(b"}"):
        return None
    head = line[9:40]
    for name in SKIM_TYPES:
        if head.startswith(name + b'"'):
            return name.decode()
    return None


def objects(path: str, problem: Problem, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each JSON object line of `path`; `problem(line, message)` for the rest.

    OSError (missing, unreadable) propagates: the caller reports the file."""
    with open(path, "rb") as handle:
        number = 0
        while True:
            line = handle.readline(max_line_bytes + 1)
            if not line:
                return
            number += 1
            if len(line) > max_line_bytes:
                _skip_rest(handle, line)
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
            if not isinstance(value, dict):
                problem(number, f"a JSON {type(value).__name__}, not an object, skipped")
                continue
            yield number, value
