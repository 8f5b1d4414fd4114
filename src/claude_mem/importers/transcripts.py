"""`claude-mem import transcripts`: past Claude Code sessions into the capture tables, as the hooks
would have written them, queued for the observer.

Each hook call a transcript shows (`transcript_reader.SessionReader`) goes through the hooks' own
gate (`payload.capture_record`: skip_tools, excluded_projects, `<private>`, secret redaction,
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
leaves whole sessions behind, and running it again continues with the rest. A dry run writes
nothing and estimates what the observer would be sent (`estimate.py`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from claude_mem import project as projects
from claude_mem.capture import payload as capture
from claude_mem.domain import EVENT_KINDS, TURN_KINDS
from claude_mem.importers import lines
from claude_mem.importers.source import ImportReport, Progress, Table, quiet
from claude_mem.importers.transcript_reader import HookCall, Notes, SessionFiles, SessionReader, find_sessions
from claude_mem.store import Store, imports, transaction
from claude_mem.store.capture import apply_record

PROGRESS_EVERY = 500  # hook calls read between two progress reports inside one session
CaptureRecord = dict[str, Any]


def default_root(env: Mapping[str, str]) -> str:
    """Where Claude Code keeps transcripts: `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`."""
    config = env.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(config, "projects")


def project_matcher(value: str) -> Callable[[str], bool]:
    """Whether a project key is the one the user named: its key, a path inside it, or its folder name(s)."""
    root = projects.project_root(value) if os.path.exists(value) else None
    tail = "/" + value.strip("/")

    def wanted(key: str) -> bool:
        return key == value or key == root or key.rstrip("/").endswith(tail)

    return wanted


@dataclass
class TranscriptReport(ImportReport):
    """An import's report, and (a dry run) the observer input tokens its events would cost."""

    tokens: int = 0

    @property
    def events_added(self) -> int:
        return sum(self.added[kind] for kind in EVENT_KINDS)


@dataclass
class _Tally:
    sessions: int = 0
    events: int = 0
    tokens: int = 0


@dataclass
class _Run:
    """What one import has done so far (in a dry run, would have done)."""

    dry_run: bool
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
    projects: dict[str, _Tally] = field(default_factory=dict)
    notes: Notes = field(default_factory=Notes)
    tokens: int = 0  # estimated observer input tokens (dry run)

    @property
    def events_added(self) -> int:
        return sum(self.events.values())


class _Known:
    """The store as the importer sees it, and what this run would have added (a dry run writes nothing)."""

    def __init__(self, db: Store, dry_run: bool) -> None:
        self.db = db
        self.dry_run = dry_run
        self.keys: dict[str, int | None] = {}

    def stored(self, key: str | None) -> tuple[bool, int | None]:
        if not key:
            return False, None
        if key in self.keys:
            return True, self.keys[key]
        return imports.event_number(self.db, key)

    def status(self, session: str) -> str | None:
        return imports.session_status(self.db, session)

    def add(self, record: CaptureRecord, number: int | None) -> bool:
        """Write `record` (or, in a dry run, remember it); whether it added a row."""
        if self.dry_run:
            self.keys[record["event_key"]] = number
            return True
        return apply_record(self.db, record)


class _SessionWrite:
    """The records of one session written in order, skipping what the store has already."""

    def __init__(self, known: _Known, run: _Run, session: str) -> None:
        self.known, self.run, self.session = known, run, session
        self.before = known.status(session)
        self.last = imports.last_prompt_number(known.db, session) if self.before else 0
        self.ordinal = 0
        self.number: int | None = None
        self.private = False
        self.added: list[tuple[str, int | None, dict[str, Any]]] = []

    def _present_prompt(self, record: CaptureRecord) -> bool:
        stored, number = self.known.stored(record["event_key"])
        if stored:
            self.number = number
            return True
        if self.before is None:
            return False
        there = imports.prompt_at(self.known.db, self.session, self.ordinal)
        wanted = ("" if self.private else str(record["payload"]["prompt"]), self.private)
        if there == wanted:
            self.number = self.ordinal
            return True
        return False

    def _present(self, record: CaptureRecord) -> bool:
        if self.known.stored(record["event_key"])[0]:
            return True
        if self.before is None:
            return False
        if record["kind"] == "summarize":
            return imports.has_turn_event(self.known.db, self.session, "summarize", self.number)
        if record["kind"] == "session_end":  # the hooks end sessions they saw; see the module docstring
            return not (self.before == "completed" and self.added)
        return False

    def write(self, record: CaptureRecord) -> None:
        kind = record["kind"]
        if kind == "session_start":
            if self.before is None and not self.known.dry_run:
                self.known.add(record, None)  # creates the session row (the hooks' SessionStart)
            return
        if kind == "prompt":
            self.ordinal += 1
            self.private = bool(record["private"])
            if self._present_prompt(record):
                self.run.present += 1
                return
            self.last += 1
            self.number = self.last
        elif kind in TURN_KINDS and self.private:
            self.run.private += 1
            return
        elif self._present(record):
            self.run.present += 1
            return
        if not self.known.add(record, self.number):
            self.run.present += 1
            return
        if kind == "prompt":
            self.run.prompts += 1
            if self.private:
                return
        self.run.events[kind] += 1
        self.added.append((kind, self.number, {**record["payload"], "prompt_number": self.number}))


@dataclass
class TranscriptSource:
    """Claude Code's transcripts of some sessions, read as the hooks would have captured them."""

    sessions: Sequence[SessionFiles]
    config: dict[str, Any]  # the settings the hooks' gate applies
    label: str = "transcripts"  # what was read, as the report names it
    missing: Sequence[str] = ()  # paths asked for that do not exist
    since: str | None = None  # only sessions started at or after (store time)
    wanted: Callable[[str], bool] | None = None  # only sessions of the projects it accepts
    max_line_bytes: int = lines.MAX_LINE_BYTES
    name = "transcripts"
    unit = "sessions"
    dry_run_writes = False  # a dry run only reads, and remembers what it would have added

    @classmethod
    def find(cls, paths: Sequence[str], config: dict[str, Any], env: Mapping[str, str], *, since: str | None = None,
             project: str | None = None) -> TranscriptSource:
        """The sessions under `paths` (files or folders; none: where Claude Code keeps them)."""
        roots = list(paths) or [default_root(env)]
        sessions, missing = find_sessions(roots)
        return cls(sessions, config, ", ".join(roots), missing, since, project_matcher(project) if project else None)

    def size(self) -> int:
        return len(self.sessions)

    def run(self, db: Store, *, dry_run: bool = False, progress: Progress = quiet) -> TranscriptReport:
        """Import the sessions; progress counts sessions read (and tells the events added)."""
        run = _Run(dry_run)
        known = _Known(db, dry_run)

        def tell() -> None:
            progress(run.sessions_read, f"· {run.events_added} events")

        for files in self.sessions:
            self._import_session(files, known, run, tell)
            run.sessions_read += 1
            tell()
        return self._report(run)

    def _import_session(self, files: SessionFiles, known: _Known, run: _Run, tell: Callable[[], None]) -> None:
        reader = SessionReader(files, run.notes, self.max_line_bytes)
        calls = iter(reader)
        first = next(calls, None)  # the session start, yielded just before the first prompt or tool call
        if first is None:
            run.unreadable += reader.unreadable
            run.sessions_empty += not reader.unreadable
            return
        if self.since is not None and (reader.start or first.at) < self.since:
            run.sessions_filtered += 1
            return
        # Claude Code gives hooks the session's start directory as CLAUDE_PROJECT_DIR.
        env = {"CLAUDE_PROJECT_DIR": reader.start_cwd} if reader.start_cwd else {}
        try:
            start = self._gated(first, env, run, files.label)
        except capture.Unregistered:  # a session start names no tool: its project is excluded
            run.sessions_excluded += 1
            return
        if start is None:
            return
        project = str(start["project"])
        if self.wanted is not None and not self.wanted(project):
            run.sessions_filtered += 1
            return
        records = [start, *self._records(reader, known, env, run, tell)]
        run.unreadable += reader.unreadable
        before = run.events_added + run.prompts
        if known.dry_run:
            writer = self._write(known, run, files.session_id, records)
        else:
            with transaction(known.db):  # the whole session or nothing
                writer = self._write(known, run, files.session_id, records)
        tally = run.projects.setdefault(project, _Tally())
        if run.events_added + run.prompts > before:
            run.sessions_added += 1
            tally.sessions += 1
            tally.events += len(writer.added)
        else:
            run.sessions_present += 1
        if known.dry_run and writer.added:
            from claude_mem.importers.estimate import observer_tokens

            tokens = observer_tokens(files.session_id, project, writer.added)
            tally.tokens += tokens
            run.tokens += tokens

    @staticmethod
    def _write(known: _Known, run: _Run, session_id: str, records: list[CaptureRecord]) -> _SessionWrite:
        writer = _SessionWrite(known, run, session_id)
        for record in records:
            writer.write(record)
        return writer

    def _records(self, reader: SessionReader, known: _Known, env: dict[str, str], run: _Run,
                 tell: Callable[[], None]) -> list[CaptureRecord]:
        """The session's capture records, cleaned by the hooks' gate (no database lock held meanwhile)."""
        records: list[CaptureRecord] = []
        for call in reader:
            run.calls_read += 1
            if run.calls_read % PROGRESS_EVERY == 0:
                tell()
            tool_use_id = call.payload.get("tool_use_id")
            if call.hook == "post-tool" and known.stored(tool_use_id if isinstance(tool_use_id, str) else None)[0]:
                run.present += 1  # the key is known before cleaning: spare the redaction
                continue
            try:
                record = self._gated(call, env, run, reader.files.label)
            except capture.Unregistered:
                run.skipped += 1
                continue
            if record is not None:
                records.append(record)
        return records

    def _gated(self, call: HookCall, env: dict[str, str], run: _Run, label: str) -> CaptureRecord | None:
        """The call's capture record through the hooks' gate, at the transcript's time; None (reported)
        when the payload cannot be stored. Unregistered when the gate leaves it out."""
        try:
            record = capture.capture_record(call.hook, call.payload, self.config, env)
        except capture.BadInput as exc:
            run.bad_records.append(f"{label}: {call.payload.get('hook_event_name')}: {exc}")
            return None
        record["captured_at"] = call.at or record["captured_at"]
        return record

    def _report(self, run: _Run) -> TranscriptReport:
        """What the run did, as every import reports it."""
        report = TranscriptReport(self.label, run.dry_run, tokens=run.tokens)
        report.added.update(sessions=run.sessions_added, **run.events)
        report.present.update(sessions=run.sessions_present, events=run.present)
        kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(run.events.items()))
        total = len(self.sessions)
        if run.dry_run:
            report.title = (f"Dry run, nothing written: {run.sessions_added} of {total} sessions would add "
                            f"{run.events_added} events ({kinds or 'none'}) for the observer, about {run.tokens:,} "
                            "observer input tokens (characters / 4; a stateless API provider is re-sent some history "
                            "and costs more).")
        else:
            report.title = (f"Imported {run.sessions_added} of {total} sessions: {run.events_added} events queued for "
                            f"the observer ({kinds or 'none'}); the worker processes them when it runs.")
        report.table = _table(run)
        counted = [(run.sessions_present, "sessions already stored (captured live or imported before)"),
                   (run.present, "events already stored"),
                   (run.sessions_filtered, "sessions left out by --since/--project"),
                   (run.sessions_excluded, "sessions of excluded_projects"),
                   (run.sessions_empty, "transcripts with no prompt or tool call"),
                   (run.skipped, "tool calls of skip_tools"),
                   (run.private, "tool calls and turn ends of <private> turns")]
        report.notes += [f"{count} {what}" for count, what in counted if count]
        for path in self.missing:
            report.skip("path(s) not found", f"not found: {path}")
        for problem in run.unreadable:
            report.skip("file(s) not read", f"cannot read {problem}")
        notes = run.notes
        for place in notes.damaged:
            report.skip("damaged line(s) skipped", place)
        if notes.damaged_count > len(notes.damaged):
            report.skip("damaged line(s) skipped", f"… and {notes.damaged_count - len(notes.damaged)} more damaged "
                                                   "line(s)", notes.damaged_count - len(notes.damaged))
        for kind, count in notes.unknown.most_common():
            report.skip("line(s) of unknown type skipped", f"{count} line(s) of unknown type {kind!r} skipped "
                                                           f"(first at {notes.unknown_first[kind]})", count)
        for problem in run.bad_records:
            report.skip("record(s) not stored", f"not stored: {problem}")
        return report


def _table(run: _Run) -> Table:
    """Per project (by its display name) that gained sessions: sessions, events, and a dry run's token estimate."""
    names = projects.display_names(list(run.projects))
    columns = ("project", "sessions", "events") + (("observer tokens (est.)",) if run.dry_run else ())
    rows = []
    for key, tally in sorted(run.projects.items(), key=lambda item: names[item[0]]):
        if tally.sessions:
            row = (names[key], str(tally.sessions), str(tally.events))
            rows.append(row + ((f"{tally.tokens:,}",) if run.dry_run else ()))
    return Table(columns, tuple(rows))
