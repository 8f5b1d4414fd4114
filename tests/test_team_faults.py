"""Team memory when things go wrong: the server away, a push killed mid-way, two pushers at once, a wrong
password, an unreachable host, a server without our schema or with a newer one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from claude_mem.store import team as local
from claude_mem.store.team_server import NewerSchema
from conftest import REPO
from recall_seed import add_observation, add_session, stamp
from team_support import machine, pg, server_rows, team_url  # noqa: F401  (fixtures)
from test_team import found, same_content, work


def many(m, count: int, session_id: str) -> None:
    conn = m.connect()
    try:
        conn.execute("BEGIN")
        session = add_session(conn, session_id, m.project, stamp(5))
        for n in range(count):
            add_observation(conn, m.project, f"Observation {n} of {session_id} about leases", session_id=session,
                            created_at=stamp(4 - n / count))
        conn.execute("COMMIT")
    finally:
        conn.close()


def uids_on_server(pg, url) -> list[str]:
    return [row[0] for row in server_rows(pg, url)]


def count_on_server(pg, url) -> int:
    """Rows on the server so far (0 before the first client made our schema)."""
    database = url.rsplit("/", 1)[1]
    if not pg.sql("SELECT to_regclass('claude_mem.rows')", database)[0][0]:
        return 0
    return int(pg.sql("SELECT COUNT(*) FROM claude_mem.rows", database)[0][0])


def test_server_away_for_a_while_then_both_outboxes_drain(tmp_path, team_url, pg):
    a = machine(tmp_path, "alice", team_url)
    b = machine(tmp_path, "bob", team_url)
    work(a, "sess-a1", ["Lease renewal races with the sweeper"])
    a.sync()
    b.sync()
    pg.pause()
    try:
        work(a, "sess-a2", ["Sweeper interval halved while the server was away"])
        work(b, "sess-b1", ["Jitter added to renewals offline"], prompt="Spread renewals")
        for m in (a, b):
            with pytest.raises(Exception) as failure:
                m.sync()
            assert "connect" in str(failure.value).lower() or "server" in str(failure.value).lower()
            replicator = m.replicator()
            conn = m.connect()
            assert replicator.outbox(conn) == 3  # session, observation, summary wait
            conn.close()
        # local memory carries on: capture, observe (rows written above) and search
        assert found(a, "sweeper interval")
        assert found(b, "jitter renewals")
    finally:
        pg.resume()
    for m in (a, b, a):
        m.sync()
    assert same_content(a.rows()) == same_content(b.rows())
    on_server = uids_on_server(pg, team_url)
    assert len(on_server) == len(set(on_server)) == len(same_content(a.rows())) == 9


PUSHER = """
import sys
from claude_mem import settings
from claude_mem.store import db
from claude_mem.team.config import from_settings
from claude_mem.team.sync import Replicator
data_dir = sys.argv[1]
Replicator(from_settings(settings.load(data_dir)), lambda: db.connect(db.db_path(data_dir))).sync_once()
"""


def test_kill_9_mid_push_loses_nothing_and_duplicates_nothing(tmp_path, team_url, pg):
    a = machine(tmp_path, "alice", team_url)
    total = 12_000
    many(a, total, "sess-big")
    child = subprocess.Popen([sys.executable, "-c", PUSHER, a.data_dir], cwd=REPO,
                             env={**os.environ, "PYTHONPATH": os.path.join(REPO, "src")})
    try:
        deadline = time.monotonic() + 60
        at_kill = 0
        while time.monotonic() < deadline and child.poll() is None:
            at_kill = count_on_server(pg, team_url)
            if at_kill > 0:
                break
            time.sleep(0.01)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert 0 < at_kill < total + 1, "the push was not caught mid-way"
    a.sync()
    a.sync()
    on_server = uids_on_server(pg, team_url)
    mine = a.rows()
    assert len(on_server) == len(set(on_server)) == len(mine) == total + 1
    assert set(on_server) == set(mine)
    conn = a.connect()
    assert local.unpushed_count(conn, [a.project]) == 0
    conn.close()


def test_two_pushers_at_once_neither_duplicates_nor_loses(tmp_path, team_url, pg):
    a = machine(tmp_path, "alice", team_url)
    b = machine(tmp_path, "bob", team_url)
    many(a, 3000, "sess-a")
    many(b, 3000, "sess-b")
    # Two machines at once, and the same machine twice at once (its worker and `team sync`).
    errors: list[BaseException] = []

    def run(m):
        try:
            m.sync()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(m,)) for m in (a, b, a, b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for m in (a, b):
        m.sync()
    on_server = uids_on_server(pg, team_url)
    assert len(on_server) == len(set(on_server)) == 6002
    assert same_content(a.rows()) == same_content(b.rows())
    revisions = [row[5] for row in server_rows(pg, team_url)]
    assert len(revisions) == len(set(revisions))


def one_line(text: str) -> bool:
    return bool(text) and "\n" not in text


EXPECTED = {"password": "password authentication failed", "host": "refused",
            "tls": "server does not support SSL, but SSL was required"}


@pytest.mark.parametrize("damage", sorted(EXPECTED))
def test_a_wrong_password_or_an_unreachable_host_is_one_clear_line_without_the_secret(tmp_path, team_url, damage):
    password = team_url.split(":")[2].split("@")[0]
    url = {"password": team_url.replace(password, "not-the-password"),
           "host": team_url.replace(team_url.split("@")[1].split("/")[0], "127.0.0.1:1"),
           # libpq's TLS options pass through the URL: this server has no TLS, so requiring it fails
           "tls": team_url + "?sslmode=require"}[damage]
    a = machine(tmp_path, "alice", url)
    work(a, "sess-a1", ["Lease renewal races with the sweeper"])
    replicator = a.replicator()
    with pytest.raises(Exception) as failure:
        replicator.sync_once()
    line = replicator.describe(failure.value)
    assert one_line(line)
    assert EXPECTED[damage] in line
    assert password not in line and "not-the-password" not in line
    assert found(a, "lease sweeper")  # local memory unaffected


def test_a_server_we_may_not_create_our_schema_in_says_so(tmp_path, pg):
    pg.sql("CREATE ROLE guest LOGIN PASSWORD 'guest-pw-1'")
    pg.sql("CREATE DATABASE shared_noschema")
    pg.sql("REVOKE CREATE ON DATABASE shared_noschema FROM PUBLIC", "shared_noschema")
    pg.sql("REVOKE CREATE ON SCHEMA public FROM PUBLIC", "shared_noschema")
    a = machine(tmp_path, "alice", pg.url("guest", "guest-pw-1", "shared_noschema"))
    replicator = a.replicator()
    with pytest.raises(Exception) as failure:
        replicator.sync_once()
    line = replicator.describe(failure.value)
    assert one_line(line) and "permission denied" in line and "guest-pw-1" not in line


def test_a_server_with_a_newer_schema_is_refused(tmp_path, team_url, pg):
    a = machine(tmp_path, "alice", team_url)
    a.sync()
    database = team_url.rsplit("/", 1)[1]
    pg.sql("UPDATE claude_mem.meta SET value = '99' WHERE key = 'schema_version'", database)
    work(a, "sess-a1", ["Lease renewal races with the sweeper"])
    with pytest.raises(NewerSchema) as failure:
        a.sync()
    assert "newer than this claude-mem" in str(failure.value) and "upgrade claude-mem" in str(failure.value)
    assert found(a, "lease sweeper")


def test_a_row_this_store_cannot_hold_is_skipped_and_the_rest_arrive(tmp_path, team_url, pg):
    a = machine(tmp_path, "alice", team_url)
    b = machine(tmp_path, "bob", team_url)
    a.sync()
    database = team_url.rsplit("/", 1)[1]
    pg.sql("INSERT INTO claude_mem.projects (id) VALUES ('github.com/acme/app') ON CONFLICT DO NOTHING", database)
    pg.sql("INSERT INTO claude_mem.rows (uid, kind, project, author, device, payload, rev) VALUES"
           " ('" + "e" * 32 + "', 'observation', 'github.com/acme/app', 'mallory', 'elsewhere',"
           " '{\"type\": \"not-a-type\", \"title\": 7}', nextval('claude_mem.revision'))", database)
    work(a, "sess-a1", ["Lease renewal races with the sweeper"])
    a.sync()
    b.sync()
    titles = [row["title"] for row in b.rows().values() if row["kind"] == "observation"]
    assert titles == ["Lease renewal races with the sweeper"]
