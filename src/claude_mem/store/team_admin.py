"""Setting a team server up for verified authorship (DESIGN §12): `claude-mem team init` and
`claude-mem team add-member`, run by an admin role (one that may create roles).

`init` brings the schema up to date as the admin (so the admin owns it), creates the member group
role of this database, grants it what replication needs and no more (read everything; insert and
update rows; no DELETE, no DDL), and forces row-level security on the rows with a trigger:

- a new row's `role` must be the writing session's role (`current_user`), so no one pushes as another;
- a row may be changed only by its own role, a tombstone (payload gone, deleted) included: a member
  forgets (buries) their own rows, never another's — forgetting someone else's row removes it from
  that machine only (`store.team_server.bury` asks only for the caller's own rows);
- a deleted row stays deleted; uid, kind and project never change;
- the `author` stored is the display name the writer's role maps to in `members` (else the role).

Every statement is idempotent: running `init` again changes nothing, or finishes a half-done run, or
brings an older schema up to this code's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from typing import Any

from claude_mem.store import team_server
from claude_mem.store.team_server import ServerError

SCRAM_ITERATIONS = 4096

_GUARD = """
CREATE OR REPLACE FUNCTION claude_mem.guard_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.role IS DISTINCT FROM current_user THEN
            RAISE EXCEPTION 'claude-mem: role % may not write a row as role %', current_user, NEW.role
                USING ERRCODE = 'insufficient_privilege';
        END IF;
    ELSE
        IF NEW.uid <> OLD.uid OR NEW.kind <> OLD.kind OR NEW.project <> OLD.project THEN
            RAISE EXCEPTION 'claude-mem: a row''s uid, kind and project never change'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF OLD.deleted AND NOT NEW.deleted THEN
            RAISE EXCEPTION 'claude-mem: row % is deleted and stays deleted', OLD.uid
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF OLD.role IS DISTINCT FROM current_user THEN
            RAISE EXCEPTION 'claude-mem: role % may not change or bury row % of role %', current_user,
                OLD.uid, OLD.role USING ERRCODE = 'insufficient_privilege';
        END IF;
        NEW.role := current_user;
    END IF;
    NEW.author := coalesce((SELECT name FROM claude_mem.members WHERE role = current_user), current_user);
    RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS guard_row ON claude_mem.rows;
CREATE TRIGGER guard_row BEFORE INSERT OR UPDATE ON claude_mem.rows FOR EACH ROW EXECUTE FUNCTION claude_mem.guard_row();
ALTER TABLE claude_mem.rows ENABLE ROW LEVEL SECURITY;
ALTER TABLE claude_mem.rows FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS rows_read ON claude_mem.rows;
DROP POLICY IF EXISTS rows_insert ON claude_mem.rows;
DROP POLICY IF EXISTS rows_update ON claude_mem.rows;
CREATE POLICY rows_read ON claude_mem.rows FOR SELECT USING (true);
CREATE POLICY rows_insert ON claude_mem.rows FOR INSERT WITH CHECK (role = current_user);
CREATE POLICY rows_update ON claude_mem.rows FOR UPDATE USING (true) WITH CHECK (role = current_user);
"""
# What the member group may do: read everything of ours, write rows (the guard decides which), name new
# projects, draw revisions. No DELETE, no TRUNCATE, no DDL.
_GRANTS = """
GRANT USAGE ON SCHEMA claude_mem TO {group};
GRANT SELECT ON claude_mem.meta, claude_mem.members TO {group};
GRANT SELECT, INSERT ON claude_mem.projects TO {group};
GRANT SELECT, INSERT, UPDATE ON claude_mem.rows TO {group};
GRANT USAGE, SELECT ON SEQUENCE claude_mem.revision TO {group};
"""


def group_name(database: str) -> str:
    """The member group role of a team database (roles are the cluster's, so one group per database)."""
    return f"claude_mem_{role_name(database)}_members"[:63]


def role_name(name: str) -> str:
    """A PostgreSQL role name made from a member's name: lower case letters, digits and `_`."""
    made = re.sub(r"[^a-z0-9_]+", "_", name.strip().lower()).strip("_")
    if not made or not made[0].isalpha():
        made = f"m_{made}"
    return made[:63]


def _sql() -> Any:
    from psycopg import sql

    return sql


def admin_facts(conn: Any) -> dict[str, Any]:
    """{role, database, superuser, createrole, create_on_database, owner (of our rows table, or None)}."""
    row = conn.execute(
        "SELECT current_user, current_database(), r.rolsuper, r.rolcreaterole,"
        " has_database_privilege(current_database(), 'CREATE'),"
        " (SELECT tableowner FROM pg_tables WHERE schemaname = 'claude_mem' AND tablename = 'rows')"
        " FROM pg_roles r WHERE r.rolname = current_user"
    ).fetchone()
    return {"role": row[0], "database": row[1], "superuser": bool(row[2]), "createrole": bool(row[3]),
            "create_on_database": bool(row[4]), "owner": row[5]}


def init(conn: Any) -> dict[str, Any]:
    """Set the server up (see the module's doc) as the admin connected; returns {group, migrated,
    created_group}. ServerError with one clear line when this role cannot."""
    found = admin_facts(conn)
    if not (found["superuser"] or found["createrole"]):
        raise ServerError(f"role {found['role']} may not create roles: `team init` needs an admin role"
                          " (CREATEROLE, and CREATE on the database; or a superuser)")
    if found["owner"] is None and not (found["superuser"] or found["create_on_database"]):
        raise ServerError(f"role {found['role']} may not create a schema in database {found['database']}:"
                          " grant it CREATE on the database, or run `team init` as its owner")
    if found["owner"] not in (None, found["role"]) and not found["superuser"]:
        raise ServerError(f"the claude-mem schema on this server belongs to role {found['owner']}: run `team init`"
                          f" as {found['owner']} (give it CREATEROLE) or as a superuser")
    migrated = team_server.migrate(conn)
    sql = _sql()
    group = group_name(found["database"])
    errors = team_server.driver().errors
    with conn.transaction():
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (group,)).fetchone() is not None
        if not exists:
            conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(group)))
        try:
            conn.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                sql.Identifier(found["database"]), sql.Identifier(group)))
            for statement in filter(None, (line.strip() for line in _GRANTS.splitlines())):
                conn.execute(sql.SQL(statement.rstrip(";")).format(group=sql.Identifier(group)))
            conn.execute(_GUARD)
        except errors.InsufficientPrivilege as exc:
            raise ServerError(f"role {found['role']} may not set the schema up: {' '.join(str(exc).split())}") from exc
        conn.execute("INSERT INTO claude_mem.meta VALUES ('member_group', %s) ON CONFLICT (key) DO UPDATE"
                     " SET value = excluded.value", (group,))
    return {"group": group, "migrated": migrated, "created_group": not exists}


def scram_verifier(password: str, salt: bytes | None = None, iterations: int = SCRAM_ITERATIONS) -> str:
    """PostgreSQL's SCRAM-SHA-256 verifier of `password` (RFC 5802/7677), so the password itself never
    travels to the server nor stands in its statement log."""
    salt = salt or secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def add_member(conn: Any, name: str, role: str | None = None) -> dict[str, str]:
    """A LOGIN role for member `name` in the member group, with a generated password; returns {role,
    name, password}. ServerError when the server was not set up with `init`, the role exists, or this
    role may not create roles."""
    found = admin_facts(conn)
    if not (found["superuser"] or found["createrole"]):
        raise ServerError(f"role {found['role']} may not create roles: `team add-member` needs the admin role"
                          " that ran `team init`")
    if found["owner"] is None:
        raise ServerError("this server has no claude-mem schema yet: run `claude-mem team init ADMIN_URL` first")
    row = conn.execute("SELECT value FROM claude_mem.meta WHERE key = 'member_group'").fetchone()
    group = row[0] if row else None
    if not group or conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (group,)).fetchone() is None:
        raise ServerError("this server was not set up for members: run `claude-mem team init ADMIN_URL` first")
    member = role_name(role or name)
    if member.startswith("pg_"):
        raise ServerError(f"role names starting with pg_ are PostgreSQL's own: choose another name than {member}")
    if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (member,)).fetchone() is not None:
        raise ServerError(f"role {member} exists already on this server: choose another name (or --role)")
    password = secrets.token_urlsafe(24)
    sql = _sql()
    errors = team_server.driver().errors
    try:
        with conn.transaction():
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE {}").format(
                sql.Identifier(member), sql.Literal(scram_verifier(password)), sql.Identifier(group)))
            conn.execute("INSERT INTO claude_mem.members (role, name) VALUES (%s, %s) ON CONFLICT (role) DO UPDATE"
                         " SET name = excluded.name", (member, name.strip()))
    except errors.InsufficientPrivilege as exc:
        raise ServerError(f"role {found['role']} may not add members: {' '.join(str(exc).split())}") from exc
    return {"role": member, "name": name.strip(), "password": password}
