"""Joining a team project and pulling what others wrote (issue 32 items 2, 4, 5, 6), on a real
PostgreSQL: a pull killed or cut off mid-stream resumes with nothing twice and nothing missing, rows
it cannot hold are skipped and counted, the bulk full-text path indexes as the triggers do, and a
replicated forget leaves nothing in the receiving machine's -wal."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import pytest

from claude_mem.index.search import SearchQuery, search
from claude_mem.recall import forget
from claude_mem.store import context_field, team_bulk, team_server
from claude_mem.store import team as local
from claude_mem.team import sync as team_sync
from conftest import REPO
from team_support import REMOTE, machine, pg, team_url  # noqa: F401  (fixtures)
from test_team import work

OTHER = "carol-laptop-1a2b3c4d"


def database(url: str) -> str:
    return url.rsplit("/", 1)[1]


def seed_server(pg, url: str, count: int, first: int = 1) -> None:
    """`count` observations by another device (sessions of 100 first), written straight into the server
    as a teammate's pushes leave them. The schema must exist (a machine synced once)."""
    last = first + count - 1
    pg.sql(f"""
        INSERT INTO claude_mem.projects (id) VALUES ('{REMOTE}') ON CONFLICT DO NOTHING;
        INSERT INTO claude_mem.rows (uid, kind, project, author, device, payload, rev)
        SELECT lpad(to_hex(1000000 + s), 32, '0'), 'session', '{REMOTE}', 'carol', '{OTHER}',
               jsonb_build_object('content_session_id', 'carol-' || s, 'status', 'completed',
                                  'started_at', '2026-01-01T00:00:00Z'), nextval('claude_mem.revision')
        FROM generate_series({first} / 100, {last} / 100) s ORDER BY s
        ON CONFLICT DO NOTHING;
        INSERT INTO claude_mem.rows (uid, kind, project, author, device, payload, rev)
        SELECT lpad(to_hex(g), 32, '0'), 'observation', '{REMOTE}', 'carol', '{OTHER}',
               jsonb_build_object('session_uid', lpad(to_hex(1000000 + g / 100), 32, '0'), 'type', 'discovery',
                                  'title', 'Observation ' || g || ' on lease renewal in the sweeper',
                                  'narrative', 'Renewal ' || g || ' takes the lease lock before the sweeper tick.',
                                  'facts', jsonb_build_array('fact ' || g), 'concepts', '["leases"]'::jsonb,
                                  'files_read', '[]'::jsonb, 'files_modified', '["src/lease.py"]'::jsonb,
                                  'content_hash', md5(g::text), 'created_at', '2026-01-02T00:00:00Z'),
               nextval('claude_mem.revision')
        FROM generate_series({first}, {last}) g ORDER BY g;
    """, database(url))


def observation_uids(m) -> list[str]:
    conn = m.connect()
    try:
        return [uid for (uid,) in conn.execute("SELECT uid FROM observations WHERE device IS NOT NULL")]
    finally:
        conn.close()


def joined(pg, url, tmp_path, name: str, count: int):
    """A machine that made the schema, and `count` rows of a teammate's on the server."""
    m = machine(tmp_path, name, url)
    m.sync()
    seed_server(pg, url, count)
    return m


PULL_THEN_DIE = """
import os, signal, sys
from claude_mem import settings
from claude_mem.store import db
from claude_mem.team.config import from_settings
from claude_mem.team.sync import Replicator

data_dir = sys.argv[1]
replicator = Replicator(from_settings(settings.load(data_dir)), lambda: db.connect(db.db_path(data_dir)))

def progress(step, done, total):
    if step == "pull" and done >= 6000:  # two batches committed: die as kill -9 would
        print(done, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

replicator.sync_once(progress)
"""


def test_a_join_killed_mid_pull_resumes_with_nothing_twice_and_nothing_missing(tmp_path, team_url, pg):
    count = 12_000
    b = joined(pg, team_url, tmp_path, "bob", count)
    env = {**os.environ, "PYTHONPATH": os.path.join(REPO, "src")}
    run = subprocess.run([sys.executable, "-c", PULL_THEN_DIE, b.data_dir], capture_output=True, text=True,
                         timeout=120, env=env)
    assert run.returncode == -signal.SIGKILL, run.stderr[-2000:]
    part = observation_uids(b)
    assert 0 < len(part) < count
    conn = b.connect()
    cursor = int(local.state(conn)[f"cursor:{REMOTE}"])
    hits = search(conn, SearchQuery.build("lease renewal sweeper", project=b.project, mode="keyword")).items
    conn.close()
    assert cursor > 0 and hits  # what arrived is committed and searchable while the rest waits
    totals = b.sync()
    uids = observation_uids(b)
    assert len(uids) == len(set(uids)) == count
    assert 0 < totals.pulled <= count + count // 100 + 1 - len(part)
    assert b.sync().pulled == 0


def test_a_connection_dropped_mid_pull_is_one_clear_error_and_the_next_sync_goes_on(tmp_path, team_url, pg):
    count = 20_000  # more than socket buffers hold: the cut is felt before the stream ends
    b = joined(pg, team_url, tmp_path, "bob", count)
    replicator = b.replicator()
    cut = []

    def progress(step: str, done: int, total: int) -> None:
        if step == "pull" and not cut:
            assert total >= count  # the bar knows how much is coming
            cut.append(pg.sql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                              f" WHERE application_name = 'claude-mem team' AND datname = '{database(team_url)}'")[0][0])

    with pytest.raises(Exception) as failure:
        replicator.sync_once(progress)
    replicator.close()
    assert cut and cut[0] >= 1
    message = str(failure.value)
    assert re.search(r"pull of github.com/acme/app cut off after \d+ row\(s\) \(the next sync goes on from there\)",
                     message), message
    team_sync.record_failure(b.connect, replicator.describe(failure.value))
    conn = b.connect()
    assert "cut off" in local.state(conn)["last_error"]
    conn.close()
    assert 0 < len(observation_uids(b)) < count
    b.sync()
    uids = observation_uids(b)
    assert len(uids) == len(set(uids)) == count


def insert_raw(pg, url: str, rows: list[tuple[str, str, str]]) -> None:
    """Rows as a broken or newer client might have left them: (uid, kind, payload JSON text)."""
    values = ", ".join(
        f"('{uid}', '{kind}', '{REMOTE}', 'carol', '{OTHER}', $json${payload}$json$::jsonb, nextval('claude_mem.revision'))"
        for uid, kind, payload in rows)
    pg.sql("INSERT INTO claude_mem.projects (id) VALUES ('" + REMOTE + "') ON CONFLICT DO NOTHING;"
           " INSERT INTO claude_mem.rows (uid, kind, project, author, device, payload, rev) VALUES " + values,
           database(url))


def test_rows_it_cannot_hold_are_skipped_counted_and_logged_and_the_rest_arrives(tmp_path, team_url, pg, caplog):
    b = machine(tmp_path, "bob", team_url, max_field_chars=2000)
    b.sync()
    # an older server has no CHECK on kind or size
    pg.sql("ALTER TABLE claude_mem.rows DROP CONSTRAINT IF EXISTS rows_kind_check", database(team_url))
    pg.sql("ALTER TABLE claude_mem.rows DROP CONSTRAINT IF EXISTS rows_payload_limit", database(team_url))
    good = {"type": "discovery", "title": "Sweeper renews early", "narrative": "ok", "facts": [], "concepts": [],
            "files_read": [], "files_modified": [], "content_hash": "h", "created_at": "2026-01-02T00:00:00Z"}
    insert_raw(pg, team_url, [
        ("a" * 32, "observation", json.dumps([1, 2, 3])),                               # not an object
        ("b" * 32, "observation", json.dumps({**good, "title": {"nested": True}})),      # wrong type
        ("c" * 32, "hologram", json.dumps(good)),                                        # unknown kind
        ("d" * 32, "observation", json.dumps({**good, "narrative": "x" * (1 << 20)})),   # over the size limit
        ("e" * 32, "observation", json.dumps({**good, "title": "From a newer client", "mood": "calm",
                                              "content_hash": "h2"})),                  # a field we do not know
        ("f" * 32, "observation", json.dumps({**good, "title": "Long narrative", "narrative": "y" * 50_000,
                                              "content_hash": "h3"})),                  # cut to max_field_chars
        ("9" * 32, "observation", json.dumps({**good, "title": "No date", "content_hash": "h5",
                                              "created_at": None})),                    # a required field missing
        ("0" * 32, "observation", json.dumps({**good, "title": "After the broken ones", "content_hash": "h4"})),
    ])
    with caplog.at_level("WARNING", logger="claude_mem.team"):
        totals = b.sync()
    assert totals.pulled == 3
    conn = b.connect()
    try:
        stored = dict(conn.execute("SELECT title, length(narrative) FROM observations WHERE device IS NOT NULL"))
        state = local.state(conn)
    finally:
        conn.close()
    assert set(stored) == {"From a newer client", "Long narrative", "After the broken ones"}
    assert stored["Long narrative"] <= 2000 + 60  # cut as a local capture is: head, marker, tail
    assert (state["skipped_malformed"], state["skipped_oversize"], state["newer_fields"]) == ("4", "1", "1")
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "not a JSON object" in logged and "wrong type in title" in logged and "'hologram'" in logged
    assert f"over the {team_server.ROW_LIMIT}-byte limit" in logged and "mood" in logged and "cannot hold" in logged
    assert b.sync().pulled == 0  # skipped rows are not fetched again and again
    from claude_mem.cli.team import status_lines, team_report

    lines = status_lines(team_report(b.data_dir))
    assert any(line.startswith("pulled rows skipped: 1 over the size limit, 4 malformed; 1 stored without fields")
               for line in lines), lines


def context_by_uid(m) -> dict[str, str]:
    conn = m.connect()
    try:
        context_field.settle(conn)
        return dict(conn.execute("SELECT o.uid, c.text FROM observations o JOIN search_context c"
                                 " ON c.kind = 0 AND c.row_id = o.id WHERE o.device IS NOT NULL"))
    finally:
        conn.close()


def test_the_bulk_full_text_path_indexes_as_the_triggers_do(tmp_path, team_url, pg, monkeypatch):
    b = joined(pg, team_url, tmp_path, "bob", 900)
    c = machine(tmp_path, "carol", team_url)
    used = []
    real = team_bulk._indexed_after
    monkeypatch.setattr(team_bulk, "_indexed_after", lambda *args: used.append(1) or real(*args))
    b.sync()
    assert used  # the join took the bulk path
    used.clear()
    monkeypatch.setattr(team_sync, "PULL_SIZES", (70,))  # groups too small: row by row, through the triggers
    c.sync()
    assert not used
    for m in (b, c):  # pulled rows wait for this machine's own model to embed them, whichever path stored them
        conn = m.connect()
        assert conn.execute("SELECT COUNT(*) FROM vector_queue WHERE kind = 'observation'").fetchone()[0] == 900
        conn.close()
    bulk, triggered = context_by_uid(b), context_by_uid(c)
    assert len(bulk) == 900 and bulk == triggered
    for m in (b, c):
        conn = m.connect()
        hits = search(conn, SearchQuery.build("Observation 517", project=m.project, mode="keyword")).items
        conn.close()
        assert hits and hits[0]["title"].startswith("Observation 517 ")


def test_a_replicated_forget_leaves_nothing_in_the_receiving_wal(tmp_path, team_url):
    a = machine(tmp_path, "alice", team_url)
    b = machine(tmp_path, "bob", team_url)
    canary = "Zebracanary7731 leaked a customer name"
    work(a, "sess-a1", [canary, "Lease renewal races with the sweeper"])
    a.sync()
    held = b.connect()  # the worker keeps the store open: the -wal stays (the last close would remove it)
    b.sync()
    wal = os.path.join(b.data_dir, os.path.basename(local_db(b)) + "-wal")
    with open(wal, "rb") as handle:
        assert canary.encode() in handle.read()  # what the test looks for is there before the forget
    conn = a.connect()
    wrong = conn.execute("SELECT id FROM observations WHERE title = ?", (canary,)).fetchone()[0]
    forget.forget(conn, a.data_dir, ids=[wrong])
    conn.close()
    a.sync()
    assert b.sync().deleted == 1
    with open(wal, "rb") as handle:
        assert canary.encode() not in handle.read()
    assert not any(canary in str(row) for row in b.rows().values())
    held.close()


def local_db(m) -> str:
    from claude_mem.store import db

    return db.db_path(m.data_dir)
