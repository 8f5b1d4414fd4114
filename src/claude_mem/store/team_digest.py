"""The local side of reconciliation with the team server (DESIGN §12): which rows this machine wrote and
the server acknowledged (`team_rev` set, `device` NULL), and taking that mark back from rows the server
lost, so the normal push sends them again."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from claude_mem.store.team import TABLES
from claude_mem.store.transaction import transaction

_PUSHED = (
    "SELECT 'session', uid FROM sessions WHERE team_rev IS NOT NULL AND device IS NULL AND uid IS NOT NULL"
    " AND project IN ({marks})"
    " UNION ALL SELECT 'prompt', p.uid FROM prompts p JOIN sessions s ON s.id = p.session_id"
    " WHERE p.team_rev IS NOT NULL AND p.device IS NULL AND p.uid IS NOT NULL AND s.project IN ({marks})"
    " UNION ALL SELECT 'observation', uid FROM observations WHERE team_rev IS NOT NULL AND device IS NULL"
    " AND uid IS NOT NULL AND project IN ({marks})"
    " UNION ALL SELECT 'summary', uid FROM summaries WHERE team_rev IS NOT NULL AND device IS NULL"
    " AND uid IS NOT NULL AND project IN ({marks})"
)


def pushed_uids(conn: sqlite3.Connection, projects: Sequence[str]) -> list[tuple[str, str]]:
    """(kind, uid) of every row of `projects` written here that the team server acknowledged."""
    if not projects:
        return []
    marks = ", ".join("?" for _ in projects)
    return [(str(kind), str(uid)) for kind, uid in conn.execute(_PUSHED.format(marks=marks), list(projects) * 4)]


def unmark_pushed(conn: sqlite3.Connection, rows: Sequence[tuple[str, str]]) -> int:
    """Take the pushed mark back from these (kind, uid): they wait in the outbox again. Returns how many."""
    changed = 0
    with transaction(conn):
        for kind, uid in rows:
            changed += conn.execute(f"UPDATE {TABLES[kind]} SET team_rev = NULL WHERE uid = ? AND device IS NULL",
                                    (uid,)).rowcount
    return changed
