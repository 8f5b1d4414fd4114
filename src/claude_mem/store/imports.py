"""What an importer asks the store before it adds captured history: which events, prompts and turn
ends of a session are there already (captured live by the hooks or by an earlier import).

Writes go through `capture.apply_record`, exactly as a hook's do; these are the reads around it.
Every function accepts a read-only store (a dry run opens the database that way).
"""

from claude_mem.store.db import Store

_SESSION = "SELECT id, status FROM sessions WHERE content_session_id = ?"


def session_status(conn: Store, content_session_id: str) -> str | None:
    """The session's status, or None when the store has never seen it."""
    row = conn.execute(_SESSION, (content_session_id,)).fetchone()
    return str(row[1]) if row else None


def last_prompt_number(conn: Store, content_session_id: str) -> int:
    """The number of the session's latest prompt (0 before the first)."""
    row = conn.execute(
        "SELECT MAX(p.prompt_number) FROM prompts p JOIN sessions s ON s.id = p.session_id"
        " WHERE s.content_session_id = ?", (content_session_id,),
    ).fetchone()
    return int(row[0] or 0)


def prompt_at(conn: Store, content_session_id: str, number: int) -> tuple[str, bool] | None:
    """(text, private) of the session's prompt `number`, or None."""
    row = conn.execute(
        "SELECT p.text, p.private FROM prompts p JOIN sessions s ON s.id = p.session_id"
        " WHERE s.content_session_id = ? AND p.prompt_number = ?", (content_session_id, number),
    ).fetchone()
    return (str(row[0] or ""), bool(row[1])) if row else None


def event_number(conn: Store, event_key: str) -> tuple[bool, int | None]:
    """(stored, prompt_number) of the event with this key."""
    row = conn.execute("SELECT prompt_number FROM pending_events WHERE event_key = ?", (event_key,)).fetchone()
    return (True, None if row[0] is None else int(row[0])) if row else (False, None)


def has_turn_event(conn: Store, content_session_id: str, kind: str, number: int | None) -> bool:
    """Whether the session has an event of `kind` for prompt `number` (a turn end, a session end)."""
    row = conn.execute(
        "SELECT 1 FROM pending_events e JOIN sessions s ON s.id = e.session_id"
        " WHERE s.content_session_id = ? AND e.kind = ? AND e.prompt_number IS ?",
        (content_session_id, kind, number),
    ).fetchone()
    return row is not None
