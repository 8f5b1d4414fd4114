"""`claude-mem import transcripts`: past Claude Code sessions into the capture tables, as the hooks
would have written them, queued for the observer.

Each hook call a transcript shows (`transcripts.SessionReader`) goes through the hooks' own gate
(`payload.capture_record`: skip_tools, excluded_projects, `<private>`, secret redaction,
max_field_chars) and is written by the hooks' own `apply_record`. Nothing is doubled:

- The keys are the hooks' keys. A tool call is keyed by its `tool_use_id`; a prompt, a turn end
  and a session end by the hash of session + kind + cleaned payload + the turn's `prompt_id`, which
  the transcript records as `promptId`. A session captured live by the hooks, or imported before,
  therefore adds nothing.
- Where a key cannot match (a CLI without `prompt_id`, a SessionEnd whose reason the transcript does
  not record, a last message worded differently), a session the store already knows is compared
  turn by turn: prompt *k* is there when the store's prompt *k* has the same cleaned text, a turn end
  when its turn already has one, and a session end is only added after events this import added to
  a session that had ended (as a resumed session gets a second SessionEnd).

Each session is read and cleaned first, then written in one transaction: an interrupted import
leaves whole sessions behind, and running it again continues with the rest.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from claude_mem.capture import payload as capture
from claude_mem.domain import TURN_KINDS
from claude_mem.importers import lines
from claude_mem.importers.transcripts import HookCall, Notes, SessionFiles, SessionReader
from claude_mem.store import db, imports
from claude_mem.store.capture import apply_record

PROGRESS_EVERY = 500  # hook calls read between two progress reports inside one session


@dataclass
class ProjectTally:
    sessions: int = 0
    events: int = 0
    tokens: int = 0


@dataclass
class Outcome:
    """What an import did (or, in a dry run, would do)."""

    dry_run: bool = False
    sessions_total: int = 0
    sessions_read: int = 0
    sessions_added: int = 0  # gained rows
    sessions_present: int = 0  # everything was stored already
    sessions_empty: int = 0  # no prompt or tool call in them
    sessions_filtered: int = 0  # left out by --since or --project
    sessions_excluded: int = 0  # excluded_projects
    calls_read: int = 0
    events: Counter[str] = field(default_factory=Counter)  # added, per kind
    prompts: int = 0  # prompt rows added (private ones too)
    present: int = 0  # already stored: captured live or imported before
    private: int = 0  # tool calls and turn ends of private turns, dropped
    skipped: int = 0  # skip_tools
    bad_records: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    projects: dict[str, ProjectTally] = field(default_factory=dict)
    notes: Notes = field(default_factory=Notes)
    tokens: int = 0  # estimated observer input tokens (dry run)

    @property
    def events_added(self) -> int:
        return sum(self.events.values())

    @property
    def incomplete(self) -> bool:
        """Something was skipped that the user should look at (exit code 1)."""
        return bool(self.notes.skipped_lines or self.bad_records or self.unreadable or self.missing)


class _Store:
    """The store as the importer sees it: a connection (None in a dry run without a database) and
    what this run would have added (a dry run writes nothing)."""

    def __init__(self, conn: sqlite3.Connection | None, dry_run: bool) -> None:
        self.conn = conn
        self.dry_run = dry_run
        self.keys: dict[str, int | None] = {}

    def stored(self, key: str | None) -> tuple[bool, int | None]:
        if not key:
            return False, None
        if key in self.keys:
            return True, self.keys[key]
        return imports.event_number(self.conn, key) if self.conn is not None else (False, None)

    def status(self, session: str) -> str | None:
        return imports.session_status(self.conn, session) if self.conn is not None else None

    def add(self, record: dict, number: int | None) -> bool:
        """Write `record` (or, in a dry run, remember it); whether it added a row."""
        if self.dry_run:
            self.keys[record["event_key"]] = number
            return True
        assert self.conn is not None
        return apply_record(self.conn, record)


class _SessionWrite:
    """The records of one session written in order, skipping what the store has already."""

    def __init__(self, store: _Store, outcome: Outcome, session: str) -> None:
        self.store, self.outcome, self.session = store, outcome, session
        self.before = store.status(session)
        conn = store.conn
        self.last = imports.last_prompt_number(conn, session) if self.before and conn else 0
        self.ordinal = 0
        self.number: int | None = None
        self.private = False
        self.added: list[tuple[str, int | None, dict]] = []

    def _present_prompt(self, record: dict) -> bool:
        stored, number = self.store.stored(record["event_key"])
        if stored:
            self.number = number
            return True
        if self.before is None or self.store.conn is None:
            return False
        there = imports.prompt_at(self.store.conn, self.session, self.ordinal)
        wanted = ("" if self.private else str(record["payload"]["prompt"]), self.private)
        if there == wanted:
            self.number = self.ordinal
            return True
        return False

    def _present(self, record: dict) -> bool:
        if self.store.stored(record["event_key"])[0]:
            return True
        if self.before is None or self.store.conn is None:
            return False
        if record["kind"] == "summarize":
            return imports.has_turn_event(self.store.conn, self.session, "summarize", self.number)
        if record["kind"] == "session_end":  # the hooks end sessions they saw; see the module docstring
            return not (self.before == "completed" and self.added)
        return False

    def write(self, record: dict) -> None:
        kind = record["kind"]
        if kind == "session_start":
            if self.before is None and not self.store.dry_run:
                self.store.add(record, None)  # creates the session row (the hooks' SessionStart)
            return
        if kind == "prompt":
            self.ordinal += 1
            self.private = bool(record["private"])
            if self._present_prompt(record):
                self.outcome.present += 1
                return
            self.last += 1
            self.number = self.last
        elif kind in TURN_KINDS and self.private:
            self.outcome.private += 1
            return
        elif self._present(record):
            self.outcome.present += 1
            return
        if not self.store.add(record, self.number):
            self.outcome.present += 1
            return
        if kind == "prompt":
            self.outcome.prompts += 1
            if self.private:
                return
        self.outcome.events[kind] += 1
        self.added.append((kind, self.number, {**record["payload"], "prompt_number": self.number}))


def _records(reader: SessionReader, store: _Store, config: dict, env: dict, outcome: Outcome,
             progress: Callable[[Outcome], None]) -> list[dict]:
    """The session's capture records, cleaned by the hooks' gate (no database lock held meanwhile)."""
    records: list[dict] = []
    for call in reader:
        outcome.calls_read += 1
        if outcome.calls_read % PROGRESS_EVERY == 0:
            progress(outcome)
        tool_use_id = call.payload.get("tool_use_id")
        if call.hook == "post-tool" and store.stored(tool_use_id if isinstance(tool_use_id, str) else None)[0]:
            outcome.present += 1  # the key is known before cleaning: spare the redaction
            continue
        try:
            record = _gated(call, config, env, outcome, reader.files.label)
        except capture.Unregistered:
            outcome.skipped += 1
            continue
        if record is not None:
            records.append(record)
    return records


def _gated(call: HookCall, config: dict, env: dict, outcome: Outcome, label: str) -> dict | None:
    """The call's capture record through the hooks' gate, at the transcript's time; None (reported)
    when the payload cannot be stored. Unregistered when the gate leaves it out."""
    try:
        record = capture.capture_record(call.hook, call.payload, config, env)
    except capture.BadInput as exc:
        outcome.bad_records.append(f"{label}: {call.payload.get('hook_event_name')}: {exc}")
        return None
    record["captured_at"] = call.at or record["captured_at"]
    return record


def run(sessions: Sequence[SessionFiles], *, data_dir: str, config: dict, dry_run: bool = False,
        since: str | None = None, wanted: Callable[[str], bool] | None = None,
        progress: Callable[[Outcome], None] = lambda outcome: None,
        max_line_bytes: int = lines.MAX_LINE_BYTES) -> Outcome:
    """Import `sessions`; `since` (store timestamp) and `wanted(project)` filter whole sessions."""
    outcome = Outcome(dry_run=dry_run, sessions_total=len(sessions))
    path = db.db_path(data_dir)
    conn = db.connect_readonly(path) if dry_run else db.connect(path)
    store = _Store(conn, dry_run)
    try:
        for files in sessions:
            _import_session(files, store, outcome, config, since, wanted, progress, max_line_bytes)
            outcome.sessions_read += 1
            progress(outcome)
    finally:
        if conn is not None:
            conn.close()
    return outcome


def _import_session(files: SessionFiles, store: _Store, outcome: Outcome, config: dict, since: str | None,
                    wanted: Callable[[str], bool] | None, progress: Callable[[Outcome], None],
                    max_line_bytes: int) -> None:
    reader = SessionReader(files, outcome.notes, max_line_bytes)
    calls = iter(reader)
    first = next(calls, None)  # the session start, yielded just before the first prompt or tool call
    if first is None:
        outcome.unreadable += reader.unreadable
        outcome.sessions_empty += not reader.unreadable
        return
    if since is not None and (reader.start or first.at) < since:
        outcome.sessions_filtered += 1
        return
    # Claude Code gives hooks the session's start directory as CLAUDE_PROJECT_DIR.
    env = {"CLAUDE_PROJECT_DIR": reader.start_cwd} if reader.start_cwd else {}
    try:
        start = _gated(first, config, env, outcome, files.label)
    except capture.Unregistered:  # a session start names no tool: its project is excluded
        outcome.sessions_excluded += 1
        return
    if start is None:
        return
    project = str(start["project"])
    if wanted is not None and not wanted(project):
        outcome.sessions_filtered += 1
        return
    records = [start, *_records(reader, store, config, env, outcome, progress)]
    outcome.unreadable += reader.unreadable
    before = outcome.events_added + outcome.prompts
    if store.dry_run:
        writer = _SessionWrite(store, outcome, files.session_id)
        for record in records:
            writer.write(record)
    else:
        assert store.conn is not None
        with db.transaction(store.conn):  # the whole session or nothing
            writer = _SessionWrite(store, outcome, files.session_id)
            for record in records:
                writer.write(record)
    tally = outcome.projects.setdefault(project, ProjectTally())
    if outcome.events_added + outcome.prompts > before:
        outcome.sessions_added += 1
        tally.sessions += 1
        tally.events += len(writer.added)
    else:
        outcome.sessions_present += 1
    if store.dry_run and writer.added:
        from claude_mem.importers.estimate import observer_tokens

        tokens = observer_tokens(files.session_id, project, writer.added)
        tally.tokens += tokens
        outcome.tokens += tokens
