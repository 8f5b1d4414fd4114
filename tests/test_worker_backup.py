"""Snapshots, rotation, restore, and self-healing of a corrupt database (in process and in a real worker)."""

import json
import os
import sqlite3
import subprocess
import sys

import pytest
from click.testing import CliRunner

from claude_mem.cli import cli
from claude_mem.runtime import discovery
from claude_mem.store import backup, db
from test_worker_lifecycle import cli as run_cli
from test_worker_lifecycle import worker_env  # noqa: F401  (a fixture)


def make_db(data_dir, sessions=200):
    conn = db.connect(db.db_path(str(data_dir)))
    conn.execute("BEGIN IMMEDIATE")
    for number in range(sessions):
        conn.execute("INSERT INTO sessions (content_session_id, project, cwd) VALUES (?, '/p', ?)",
                     (f"s{number}", "/p/" + "x" * 200))
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def add_session(data_dir, name):
    conn = db.connect(db.db_path(str(data_dir)))
    conn.execute("INSERT INTO sessions (content_session_id, project, cwd) VALUES (?, '/p', '/p')", (name,))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def session_ids(path):
    conn = sqlite3.connect(path)
    try:
        return {row[0] for row in conn.execute("SELECT content_session_id FROM sessions")}
    finally:
        conn.close()


def corrupt_pages(path):
    """Scribble over b-tree pages past the schema page: the file opens, quick_check fails."""
    size = os.path.getsize(path)
    with open(path, "r+b") as handle:
        for offset in range(4096 * 2, size, 4096 * 3):
            handle.seek(offset)
            handle.write(b"\xff\x00garbage" * 200)


def test_snapshot_is_a_consistent_copy_and_rotation_keeps_the_newest(data_dir):
    make_db(data_dir, sessions=5)
    path = backup.snapshot(str(data_dir), keep=5)
    name = os.path.basename(path)
    assert name.startswith("claude-mem-") and name.endswith("Z.db") and len(name) == len("claude-mem-20260101T000000Z.db")
    assert session_ids(path) == {f"s{n}" for n in range(5)}
    assert backup.check_database(path) is None
    for stamp in ("20200101T000000Z", "20210101T000000Z", "20220101T000000Z"):
        os.link(path, os.path.join(backup.backups_dir(str(data_dir)), f"claude-mem-{stamp}.db"))
    removed = backup.rotate(str(data_dir), keep=2)
    assert [os.path.basename(p) for p in removed] == ["claude-mem-20200101T000000Z.db", "claude-mem-20210101T000000Z.db"]
    assert [os.path.basename(p) for p in backup.list_backups(str(data_dir))] == ["claude-mem-20220101T000000Z.db", name]
    assert not [n for n in os.listdir(backup.backups_dir(str(data_dir))) if n.endswith(".tmp")]


def test_cli_backup_and_restore(data_dir):
    make_db(data_dir, sessions=3)
    runner = CliRunner()
    result = runner.invoke(cli, ["backup"])
    assert result.exit_code == 0, result.output
    snapshot_path = result.output.split(" (")[0].strip()
    add_session(data_dir, "after-backup")
    result = runner.invoke(cli, ["restore", snapshot_path])
    assert result.exit_code == 0, result.output
    assert "after-backup" not in session_ids(db.db_path(str(data_dir)))
    kept = [name for name in os.listdir(data_dir) if name.startswith("claude-mem.db.before-restore-")]
    assert kept and "after-backup" in session_ids(os.path.join(data_dir, [k for k in kept if not k.endswith(("-wal", "-shm"))][0]))


def test_backup_without_a_database_is_a_clear_error(data_dir):
    result = CliRunner().invoke(cli, ["backup"])
    assert result.exit_code == 1 and "no database to back up" in result.output


@pytest.mark.parametrize("content", [b"", b"not a database at all" * 100, b"SQLite format 3\x00" + b"\x00" * 50])
def test_restore_refuses_a_file_that_is_not_a_good_snapshot(data_dir, tmp_path, content):
    make_db(data_dir, sessions=2)
    bad = tmp_path / "bad.db"
    bad.write_bytes(content)
    result = CliRunner().invoke(cli, ["restore", str(bad)])
    assert result.exit_code == 1 and "cannot be restored" in result.output
    assert session_ids(db.db_path(str(data_dir))) == {"s0", "s1"}


def test_restore_refuses_while_the_worker_lock_is_held(data_dir):
    make_db(data_dir, sessions=2)
    snapshot_path = backup.snapshot(str(data_dir), keep=3)
    fd = discovery.try_lock(str(data_dir))
    try:
        result = CliRunner().invoke(cli, ["restore", snapshot_path])
    finally:
        os.close(fd)
    assert result.exit_code == 1 and "worker is running" in result.output


def test_restore_refuses_while_a_real_worker_runs(worker_env):  # noqa: F811
    make_db(worker_env, sessions=2)
    snapshot_path = backup.snapshot(str(worker_env), keep=3)
    run_cli("worker", "start")
    refused = run_cli("restore", snapshot_path, check=False)
    assert refused.returncode == 1 and "stop it first" in refused.stderr
    run_cli("worker", "stop")
    run_cli("restore", snapshot_path)


def test_healthy_database_is_left_alone(data_dir):
    make_db(data_dir, sessions=2)
    assert backup.recover_if_corrupt(str(data_dir)) is None
    assert backup.recover_if_corrupt(str(data_dir / "elsewhere")) is None


def test_corrupt_database_is_moved_aside_and_the_newest_good_backup_restored(data_dir):
    make_db(data_dir)
    older = backup.snapshot(str(data_dir), keep=5)
    newest_but_bad = os.path.join(backup.backups_dir(str(data_dir)), "claude-mem-29990101T000000Z.db")
    with open(newest_but_bad, "wb") as handle:
        handle.write(b"truncated junk")
    add_session(data_dir, "after-backup")
    for folder, name in (("spool", "1.jsonl"), ("quarantine", "q.json")):
        os.makedirs(data_dir / folder, exist_ok=True)
        (data_dir / folder / name).write_text('{"kept": true}\n')
    corrupt_pages(db.db_path(str(data_dir)))
    assert backup.check_database(db.db_path(str(data_dir)), require_schema=False) is not None

    record = backup.recover_if_corrupt(str(data_dir))
    assert record["restored_from"] == older and record["problem"]
    assert os.path.exists(record["corrupt_copy"]) and ".corrupt-" in record["corrupt_copy"]
    assert backup.check_database(db.db_path(str(data_dir))) is None
    assert "s0" in session_ids(db.db_path(str(data_dir)))
    assert (data_dir / "spool" / "1.jsonl").read_text() == '{"kept": true}\n'
    assert (data_dir / "quarantine" / "q.json").exists()
    assert discovery.read_recovery(str(data_dir)) == record


def test_unopenable_database_without_backups_starts_empty(data_dir):
    os.makedirs(data_dir)
    (data_dir / "claude-mem.db").write_bytes(b"this is not sqlite" * 1000)
    record = backup.recover_if_corrupt(str(data_dir))
    assert record["restored_from"] is None and "empty" in record["note"]
    assert not os.path.exists(db.db_path(str(data_dir)))
    assert open(record["corrupt_copy"], "rb").read().startswith(b"this is not sqlite")


def test_worker_heals_a_corrupt_database_on_start_and_status_says_so(worker_env):  # noqa: F811
    data_dir = str(worker_env)
    make_db(worker_env)
    run_cli("backup")
    corrupt_pages(db.db_path(data_dir))
    run_cli("worker", "start")
    report = json.loads(run_cli("worker", "status", "--json").stdout)
    assert report["running"] and report["recovery"]["restored_from"]
    assert report["health"]["recovery"]["corrupt_copy"] == report["recovery"]["corrupt_copy"]
    assert "DATABASE RECOVERED" in run_cli("worker", "status").stdout
    assert "DATABASE RECOVERED" in run_cli("status").stdout
    assert "s0" in session_ids(db.db_path(data_dir))
    log = open(os.path.join(data_dir, "logs", "worker.log"), encoding="utf-8").read()
    assert "DATABASE CORRUPT" in log


def test_backup_service_snapshots_on_start_when_none_is_recent(worker_env, monkeypatch):  # noqa: F811
    from test_worker_lifecycle import wait_for

    monkeypatch.setenv("CLAUDE_MEM_BACKUP_INTERVAL_HOURS", "1")
    make_db(worker_env, sessions=1)
    run_cli("worker", "start")
    wait_for(lambda: backup.list_backups(str(worker_env)), 20, "a snapshot")
    assert backup.check_database(backup.list_backups(str(worker_env))[-1]) is None


def test_snapshot_works_while_a_writer_holds_a_transaction(data_dir):
    make_db(data_dir, sessions=2)
    writer = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
        "c.execute('BEGIN IMMEDIATE'); c.execute(\"INSERT INTO sessions (content_session_id, project, cwd) "
        "VALUES ('uncommitted', '/p', '/p')\"); print('ready', flush=True); time.sleep(3)"),
        db.db_path(str(data_dir))], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "ready"
        path = backup.snapshot(str(data_dir), keep=3)
    finally:
        writer.kill()
        writer.wait(timeout=10)
    assert session_ids(path) == {"s0", "s1"}


def test_capture_rows_newer_than_the_backup_are_salvaged(data_dir):
    make_db(data_dir, sessions=20)
    backup.snapshot(str(data_dir), keep=5)
    conn = db.connect(db.db_path(str(data_dir)))
    conn.execute("INSERT INTO sessions (content_session_id, project, cwd) VALUES ('late', '/p', '/p')")
    late = conn.execute("SELECT id FROM sessions WHERE content_session_id = 'late'").fetchone()[0]
    conn.execute("INSERT INTO prompts (session_id, prompt_number, text) VALUES (?, 1, 'fix the bug')", (late,))
    uids = conn.execute("SELECT s.uid, p.uid FROM sessions s JOIN prompts p ON p.session_id = s.id"
                        " WHERE s.id = ?", (late,)).fetchone()
    for key, status in (("late-tool", "claimed"), ("late-done", "done"), ("late-failed", "failed")):
        conn.execute("INSERT INTO pending_events (event_key, session_id, kind, payload, status) "
                     "VALUES (?, ?, 'tool', '{}', ?)", (key, late, status))
    index_page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'sessions_project'").fetchone()[0]
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with open(db.db_path(str(data_dir)), "r+b") as handle:  # break an index only: the tables stay readable
        handle.seek((index_page - 1) * page_size)
        handle.write(b"\x0d" + b"\xee" * 64)

    record = backup.recover_if_corrupt(str(data_dir))
    assert record is not None and record["restored_from"]
    assert record["salvaged"] == {"sessions": 1, "prompts": 1, "events": 3}
    conn = sqlite3.connect(db.db_path(str(data_dir)))
    events = dict(conn.execute("SELECT event_key, status FROM pending_events"))
    # an event observed before the damage is queued again: its observations went with the corrupt copy
    assert events == {"late-tool": "pending", "late-done": "pending", "late-failed": "failed"}
    assert conn.execute("SELECT text FROM prompts").fetchall() == [("fix the bug",)]
    # salvaged rows keep their global ids (an export made before the damage still names them)
    assert conn.execute("SELECT s.uid, p.uid FROM sessions s JOIN prompts p ON p.session_id = s.id"
                        " WHERE s.content_session_id = 'late'").fetchone() == uids
    assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    conn.close()
