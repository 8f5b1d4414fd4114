"""`claude-mem import claude-mem`: the original (TypeScript) claude-mem's memory brought over as it is.

Its sessions, prompts, observations and summaries become ours column by column, with no observer
pass: each row is turned into a row of ours and goes in through the JSONL import's own checks,
redaction and writer (`export_format.from_row`, `portable.write_group`): one transaction per
session, matched by uid. Each uid is derived from the original's identity of the row, so importing
the same database twice adds nothing. The observer-written columns have our names in its tables
too, so they are carried by our list of them (`store.rows`).

The original names a project by its folder's basename; each name becomes one of our project keys
(`--map NAME=PATH`, else a project of ours called NAME, else the name itself) and the choice is
reported.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType

from claude_mem import paths
from claude_mem import project as projects
from claude_mem.domain import OBSERVATION_TYPES, iso
from claude_mem.importers import export_format
from claude_mem.importers.export_format import RecordError
from claude_mem.importers.source import ImportReport, Progress, Table, quiet
from claude_mem.store import Store, context, foreign, portable
from claude_mem.store import projects as known
from claude_mem.store.foreign import ForeignError, TheirRow
from claude_mem.store.portable import PortableRow
from claude_mem.store.rows import JSON_LISTS, OBSERVATION_CONTENT, SUMMARY_CONTENT

# Prefix of every derived uid: the product whose ids they are (its schema has not changed meaning since 13).
NAMESPACE = "claude-mem-13"
# Its session statuses as ours: a session it still calls active will not get another event from it.
STATUSES = {"completed": "completed", "failed": "failed", "active": "interrupted"}
# An observation of a type we do not have (another of its "modes") keeps its text under this type.
FALLBACK_TYPE = "discovery"
TITLE_CHARS = 120
ROWS_SKIPPED = "row(s) skipped"
FIELDS_EMPTIED = "field(s) imported empty"

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


@dataclass
class _Run:
    """What one import has done so far: the report, and per project of theirs what it added."""

    report: ImportReport
    choices: dict[str, ProjectChoice] = field(default_factory=dict)
    added: dict[str, Counter[str]] = field(default_factory=dict)
    present: Counter[str] = field(default_factory=Counter)
    retyped: Counter[str] = field(default_factory=Counter)
    plan: portable.Plan | None = None  # a dry run: what the writes would do, decided by reads

    def skip(self, where: str, why: str, rows: int = 1) -> None:
        self.report.skip(ROWS_SKIPPED, f"{self.report.source}: {where}: {why}", rows)

    def empty(self, where: str, why: str) -> None:
        self.report.skip(FIELDS_EMPTIED, f"{self.report.source}: {where}: {why}")

    def key(self, name: str, otherwise: str) -> str:
        return self.choices[name].key if name in self.choices else otherwise


class OriginalSource:
    """The original claude-mem's database (`open` it: it stays open, read-only, until closed)."""

    name = "claude-mem"
    unit = "rows"
    dry_run_writes = False  # a dry run reads what a run would match (portable.Plan), at read speed

    def __init__(self, theirs: foreign.Original, maps: dict[str, str]) -> None:
        self.theirs = theirs
        self.maps = maps  # its project name -> a folder of ours (`--map`)

    @classmethod
    def open(cls, path: str, maps: dict[str, str], data_dir: str) -> OriginalSource:
        """Its database at `path`, checked; ForeignError when it cannot be read as the original's."""
        ours = paths.db_path(data_dir)
        if os.path.exists(path) and os.path.exists(ours) and os.path.samefile(path, ours):
            raise ForeignError(f"{path} is claude-mem-py's own database (CLAUDE_MEM_DATA_DIR points at it); "
                               "nothing imported")
        return cls(foreign.open_readonly(path), maps)

    def close(self) -> None:
        self.theirs.close()

    def __enter__(self) -> OriginalSource:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def size(self) -> int:
        return sum(self.theirs.counts().values())

    def run(self, db: Store, *, dry_run: bool = False, progress: Progress = quiet) -> ImportReport:
        """Import everything it holds into `db`; progress counts its rows read."""
        state = _Run(ImportReport(self.theirs.path, dry_run), plan=portable.Plan() if dry_run else None)
        state.report.skipped.update({ROWS_SKIPPED: 0, FIELDS_EMPTIED: 0})  # the order the report names them in
        try:
            with self.theirs.snapshot():
                names = self.theirs.project_names()
                keys = {name: known.project_of_path(db, path) for name, path in self.maps.items()}  # as --project PATH
                state.choices = choose_projects(names, keys, context.known_projects(db))
                read = 0
                for session in self.theirs.sessions():
                    children = (self.theirs.prompts_of(session), self.theirs.observations_of(session),
                                self.theirs.summaries_of(session))
                    _import_session(db, session, *children, state)
                    read += 1 + sum(len(rows) for rows in children)
                    progress(read)
                for table, count in self.theirs.orphans().items():
                    if count:
                        state.skip(table, f"{count} row(s) belong to no session of it (their session row is gone); "
                                          "skipped", rows=count)
        except ForeignError as exc:
            raise ForeignError(f"{exc}; the sessions imported so far are stored whole, run the same command again "
                               "for the rest") from None
        _finish(state, unused=sorted(set(self.maps) - set(names)))
        return state.report


def _finish(state: _Run, unused: list[str]) -> None:
    """The report's table (per project of theirs) and notes (where each went, what changed on the way)."""
    report = state.report
    tables = tuple(portable.TABLES.values())
    rows = []
    for name in sorted(state.choices):
        added = state.added.get(name, Counter())
        rows.append((name, *(str(added[table]) for table in tables), str(state.present[name])))
    report.table = Table(("project", *tables, "already here"), tuple(rows))
    report.notes += [f"{name} → {choice.key} ({choice.how})" + (f": {choice.note}" if choice.note else "")
                     for name, choice in sorted(state.choices.items())]
    report.notes += [f"--map {name}: no project of that name in {report.source}" for name in unused]
    report.notes += [f"{count} observation(s) of type {kind!r}, which ours does not have, imported as "
                     f"{FALLBACK_TYPE}" for kind, count in sorted(state.retyped.items())]


def _import_session(db: Store, session: TheirRow, prompts: list[TheirRow], observations: list[TheirRow],
                    summaries: list[TheirRow], state: _Run) -> None:
    where = f"sdk_sessions row {session['id']}"
    name = session["project"] if isinstance(session["project"], str) else ""
    try:
        row = export_format.from_row("session", _session(session, summaries, observations, prompts, state))
    except RecordError as exc:
        state.skip(where, f"{exc}; skipped with its {len(prompts)} prompt(s), {len(observations)} observation(s) "
                          f"and {len(summaries)} summary(ies)", rows=1 + len(prompts) + len(observations) + len(summaries))
        return
    group: list[tuple[str, PortableRow]] = [("session", row)]
    owners: list[str] = [name]
    session_uid, session_key = row["uid"], row["project"]
    converters = (("user_prompts", "prompt", prompts), ("observations", "observation", observations),
                  ("session_summaries", "summary", summaries))
    for table, kind, raws in converters:
        for raw in raws:
            own = raw.get("project")  # prompts have none: they belong to their session's project
            owner = own if isinstance(own, str) and own else name
            place = f"{table} row {raw['id']}"
            try:
                converted = _convert(kind, raw, session, session_uid, state.key(owner, session_key), place, state)
                if converted is None:
                    continue
                checked = export_format.from_row(kind, converted)
            except RecordError as exc:
                state.skip(place, f"{exc}; skipped")
                continue
            if kind == "observation":
                export_format.rehashed(checked)
            group.append((kind, checked))
            owners.append(owner)
    results = state.plan.classify(db, group) if state.plan else portable.write_group(db, group)
    for (kind, _), owner, result in zip(group, owners, results):
        table = portable.TABLES[kind]
        if result == portable.ADDED:
            state.added.setdefault(owner, Counter())[table] += 1
            state.report.added[table] += 1
        elif result == portable.PRESENT:
            state.present[owner] += 1
            state.report.present[table] += 1
        else:  # cannot happen: its session is first in the group
            state.skip(where, f"a {kind} found no session; skipped")


def _time(epoch: object, text: object) -> object:
    """Its time of a row in our format: from the epoch milliseconds, else its ISO text as it is (checked later)."""
    if isinstance(epoch, int) and not isinstance(epoch, bool) and epoch > 0:
        seconds = epoch / 1000 if epoch > 10**11 else epoch  # some early rows hold seconds
        try:
            return iso(seconds)
        except (OverflowError, ValueError, OSError):
            pass
    return text


def _list(value: object, column: str, place: str, state: _Run) -> list[str]:
    """A JSON list column as a list of strings; NULL or blank is empty, anything else unreadable is emptied and reported."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return []
    try:
        parsed = json.loads(value) if isinstance(value, str) else None
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, list) and all(isinstance(item, str) for item in parsed):
        return parsed
    state.empty(place, f"`{column}` is not a JSON list of strings ({str(value)[:40]!r}); imported empty")
    return []


def _text(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _content(raw: TheirRow, columns: Sequence[str], place: str, state: _Run) -> PortableRow:
    """The observer-written columns, which its tables name as ours do: lists decoded, text as text."""
    return {name: _list(raw[name], name, place, state) if name in JSON_LISTS else _text(raw[name]) for name in columns}


def _session(session: TheirRow, summaries: list[TheirRow], observations: list[TheirRow], prompts: list[TheirRow],
             state: _Run) -> PortableRow:
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
        "uid": derived_uid("sdk_sessions", _text(session["content_session_id"])),
        "content_session_id": session["content_session_id"], "project": state.key(name, name), "cwd": None,
        "title": title, "status": STATUSES.get(_text(session["status"]), "interrupted"), "observer_provider": None,
        "memory_session_id": session["memory_session_id"], "started_at": started, "ended_at": ended,
        "last_activity_at": max(times) if times else started, "last_injected_at": None,
    }


def _convert(kind: str, raw: TheirRow, session: TheirRow, session_uid: str, key: str, place: str,
             state: _Run) -> PortableRow | None:
    """One of its prompts, observations or summaries as a row of ours; None (reported) when it has nothing to keep."""
    if kind == "prompt":
        return {
            "uid": derived_uid("user_prompts", f"{session['content_session_id']}:{raw['id']}"),
            "session_uid": session_uid, "prompt_number": raw["prompt_number"], "text": _text(raw["prompt_text"]),
            "private": False, "created_at": _time(raw["created_at_epoch"], raw["created_at"]),
        }
    identity = f"{session['memory_session_id']}:{raw['id']}"
    common = {"session_uid": session_uid, "project": key, "prompt_number": raw["prompt_number"], "input_tokens": 0,
              "output_tokens": 0, "created_at": _time(raw["created_at_epoch"], raw["created_at"])}
    if kind == "summary":
        return {"uid": derived_uid("session_summaries", identity), **common,
                **_content(raw, SUMMARY_CONTENT, place, state)}
    narrative = _text(raw["narrative"]) or _text(raw["text"])
    title = _text(raw["title"]).strip() or _text(raw["subtitle"]).strip() or narrative.strip().split("\n")[0][:TITLE_CHARS]
    if not title:
        state.skip(place, "has no title and no text; skipped")
        return None
    observation_type = _text(raw["type"]).strip().lower()
    if observation_type not in OBSERVATION_TYPES:
        state.retyped[observation_type or "(none)"] += 1
        observation_type = FALLBACK_TYPE
    content = _content(raw, OBSERVATION_CONTENT, place, state)
    content.update(type=observation_type, title=title, narrative=narrative,
                   subtitle=raw["subtitle"] if isinstance(raw["subtitle"], str) and raw["subtitle"] else None)
    return {"uid": derived_uid("observations", identity), **common, **content, "content_hash": "", "fetch_count": 0}
