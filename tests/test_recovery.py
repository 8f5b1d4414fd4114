"""Recovery that recovers (issue 11): real databases damaged the ways disks and crashes damage them.

Every row stored on an intact page survives salvage; an empty, missing or truncated database beside
a good backup is restored; a damaged full-text index (which passes `quick_check`) is found and
rebuilt, at start and when a batch cannot be stored; a damaged or empty snapshot never pushes a good
backup out; `/health` says what was repaired.
"""

import asyncio
import json
import os
import shutil
import sqlite3

import pytest

from claude_mem import settings as settings_module
from claude_mem.observer.pipeline import Pipeline
from claude_mem.store import backup, db, integrity
from claude_mem.store.salvage import salvage_capture
from fakes.observer_provider import FakeProvider
from observer_support import add_event, add_prompt, add_session, connect, drain, load_session_edit
from test_worker_lifecycle import cli as run_cli
from test_worker_lifecycle import worker_env  # noqa: F401  (a fixture)

SESSIONS = 40
EVENTS_PER_SESSION = 20


def build(path: str) -> None:
    """40 sessions (long paths, so they span pages), a prompt each, 20 unfinished events each (~600 B)."""
    conn = db.connect(path)
    with db.transaction(conn):
        for number in range(SESSIONS):
            session = add_session(conn, f"session-{number:03d}", project="/home/dev/" + "p" * 180 + str(number))
            add_prompt(conn, session, f"prompt of session {number}")
            for event in range(EVENTS_PER_SESSION):
                add_event(conn, session, "tool", {"tool_name": "Bash", "tool_input": {"command": f"make {event}"},
                                                  "tool_response": {"stdout": "o" * 500}}, f"k-{number}-{event}")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def leaves(path: str, table: str) -> list[tuple[int, list[int]]]:
    """The table's leaf pages in key order, each with the rowids it holds (from the intact file)."""
    conn = sqlite3.connect(path)
    try:
        pages = conn.execute("SELECT pageno, ncell FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path",
                             (table,)).fetchall()
        rowids = [row[0] for row in conn.execute(f"SELECT rowid FROM {table} ORDER BY rowid")]
        interior = [row[0] for row in conn.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'internal'", (table,))]
    finally:
        conn.close()
    assert sum(ncell for _page, ncell in pages) == len(rowids)
    result, start = [], 0
    for page, ncell in pages:
        result.append((page, rowids[start:start + ncell]))
        start += ncell
    assert interior or len(result) == 1
    return result


def page_size(path: str) -> int:
    with open(path, "rb") as handle:
        header = handle.read(100)
    size = int.from_bytes(header[16:18], "big")
    return 65536 if size == 1 else size


def scribble(path: str, page: int) -> None:
    size = page_size(path)
    with open(path, "r+b") as handle:
        handle.seek((page - 1) * size)
        handle.write(bytes([0x0D, 0xFF, 0xFF]) + os.urandom(size - 3))


def keys(path: str, sql: str) -> set:
    conn = sqlite3.connect(path)
    try:
        return {row[0] for row in conn.execute(sql)}
    finally:
        conn.close()


def salvage_into_backup(tmp_path, damaged: str) -> str:
    """Salvage `damaged` into an empty database (a backup from before any of this was captured)."""
    target = str(tmp_path / "restored.db")
    db.connect(target).close()
    salvage_capture(damaged, target)
    return target


@pytest.fixture
def original(tmp_path) -> str:
    path = str(tmp_path / "original.db")
    build(path)
    return path


def damaged_copy(original: str, tmp_path, name: str) -> str:
    path = str(tmp_path / name)
    shutil.copyfile(original, path)
    return path


def test_a_damaged_event_page_loses_only_its_own_rows(original, tmp_path):
    pages = leaves(original, "pending_events")
    assert len(pages) >= 6
    bad_page, lost = pages[len(pages) // 2]
    path = damaged_copy(original, tmp_path, "events.db")
    scribble(path, bad_page)
    assert backup.check_database(path) is not None
    restored = salvage_into_backup(tmp_path, path)
    all_keys = keys(original, "SELECT event_key FROM pending_events")
    lost_keys = keys(original, f"SELECT event_key FROM pending_events WHERE rowid IN ({','.join(map(str, lost))})")
    assert keys(restored, "SELECT event_key FROM pending_events") == all_keys - lost_keys
    assert len(all_keys - lost_keys) >= len(all_keys) * 3 // 4
    assert len(keys(restored, "SELECT content_session_id FROM sessions")) == SESSIONS


def test_a_damaged_session_page_loses_only_its_sessions(original, tmp_path):
    pages = leaves(original, "sessions")
    assert len(pages) >= 3
    bad_page, lost = pages[1]
    path = damaged_copy(original, tmp_path, "sessions.db")
    scribble(path, bad_page)
    restored = salvage_into_backup(tmp_path, path)
    lost_names = keys(original, f"SELECT content_session_id FROM sessions WHERE rowid IN ({','.join(map(str, lost))})")
    survivors = keys(restored, "SELECT content_session_id FROM sessions")
    assert survivors == keys(original, "SELECT content_session_id FROM sessions") - lost_names
    # every event of a surviving session survives with it
    assert len(keys(restored, "SELECT event_key FROM pending_events")) == len(survivors) * (EVENTS_PER_SESSION + 1)


def test_a_damaged_index_page_loses_nothing(original, tmp_path):
    conn = sqlite3.connect(original)
    index_page = conn.execute("SELECT pageno FROM dbstat WHERE name IN (SELECT name FROM sqlite_master"
                              " WHERE type = 'index' AND tbl_name = 'pending_events') ORDER BY pageno DESC").fetchone()[0]
    conn.close()
    path = damaged_copy(original, tmp_path, "index.db")
    scribble(path, index_page)
    assert backup.check_database(path) is not None
    restored = salvage_into_backup(tmp_path, path)
    assert keys(restored, "SELECT event_key FROM pending_events") == keys(original, "SELECT event_key FROM pending_events")


def test_a_truncated_file_keeps_the_rows_before_the_cut(original, tmp_path):
    pages = leaves(original, "pending_events")
    conn = sqlite3.connect(original)
    structure = max(row[0] for row in conn.execute(
        "SELECT pageno FROM dbstat WHERE pagetype = 'internal' OR name IN ('sessions', 'prompts', 'sqlite_schema')"))
    conn.close()
    cut = max(structure, sorted(page for page, _ in pages)[len(pages) // 2])
    path = damaged_copy(original, tmp_path, "truncated.db")
    with open(path, "r+b") as handle:
        handle.truncate(cut * page_size(path))
    kept = [rowid for page, rowids in pages if page <= cut for rowid in rowids]
    assert 0 < len(kept) < sum(len(rowids) for _page, rowids in pages)
    restored = salvage_into_backup(tmp_path, path)
    expected = keys(original, f"SELECT event_key FROM pending_events WHERE rowid IN ({','.join(map(str, kept))})")
    assert keys(restored, "SELECT event_key FROM pending_events") == expected


@pytest.mark.parametrize("damage", ["missing", "empty", "zero-bytes", "truncated"])
def test_a_missing_or_empty_database_beside_a_good_backup_is_restored(data_dir, damage):
    path = db.db_path(str(data_dir))
    build(path)
    backup.snapshot(str(data_dir), keep=3)
    if damage == "missing":
        os.unlink(path)
    elif damage == "zero-bytes":
        open(path, "wb").close()
    elif damage == "empty":
        os.unlink(path)
        sqlite3.connect(path).close()
    else:
        with open(path, "r+b") as handle:
            handle.truncate(os.path.getsize(path) // 3)
    record = backup.recover_if_corrupt(str(data_dir))
    assert record is not None and record["restored_from"]
    assert len(keys(path, "SELECT content_session_id FROM sessions")) == SESSIONS
    assert json.load(open(os.path.join(str(data_dir), "recovery.json")))["problem"] == record["problem"]


def test_a_fresh_install_starts_empty(data_dir):
    assert backup.recover_if_corrupt(str(data_dir)) is None


def test_snapshots_never_push_out_the_last_backup_holding_memory(data_dir):
    path = db.db_path(str(data_dir))
    build(path)
    good = backup.snapshot(str(data_dir), keep=2)
    os.unlink(path)
    empty = os.path.join(str(data_dir), "elsewhere", "claude-mem.db")
    db.connect(empty).close()  # an empty database, as a build without recovery before writing would make
    os.replace(empty, path)
    import time

    for _ in range(3):
        time.sleep(1.05)  # snapshot names are stamped to the second
        backup.snapshot(str(data_dir), keep=2)
    assert good in backup.list_backups(str(data_dir))


def test_a_damaged_snapshot_is_refused_and_the_good_ones_kept(data_dir, monkeypatch):
    path = db.db_path(str(data_dir))
    build(path)
    good = backup.snapshot(str(data_dir), keep=1)
    monkeypatch.setattr(backup, "check_database", lambda candidate, require_schema=True: "quick_check: damaged")
    with pytest.raises(backup.BackupError, match="failed its check"):
        backup.snapshot(str(data_dir), keep=1)
    monkeypatch.undo()
    assert backup.list_backups(str(data_dir)) == [good]


def damage_fts(path: str) -> None:
    """Garble the blocks of the observations index's data table in place: every b-tree stays intact,
    so `quick_check` passes (as with bit rot inside a record's payload)."""
    conn = sqlite3.connect(path)
    conn.execute("UPDATE observations_fts_data SET block = randomblob(length(block)) WHERE length(block) > 8")
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def seed_observations(data_dir) -> None:
    conn = connect(str(data_dir))
    load_session_edit(conn)
    values = settings_module.load(str(data_dir))
    values.update(provider="fake", retry_backoff_seconds=0.0)
    asyncio.run(drain(Pipeline(conn, values, FakeProvider())))
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] > 0
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def test_a_damaged_search_index_passes_quick_check_but_is_found_and_rebuilt(data_dir):
    seed_observations(data_dir)
    path = db.db_path(str(data_dir))
    damage_fts(path)
    assert backup.check_database(path) is None  # what made this defect invisible
    conn = db.connect(path)
    assert integrity.broken_indexes(conn) == ["observations_fts"]
    assert integrity.repair_indexes(conn).rebuilt == ["observations_fts"]
    assert integrity.broken_indexes(conn) == []
    assert conn.execute("SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH 'edit'").fetchone()[0] >= 0
    conn.close()


def test_a_batch_that_meets_a_damaged_index_repairs_it_and_is_stored(data_dir):
    seed_observations(data_dir)
    path = db.db_path(str(data_dir))
    damage_fts(path)
    conn = connect(str(data_dir))
    session = add_session(conn, "after-damage")
    add_prompt(conn, session, "fix the parser")
    add_event(conn, session, "tool", {"tool_name": "Edit", "tool_input": {"file_path": "/p/parser.py"},
                                      "tool_response": {"filePath": "/p/parser.py"}}, "after-1")
    conn.commit()
    notes: list[str] = []
    problems: dict[str, str] = {}
    values = settings_module.load(str(data_dir))
    values.update(provider="fake", retry_backoff_seconds=0.0)
    pipeline = Pipeline(conn, values, FakeProvider(), store_notes=notes, problems=problems)
    asyncio.run(drain(pipeline))
    statuses = dict(conn.execute("SELECT status, COUNT(*) FROM pending_events GROUP BY status").fetchall())
    assert statuses.get("done") and not statuses.get("claimed") and not statuses.get("failed")
    assert notes and "observations_fts" in notes[0] and not problems
    conn.close()


def test_the_worker_repairs_the_index_at_start_and_health_says_so(worker_env):  # noqa: F811
    data_dir = str(worker_env)
    seed_observations(data_dir)
    damage_fts(db.db_path(data_dir))
    run_cli("worker", "start")
    health = json.loads(run_cli("worker", "status", "--json").stdout)["health"]
    assert health["status"] == "degraded"
    assert health["store"]["status"] == "repaired" and "observations_fts" in health["store"]["notes"][0]
    assert "store repaired:" in run_cli("status").stdout and "observations_fts" in run_cli("worker", "status").stdout


def test_the_worker_restores_a_deleted_database_and_health_says_so(worker_env):  # noqa: F811
    data_dir = str(worker_env)
    build(db.db_path(data_dir))
    run_cli("backup")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db.db_path(data_dir) + suffix):
            os.unlink(db.db_path(data_dir) + suffix)
    run_cli("worker", "start")
    health = json.loads(run_cli("worker", "status", "--json").stdout)["health"]
    assert health["status"] == "degraded" and "missing" in health["store"]["notes"][0]
    assert len(keys(db.db_path(data_dir), "SELECT content_session_id FROM sessions")) == SESSIONS
