"""One hook event, from the raw bytes Claude Code sent to committed rows: `take`.

Shared by the hook runner (in the hook's own process) and the worker's capture socket (a post-tool
hook handed over to a running worker, `capture/handoff.py`), so an event lands exactly the same way
in both. Fail-open (DESIGN §2, §4): the payload becomes a cleaned capture record
(`capture.payload`), written in one `BEGIN IMMEDIATE` transaction with the caller's busy timeout;
past that, or on any database error, the record goes to the spool instead. Bad input costs one
message, one log line and a bounded, cleaned quarantine copy. Stdlib only: the hooks import it.
"""

from __future__ import annotations

import os

from claude_mem import settings
from claude_mem.capture import diagnostics, payload
from claude_mem.capture.payload import BadInput, Unregistered
from claude_mem.domain import TURN_KINDS
from claude_mem.store import db
from claude_mem.store.capture import apply_record
from claude_mem.store.transaction import transaction

if False:  # for the type checker only: `typing` stays off the hook path
    from collections.abc import Callable
    from typing import Any

# A raw payload bigger than this is reported (its fields are cut to `max_field_chars` and stored).
OVERSIZED_BYTES = 1_000_000


class Taken:
    """What `take` did: `outcome` is "stored", "duplicate" (nothing new), "spooled", "skipped"
    (not captured: skip_tools, excluded_projects, a private turn), "kept outside" (the data dir takes no write:
    the overflow of `capture.trouble` has it), "lost" (not even there) or "bad input"; `messages` are for
    the hook's stderr, `notice` (once per session) for the user: the hook's `systemMessage`. `conn` is the open
    database after a commit (the caller closes it)."""

    __slots__ = ("condition", "config", "conn", "early", "incoming", "messages", "notice", "outcome", "record")

    def __init__(self, outcome: str, messages: list[str] | None = None) -> None:
        self.outcome = outcome
        self.messages = messages or []
        self.record: dict[str, Any] | None = None
        self.incoming: dict[str, Any] = {}
        self.config: dict[str, Any] = {}
        self.conn: db.Store | None = None
        self.early: object = None  # what `take`'s `before_store` returned
        self.notice: str | None = None
        self.condition: str | None = None  # why the data dir took no write (`capture.trouble` state)


def private_marker(data_dir: str, content_session_id: str) -> str:
    """A file whose existence says "this session's current turn is private" (survives a spooled prompt)."""
    from claude_mem.capture.digest import sha256_hex

    digest = sha256_hex(content_session_id.encode("utf-8", "replace"))[:32]
    return os.path.join(data_dir, "spool", f".private-{digest}")


def _mark_turn(data_dir: str, record: dict[str, Any]) -> None:
    marker = private_marker(data_dir, str(record["content_session_id"]))
    if record["private"]:
        os.makedirs(os.path.dirname(marker), mode=0o700, exist_ok=True)
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT, 0o600))
    else:
        try:
            os.unlink(marker)
        except FileNotFoundError:
            pass


def _bad_input(hook: str, data_dir: str, raw: bytes, problem: str) -> Taken:
    copy = diagnostics.quarantine(data_dir, hook, raw)
    where = f"; copy in {copy}" if copy else ""
    diagnostics.log(data_dir, hook, f"bad input: {problem} ({len(raw)} bytes){where}")
    return Taken("bad input", [f"ignored bad input: {problem}"])


def _store(data_dir: str, record: dict[str, Any], hook: str, busy_timeout_ms: int) -> tuple[str, db.Store | None]:
    """Commit `record` (or spool it). Returns (outcome, open connection or None)."""
    conn = None
    try:
        conn = db.open(data_dir, busy_timeout_ms=busy_timeout_ms)
        with transaction(conn):
            added = apply_record(conn, record)
        if hook in ("session-start", "user-prompt"):  # once a turn, not on every tool call (~50 µs)
            _bring_back(data_dir)
        return ("stored" if added else "duplicate"), conn
    except Exception as exc:  # noqa: BLE001 - busy, locked, damaged or anything else: never lose the event
        if conn is not None:
            conn.close()
        return _spool(data_dir, record, hook, exc), None


def _bring_back(data_dir: str) -> None:
    """The data dir takes writes again: events kept outside it go back into its spool (the worker ingests them)."""
    from claude_mem.capture import spool, trouble

    try:
        if trouble.active(data_dir):  # a few `stat`s
            trouble.drain(data_dir, spool.spool_dir(data_dir))
            trouble.clear(data_dir)  # this event is in the database: the trouble is over
    except OSError:
        pass  # the worker's ingest drains it too


def _spool(data_dir: str, record: dict[str, Any], hook: str, exc: Exception) -> str:
    """The record into the spool; when the data dir takes no write (full, read-only), into the overflow
    (`capture.trouble`). Returns the outcome: "spooled", "kept outside" or "lost"."""
    from claude_mem.capture import spool, trouble

    state = trouble.classify(exc, data_dir)
    try:
        spool.append(data_dir, record)
        outcome = "spooled"
    except OSError as failed:
        state = trouble.classify(failed, data_dir) or state or trouble.DISK_FULL
        outcome = "kept outside" if trouble.keep(data_dir, record, state, f"{type(failed).__name__}: {failed}") \
            else "lost"
    if state is not None and outcome == "spooled":
        trouble.note(data_dir, state, str(exc))
    diagnostics.log(data_dir, hook, f"{outcome} {record['kind']} event: {type(exc).__name__}: {exc}")
    return outcome


def _notice(data_dir: str, session_id: object) -> tuple[str | None, str | None]:
    """(why the data dir takes no write, the user's line about it once per session) (`capture.trouble`)."""
    from claude_mem.capture import trouble

    for condition in trouble.store_conditions(data_dir):
        if condition["state"] != trouble.RECOVERED:
            state = str(condition["state"])
            return state, trouble.first_notice(data_dir, session_id, state, condition["reason"])
    return None, None


def _fingerprint(data_dir: str, hook: str, record: dict[str, Any], incoming: dict[str, Any],
                 env: dict[str, Any]) -> None:
    """The files a Read/Edit/Write… names, fingerprinted after the tool ran (issue 26), into the
    record's payload as `files` and `commit`. Fail-open: a failure here only costs the fingerprints."""
    try:
        from claude_mem.capture.fingerprint import for_event

        found = for_event(incoming, env)
        if found:
            record["payload"].update(found)
    except Exception as exc:  # noqa: BLE001 - the event is stored with or without its fingerprints
        diagnostics.log(data_dir, hook, f"file fingerprints skipped: {type(exc).__name__}")


def take(hook: str, raw: bytes, env: dict[str, Any], data_dir: str, busy_timeout_ms: int = db.HOOK_BUSY_MS,
         before_store: Callable[[dict[str, Any], dict[str, Any]], object] | None = None) -> Taken:
    """Capture one hook call's payload under the user's settings (`env` as the hook saw it). `before_store`
    (record, settings) runs once the record is cleaned, before it is written: the user-prompt hook asks the
    worker then, so the worker searches while the hook writes; its result is `Taken.early`."""
    try:
        incoming = payload.decode(raw)
        event = payload.event_name(hook, incoming)
    except BadInput as exc:
        return _bad_input(hook, data_dir, raw, str(exc))
    except Unregistered:
        return Taken("skipped")
    kind = payload.EVENT_KINDS[event]
    session_id = incoming.get("session_id")
    if kind in TURN_KINDS and isinstance(session_id, str) and os.path.exists(private_marker(data_dir, session_id)):
        return Taken("skipped")
    config = settings.load(data_dir)
    try:  # skip_tools, excluded_projects, cleaning: shared with the transcript importer
        record = payload.capture_record(hook, incoming, config, env)
    except Unregistered:
        return Taken("skipped")
    except BadInput as exc:
        return _bad_input(hook, data_dir, raw, str(exc))
    if kind in ("tool", "tool_failure"):
        _fingerprint(data_dir, hook, record, incoming, env)
    if kind == "prompt":
        _mark_turn(data_dir, record)
    early = None
    if before_store is not None:
        try:
            early = before_store(record, config)
        except Exception as exc:  # noqa: BLE001 - only a speed-up: the event is stored whatever it did
            diagnostics.log(data_dir, hook, f"before storing: {type(exc).__name__}: {exc}")
    outcome, conn = _store(data_dir, record, hook, busy_timeout_ms)
    taken = Taken(outcome)
    if outcome != "stored" and outcome != "duplicate":
        taken.condition, taken.notice = _notice(data_dir, incoming.get("session_id"))
    taken.early = early
    taken.record, taken.incoming, taken.config, taken.conn = record, incoming, config, conn
    if len(raw) > OVERSIZED_BYTES and outcome != "duplicate":
        diagnostics.quarantine(data_dir, hook, raw)
        diagnostics.log(data_dir, hook, f"oversized input ({len(raw)} bytes): fields cut to {config['max_field_chars']} chars")
        taken.messages.append(f"input of {len(raw)} bytes: stored with long fields cut to {config['max_field_chars']} chars")
    return taken
