"""Reconciliation with the team server (issue 32) on a real PostgreSQL: rows the server lost after
acknowledging them (a crash with asynchronous commit, an older backup restored) come back at the next
`team sync`; a server that went back in time is pulled again from the start; a server built anew at
the same URL (another epoch) gets everything again."""

from __future__ import annotations

import json
import subprocess
import sys

from claude_mem.team import integrity
from team_support import machine, pg, server_rows, team_url  # noqa: F401  (fixtures)
from test_team import work
from test_team_faults import many


def cli(data_dir: str, *args: str) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "claude_mem", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir}, stdin=subprocess.DEVNULL)


def database(url: str) -> str:
    return url.rsplit("/", 1)[1]


def titles(m) -> set[str]:
    return {row["title"] for row in m.rows().values() if row["kind"] == "observation"}


def test_rows_the_server_lost_come_back_at_the_next_team_sync(tmp_path, team_url, pg):
    a = machine(tmp_path, "alice", team_url)
    b = machine(tmp_path, "bob", team_url)
    many(a, 400, "sess-a1")
    assert a.sync().pushed == 401
    lost = [uid for (uid,) in pg.sql("SELECT uid FROM claude_mem.rows WHERE kind = 'observation' ORDER BY md5(uid)"
                                     " LIMIT 25", database(team_url))]
    pg.sql(f"DELETE FROM claude_mem.rows WHERE uid IN ({', '.join(repr(uid) for uid in lost)})", database(team_url))
    assert len(server_rows(pg, team_url)) == 376
    assert a.replicator().outbox(a.connect()) == 0  # nothing tells this machine, until it checks

    result = cli(a.data_dir, "team", "sync")
    assert result.returncode == 0, result.stderr
    assert "the server had lost 25 row(s) pushed from here; sent again" in result.stdout
    assert {row[0] for row in server_rows(pg, team_url)} >= set(lost) and len(server_rows(pg, team_url)) == 401
    assert b.sync().pulled == 401 and len(titles(b)) == 400

    again = cli(a.data_dir, "team", "sync")
    assert again.returncode == 0 and "had lost" not in again.stdout and "pushed 0" in again.stdout
    status = cli(a.data_dir, "team", "status")
    assert "all 401 row(s) pushed from here are on the server; 25 row(s) re-sent in all" in status.stdout
    report = json.loads(cli(a.data_dir, "team", "status", "--json").stdout)
    assert report["resent"] == 25 and report["reconciled_at"] and report["refused"] == 0


def test_a_restored_server_is_repaired_and_teammates_miss_nothing(tmp_path, team_url, pg):
    a = machine(tmp_path, "alice", team_url)
    b = machine(tmp_path, "bob", team_url)
    work(a, "sess-a1", ["Before the backup"])
    a.sync()
    b.sync()
    backup = int(pg.sql("SELECT max(rev) FROM claude_mem.rows", database(team_url))[0][0])
    work(a, "sess-a2", ["After the backup, lost in the restore"])
    a.sync()
    b.sync()
    # the server is restored from the older backup: later rows gone, its revisions back where they were
    pg.sql(f"DELETE FROM claude_mem.rows WHERE rev > {backup}", database(team_url))
    pg.sql(f"SELECT setval('claude_mem.revision', {backup})", database(team_url))
    # Alice writes on, and her next exchange re-sends what the server lost (new revisions, at or below
    # the revision Bob had reached), before Bob's next exchange
    work(a, "sess-a3", ["Written after the restore"])
    totals = a.sync()
    assert totals.resent == 3 and totals.pushed == 6
    pulled = b.sync()
    assert "Written after the restore" in titles(b)
    assert pulled.pulled >= 3
    assert integrity.report(state(b))["restored_at"]
    assert titles(a) == titles(b)


def test_a_server_built_anew_at_the_same_url_gets_everything_again(tmp_path, team_url, pg):
    a = machine(tmp_path, "alice", team_url)
    b = machine(tmp_path, "bob", team_url)
    work(a, "sess-a1", ["Lease renewal races with the sweeper"])
    a.sync()
    b.sync()
    pg.sql("DROP SCHEMA claude_mem CASCADE", database(team_url))
    pg.sql(f"GRANT CREATE ON DATABASE {database(team_url)} TO {team_url.split('//')[1].split(':')[0]}")
    work(b, "sess-b1", ["Bob's note after the rebuild"])
    replicator = a.replicator()
    try:
        totals = replicator.sync_once(reconcile=False)  # the epoch changed: it checks anyway
    finally:
        replicator.close()
    assert totals.resent == 3
    b.sync()
    c = machine(tmp_path, "carol", team_url)
    c.sync()
    assert titles(c) == {"Lease renewal races with the sweeper", "Bob's note after the rebuild"}
    a.sync()
    assert "Bob's note after the rebuild" in titles(a)


def state(m) -> dict[str, str]:
    from claude_mem.store import team

    conn = m.connect()
    try:
        return team.state(conn)
    finally:
        conn.close()
