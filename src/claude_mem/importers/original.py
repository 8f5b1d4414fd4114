"""`claude-mem import claude-mem`: the original (TypeScript) claude-mem's memory brought over as it is.

Its sessions, prompts, observations and summaries become ours column by column, with no observer
pass: each row is turned into a record of our export format (docs/export-format.md) and goes in
through the JSONL import's own checks, redaction and writer (`export_format.from_record`,
`portable.write_group`): one transaction per session, matched by uid. Each uid is derived from the
original's identity of the row, so importing the same database twice adds nothing.

The original names a project by its folder's basename; each name becomes one of our project keys
(`--map NAME=PATH`, else a project of ours called NAME, else the name itself) and the choice is
reported.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from claude_mem import project as projects
from claude_mem.domain import OBSERVATION_TYPES, iso
from claude_mem.recall import export_format
from claude_mem.recall.export_format import RecordError
from claude_mem.store import context, foreign, portable
from claude_mem.store import projects as known
from claude_mem.store.models import ParsedObservation
from claude_mem.store.results import content_hash

# Prefix of every derived uid: the product whose ids they are (its schema has not changed meaning since 13).
NAMESPACE = "claude-mem-13"
# Its session statuses as ours: a session it still calls active will not get another event from it.
STATUSES = {"completed": "completed", "failed": "failed", "active": "interrupted"}
# An observation of a type we do not have (another of its "modes") keeps its text under this type.
FALLBACK_TYPE = "discovery"
TITLE_CHARS = 120
TABLES = ("sessions", "prompts", "observations", "summaries")

# How a project name was placed, as the report says it.
BY_MAP = "--map"
BY_NAME = "a project of ours shown by that name"
BY_FOLDER = "a project of ours in a folder of that name"
AMBIGUOUS = "keyed by the name itself"
AS_IS = "keyed by the name itself"


@dataclass(frozen=True)
class ProjectChoice:
    """Where the original's project `name` goes: our project `key`, and why (`how`, `note`)."""

    name: str
    key: str
    how: str
    note: str = ""


@dataclass
class Tally:
    """Rows of one project: added, and present already (per table)."""

    added: Counter = field(default_factory=Counter)
    present: Counter = field(default_factory=Counter)


@dataclass
class Outcome:
    """What an import did (or, dry, would do)."""

    path: str
    dry_run: bool = False
    choices: dict[str, ProjectChoice] = field(default_factory=dict)
    tallies: dict[str, Tally] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    skipped: int = 0
    emptied: int = 0
    retyped: Counter = field(default_factory=Counter)
    unused_maps: list[str] = field(default_factory=list)
    rows_read: int = 0

    @property
    def incomplete(self) -> bool:
        """Whether anything was left out: a row skipped, or a field of one imported empty."""
        return bool(self.skipped or self.emptied)

    def skip(self, where: str, why: str, rows: int = 1) -> None:
        self.skipped += rows
        self.problems.append(f"{self.path}: {where}: {why}")

    def empty(self, where: str, why: str) -> None:
        self.emptied += 1
        self.problems.append(f"{self.path}: {where}: {why}")

    def tally(self, name: str) -> Tally:
        return self.tallies.setdefault(name, Tally())


def derived_uid(table: str, identity: str) -> str:
    """Our uid for one of its rows: the same row gives the same uid in every import."""
    return hashlib.sha256(f"{NAMESPACE}:{table}:{identity}".encode()).hexdigest()[:32]


def parse_maps(values: Sequence[str]) -> dict[str, str]:
    """`NAME=PATH` options as name -> absolute path. ValueError when malformed."""
    found: dict[str, str] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise ValueError(f"{value!r} is not NAME=PATH (the original's project name, then a folder)")
        found[name.strip()] = os.path.abspath(os.path.expanduser(path.strip()))
    return found


def choose_projects(names: Sequence[str], maps: dict[str, str], known: Sequence[str]) -> dict[str, ProjectChoice]:
    """Our project key for each of its project names: `--map`, else a known project whose display name
    (or, when several share one, folder name) is the name, else the name itself."""
    shown = projects.display_names(list(known))
    chosen: dict[str, ProjectChoice] = {}
    for name in names:
        if name in maps:
            chosen[name] = ProjectChoice(name, maps[name], BY_MAP)
            continue
        named = [key for key in known if shown[key] == name]
        folders = [key for key in known if os.path.basename(key.rstrip("/")) == name]
        if len(named) == 1:
            chosen[name] = ProjectChoice(name, named[0], BY_NAME)
        elif len(folders) == 1:
            chosen[name] = ProjectChoice(name, folders[0], BY_FOLDER)
        elif folders:
            chosen[name] = ProjectChoice(name, name, AMBIGUOUS, f"{len(folders)} projects of ours are called {name} "
                                         f"({', '.join(folders)}): pass --map {name}=PATH to choose")
        else:
            chosen[name] = ProjectChoice(name, name, AS_IS, f"no project of ours is called {name}: pass "
                                         f"--map {name}=PATH to file it under a folder")
    return chosen


def run(source: sqlite3.Connection, optional: dict[str, tuple[str, ...]], conn: sqlite3.Connection, path: str,
        maps: dict[str, str], dry_run: bool = False,
        progress: Callable[[int], None] | None = None) -> Outcome:
    """Import everything of `source` (opened by `foreign.open_readonly`) into `conn`, `maps` naming a
    folder for some of its project names; `progress` is told how many of its rows have been read so far."""
    outcome = Outcome(path=path, dry_run=dry_run)
    with foreign.snapshot(source):
        names = foreign.project_names(source)
        keys = {name: known.project_of_path(conn, path) for name, path in maps.items()}  # as any --project PATH
        outcome.choices = choose_projects(names, keys, context.known_projects(conn))
        outcome.unused_maps = sorted(set(maps) - set(names))
        for session in foreign.sessions(source, optional):
            children = (foreign.prompts_of(source, session), foreign.observations_of(source, session, optional),
                        foreign.summaries_of(source, session))
            _import_session(conn, session, *children, outcome)
            outcome.rows_read += 1 + sum(len(rows) for rows in children)
            if progress is not None:
                progress(outcome.rows_read)
        for table, count in foreign.orphans(source).items():
            if count:
                outcome.skip(table, f"{count} row(s) belong to no session of it (their session row is gone); "
                                    "skipped", rows=count)
    return outcome


def _import_session(conn: sqlite3.Connection, session: dict, prompts: list[dict], observations: list[dict],
                    summaries: list[dict], outcome: Outcome) -> None:
    where = f"sdk_sessions row {session['id']}"
    name = session["project"] if isinstance(session["project"], str) else ""
    try:
        kind, row = export_format.from_record(_session(session, summaries, observations, prompts, outcome))
    except RecordError as exc:
        outcome.skip(where, f"{exc}; skipped with its {len(prompts)} prompt(s), {len(observations)} observation(s) "
                            f"and {len(summaries)} summary(ies)", rows=1 + len(prompts) + len(observations) + len(summaries))
        return
    group: list[tuple[str, dict]] = [(kind, row)]
    owners: list[str] = [name]
    session_uid, session_key = row["uid"], row["project"]
    for table, rows, convert in (("user_prompts", prompts, _prompt), ("observations", observations, _observation),
                                 ("session_summaries", summaries, _summary)):
        for raw in rows:
            own = raw.get("project")  # prompts have none: they belong to their session's project
            owner = own if isinstance(own, str) and own else name
            key = outcome.choices[owner].key if owner in outcome.choices else session_key
            place = f"{table} row {raw['id']}"
            try:
                record = convert(raw, session, session_uid, key, place, outcome)
                if record is None:
                    continue
                kind, converted = export_format.from_record(record)
            except RecordError as exc:
                outcome.skip(place, f"{exc}; skipped")
                continue
            if kind == "observation":
                converted["content_hash"] = content_hash(ParsedObservation(
                    type=converted["type"], title=converted["title"], narrative=converted["narrative"],
                    facts=tuple(converted["facts"])))
            group.append((kind, converted))
            owners.append(owner)
    results = portable.write_group(conn, group, dry_run=outcome.dry_run)
    for (kind, _), owner, result in zip(group, owners, results):
        tally = outcome.tally(owner)
        table = portable_table(kind)
        if result == portable.ADDED:
            tally.added[table] += 1
        elif result == portable.PRESENT:
            tally.present[table] += 1
        else:  # cannot happen: its session is first in the group
            outcome.skip(where, f"a {kind} found no session; skipped")


def portable_table(kind: str) -> str:
    return {"session": "sessions", "prompt": "prompts", "observation": "observations", "summary": "summaries"}[kind]


def _time(epoch: object, text: object) -> object:
    """Its time of a row in our format: from the epoch milliseconds, else its ISO text as it is (checked later)."""
    if isinstance(epoch, int) and not isinstance(epoch, bool) and epoch > 0:
        seconds = epoch / 1000 if epoch > 10**11 else epoch  # some early rows hold seconds
        try:
            return iso(seconds)
        except (OverflowError, ValueError, OSError):
            pass
    return text


def _list(value: object, column: str, place: str, outcome: Outcome) -> list[str]:
    """A JSON list column as a list of strings; NULL or blank is empty, anything else unreadable is emptied and reported."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return []
    try:
        parsed = json.loads(value) if isinstance(value, str) else None
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, list) and all(isinstance(item, str) for item in parsed):
        return parsed
    outcome.empty(place, f"`{column}` is not a JSON list of strings ({str(value)[:40]!r}); imported empty")
    return []


def _text(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _session(session: dict, summaries: list[dict], observations: list[dict], prompts: list[dict],
             outcome: Outcome) -> dict:
    name = session["project"]
    started = _time(session["started_at_epoch"], session["started_at"])
    ended = _time(session["completed_at_epoch"], session["completed_at"]) if (
        session["completed_at_epoch"] or session["completed_at"]) else None
    moments = [started, ended] + [_time(row["created_at_epoch"], row["created_at"])
                                  for row in (*prompts, *observations, *summaries)]
    times = [moment for moment in moments if isinstance(moment, str) and export_format.canonical_time(moment) == moment]
    requests = [row["request"] for row in summaries if isinstance(row["request"], str) and row["request"].strip()]
    title = session["custom_title"] if isinstance(session["custom_title"], str) and session["custom_title"] else (
        requests[0] if requests else None)
    return {
        "type": "session", "uid": derived_uid("sdk_sessions", _text(session["content_session_id"])),
        "content_session_id": session["content_session_id"],
        "project": outcome.choices[name].key if name in outcome.choices else name, "cwd": None,
        "title": title, "status": STATUSES.get(_text(session["status"]), "interrupted"), "observer_provider": None,
        "memory_session_id": session["memory_session_id"], "started_at": started, "ended_at": ended,
        "last_activity_at": max(times) if times else started, "last_injected_at": None,
    }


def _prompt(raw: dict, session: dict, session_uid: str, key: str, place: str, outcome: Outcome) -> dict:
    return {
        "type": "prompt", "uid": derived_uid("user_prompts", f"{session['content_session_id']}:{raw['id']}"),
        "session": session_uid, "prompt_number": raw["prompt_number"], "text": _text(raw["prompt_text"]),
        "private": False, "created_at": _time(raw["created_at_epoch"], raw["created_at"]),
    }


def _observation(raw: dict, session: dict, session_uid: str, key: str, place: str, outcome: Outcome) -> dict | None:
    narrative = _text(raw["narrative"]) or _text(raw["text"])
    title = _text(raw["title"]).strip() or _text(raw["subtitle"]).strip() or narrative.strip().split("\n")[0][:TITLE_CHARS]
    if not title:
        outcome.skip(place, "has no title and no text; skipped")
        return None
    kind = _text(raw["type"]).strip().lower()
    if kind not in OBSERVATION_TYPES:
        outcome.retyped[kind or "(none)"] += 1
        kind = FALLBACK_TYPE
    return {
        "type": "observation", "uid": derived_uid("observations", f"{session['memory_session_id']}:{raw['id']}"),
        "session": session_uid, "project": key, "observation_type": kind, "title": title,
        "subtitle": raw["subtitle"] if isinstance(raw["subtitle"], str) and raw["subtitle"] else None,
        "narrative": narrative, "facts": _list(raw["facts"], "facts", place, outcome),
        "concepts": _list(raw["concepts"], "concepts", place, outcome),
        "files_read": _list(raw["files_read"], "files_read", place, outcome),
        "files_modified": _list(raw["files_modified"], "files_modified", place, outcome),
        "prompt_number": raw["prompt_number"], "content_hash": "", "input_tokens": 0, "output_tokens": 0,
        "fetch_count": 0, "created_at": _time(raw["created_at_epoch"], raw["created_at"]),
    }


def _summary(raw: dict, session: dict, session_uid: str, key: str, place: str, outcome: Outcome) -> dict:
    return {
        "type": "summary", "uid": derived_uid("session_summaries", f"{session['memory_session_id']}:{raw['id']}"),
        "session": session_uid, "project": key, "prompt_number": raw["prompt_number"],
        **{name: _text(raw[name]) for name in ("request", "investigated", "learned", "completed", "next_steps")},
        "files_read": _list(raw["files_read"], "files_read", place, outcome),
        "files_edited": _list(raw["files_edited"], "files_edited", place, outcome), "notes": _text(raw["notes"]),
        "input_tokens": 0, "output_tokens": 0, "created_at": _time(raw["created_at_epoch"], raw["created_at"]),
    }
