"""The rows the store hands out, typed once: every reader, writer, exporter, importer and team codec
derives its column list from these (DESIGN §3). A new column is one line here (and its migration).

The observer's part of an observation or summary (what it writes, what an export or a teammate
carries) is `ParsedObservation` / `ParsedSummary`; `OBSERVATION_CONTENT` and `SUMMARY_CONTENT` are
their fields in table order. JSON-list columns are those typed `list[str]`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import typing
from collections.abc import Iterable, Mapping
from typing import Any, NotRequired, TypedDict

from claude_mem.store.models import ParsedObservation, ParsedSummary


class ObservationRow(TypedDict):
    """One row of `observations`, JSON lists decoded."""

    id: int
    uid: str | None
    session_id: int | None
    project: str
    type: str
    title: str
    subtitle: str | None
    narrative: str
    facts: list[str]
    concepts: list[str]
    files_read: list[str]
    files_modified: list[str]
    prompt_number: int | None
    content_hash: str
    input_tokens: int
    output_tokens: int
    fetch_count: int
    created_at: str
    author: str | None
    device: str | None
    team_rev: int | None
    processed_at: str | None  # when the observer stored it; `created_at` is when its events happened
    superseded_by: int | None


class SummaryRow(TypedDict):
    """One row of `summaries` (a turn's summary), JSON lists decoded."""

    id: int
    uid: str | None
    session_id: int
    project: str
    event_id: int | None
    prompt_number: int | None
    request: str
    investigated: str
    learned: str
    completed: str
    next_steps: str
    files_read: list[str]
    files_edited: list[str]
    notes: str
    input_tokens: int
    output_tokens: int
    created_at: str
    author: str | None
    device: str | None
    team_rev: int | None
    processed_at: str | None  # when the observer stored it; `created_at` is when its events happened


class PromptRow(TypedDict):
    """One row of `prompts`: a user prompt as the hook stored it (redacted, private tags stripped)."""

    id: int
    uid: str | None
    session_id: int
    prompt_number: int
    text: str
    private: int
    created_at: str
    author: str | None
    device: str | None
    team_rev: int | None


class SessionRow(TypedDict):
    """One row of `sessions`: a Claude Code session as the hooks registered it."""

    id: int
    uid: str | None
    content_session_id: str
    project: str
    cwd: str | None
    title: str | None
    status: str
    observer_provider: str | None
    memory_session_id: str | None
    last_injected_at: str | None
    started_at: str
    ended_at: str | None
    last_activity_at: str
    author: str | None
    device: str | None
    team_rev: int | None


class SearchHit(TypedDict):
    """One search result, the same keys for every kind (what the HTTP API, CLI and MCP print): an
    observation's, summary's (title: its request) or prompt's (title: its text) display fields and
    its rank — `score` is BM25, lower is better, 0.0 in a listing. An observation's hit names its
    `author` (team memory); search by meaning adds its `cosine`."""

    kind: str
    id: int
    ref: str
    created_at: str
    project: str
    type: str
    title: str
    subtitle: str | None
    snippet: str
    score: float
    session_id: int | None
    author: NotRequired[str | None]
    cosine: NotRequired[float]
    freshness: NotRequired[str]  # recall.freshness: current, changed, deleted or unknown
    changed_files: NotRequired[list[str]]
    changed_commits: NotRequired[dict[str, list[str]]]
    superseded_by: NotRequired[int | None]


def columns(row_type: type) -> tuple[str, ...]:
    """The table's columns in order, as `row_type` declares them."""
    return tuple(typing.get_type_hints(row_type))


def json_lists(row_type: type) -> tuple[str, ...]:
    """The columns stored as a JSON list of strings."""
    return tuple(name for name, hint in typing.get_type_hints(row_type).items() if hint == list[str])


def content(parsed: type) -> tuple[str, ...]:
    """The observer-written fields of `ParsedObservation` or `ParsedSummary`, in table order."""
    names = {field.name for field in dataclasses.fields(parsed)}
    table = ObservationRow if parsed is ParsedObservation else SummaryRow
    return tuple(name for name in columns(table) if name in names)


OBSERVATION_COLUMNS = columns(ObservationRow)
SUMMARY_COLUMNS = columns(SummaryRow)
PROMPT_COLUMNS = columns(PromptRow)
SESSION_COLUMNS = columns(SessionRow)
OBSERVATION_CONTENT = content(ParsedObservation)
SUMMARY_CONTENT = content(ParsedSummary)
JSON_LISTS = frozenset(json_lists(ObservationRow) + json_lists(SummaryRow))
TEAM_COLUMNS = ("author", "device", "team_rev")


def select(names: tuple[str, ...], alias: str = "") -> str:
    """`a.x, a.y, …`: a SELECT list of `names`, qualified by a table alias when given."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(prefix + name for name in names)


def decode(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as a dict with its JSON-list columns decoded (an unreadable list reads as empty)."""
    out = dict(row)
    for name in JSON_LISTS.intersection(out):
        out[name] = decode_list(out[name])
    return out


def decode_list(value: object) -> list[str]:
    """A stored JSON list of strings; anything else (NULL, damaged text, a non-list) reads as []."""
    if isinstance(value, list):
        return [str(item) for item in value]
    if not isinstance(value, str | bytes):
        return []
    try:
        loaded = json.loads(value)
    except ValueError:
        return []
    return [str(item) for item in loaded] if isinstance(loaded, list) else []


def encode_list(values: object) -> str:
    """A list column's stored text (what `decode_list` reads back)."""
    items = [values] if isinstance(values, str) else values if isinstance(values, list | tuple) else []
    return json.dumps([str(item) for item in items], ensure_ascii=False)


def content_values(parsed: ParsedObservation | ParsedSummary) -> dict[str, object]:
    """The observer-written fields as their columns store them: lists JSON-encoded, and an empty text
    NULL where the column allows it (an observation's subtitle)."""
    table = ObservationRow if isinstance(parsed, ParsedObservation) else SummaryRow
    hints = typing.get_type_hints(table)
    values: dict[str, object] = {}
    for name in content(type(parsed)):
        value = getattr(parsed, name)
        if name in JSON_LISTS:
            value = encode_list(list(value))
        elif value == "" and type(None) in typing.get_args(hints[name]):
            value = None
        values[name] = value
    return values


def insert(table: str, names: Iterable[str], verb: str = "INSERT") -> str:
    """`INSERT INTO table (a, b) VALUES (:a, :b)` for named parameters; `verb` may add `OR IGNORE`."""
    listed = tuple(names)
    return f"{verb} INTO {table} ({', '.join(listed)}) VALUES ({', '.join(':' + name for name in listed)})"


def content_from(row_type: type, payload: Mapping[str, Any]) -> dict[str, object]:
    """The content columns of `row_type` (an observation's or summary's) from a foreign mapping — a
    teammate's pushed row, an import — each made the type its column holds: lists JSON-encoded (a
    non-list reads as empty), texts as text ("" when missing), an optional text None unless text."""
    values: dict[str, object] = {}
    for name, how in _content_plan(row_type):
        value = payload.get(name)
        if how == _AS_LIST:
            values[name] = (_list_text([item if item.__class__ is str else str(item) for item in value]) if value
                            else "[]") if isinstance(value, list) else "[]"
        elif how == _AS_OPTIONAL:
            values[name] = value if isinstance(value, str) else None
        else:
            values[name] = "" if value is None else value if value.__class__ is str else str(value)
    return values


_AS_LIST, _AS_OPTIONAL, _AS_TEXT = 0, 1, 2
_list_text = json.JSONEncoder(ensure_ascii=False).encode  # what encode_list writes, without its checks


@functools.cache
def _content_plan(row_type: type) -> tuple[tuple[str, int], ...]:
    """How `content_from` makes each content column of `row_type` (worked out once: a join pulls 100k rows)."""
    hints = type_hints(row_type)
    names = OBSERVATION_CONTENT if row_type is ObservationRow else SUMMARY_CONTENT
    return tuple((name, _AS_LIST if name in JSON_LISTS else _AS_OPTIONAL if type(None) in typing.get_args(hints[name])
                  else _AS_TEXT) for name in names)


@functools.cache
def type_hints(row_type: type) -> dict[str, Any]:
    """`typing.get_type_hints(row_type)`, worked out once (it costs ~1 ms: a pulled row must not pay it)."""
    return typing.get_type_hints(row_type)


def columns_except(row_type: type, local: Iterable[str]) -> tuple[str, ...]:
    """The columns of `row_type` but `local` ones (one machine's bookkeeping), in table order."""
    skip = set(local)
    return tuple(name for name in columns(row_type) if name not in skip)
