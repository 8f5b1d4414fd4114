"""The team server (DESIGN §12): PostgreSQL through psycopg 3, in schema `claude_mem`.

One table of rows keyed by their global id (`uid`), each with its kind, team project, author, device,
payload (JSON, NULL once deleted) and a revision from one sequence. Writers serialise on a
transaction-scoped advisory lock, so revisions become visible in the order they were given: a reader
that has seen revision N has seen every row below it, and pulling "revisions above my cursor" never
misses one. An upsert that changes nothing keeps its revision (replays are free); only the device that
wrote a row can change it (a copy of it restored on another machine cannot take it over); the role
that wrote it can bury it (with one shared role, anyone), and a deleted row stays deleted (a tombstone:
forget wins over any later push).

The schema is this project's: migrations below, applied by the first client that connects, under a
session advisory lock so two workers never migrate at once; a server whose schema is newer than this
code is refused with `NewerSchema`.

Schema 2 binds a row to the database role that wrote it (`role`, `current_user` by default), bounds a
row's size (`ROW_LIMIT`, a CHECK that only new writes meet: old rows stay), keeps an epoch id (random,
made once: a server built anew has another one) and the `members` table (role → display name) that
`team add-member` fills. A server set up with `team init` (store/team_admin.py) also forces row-level
security and a trigger on rows: authorship is then verified, and the author pulled is the one its role
maps to, never the one a client claimed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from claude_mem.domain import ClaudeMemError

# pg_advisory locks are global to the server: two keys of our own ("cm" "mg" / "cm" "wr").
MIGRATE_LOCK = 0x636D6D67
WRITE_LOCK = 0x636D7772
CONNECT_TIMEOUT = 5
# The largest row the server takes: its payload as JSON text, in bytes (a CHECK on the table).
ROW_LIMIT = 256 * 1024

MIGRATIONS: list[tuple[str, str]] = [
    (
        "rows",
        """
        CREATE TABLE claude_mem.projects (
            id text PRIMARY KEY,
            first_seen timestamptz NOT NULL DEFAULT now()
        );
        CREATE SEQUENCE claude_mem.revision;
        CREATE TABLE claude_mem.rows (
            uid text PRIMARY KEY CHECK (uid ~ '^[0-9a-f]{32}$'),
            kind text NOT NULL CHECK (kind IN ('session', 'prompt', 'observation', 'summary')),
            project text NOT NULL REFERENCES claude_mem.projects (id),
            author text NOT NULL,
            device text NOT NULL,
            payload jsonb,
            deleted boolean NOT NULL DEFAULT false,
            rev bigint NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX rows_project_rev ON claude_mem.rows (project, rev);
        """,
    ),
    (
        "authorship",
        f"""
        ALTER TABLE claude_mem.rows ADD COLUMN role text NOT NULL DEFAULT current_user;
        ALTER TABLE claude_mem.rows ADD CONSTRAINT rows_payload_limit
            CHECK (payload IS NULL OR octet_length(payload::text) <= {ROW_LIMIT}) NOT VALID;
        CREATE TABLE claude_mem.members (
            role text PRIMARY KEY,
            name text NOT NULL,
            added_at timestamptz NOT NULL DEFAULT now()
        );
        INSERT INTO claude_mem.meta VALUES ('epoch', md5(random()::text || clock_timestamp()::text))
            ON CONFLICT (key) DO NOTHING;
        CREATE INDEX rows_reconcile ON claude_mem.rows (project, device, uid) WHERE NOT deleted;
        """,
    ),
]
SCHEMA_VERSION = len(MIGRATIONS)


class ServerError(ClaudeMemError):
    """The team server cannot be used; the message is one line, safe to show (no secret in it)."""


class NewerSchema(ServerError):
    pass


def driver() -> Any:
    """The psycopg module; ImportError (with the extra to install) when it is missing."""
    try:
        import psycopg
    except ImportError as exc:
        raise ImportError("team memory needs the PostgreSQL driver: pip install 'claude-mem-py[team]'") from exc
    return psycopg


def connect(url: str, timeout: float = CONNECT_TIMEOUT) -> Any:
    """An autocommit psycopg connection to `url` (libpq options such as sslmode pass through)."""
    psycopg = driver()
    return psycopg.connect(url, autocommit=True, connect_timeout=max(1, int(timeout)),
                           application_name="claude-mem team")


def server_version(conn: Any) -> int | None:
    """Our schema's version on the server; None when it has none."""
    found = conn.execute("SELECT to_regclass('claude_mem.meta')").fetchone()[0]
    if found is None:
        return None
    row = conn.execute("SELECT value FROM claude_mem.meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: Any) -> list[str]:
    """Bring the server's schema up to this code's (under the migration lock); returns the names applied.
    NewerSchema when the server's is newer."""
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATE_LOCK,))
    try:
        current = server_version(conn)
        if current is not None and current > SCHEMA_VERSION:
            raise NewerSchema(f"the team server's schema is version {current}, newer than this claude-mem's "
                              f"({SCHEMA_VERSION}): upgrade claude-mem on this machine")
        done: list[str] = []
        if current == SCHEMA_VERSION:
            return done
        try:
            _apply(conn, current, done)
        except driver().errors.InsufficientPrivilege as exc:
            what = "has no claude-mem schema" if current is None else \
                f"has schema version {current}, older than this claude-mem's ({SCHEMA_VERSION})"
            reason = " ".join(str(exc).split())
            raise ServerError(f"the team server {what}, and this role may not change it ({reason}): the admin"
                              " runs `claude-mem team init ADMIN_URL` (safe to run again)") from exc
        return done
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATE_LOCK,))


def _apply(conn: Any, current: int | None, done: list[str]) -> None:
    """Run the migrations above `current` (None: no schema yet) in one transaction."""
    with conn.transaction():
        if current is None:
            conn.execute("CREATE SCHEMA IF NOT EXISTS claude_mem")
            conn.execute("CREATE TABLE claude_mem.meta (key text PRIMARY KEY, value text NOT NULL)")
            conn.execute("INSERT INTO claude_mem.meta VALUES ('schema_version', '0')")
            current = 0
        for version, (name, script) in enumerate(MIGRATIONS, start=1):
            if version <= current:
                continue
            conn.execute(script)
            conn.execute("UPDATE claude_mem.meta SET value = %s WHERE key = 'schema_version'", (str(version),))
            done.append(name)


def push(conn: Any, rows: Sequence[dict[str, Any]], author: str, device: str) -> dict[str, tuple[int, bool]]:
    """Upsert rows ({uid, kind, project, payload}) in one transaction; returns uid → (its revision on
    the server, deleted there). Rows already there unchanged keep their revision; deleted ones stay so."""
    if not rows:
        return {}
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        with conn.cursor() as cursor:
            cursor.executemany("INSERT INTO claude_mem.projects (id) VALUES (%s) ON CONFLICT DO NOTHING",
                               [(project,) for project in sorted({row["project"] for row in rows})])
            cursor.executemany(
                "INSERT INTO claude_mem.rows (uid, kind, project, author, device, payload, rev)"
                " VALUES (%s, %s, %s, %s, %s, %s::jsonb, nextval('claude_mem.revision'))"
                " ON CONFLICT (uid) DO UPDATE SET payload = excluded.payload, author = excluded.author,"
                " device = excluded.device, rev = excluded.rev, updated_at = now()"
                " WHERE NOT claude_mem.rows.deleted AND claude_mem.rows.device = excluded.device"
                " AND claude_mem.rows.payload IS DISTINCT FROM excluded.payload",
                [(row["uid"], row["kind"], row["project"], author, device, json.dumps(row["payload"], ensure_ascii=False))
                 for row in rows],
            )
        found = conn.execute("SELECT uid, rev, deleted FROM claude_mem.rows WHERE uid = ANY(%s)",
                             ([row["uid"] for row in rows],)).fetchall()
    return {uid: (int(rev), bool(deleted)) for uid, rev, deleted in found}


def bury(conn: Any, uids: Sequence[str], author: str, device: str) -> int:
    """Turn the rows with these uids into tombstones (payload gone, a new revision); uids the server
    never had are left, and so, on a verified server (`team init`), are other roles' rows: it refuses to
    bury them, so forgetting another member's row removes it from this machine only. Without `team init`
    (authorship unverified) any row is buried, as before. Returns how many were buried."""
    if not uids:
        return 0
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        cursor = conn.execute(
            "UPDATE claude_mem.rows SET deleted = true, payload = NULL, author = %s, device = %s,"
            " rev = nextval('claude_mem.revision'), updated_at = now()"
            " WHERE uid = ANY(%s) AND NOT deleted AND (role = current_user OR NOT (SELECT relrowsecurity AND"
            " relforcerowsecurity FROM pg_class WHERE oid = 'claude_mem.rows'::regclass))",
            (author, device, list(uids)),
        )
        return int(cursor.rowcount)


def projects(conn: Any) -> list[str]:
    return [str(row[0]) for row in conn.execute("SELECT id FROM claude_mem.projects ORDER BY id")]


# Who wrote a row, as pulled: on a verified server (row-level security forced, `team init`) the display
# name its role maps to (or the role itself), never what the client claimed; elsewhere the claimed author.
# `FROM_ROWS` gives the aliases it needs (r: the rows; m: members; v: whether authorship is verified).
AUTHOR_SQL = "CASE WHEN v.verified THEN coalesce(m.name, r.role) ELSE r.author END"
FROM_ROWS = (
    "claude_mem.rows r LEFT JOIN claude_mem.members m ON m.role = r.role CROSS JOIN"
    " (SELECT relrowsecurity AND relforcerowsecurity AS verified FROM pg_class"
    " WHERE oid = 'claude_mem.rows'::regclass) v"
)


# -- what the server is, and what it holds (reconciliation) ------------------------------------------


def facts(conn: Any) -> dict[str, Any]:
    """{epoch, verified (authorship bound to roles), role (this connection's), name (its display name
    on the server, or None)}."""
    row = conn.execute(
        "SELECT (SELECT value FROM claude_mem.meta WHERE key = 'epoch'),"
        " (SELECT relrowsecurity AND relforcerowsecurity FROM pg_class WHERE oid = 'claude_mem.rows'::regclass),"
        " current_user, (SELECT name FROM claude_mem.members WHERE role = current_user)"
    ).fetchone()
    return {"epoch": row[0], "verified": bool(row[1]), "role": row[2], "name": row[3]}


def digest(conn: Any, project: str, device: str) -> dict[str, tuple[int, int]]:
    """The live rows of `project` written by `device`, by bucket (the uid's first two hex digits):
    bucket → (count, the sum of the next 15 hex digits of each uid). One index-only scan."""
    cursor = conn.execute(
        "SELECT left(uid, 2), count(*), sum(('x' || substr(uid, 3, 15))::bit(60)::bigint) FROM claude_mem.rows"
        " WHERE project = %s AND device = %s AND NOT deleted GROUP BY 1",
        (project, device),
    )
    return {str(bucket): (int(count), int(total)) for bucket, count, total in cursor.fetchall()}


def held(conn: Any, uids: Sequence[str]) -> set[str]:
    """Which of these uids the server has a row for (live or a tombstone)."""
    if not uids:
        return set()
    return {str(uid) for (uid,) in conn.execute("SELECT uid FROM claude_mem.rows WHERE uid = ANY(%s)", (list(uids),))}


def last_revision(conn: Any, project: str) -> int:
    """The highest revision of `project` on the server (0 when it has none)."""
    row = conn.execute("SELECT max(rev) FROM claude_mem.rows WHERE project = %s", (project,)).fetchone()
    return int(row[0] or 0)



def lost_anchors(conn: Any, anchors: Sequence[tuple[str, int]]) -> tuple[set[str], int]:
    """Of these (uid, revision) pairs of observations (see `anchor`), the uids the server no longer holds
    at that revision, nor as a tombstone: rows are never removed and an observation's content never
    changes once pushed, so one missing, or sent again under a new revision, means the server went back
    in time (an older backup restored, a crash that lost commits). With the last revision the server
    gave (0 before the first), in one query."""
    row = conn.execute(
        "SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM claude_mem.revision),"
        " array(SELECT a.uid FROM unnest(%s::text[], %s::bigint[]) AS a (uid, rev) WHERE NOT EXISTS"
        " (SELECT 1 FROM claude_mem.rows r WHERE r.uid = a.uid AND (r.rev = a.rev OR r.deleted)))",
        ([uid for uid, _ in anchors], [rev for _, rev in anchors]),
    ).fetchone()
    return {str(uid) for uid in row[1]}, int(row[0])


def anchor(conn: Any, project: str, rev: int) -> tuple[str, int] | None:
    """(uid, revision) of the live observation of `project` last at or below revision `rev` (None when
    there is none): observations, unlike sessions, do not change once pushed."""
    row = conn.execute("SELECT uid, rev FROM claude_mem.rows WHERE project = %s AND rev <= %s AND kind = 'observation'"
                       " AND NOT deleted ORDER BY rev DESC LIMIT 1", (project, rev)).fetchone()
    return (str(row[0]), int(row[1])) if row else None


# -- streaming a project's rows (a join, a catch-up): issue 32 item 5 ----------------------------------------

# The columns a streamed row carries, in order (the payload as its JSON text: the puller measures it
# before it parses it; the author as `AUTHOR_SQL` shows it). One place: a column the server adds goes here.
STREAM_COLUMNS = ("r.uid", "r.kind", "r.project", AUTHOR_SQL, "r.device", "r.payload::text", "r.deleted", "r.rev")
StreamedRow = tuple[str, str, str, str, str, "str | None", bool, int]
_STREAM_WHERE = " WHERE r.project = %s AND r.rev > %s AND r.device <> %s"


def pending(conn: Any, project: str, after: int, device: str) -> int:
    """How many rows of `project` above revision `after` another device wrote (a pull's total)."""
    return int(conn.execute("SELECT count(*) FROM claude_mem.rows r" + _STREAM_WHERE,
                            (project, after, device)).fetchone()[0])


def stream(conn: Any, project: str, after: int, device: str, sizes: Sequence[int],
           how: str = "cursor") -> Iterator[list[StreamedRow]]:
    """The rows of `project` above revision `after` written by other devices, in revision order, in
    batches: the first of `sizes[0]` rows, then `sizes[1]` … (the last size repeats). One statement
    streams them all: through a server-side cursor fetching the largest size at a time
    (`how="cursor"`), or `COPY (SELECT …) TO STDOUT` (`how="copy"`). bench_team's join measures both
    in each run: the cursor was the faster (93k against 53k rows/s streamed bare, 100k rows), and
    either is 10x what the local store takes in, so the choice barely shows in a join."""
    select = f"SELECT {', '.join(STREAM_COLUMNS)} FROM {FROM_ROWS}{_STREAM_WHERE} ORDER BY r.rev"
    wanted = iter(sizes)
    size = next(wanted)
    batch: list[StreamedRow] = []
    if how == "cursor":
        with conn.transaction(), conn.cursor(name="claude_mem_pull") as cursor:
            cursor.itersize = max(sizes)
            cursor.execute(select, (project, after, device))
            for row in cursor:
                batch.append(row)
                if len(batch) >= size:
                    yield batch
                    batch, size = [], next(wanted, size)
    else:
        with conn.cursor() as cursor, cursor.copy(f"COPY ({select}) TO STDOUT", (project, after, device)) as copy:
            copy.set_types(["text", "text", "text", "text", "text", "text", "bool", "int8"])
            for row in copy.rows():
                batch.append(row)
                if len(batch) >= size:
                    yield batch
                    batch, size = [], next(wanted, size)
    if batch:
        yield batch
