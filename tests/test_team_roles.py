"""Authorship bound to the database role (issue 32): `team init` and `team add-member` on a real
PostgreSQL, members who cannot write as each other nor change or bury each other's rows (each forgets their
own, on every machine), the row size limit, and a server set up without init (one shared role) that keeps
working and says its authorship is unverified."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys

import psycopg
import pytest

from claude_mem.store import team_server
from recall_seed import add_observation, add_session, stamp
from team_support import machine, pg, server_rows, team_url  # noqa: F401  (fixtures)
from test_team import work

_admins = itertools.count(1)


@pytest.fixture
def admin_url(pg):
    """A database owned by a role that may create roles (what a team's admin has), and its URL."""
    n = next(_admins)
    role, database, password = f"admin{n}_{os.getpid()}", f"teamr{n}_{os.getpid()}", f"adm-{n}-Pw9!"
    pg.sql(f"CREATE ROLE {role} LOGIN CREATEROLE PASSWORD '{password}'")
    pg.sql(f"CREATE DATABASE {database} OWNER {role}")
    return pg.url(role, password, database)


def cli(*args: str, data_dir: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **({"CLAUDE_MEM_DATA_DIR": data_dir} if data_dir else {})}
    return subprocess.run([sys.executable, "-m", "claude_mem", *args], capture_output=True, text=True, timeout=120,
                          env=env, stdin=subprocess.DEVNULL)


def add_member(admin_url: str, name: str) -> tuple[str, str]:
    """(role, URL) of a new member; the URL is the command's last line."""
    role = f"{name.lower()}_{os.getpid()}_{next(_admins)}"
    result = cli("team", "add-member", name, "--url", admin_url, "--role", role)
    assert result.returncode == 0, result.stderr
    return role, result.stdout.strip().splitlines()[-1]


def doctor_line(m) -> str:
    """`claude-mem doctor`'s team line for machine `m` (its check alone, as doctor runs it)."""
    from types import SimpleNamespace

    from claude_mem import settings
    from claude_mem.cli.checks_team import team_checks

    (check,) = team_checks(SimpleNamespace(values=settings.load(m.data_dir)))
    return str(check.detail)


def members(admin_url):
    assert cli("team", "init", admin_url).returncode == 0
    alice_role, alice_url = add_member(admin_url, "Alice")
    bob_role, bob_url = add_member(admin_url, "Bob")
    return alice_role, alice_url, bob_role, bob_url


def test_init_then_members_whose_rows_show_the_name_their_role_maps_to(tmp_path, admin_url, pg):
    first = cli("team", "init", admin_url)
    assert first.returncode == 0, first.stderr
    assert "schema claude_mem created" in first.stdout and "(created)" in first.stdout
    again = cli("team", "init", admin_url)  # idempotent
    assert again.returncode == 0 and "(exists)" in again.stdout and "created/updated" not in again.stdout
    alice_role, alice_url = add_member(admin_url, "Alice")
    _, bob_url = add_member(admin_url, "Bob")
    assert alice_url.startswith("postgresql://") and alice_role in alice_url and "adm-" not in alice_url

    # Alice's machine claims to be "Bob" in its settings: the server says who wrote the rows
    a = machine(tmp_path, "alice", alice_url, author="Bob", team_share_prompts=True)  # titles travel
    b = machine(tmp_path, "bob", bob_url)
    work(a, "sess-a1", ["Lease renewal races with the sweeper"])
    assert a.sync().pushed == 4  # a session, its prompt, an observation, a summary
    assert b.sync().pulled == 4
    assert {row["author"] for row in b.rows().values()} == {"Alice"}
    database = admin_url.rsplit("/", 1)[1]
    assert {(row[0], row[1]) for row in pg.sql("SELECT role, author FROM claude_mem.rows", database)} == {
        (alice_role, "Alice")}

    # an update of her own row goes through (INSERT … ON CONFLICT DO UPDATE under row-level security)
    conn = a.connect()
    conn.execute("UPDATE sessions SET title = 'Leases, renewed' WHERE content_session_id = 'sess-a1'")
    conn.commit()
    conn.close()
    assert a.sync().pushed == 1
    assert b.sync().pulled == 1
    assert [row["title"] for row in b.rows().values() if row["kind"] == "session"] == ["Leases, renewed"]
    assert a.sync().pushed == 0 and b.sync().pulled == 0  # replays change nothing

    status = cli("team", "status", data_dir=a.data_dir)
    assert "authorship: verified" in status.stdout and alice_role in status.stdout
    report = json.loads(cli("team", "status", "--json", data_dir=a.data_dir).stdout)
    assert report["authorship"] == "verified" and report["server_role"] == alice_role

    assert "authorship verified: role " + alice_role + " writes as Alice" in doctor_line(a)
    exists = cli("team", "add-member", "Alice", "--url", admin_url, "--role", alice_role)
    assert exists.returncode == 1 and "exists already" in exists.stderr and "Traceback" not in exists.stderr


def test_a_member_cannot_write_as_another_nor_change_nor_bury_their_rows(tmp_path, admin_url, pg):
    alice_role, alice_url, bob_role, bob_url = members(admin_url)
    b = machine(tmp_path, "bob", bob_url)
    work(b, "sess-b1", ["Bob's finding about the sweeper"])
    b.sync()
    database = admin_url.rsplit("/", 1)[1]
    bobs = pg.sql("SELECT uid FROM claude_mem.rows WHERE kind = 'observation'", database)[0][0]
    with psycopg.connect(alice_url, autocommit=True) as alice:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="may not write a row as role"):
            alice.execute("INSERT INTO claude_mem.rows (uid, kind, project, author, device, payload, rev, role)"
                          " VALUES (%s, 'observation', 'github.com/acme/app', 'Bob', 'x', '{}', 1, %s)",
                          ("a" * 32, bob_role))
        # a claimed author is replaced by the writer's own name
        alice.execute("INSERT INTO claude_mem.rows (uid, kind, project, author, device, payload, rev)"
                      " VALUES (%s, 'observation', 'github.com/acme/app', 'Bob', 'x', '{}', 1)", ("b" * 32,))
        assert alice.execute("SELECT author, role FROM claude_mem.rows WHERE uid = %s",
                             ("b" * 32,)).fetchone() == ("Alice", alice_role)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="may not change or bury"):
            alice.execute("UPDATE claude_mem.rows SET payload = '{\"title\": \"rewritten\"}' WHERE uid = %s", (bobs,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="may not change or bury"):
            alice.execute("UPDATE claude_mem.rows SET device = 'alice-laptop', role = current_user WHERE uid = %s",
                          (bobs,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            alice.execute("DELETE FROM claude_mem.rows WHERE uid = %s", (bobs,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            alice.execute("ALTER TABLE claude_mem.rows DISABLE ROW LEVEL SECURITY")
        # the normal push of a row with Bob's uid from Alice's device changes nothing
        team_server.push(alice, [{"uid": bobs, "kind": "observation", "project": "github.com/acme/app",
                                  "payload": {"title": "taken over"}}], "Alice", "alice-laptop")
        assert "taken over" not in str(pg.sql("SELECT payload FROM claude_mem.rows", database))
        # nor bury it: asked to, the server leaves another role's rows alone (Alice's forget stays on her
        # machine), and a tombstone written by hand is refused
        assert team_server.bury(alice, [bobs], "Alice", "alice-laptop") == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="may not change or bury"):
            alice.execute("UPDATE claude_mem.rows SET deleted = true, payload = NULL WHERE uid = %s", (bobs,))
        assert pg.sql(f"SELECT deleted, role FROM claude_mem.rows WHERE uid = '{bobs}'", database) == [
            (False, bob_role)]
    with psycopg.connect(bob_url, autocommit=True) as bob:
        # Bob buries his own row (from another of his devices): every machine of the team deletes it
        assert team_server.bury(bob, [bobs], "Bob", "bob-phone") == 1
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="stays deleted"):
            bob.execute("UPDATE claude_mem.rows SET deleted = false, payload = '{}' WHERE uid = %s", (bobs,))
    assert pg.sql(f"SELECT deleted, payload, role FROM claude_mem.rows WHERE uid = '{bobs}'", database) == [
        (True, None, bob_role)]
    assert b.sync().deleted == 1  # Bob's laptop applies the tombstone like any other


def test_an_over_limit_row_is_refused_and_the_rest_keeps_syncing(tmp_path, team_url, pg, caplog):
    a = machine(tmp_path, "alice", team_url)
    b = machine(tmp_path, "bob", team_url)
    conn = a.connect()
    session = add_session(conn, "sess-big", a.project, stamp(2))
    add_observation(conn, a.project, "A pasted log", session_id=session, narrative="x" * (team_server.ROW_LIMIT + 10))
    add_observation(conn, a.project, "A normal finding", session_id=session)
    conn.close()
    totals = a.sync()
    assert totals.refused == 1 and totals.pushed == 2  # the session and the normal observation
    assert b.sync().pulled == 2
    assert not any("A pasted log" in str(row) for row in pg.sql("SELECT payload::text FROM claude_mem.rows",
                                                                 team_url.rsplit("/", 1)[1]))
    again = a.replicator()
    try:
        assert again.sync_once(reconcile=False).refused == 0  # not tried again at every exchange
        assert again.sync_once(reconcile=True).refused == 1  # but at the next check
    finally:
        again.close()
    status = cli("team", "status", data_dir=a.data_dir)
    assert "refused by the server: 1 row(s)" in status.stdout and "outbox: 1 row(s)" in status.stdout
    assert json.loads(cli("team", "status", "--json", data_dir=a.data_dir).stdout)["refused"] == 1
    # tried again at the next check (team sync), refused again, still counted, not logged again
    assert cli("team", "sync", data_dir=a.data_dir).stdout.count("refused by the server: 1 row(s)") == 1
    assert len([r for r in caplog.records if "refused" in r.getMessage()]) == 1


def test_a_server_without_init_still_works_and_says_authorship_is_unverified(tmp_path, team_url, pg):
    a = machine(tmp_path, "alice", team_url)
    b = machine(tmp_path, "bob", team_url)
    work(a, "sess-a1", ["Lease renewal races with the sweeper"])
    assert a.sync().pushed == 3 and b.sync().pulled == 3
    assert {row["author"] for row in b.rows().values()} == {"alice"}  # as claimed: nothing verifies it
    assert [row[0] for row in server_rows(pg, team_url)] and team_server.SCHEMA_VERSION >= 2
    status = cli("team", "status", data_dir=a.data_dir)
    assert "authorship: unverified" in status.stdout and "team init" in status.stdout
    assert json.loads(cli("team", "status", "--json", data_dir=a.data_dir).stdout)["authorship"] == "unverified"
    assert "authorship unverified (one shared role), writing as alice" in doctor_line(a)
    # without init any row may be buried, as before: a row some other role wrote (a team that gave
    # each member a login of their own but never ran `team init`) is forgotten on every machine too
    database = team_url.rsplit("/", 1)[1]
    pg.sql("UPDATE claude_mem.rows SET role = 'someone_else' WHERE kind = 'observation'", database)
    observation = pg.sql("SELECT uid FROM claude_mem.rows WHERE kind = 'observation'", database)[0][0]
    with psycopg.connect(team_url, autocommit=True) as conn:
        assert team_server.bury(conn, [observation], "bob", "bob-laptop") == 1
    assert b.sync().deleted == 1 and a.sync().deleted == 1  # both machines drop it


def test_a_schema_1_server_is_brought_up_to_2_by_its_first_client(tmp_path, team_url, pg):
    database = team_url.rsplit("/", 1)[1]
    with psycopg.connect(team_url, autocommit=True) as conn:
        saved = team_server.MIGRATIONS[:]
        try:
            del team_server.MIGRATIONS[1:]
            team_server.migrate(conn)
        finally:
            team_server.MIGRATIONS[:] = saved
    assert pg.sql("SELECT value FROM claude_mem.meta WHERE key = 'schema_version'", database) == [("1",)]
    a = machine(tmp_path, "alice", team_url)
    work(a, "sess-a1", ["Lease renewal races with the sweeper"])
    assert a.sync().migrated == ["authorship"]
    assert pg.sql("SELECT value FROM claude_mem.meta WHERE key = 'schema_version'", database) == [("2",)]
    assert {row[0] for row in pg.sql("SELECT role FROM claude_mem.rows", database)} == {
        team_url.split("//")[1].split(":")[0]}


def test_init_and_add_member_say_clearly_what_is_wrong(tmp_path, team_url, admin_url, pg):
    bad = cli("team", "init", "mysql://root@db/memory")
    assert bad.returncode == 1 and "postgresql://" in bad.stderr and "Traceback" not in bad.stderr
    nobody = cli("team", "init", team_url)  # a role that may not create roles
    assert nobody.returncode == 1 and "may not create roles" in nobody.stderr
    assert team_url.split(":")[2].split("@")[0] not in nobody.stderr  # no password in the message
    before = cli("team", "add-member", "Carol", "--url", admin_url)
    assert before.returncode == 1 and "team init" in before.stderr and "Traceback" not in before.stderr
    gone = cli("team", "init", f"postgresql://someone:pw@127.0.0.1:{pg.port + 1 if pg.port < 65535 else 1}/x")
    assert gone.returncode == 1 and "cannot connect" in gone.stderr and "Traceback" not in gone.stderr
    help_text = cli("team", "init", "--help").stdout
    assert "CREATEROLE" in help_text and "add-member" in help_text
    assert "last line" in cli("team", "add-member", "--help").stdout


def test_a_row_this_role_may_not_write_is_refused_alone_and_the_rest_syncs(tmp_path, admin_url, pg, caplog):
    """A copy of Bob's data dir (the same device) given Alice's URL: Bob's rows it changes are refused
    by the server, one clear log line each; its own new rows go through; the refused row waits."""
    import shutil

    _, alice_url, bob_role, bob_url = members(admin_url)
    b = machine(tmp_path, "bob", bob_url)
    work(b, "sess-b1", ["Bob's finding about the sweeper"])
    assert b.sync().pushed == 3
    copy_dir = os.path.join(str(tmp_path), "copy")
    shutil.copytree(b.data_dir, copy_dir)
    with open(os.path.join(copy_dir, "settings.json")) as handle:
        values = json.load(handle)
    with open(os.path.join(copy_dir, "settings.json"), "w") as handle:
        json.dump({**values, "team_database_url": alice_url}, handle)
    copy = type(b)(copy_dir, b.project)
    conn = copy.connect()
    conn.execute("UPDATE sessions SET title = 'Renamed on the copy'")  # Bob's row, back in the outbox
    conn.commit()
    conn.close()
    work(copy, "sess-c1", ["A finding made on the copy"])
    totals = copy.sync()
    assert totals.refused == 1 and totals.pushed == 3
    refusals = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(refusals) == 1 and "may not change or bury row" in refusals[0] and "\n" not in refusals[0]
    database = admin_url.rsplit("/", 1)[1]
    assert ("Renamed on the copy" not in str(pg.sql("SELECT payload::text FROM claude_mem.rows", database)))
    assert {row[0] for row in pg.sql("SELECT DISTINCT role FROM claude_mem.rows WHERE kind = 'session'", database)} \
        >= {bob_role}
    status = cli("team", "status", data_dir=copy_dir)
    assert "refused by the server: 1 row(s)" in status.stdout and "outbox: 1 row(s)" in status.stdout


def test_init_on_a_server_a_shared_role_set_up(tmp_path, team_url, admin_url, pg):
    """The schema belongs to the shared role that made it: init as another admin says whose it is; init
    as that role (given CREATEROLE) binds what comes next, and the machines already there keep going."""
    owner = team_url.split("//")[1].split(":")[0]
    a = machine(tmp_path, "alice", team_url)
    work(a, "sess-a1", ["Before init"])
    a.sync()
    other_db = admin_url.rsplit("/", 1)[0] + "/" + team_url.rsplit("/", 1)[1]
    refused = cli("team", "init", other_db)
    assert refused.returncode == 1 and f"belongs to role {owner}" in refused.stderr
    pg.sql(f"ALTER ROLE {owner} CREATEROLE")
    done = cli("team", "init", team_url)
    assert done.returncode == 0, done.stderr
    _, carol_url = add_member(team_url, "Carol")
    c = machine(tmp_path, "carol", carol_url)
    assert c.sync().pulled == 3  # rows from before init read as before
    work(a, "sess-a2", ["After init"])
    assert a.sync().pushed == 3
    assert c.sync().pulled == 3
    authors = {row["title"]: row["author"] for row in c.rows().values() if row["kind"] == "observation"}
    assert authors == {"Before init": owner, "After init": owner}  # verified now: the role, not the claim
    assert "authorship: verified" in cli("team", "status", data_dir=c.data_dir).stdout
