"""The export format (docs/export-format.md, docs/export-format.schema.json), defined once: its name
and version, the fields of every record type, and the two conversions — a stored row to a record
(export) and a record back to a row, checked and redacted (import).

A record's fields are the columns that travel (`store.portable`), in table order, read off the typed
rows (`store/rows.py`): a new column is a new field, checked by its annotation. The schema in docs/
is the format's promise, and a test holds it to these fields: a new field is not written before the
schema (and, by the versioning rules there, maybe VERSION) says so. A record names rows by their
global `uid` (m006), never by a local integer id: a prompt, observation or summary names its session
by the session's uid.
"""

from __future__ import annotations

import re
import types
import typing
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from claude_mem import __version__, privacy
from claude_mem.domain import OBSERVATION_TYPES, SESSION_STATUSES, RecallError
from claude_mem.recall.remember import content_hash as note_hash
from claude_mem.store.models import ParsedObservation
from claude_mem.store.portable import LOCAL, TABLES, PortableRow
from claude_mem.store.results import content_hash
from claude_mem.store.rows import (
    OBSERVATION_CONTENT,
    SUMMARY_CONTENT,
    ObservationRow,
    PromptRow,
    SessionRow,
    SummaryRow,
)

FORMAT = "claude-mem-export"
VERSION = 1
TOOL = "claude-mem-py"
RECORD_TYPES = ("session", "prompt", "observation", "summary")
MAX_INT = 2**63 - 1
UID = re.compile(r"[0-9a-f]{32}")
_CANONICAL_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")

Record = dict[str, Any]


class FormatError(RecallError):
    """The file as a whole cannot be read: not an export, or one of a newer format version."""


class RecordError(RecallError):
    """One record cannot be imported; the message says which field and why."""


@dataclass(frozen=True)
class Field:
    """One field of a record: its name there, the column it comes from, and what it holds.

    Kinds: `uid`; `key` (an identifier kept as it is: project, paths, ids, hashes); `text` (free text,
    redacted on import); `list` (of strings, redacted on import); `time`; `int`; `bool`; or
    `enum` (one of `choices`).
    """

    name: str
    kind: str
    nullable: bool = False
    column: str = ""
    choices: tuple[str, ...] = ()
    min_length: int = 0
    max_length: int = 0
    optional: bool = False  # added within the version: a record without it (an older file) reads as null

    @property
    def stored_as(self) -> str:
        return self.column or self.name


ROW_TYPES: dict[str, type] = {"session": SessionRow, "prompt": PromptRow, "observation": ObservationRow,
                              "summary": SummaryRow}
# Free text (redacted on import): what the observer writes, a session's title and what the user typed.
FREE_TEXT = frozenset((*OBSERVATION_CONTENT, *SUMMARY_CONTENT, "text"))
ENUMS = {"status": SESSION_STATUSES, "type": OBSERVATION_TYPES}
RENAMED = {"type": "observation_type"}  # in a record, `type` is the record's own
BOOLS = ("private",)  # stored as 0 or 1
# Fields added after files of this version were written (nullable): a writer writes them, a reader
# takes a record without one as null.
ADDED_LATER = frozenset(("processed_at",))
# Identifiers kept as they are, with the lengths an import accepts (others: 0 to 4096 characters).
KEY_LENGTHS = {"content_session_id": (1, 512), "project": (1, 4096), "observer_provider": (0, 200),
               "memory_session_id": (0, 512), "content_hash": (0, 256)}


def _field(column: str, hint: object) -> Field:
    """The field that carries `column`, annotated `hint` in its row type."""
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    nullable = type(None) in options
    base = next(option for option in options if option is not type(None))
    if column == "uid":
        return Field("uid", "uid")  # every exported row has one (m006)
    if column == "session_id":
        return Field("session", "uid", nullable, column="session_uid")
    if base == list[str]:
        return Field(column, "list")
    if column in BOOLS:
        return Field(column, "bool")
    if base is int:
        return Field(column, "int", nullable)
    if column.endswith("_at"):
        return Field(column, "time", nullable, optional=column in ADDED_LATER)
    name = RENAMED.get(column, column)
    if column in ENUMS:
        return Field(name, "enum", nullable, column=column if name != column else "", choices=ENUMS[column])
    if column in FREE_TEXT:
        return Field(name, "text", nullable)
    low, high = KEY_LENGTHS.get(column, (0, 4096))
    return Field(name, "key", nullable, min_length=low, max_length=high)


def _fields(row_type: type) -> tuple[Field, ...]:
    hints = typing.get_type_hints(row_type)
    return tuple(_field(column, hint) for column, hint in hints.items() if column == "session_id" or column not in LOCAL)


FIELDS: dict[str, tuple[Field, ...]] = {kind: _fields(row_type) for kind, row_type in ROW_TYPES.items()}


def header(counts: dict[str, int], as_of: str | None, project: str | None, since: str | None) -> Record:
    """Line 1. Nothing in it says when or where the file was written, so two exports of the same
    memory are byte-identical; `as_of` is the newest time among the exported rows."""
    return {"type": "header", "format": FORMAT, "version": VERSION, "source": {"tool": TOOL, "version": __version__},
            "as_of": canonical_time(as_of) if as_of else None, "filters": {"project": project, "since": since},
            "counts": {TABLES[kind]: counts.get(TABLES[kind], 0) for kind in RECORD_TYPES}}


def to_record(kind: str, row: PortableRow) -> Record:
    """A stored row (column -> value, children naming their session by `session_uid`) as a record."""
    record: Record = {"type": kind}
    for spec in FIELDS[kind]:
        value = row.get(spec.stored_as) if spec.optional else row[spec.stored_as]
        if value is not None:
            if spec.kind == "bool":
                value = bool(value)
            elif spec.kind == "time":
                value = canonical_time(str(value)) or value
        record[spec.name] = value
    return record


def check_header(value: object) -> Record:
    """The header of a file, or FormatError: not an export, or one this version cannot read."""
    if not isinstance(value, dict) or value.get("type") != "header" or value.get("format") != FORMAT:
        raise FormatError(f"not a {FORMAT} file (line 1 is not its header)")
    version = value.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise FormatError(f"its header has no valid format version ({str(version)[:20]!r})")
    if version > VERSION:
        raise FormatError(f"it is format version {version}, written by a newer claude-mem; this one"
                          f" ({__version__}) reads version {VERSION}: upgrade claude-mem to import it")
    return value


def from_record(value: object) -> tuple[str, PortableRow]:
    """(kind, row) of a record: checked field by field, free text redacted. RecordError when it is bad."""
    if not isinstance(value, dict):
        raise RecordError(f"a record must be a JSON object, not {type(value).__name__}")
    kind = value.get("type")
    if kind == "header":
        raise RecordError("a second header")
    if kind not in FIELDS:
        raise RecordError(f"unknown record type {str(kind)[:40]!r}")
    row: PortableRow = {}
    for spec in FIELDS[kind]:
        if spec.name not in value:
            if spec.optional:
                row[spec.stored_as] = None
                continue
            raise RecordError(f"{kind} has no `{spec.name}`")
        row[spec.stored_as] = _checked(kind, spec, value[spec.name])
    # Every free text of the record read as one document, as a capture's payload is: a secret or a
    # <private> span split across fields is seen whole, and one pass costs far less than one a field.
    # A list, not a dict: the field names are ours, and cleaning each key costs as much as the text.
    names = [spec.stored_as for spec in FIELDS[kind] if spec.kind in ("text", "list")]
    cleaned = privacy.clean_tree([row[name] for name in names])
    assert isinstance(cleaned, list)
    row.update(zip(names, cleaned))
    if kind == "prompt":
        row["private"] = int(bool(row["private"]))
        if row["private"]:
            row["text"] = ""  # a private prompt keeps its place in the turn, never its text
    return kind, row


def rehashed(row: PortableRow) -> PortableRow:
    """An observation row with its `content_hash` computed from its content, never taken from the record (an
    edited record keeps a stale one, which would make it "already here"): a session's observation hashed as
    the observer's results are, a manual note (no session) as `claude-mem remember` hashes it."""
    if row.get("session_uid") is None:
        row["content_hash"] = note_hash(row["type"], row["title"] or "", row["narrative"] or "")
    else:
        row["content_hash"] = content_hash(ParsedObservation(type=row["type"], title=row["title"] or "",
                                                             narrative=row["narrative"] or "",
                                                             facts=tuple(row["facts"] or ())))
    return row


def from_row(kind: str, row: PortableRow) -> PortableRow:
    """A row from elsewhere (the original claude-mem's database) checked and redacted exactly as an
    imported record is. RecordError when it is bad."""
    return from_record(to_record(kind, row))[1]


def _checked(kind: str, spec: Field, value: object) -> object:
    where = f"{kind} `{spec.name}`"
    if value is None:
        if spec.nullable:
            return None
        raise RecordError(f"{where} must not be null")
    if spec.kind == "int":
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_INT:
            raise RecordError(f"{where} must be a whole number from 0 to {MAX_INT}")
        return value
    if spec.kind == "bool":
        if not isinstance(value, bool):
            raise RecordError(f"{where} must be true or false")
        return value
    if spec.kind == "list":
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise RecordError(f"{where} must be a list of strings")
        return [_valid_text(where, item) for item in value]
    if not isinstance(value, str):
        raise RecordError(f"{where} must be a string")
    text = _valid_text(where, value)
    if spec.kind == "uid" and not UID.fullmatch(text):
        raise RecordError(f"{where} must be 32 lowercase hexadecimal characters")
    if spec.kind == "enum" and text not in spec.choices:
        raise RecordError(f"{where} must be one of {', '.join(spec.choices)} (not {text[:40]!r})")
    if spec.kind == "time":
        moment = canonical_time(text)
        if moment is None:
            raise RecordError(f"{where} is not an ISO 8601 time ({text[:40]!r})")
        return moment
    if spec.kind == "key" and not spec.min_length <= len(text) <= spec.max_length:
        raise RecordError(f"{where} must be {spec.min_length} to {spec.max_length} characters long")
    return text


def _valid_text(where: str, text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise RecordError(f"{where} holds text that is not Unicode (a lone surrogate)") from None
    return text


def canonical_time(text: str) -> str | None:
    """A time in the store's format (UTC, milliseconds, `Z`); a time without an offset is UTC, as
    SQLite writes it. None when `text` is not an ISO 8601 time."""
    if _CANONICAL_TIME.fullmatch(text):
        return text
    if len(text) > 40:
        return None
    try:
        moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        moment = moment.astimezone(timezone.utc)
    except (OverflowError, ValueError):
        return None
    return (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:"
            f"{moment.second:02d}.{moment.microsecond // 1000:03d}Z")
