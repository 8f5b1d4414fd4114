import json
import multiprocessing
import sqlite3

import pytest

from claude_mem.store import db, migrations
from claude_mem.store.context import own_text

EXPECTED_TABLES = {
    "schema_migrations": ["version", "name", "applied_at"],
    "search_context": ["kind", "row_id", "text"],  # m017: each row's neighbours, indexed as `context`
    "search_fill": ["kind", "below"],
    "context_queue": ["kind", "row_id"],
    "sessions": [
        "id", "content_session_id", "project", "cwd", "title", "status", "observer_provider",
        "memory_session_id", "last_injected_at", "started_at", "ended_at", "last_activity_at", "uid", "author", "device",
        "team_rev",
    ],
    "prompts": ["id", "session_id", "prompt_number", "text", "private", "created_at", "uid", "author", "device",
                "team_rev"],
    "pending_events": [
        "id", "event_key", "session_id", "kind", "prompt_number", "payload", "status", "attempts",
        "last_error", "lease_until", "next_attempt_at", "created_at", "processed_at",
        "failure_class", "revivals",  # m021: why it failed; how often a transient failure came back
    ],
    "observations": [
        "id", "session_id", "project", "type", "title", "subtitle", "narrative", "facts", "concepts",
        "files_read", "files_modified", "prompt_number", "content_hash", "input_tokens", "output_tokens",
        "fetch_count", "created_at", "uid", "author", "device", "team_rev", "processed_at", "superseded_by",
    ],
    "observation_sources": ["observation_id", "event_id"],
    "summaries": [
        "id", "session_id", "project", "event_id", "prompt_number", "request", "investigated", "learned",
        "completed", "next_steps", "files_read", "files_edited", "notes", "input_tokens", "output_tokens",
        "created_at", "uid", "author", "device", "team_rev", "processed_at",
    ],
    "vectors": ["id", "kind", "row_id", "vector"],  # m016: int8, a rowid table
    "vector_model": ["id", "model"],
    "vector_queue": ["kind", "row_id"],
    "vector_removals": ["seq", "row_id"],
    "shown": ["session_id", "observation_id", "via", "at", "current"],  # m018: its history kept
    "injections": ["id", "session_id", "via", "observations", "tokens", "at"],
    "used": ["session_id", "observation_id", "how", "times", "at", "last_at"],
    "observer_spend": ["day", "provider", "session_id", "requests", "input_tokens", "output_tokens", "over_budget"],
    "vector_generation": ["id", "generation"],
    "projects": ["key", "remote", "first_seen", "sessions", "observations", "summaries"],  # m015: counts
    "project_aliases": ["alias", "project", "created_at"],
    "team_tombstones": ["uid", "kind", "project", "deleted_at"],
    "team_state": ["key", "value"],
    "counters": ["name", "value"],
    "late_catches": ["id", "caught_at", "row_kind", "row_id", "detail"],
    "changes": ["seq", "kind", "op", "row_id", "session"],
    "observation_files": ["observation_id", "path", "size", "mtime_ns", "hash", "commit_sha"],
    "sqlite_sequence": ["name", "seq"],  # m012: ids are never reused
    # m019: Claude Code's auto memory files, indexed read-only, and each project's last sync
    "auto_memory": ["id", "project", "path", "name", "description", "type", "body", "size", "mtime_ns", "hash",
                    "problem", "binary", "modified_at"],
    "auto_memory_dirs": ["project", "directory", "enabled", "files", "binary", "capped", "problems", "synced_at"],
    # m020: failures, their fixes, and the notes the hooks added about them
    "failures": ["event_id", "session_id", "project", "tool_name", "command_sig", "error_sig", "program",
                 "command_text", "error_text", "at", "resolved_by", "resolved_at", "fix_from", "fix"],
    "failure_notes": ["id", "session_id", "event_id", "via", "command_sig", "failures", "observations", "chars",
                      "at"],
}
FTS_TABLES = {"observations_fts", "summaries_fts", "prompts_fts", "auto_memory_fts"}
EXPECTED_TRIGGERS = {f"{t}_fts_{op}" for t in ("observations", "summaries", "prompts") for op in ("insert", "delete", "update")} | {
    *(f"{t}_vector_{op}" for t in ("observations", "summaries", "prompts") for op in ("queue", "delete", "update")),
    "prompts_vector_private", "prompts_vector_public", "observations_vector_move",  # m016: the queue, moves
    "vectors_generation_insert", "vectors_generation_delete"} | {
    f"{t}_uid_insert" for t in ("sessions", "prompts", "observations", "summaries")} | {
    f"{t}_team_tombstone" for t in ("sessions", "prompts", "observations", "summaries")} | {"sessions_team_changed"} | {
    f"{t}_change_{op}" for t in ("observations", "summaries", "prompts") for op in ("insert", "update", "delete")} | {
    "sessions_change_delete", "changes_bounded", "observations_change_supersede"} | {
    f"{t}_project_{op}" for t in ("sessions", "observations", "summaries") for op in ("insert", "delete", "move")}
EXPECTED_VIEWS = {f"{t}_{view}" for t in ("observations", "summaries", "prompts") for view in ("context", "search")} | {
    "auto_memory_search"}
EXPECTED_INDEXES = {
    "sessions_project", "pending_events_queue", "observations_project", "observation_sources_event",
    "summaries_project", "shown_observation", "sessions_uid", "prompts_uid", "observations_uid", "summaries_uid",
    "projects_remote", "sessions_unpushed", "observations_unpushed", "summaries_unpushed", "prompts_unpushed",
    "observations_superseded_by", "observations_project_stored", "observations_session_order",
    "summaries_session_order", "observations_author",
    "shown_at", "injections_at", "injections_session", "used_observation", "used_at", "observer_spend_session",
    "failures_command", "failures_error", "failures_resolved_by", "failure_notes_session", "failure_notes_event",
    "failure_notes_at",
}


def schema(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    return sorted(conn.execute("SELECT type, name, COALESCE(sql, '') FROM sqlite_master"))


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


@pytest.fixture
def conn(tmp_path):
    connection = db.connect(str(tmp_path / "test.db"))
    yield connection
    connection.close()


def test_fresh_database_has_exactly_the_expected_schema(conn):
    names = {(kind, name) for kind, name, _ in schema(conn)}
    tables = {name for kind, name in names if kind == "table"}
    base_tables = {t for t in tables if not any(t.startswith(f + "_") or t == f for f in FTS_TABLES)}
    assert base_tables == set(EXPECTED_TABLES)
    for table, expected in EXPECTED_TABLES.items():
        assert columns(conn, table) == expected, table
    assert FTS_TABLES <= tables
    assert {name for kind, name in names if kind == "trigger"} == EXPECTED_TRIGGERS
    assert {name for kind, name in names if kind == "view"} == EXPECTED_VIEWS
    assert {name for kind, name in names if kind == "index" and not name.startswith("sqlite_")} == EXPECTED_INDEXES
    assert db.schema_version(conn) == len(migrations.MIGRATIONS) == db.SCHEMA_VERSION
    assert migrations.applied(conn) == [m.__name__ for m in migrations.MIGRATIONS]


def test_connection_pragmas(conn):
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1


def test_busy_timeout_is_the_callers(tmp_path):
    hook_conn = db.connect(str(tmp_path / "x.db"), busy_timeout_ms=db.HOOK_BUSY_MS)
    assert hook_conn.execute("PRAGMA busy_timeout").fetchone()[0] == 250
    worker_conn = db.connect(str(tmp_path / "x.db"))
    assert worker_conn.execute("PRAGMA busy_timeout").fetchone()[0] == db.WORKER_BUSY_MS


def test_reopening_is_a_no_op(tmp_path):
    path = str(tmp_path / "test.db")
    first = db.connect(path)
    before = schema(first)
    recorded = first.execute("SELECT version, name, applied_at FROM schema_migrations").fetchall()
    first.close()
    second = db.connect(path)
    assert schema(second) == before
    assert second.execute("SELECT version, name, applied_at FROM schema_migrations").fetchall() == recorded
    assert migrations.migrate(second) == []


@pytest.mark.parametrize("start", range(len(migrations.MIGRATIONS)))
def test_upgrade_from_every_earlier_version(tmp_path, start):
    fresh = db.connect(str(tmp_path / "fresh.db"))
    old_path = str(tmp_path / "old.db")
    old = db.connect(old_path, migrate=False)
    assert migrations.migrate(old, target=start) == [m.__name__ for m in migrations.MIGRATIONS[:start]]
    assert db.schema_version(old) == start
    if start >= 1:  # data written under the old schema survives and becomes searchable
        add_session(old)
        old.execute(
            "INSERT INTO observations (session_id, project, type, title, narrative, content_hash)"
            " VALUES (1, '/p', 'discovery', 'legacy flux capacitor', 'stored before the upgrade', 'h1')"
        )
    old.close()
    upgraded = db.connect(old_path)
    assert schema(upgraded) == schema(fresh)
    if start >= 1:
        hits = upgraded.execute("SELECT rowid FROM observations_fts WHERE observations_fts MATCH 'capacitor'").fetchall()
        assert hits == [(1,)]


def test_a_failing_migration_leaves_nothing_behind(tmp_path, monkeypatch):
    def broken(conn):
        conn.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    path = str(tmp_path / "t.db")
    conn = db.connect(path, migrate=False)
    monkeypatch.setattr(migrations, "MIGRATIONS", [migrations.m001_initial, broken])
    with pytest.raises(RuntimeError):
        migrations.migrate(conn)
    assert db.schema_version(conn) == 1
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'half_done'").fetchone() is None


def _open_concurrently(path: str) -> int:
    conn = db.connect(path)
    version = db.schema_version(conn)
    conn.close()
    return version


def test_concurrent_first_opens_apply_each_migration_once(tmp_path):
    path = str(tmp_path / "race.db")
    with multiprocessing.get_context("spawn").Pool(8) as pool:
        versions = pool.map(_open_concurrently, [path] * 16)
    assert set(versions) == {db.SCHEMA_VERSION}
    conn = db.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == db.SCHEMA_VERSION


def add_session(conn, key="s1", project="/p") -> int:
    return conn.execute(
        "INSERT INTO sessions (content_session_id, project) VALUES (?, ?)", (key, project)
    ).lastrowid


def fts_ids(conn, table: str, query: str) -> list[int]:
    """The rows whose own text (not their neighbours', the `context` column of m017) matches `query`."""
    return [r[0] for r in conn.execute(f"SELECT rowid FROM {table}_fts WHERE {table}_fts MATCH ? ORDER BY rowid",
                                       (own_text(query),))]


def test_observation_fts_stays_in_sync(conn):
    sid = add_session(conn)
    oid = conn.execute(
        "INSERT INTO observations (session_id, project, type, title, narrative, facts, concepts, content_hash)"
        " VALUES (?, '/p', 'bugfix', 'Fix race in spool ingestion', 'The rename was not atomic.', ?, ?, 'h')",
        (sid, json.dumps(["uses os.replace"]), json.dumps(["gotcha"])),
    ).lastrowid
    assert fts_ids(conn, "observations", "spool") == [oid]
    assert fts_ids(conn, "observations", "replace") == [oid]  # facts are indexed
    assert fts_ids(conn, "observations", "gotcha") == [oid]  # concepts are indexed
    conn.execute("UPDATE observations SET title = 'Fix race in queue claiming' WHERE id = ?", (oid,))
    assert fts_ids(conn, "observations", "spool") == []
    assert fts_ids(conn, "observations", "claiming") == [oid]
    conn.execute("UPDATE observations SET fetch_count = fetch_count + 1 WHERE id = ?", (oid,))
    assert fts_ids(conn, "observations", "claiming") == [oid]
    conn.execute("DELETE FROM observations WHERE id = ?", (oid,))
    assert fts_ids(conn, "observations", "claiming") == []
    conn.execute("INSERT INTO observations_fts (observations_fts) VALUES ('integrity-check')")


def test_summary_and_prompt_fts_stay_in_sync(conn):
    sid = add_session(conn)
    summary = conn.execute(
        "INSERT INTO summaries (session_id, project, request, learned) VALUES (?, '/p', 'speed up hooks', 'imports cost')",
        (sid,),
    ).lastrowid
    prompt = conn.execute(
        "INSERT INTO prompts (session_id, prompt_number, text) VALUES (?, 1, 'why is the viewer slow')", (sid,)
    ).lastrowid
    assert fts_ids(conn, "summaries", "imports") == [summary]
    assert fts_ids(conn, "prompts", "viewer") == [prompt]
    conn.execute("UPDATE summaries SET learned = 'pathlib is slow' WHERE id = ?", (summary,))
    conn.execute("UPDATE prompts SET text = 'why is the worker slow' WHERE id = ?", (prompt,))
    assert fts_ids(conn, "summaries", "imports") == [] and fts_ids(conn, "summaries", "pathlib") == [summary]
    assert fts_ids(conn, "prompts", "viewer") == [] and fts_ids(conn, "prompts", "worker") == [prompt]
    conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))  # cascades through the FTS triggers
    assert fts_ids(conn, "summaries", "pathlib") == [] and fts_ids(conn, "prompts", "worker") == []
    for table in ("summaries", "prompts"):
        conn.execute(f"INSERT INTO {table}_fts ({table}_fts) VALUES ('integrity-check')")


def test_constraints_reject_bad_rows(conn):
    sid = add_session(conn)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO sessions (content_session_id, project) VALUES ('s1', '/p')")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO pending_events (event_key, session_id, kind, payload) VALUES ('k', ?, 'bogus', '{}')", (sid,)
        )
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO prompts (session_id, prompt_number, text) VALUES (999, 1, 'x')")
    conn.execute("INSERT INTO pending_events (event_key, session_id, kind, payload) VALUES ('k', ?, 'tool', '{}')", (sid,))
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO pending_events (event_key, session_id, kind, payload) VALUES ('k', ?, 'tool', '{}')", (sid,))


UID_TABLES = ("sessions", "prompts", "observations", "summaries")


def uids(conn, table: str) -> list[str]:
    return [row[0] for row in conn.execute(f"SELECT uid FROM {table} ORDER BY id")]


def add_one_of_each(conn, key: str = "s1") -> None:
    sid = add_session(conn, key)
    conn.execute("INSERT INTO prompts (session_id, prompt_number, text) VALUES (?, 1, 'hello')", (sid,))
    conn.execute("INSERT INTO observations (session_id, project, type, title, narrative, content_hash)"
                 " VALUES (?, '/p', 'discovery', 't', 'n', ?)", (sid, key))
    conn.execute("INSERT INTO summaries (session_id, project, request) VALUES (?, '/p', 'r')", (sid,))


def test_every_row_gets_a_global_uid_whoever_inserts_it(conn):
    add_one_of_each(conn, "s1")
    add_one_of_each(conn, "s2")
    for table in UID_TABLES:
        found = uids(conn, table)
        assert len(found) == 2 and len(set(found)) == 2, table
        assert all(len(uid) == 32 and set(uid) <= set("0123456789abcdef") for uid in found), table


def test_an_explicit_uid_is_kept_and_must_be_unique(conn):
    conn.execute("INSERT INTO sessions (content_session_id, project, uid) VALUES ('s1', '/p', 'f' || hex(zeroblob(15)))")
    assert uids(conn, "sessions") == ["f" + "00" * 15]
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO sessions (content_session_id, project, uid) VALUES ('s2', '/p', 'f' || hex(zeroblob(15)))")


def test_upgrade_gives_existing_rows_distinct_uids(tmp_path):
    path = str(tmp_path / "old.db")
    old = db.connect(path, migrate=False)
    migrations.migrate(old, target=migrations.MIGRATIONS.index(migrations.m006_uids))
    add_one_of_each(old, "s1")
    add_one_of_each(old, "s2")
    old.close()
    upgraded = db.connect(path)
    for table in UID_TABLES:
        found = uids(upgraded, table)
        assert len(set(found)) == 2 and None not in found, table


def test_corrupt_file_is_a_database_error(tmp_path):
    path = tmp_path / "bad.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(sqlite3.DatabaseError):
        db.connect(str(path))


def test_transaction_commits_or_rolls_back(conn):
    with db.transaction(conn):
        add_session(conn, "kept")
    with pytest.raises(RuntimeError):
        with db.transaction(conn):
            add_session(conn, "dropped")
            raise RuntimeError("boom")
    assert not conn.in_transaction
    assert [r[0] for r in conn.execute("SELECT content_session_id FROM sessions")] == ["kept"]


def test_transactions_nest_as_savepoints(conn):
    """An inner block that fails undoes only its own writes; the outer one still commits."""
    with db.transaction(conn):
        add_session(conn, "outer")
        with pytest.raises(RuntimeError):
            with db.transaction(conn):
                add_session(conn, "inner-dropped")
                raise RuntimeError("boom")
        with db.transaction(conn):
            add_session(conn, "inner-kept")
        assert conn.in_transaction
    assert not conn.in_transaction
    names = sorted(r[0] for r in conn.execute("SELECT content_session_id FROM sessions"))
    assert names == ["inner-kept", "outer"]
    with pytest.raises(RuntimeError):
        with db.transaction(conn):
            with db.transaction(conn):
                add_session(conn, "never")
            raise RuntimeError("the outer block fails after the inner one succeeded")
    assert "never" not in {r[0] for r in conn.execute("SELECT content_session_id FROM sessions")}


def test_transaction_takes_the_write_lock_up_front(tmp_path):
    path = str(tmp_path / "lock.db")
    holder = db.connect(path)
    holder.execute("BEGIN IMMEDIATE")
    waiter = db.connect(path, busy_timeout_ms=50)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        with db.transaction(waiter):
            pass  # never reached: BEGIN IMMEDIATE itself waits for the lock, then gives up
    assert not waiter.in_transaction
    holder.execute("ROLLBACK")


def logged(conn) -> list[tuple]:
    return conn.execute("SELECT kind, op, row_id, session FROM changes ORDER BY seq").fetchall()


def test_the_change_log_records_what_a_viewer_must_hear_of_whoever_writes_it(conn):
    add_one_of_each(conn, "s1")
    assert logged(conn) == [("prompt", "insert", 1, None), ("observation", "insert", 1, None),
                            ("summary", "insert", 1, None)]  # the uid triggers' own updates are not changes
    conn.execute("DELETE FROM changes")
    # Counters and replication state are not memory changing: not logged.
    conn.execute("UPDATE observations SET fetch_count = fetch_count + 1, team_rev = 3")
    conn.execute("UPDATE prompts SET team_rev = 3")
    assert logged(conn) == []
    conn.execute("UPDATE observations SET project = '/merged'")  # a projects merge
    conn.execute("UPDATE summaries SET learned = 'more'")
    conn.execute("UPDATE prompts SET text = '[REDACTED]'")  # a secret caught late
    assert logged(conn) == [("observation", "update", 1, None), ("summary", "update", 1, None),
                            ("prompt", "update", 1, None)]
    conn.execute("DELETE FROM changes")
    conn.execute("DELETE FROM sessions WHERE content_session_id = 's1'")  # its rows go by cascade, each logged
    assert sorted(logged(conn), key=str) == sorted([("session", "delete", 1, "s1"), ("prompt", "delete", 1, None),
                                                    ("observation", "delete", 1, None),
                                                    ("summary", "delete", 1, None)], key=str)


def test_the_change_log_bounds_itself_keeping_the_newest_so_sequence_numbers_only_grow(conn):
    sid = add_session(conn)
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO prompts (session_id, prompt_number, text) VALUES (?, ?, 'p')",
                     [(sid, n) for n in range(1, 12_001)])
    conn.execute("COMMIT")
    low, high, count = conn.execute("SELECT MIN(seq), MAX(seq), COUNT(*) FROM changes").fetchone()
    assert high == 12_000 and 9_000 <= count <= 11_000 and high - low + 1 == count
    conn.execute("VACUUM")  # a forget's scrub
    conn.execute("INSERT INTO prompts (session_id, prompt_number, text) VALUES (?, 12001, 'p')", (sid,))
    assert conn.execute("SELECT MAX(seq) FROM changes").fetchone()[0] == 12_001


@pytest.mark.parametrize("start", range(1, migrations.MIGRATIONS.index(migrations.m012_ids) + 1))
def test_ids_are_never_reused_after_the_upgrade_and_the_rebuild_keeps_every_row(tmp_path, start):
    """m012 (issue 26): the four tables get AUTOINCREMENT by a table rebuild that keeps ids, FTS rows,
    vectors, uids, children (no cascade fires) and triggers; a forgotten newest id never comes back."""
    path = str(tmp_path / "old.db")
    old = db.connect(path, migrate=False)
    migrations.migrate(old, target=start)
    session = add_session(old)
    old.execute("INSERT INTO prompts (session_id, prompt_number, text) VALUES (?, 1, 'ask about wombats')", (session,))
    old.execute("INSERT INTO pending_events (event_key, session_id, kind, payload) VALUES ('e1', ?, 'tool', '{}')", (session,))
    for n in (1, 2, 3):
        old.execute("INSERT INTO observations (session_id, project, type, title, narrative, content_hash, prompt_number)"
                    " VALUES (?, '/p', 'discovery', ?, 'narrative', ?, 1)", (session, f"wombat number{n}", f"h{n}"))
    old.execute("INSERT INTO observation_sources VALUES (2, 1)")
    old.execute("INSERT INTO summaries (session_id, project, request, prompt_number) VALUES (?, '/p', 'wombat summary', 1)",
                (session,))
    if start >= 3:
        old.execute("INSERT INTO vectors (kind, row_id, model, vector) VALUES ('observation', 2, 'm', x'00')")
    if start >= 4:
        old.execute("INSERT INTO shown VALUES (?, 2)", (session,))
    uids = old.execute("SELECT id, uid FROM observations ORDER BY id").fetchall() if start >= 6 else None
    if start >= 10:  # the change log remembers the deleted newest id
        old.execute("DELETE FROM observations WHERE id = 3")
    if start >= 9:  # a late catch names a deleted summary's id
        old.execute("INSERT INTO late_catches (row_kind, row_id) VALUES ('summary', 7)")
    old.close()

    upgraded = db.connect(path)
    assert upgraded.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert upgraded.execute("PRAGMA foreign_key_check").fetchall() == []
    assert "AUTOINCREMENT" in upgraded.execute("SELECT sql FROM sqlite_master WHERE name = 'observations'").fetchone()[0]
    kept = [1, 2] if start >= 10 else [1, 2, 3]
    assert [r[0] for r in upgraded.execute("SELECT id FROM observations ORDER BY id")] == kept
    assert fts_ids(upgraded, "observations", "wombat") == kept
    assert fts_ids(upgraded, "summaries", "wombat") == [1] and fts_ids(upgraded, "prompts", "wombats") == [1]
    assert upgraded.execute("SELECT * FROM observation_sources").fetchall() == [(2, 1)]
    if start >= 3:
        # m016: the float32 vector waits for the worker to convert it; the rows without one are queued
        assert upgraded.execute("SELECT row_id FROM vectors_f32").fetchall() == [(2,)]
        assert upgraded.execute("SELECT row_id FROM vector_queue WHERE kind = 'observation'").fetchall() == \
            [(n,) for n in kept if n != 2]
    if start >= 4:
        assert upgraded.execute("SELECT observation_id FROM shown").fetchall() == [(2,)]
    if uids is not None:
        assert upgraded.execute("SELECT id, uid FROM observations ORDER BY id").fetchall() == uids[:len(kept)]
    # Forget the newest, add one: a new id; the triggers (FTS, uid, change log, vectors) still fire.
    upgraded.execute("DELETE FROM observations WHERE id = ?", (kept[-1],))
    assert fts_ids(upgraded, "observations", "wombat") == kept[:-1]
    new = upgraded.execute("INSERT INTO observations (session_id, project, type, title, narrative, content_hash)"
                           " VALUES (1, '/p', 'change', 'wombat fresh', 'n', 'h9')").lastrowid
    assert new == 4
    assert fts_ids(upgraded, "observations", "fresh") == [4]
    assert upgraded.execute("SELECT uid IS NOT NULL FROM observations WHERE id = 4").fetchone()[0] == 1
    assert ("observation", "insert", 4) in upgraded.execute("SELECT kind, op, row_id FROM changes").fetchall()
    # Deleting a session still cascades (foreign keys on again).
    upgraded.execute("DELETE FROM sessions")
    assert upgraded.execute("SELECT COUNT(*) FROM prompts").fetchone()[0] == 0
    assert add_session(upgraded, "s2") == 2
    summary = upgraded.execute("INSERT INTO summaries (session_id, project) VALUES (2, '/p')").lastrowid
    assert summary == (8 if start >= 9 else 2)


def test_the_id_rebuild_refuses_to_run_with_foreign_keys_on(tmp_path):
    """m012 drops and recreates parent tables: with foreign keys on, the DROP would cascade and delete
    every child row, so it refuses instead (the runner turns them off around migrations)."""
    conn = sqlite3.connect(str(tmp_path / "m.db"), isolation_level=None)
    migrations.migrate(conn, target=11)
    conn.execute("INSERT INTO sessions (content_session_id, project) VALUES ('s', '/p')")
    conn.execute("INSERT INTO prompts (session_id, prompt_number, text) VALUES (1, 1, 'hello')")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("BEGIN IMMEDIATE")
    with pytest.raises(sqlite3.DatabaseError, match="foreign keys must be off"):
        migrations.m012_ids(conn)
    conn.execute("ROLLBACK")
    assert conn.execute("SELECT COUNT(*) FROM prompts").fetchone()[0] == 1
    conn.close()
