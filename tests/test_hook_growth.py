"""Hooks that do not grow with the store (issue 27): the projects catalog (m015) and the statements the
session-start and user-prompt hooks run, read through indexes only (EXPLAIN QUERY PLAN at 100k)."""

import json
import os
import random
import re
import sqlite3

import pytest

from claude_mem.hooks import runner
from claude_mem.store import context as store_context
from claude_mem.store import db, migrations, vectors
from claude_mem.store import projects as store_projects

BIG_TABLES = ("observations", "sessions", "summaries", "prompts")


def actual_counts(conn: sqlite3.Connection) -> dict[str, tuple[int, int, int]]:
    """Per project key with rows, its sessions, observations and summaries, counted from the rows."""
    found: dict[str, list[int]] = {}
    for position, table in enumerate(("sessions", "observations", "summaries")):
        for key, count in conn.execute(f"SELECT project, COUNT(*) FROM {table} GROUP BY project"):
            found.setdefault(key, [0, 0, 0])[position] = count
    return {key: (a, b, c) for key, (a, b, c) in found.items()}


def catalog(conn: sqlite3.Connection) -> dict[str, tuple[int, int, int]]:
    return {key: (a, b, c) for key, a, b, c in conn.execute(
        "SELECT key, sessions, observations, summaries FROM projects WHERE sessions + observations + summaries > 0")}


def add_rows(conn: sqlite3.Connection, project: str, session: str, observations: int, summaries: int = 0) -> int:
    session_id = conn.execute("INSERT INTO sessions (content_session_id, project) VALUES (?, ?)",
                              (session, project)).lastrowid
    for n in range(observations):
        conn.execute("INSERT INTO observations (session_id, project, type, title, narrative, content_hash)"
                     " VALUES (?, ?, 'change', ?, 'narrative', ?)", (session_id, project, f"title {n}", f"{session}-{n}"))
    for _ in range(summaries):
        conn.execute("INSERT INTO summaries (session_id, project, request) VALUES (?, ?, 'r')", (session_id, project))
    return int(session_id)


def test_m015_makes_every_stored_project_key_a_project_with_its_counts(tmp_path):
    path = str(tmp_path / "old.db")
    conn = sqlite3.connect(path, isolation_level=None)
    migrations.migrate(conn, target=migrations.MIGRATIONS.index(migrations.m015_project_counts))
    conn.execute("PRAGMA foreign_keys = ON")
    add_rows(conn, "/a", "s1", 3, 1)
    add_rows(conn, "/a", "s2", 2)
    session = add_rows(conn, "/b", "s3", 0, 2)
    conn.execute("INSERT INTO observations (project, type, title, narrative, content_hash, created_at)"
                 " VALUES ('/notes-only', 'change', 't', 'n', 'h', '2024-01-02T00:00:00Z')")  # a note, no session
    conn.execute("UPDATE summaries SET project = '/c' WHERE session_id = ? AND id = (SELECT MIN(id) FROM summaries"
                 " WHERE session_id = ?)", (session, session))
    conn.execute("INSERT INTO projects (key, remote) VALUES ('/a', 'github.com/acme/a')")  # registered before
    old_listing = sorted(row[0] for row in conn.execute(
        "SELECT project FROM sessions UNION SELECT project FROM observations UNION SELECT project FROM summaries"))
    before = actual_counts(conn)
    conn.close()

    conn = db.connect(path)
    assert catalog(conn) == before == {"/a": (2, 5, 1), "/b": (1, 0, 1), "/c": (0, 0, 1), "/notes-only": (0, 1, 0)}
    assert store_context.known_projects(conn) == old_listing
    assert conn.execute("SELECT remote FROM projects WHERE key = '/a'").fetchone() == ("github.com/acme/a",)
    assert conn.execute("SELECT first_seen FROM projects WHERE key = '/notes-only'").fetchone() == ("2024-01-02T00:00:00Z",)
    conn.close()


def test_the_counts_stay_exact_on_every_write_path(tmp_path):
    """Inserts, a forget (cascading deletes), a merge (rows move), deletes one by one: after each, the
    catalog is what counting the rows says, and a key whose last row went is no longer listed."""
    conn = db.connect(str(tmp_path / "db.sqlite"))
    rng = random.Random(5)
    keys = ["/p0", "/p1", "/p2"]
    sessions = []
    with db.transaction(conn):
        for n in range(12):
            sessions.append(add_rows(conn, rng.choice(keys), f"s{n}", rng.randint(0, 6), rng.randint(0, 2)))
    assert catalog(conn) == actual_counts(conn)
    with db.transaction(conn):  # forget a session: its observations and summaries go by cascade
        conn.execute("DELETE FROM sessions WHERE id = ?", (sessions[0],))
    assert catalog(conn) == actual_counts(conn)
    with db.transaction(conn):
        store_projects.merge(conn, "/p1", "/p0", "2025-01-01T00:00:00Z")
    assert catalog(conn) == actual_counts(conn)
    assert "/p1" not in store_context.known_projects(conn)
    with db.transaction(conn):
        for (row_id,) in conn.execute("SELECT id FROM observations ORDER BY random() LIMIT 5").fetchall():
            conn.execute("DELETE FROM observations WHERE id = ?", (row_id,))
        conn.execute("UPDATE observations SET project = '/p9' WHERE id = (SELECT MAX(id) FROM observations)")
    assert catalog(conn) == actual_counts(conn)
    with db.transaction(conn):
        conn.execute("DELETE FROM sessions WHERE project = '/p2'")
    assert catalog(conn) == actual_counts(conn)
    assert store_context.known_projects(conn) == sorted(actual_counts(conn))
    for key in actual_counts(conn):
        assert store_context.observation_total(conn, key) == actual_counts(conn)[key][1]
    assert store_context.indexed_observations(conn) == conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0]
    conn.close()


def test_a_database_from_before_m015_opened_read_only_is_still_read(tmp_path):
    """A hook or the status line may open read-only a database no writer has upgraded yet."""
    path = str(tmp_path / "old.db")
    conn = sqlite3.connect(path, isolation_level=None)
    migrations.migrate(conn, target=migrations.MIGRATIONS.index(migrations.m015_project_counts))
    add_rows(conn, "/a", "s1", 4)
    conn.close()
    reader = db.connect_readonly(path)
    assert store_context.known_projects(reader) == ["/a"]
    assert store_context.observation_total(reader, "/a") == 4
    assert store_context.indexed_observations(reader) == 4
    assert len(store_context.index_rows(reader, "/a", None, 10)) == 4
    assert len(store_context.index_rows(reader, "/a", "2000-01-01T00:00:00Z", 10)) == 4
    reader.close()


# -- the hooks' statements at 100k -------------------------------------------------------------------------

SIZE = 100_000


@pytest.fixture(scope="module")
def big_store(tmp_path_factory):
    """A data dir with 100k observations of one project (and a few of others), its statistics analysed as a
    long-lived database's are (`PRAGMA optimize`)."""
    data_dir = str(tmp_path_factory.mktemp("big"))
    project = str(tmp_path_factory.mktemp("proj"))
    os.makedirs(os.path.join(project, ".git"))
    conn = db.connect(db.db_path(data_dir))
    words = "cache lease worker parser socket schema index token queue retry backoff".split()
    with db.transaction(conn):
        for other in ("/elsewhere/a", "/elsewhere/b"):
            add_rows(conn, other, f"other-{other}", 20, 1)
        session = conn.execute("INSERT INTO sessions (content_session_id, project) VALUES ('big', ?)",
                               (project,)).lastrowid
        conn.executemany(
            "INSERT INTO observations (session_id, project, type, title, narrative, content_hash, created_at,"
            " processed_at) VALUES (?, ?, 'change', ?, ?, ?, ?, ?)",
            ((session, project, f"{words[n % 11]} {words[n * 7 % 11]} note {n}", f"{words[n * 3 % 11]} narrative",
              f"h{n}", f"2024-{1 + n % 12:02d}-01T00:00:00.000Z", f"2024-{1 + n % 12:02d}-02T00:00:00.000Z")
             for n in range(SIZE)))
        conn.execute("INSERT INTO summaries (session_id, project, request) VALUES (?, ?, 'work')", (session, project))
    conn.execute("PRAGMA optimize=0x10002")
    conn.close()
    return data_dir, project


def hook_statements(monkeypatch, data_dir: str, hook: str, payload: dict) -> list[str]:
    """Every SQL statement the hook runs, in process, on the real database (traced, not replaced)."""
    seen: list[str] = []
    connect, connect_readonly = db.connect, db.connect_readonly

    def traced(conn):
        if conn is not None:
            conn.set_trace_callback(seen.append)
        return conn

    monkeypatch.setattr(db, "connect", lambda *a, **k: traced(connect(*a, **k)))
    monkeypatch.setattr(db, "connect_readonly", lambda *a, **k: traced(connect_readonly(*a, **k)))
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", data_dir)
    assert runner.handle(hook, json.dumps(payload).encode(), dict(os.environ)) == 0
    return [text for text in seen if re.match(r"\s*(SELECT|WITH|INSERT|UPDATE|DELETE)\b", text, re.I)]


def full_scans(conn: sqlite3.Connection, statements: list[str]) -> list[tuple[str, str]]:
    """(statement, plan line) for every SCAN of a table that grows with the store (or of an alias of one):
    a read that is not through an index. An FTS5 MATCH is the virtual table's own index."""
    found = []
    for statement in statements:
        aliases = set(BIG_TABLES)
        for _table, alias in re.findall(r"\b(%s)\s+(?:AS\s+)?(\w+)" % "|".join(BIG_TABLES), statement, re.I):
            aliases.add(alias)
        for row in conn.execute("EXPLAIN QUERY PLAN " + statement):
            match = re.match(r"SCAN (\w+)", row[-1])
            if match and match.group(1) in aliases:
                found.append((statement[:160], row[-1]))
    return found


@pytest.mark.parametrize("source", ["startup", "resume"])
def test_the_session_start_hook_reads_through_indexes_only(big_store, monkeypatch, source):
    data_dir, project = big_store
    payload = {"session_id": f"explain-{source}", "transcript_path": "/tmp/t.jsonl", "cwd": project,
               "hook_event_name": "SessionStart", "source": "startup"}
    statements = hook_statements(monkeypatch, data_dir, "session-start", payload)
    if source == "resume":  # the same session again: only what was stored since its injection
        statements = hook_statements(monkeypatch, data_dir, "session-start", {**payload, "source": "resume"})
        assert any("coalesce(processed_at, created_at) >" in text for text in statements)
    assert any("FROM projects" in text for text in statements)  # the catalog, not the rows
    assert any("FROM observations" in text for text in statements)  # the index rows were read
    with sqlite3.connect(db.db_path(data_dir)) as conn:
        assert full_scans(conn, statements) == []


def test_the_old_reads_would_have_been_caught(big_store):
    """The check above can fail: the statements m015 replaced scan the rows."""
    data_dir, _project = big_store
    old = ["SELECT project FROM sessions UNION SELECT project FROM observations UNION SELECT project FROM summaries",
           "SELECT COUNT(*) FROM observations"]
    with sqlite3.connect(db.db_path(data_dir)) as conn:
        assert len(full_scans(conn, old)) >= 3


def test_the_user_prompt_hook_reads_through_indexes_only(big_store, monkeypatch):
    data_dir, project = big_store
    payload = {"session_id": "explain-prompt", "transcript_path": "/tmp/t.jsonl", "cwd": project,
               "hook_event_name": "UserPromptSubmit", "prompt": "why does the parser lose the lease after a retry"}
    statements = hook_statements(monkeypatch, data_dir, "user-prompt", payload)
    assert any("MATCH" in text for text in statements)  # the keyword search ran in the hook (no worker)
    with sqlite3.connect(db.db_path(data_dir)) as conn:
        assert full_scans(conn, statements) == []


def test_only_observation_vectors_move_the_vector_generation(tmp_path):
    """The worker keeps observation vectors in memory until the generation moves (m005): a prompt's vector
    (one per prompt the hook stores) must not make the next prompt's search reload them all (m015)."""
    conn = db.connect(str(tmp_path / "db.sqlite"))
    session = add_rows(conn, "/a", "s1", 1)
    prompt = conn.execute("INSERT INTO prompts (session_id, prompt_number, text) VALUES (?, 1, 'hello')",
                          (session,)).lastrowid
    observation = conn.execute("SELECT id FROM observations").fetchone()[0]

    def generation() -> int:
        return vectors.generation(conn)

    start = generation()
    vectors.save(conn, "model", [("prompt", prompt, b"\0" * 8)])
    assert generation() == start
    vectors.save(conn, "model", [("observation", observation, b"\0" * 8)])
    assert generation() == start + 1
    conn.execute("DELETE FROM vectors WHERE kind = 2")
    assert generation() == start + 1
    conn.execute("DELETE FROM observations")  # its vector goes with it
    assert generation() == start + 2
    conn.close()


# -- the prompt's keyword search ranks only rows that can reach the threshold ----------------------------------

def test_keyword_memory_ranks_only_rows_that_can_match_and_finds_exactly_what_ranking_all_would(tmp_path):
    """`essential_terms` (MaxScore) leaves out rows that cannot reach `MIN_WORDS`; on a store of skewed word
    frequencies and 300 prompts, the result is always the one ranking every matching row gives, and most
    prompts rank few rows or none."""
    from claude_mem.index import fts
    from claude_mem.recall import prompt_context

    rng = random.Random(11)
    vocabulary = [f"w{n}" for n in range(300)]
    weights = [1 / (rank ** 1.1) for rank in range(1, 301)]
    conn = db.connect(str(tmp_path / "db.sqlite"))
    with db.transaction(conn):
        for n in range(3000):  # sessions of ten notes: each is indexed with its neighbours' words (m017)
            if n % 10 == 0:
                session = conn.execute("INSERT INTO sessions (content_session_id, project) VALUES (?, '/p')",
                                       (f"s{n}",)).lastrowid
            conn.execute("INSERT INTO observations (session_id, project, type, title, narrative, content_hash)"
                         " VALUES (?, '/p', 'change', ?, ?, ?)",
                         (session, " ".join(rng.choices(vocabulary, weights, k=rng.randint(3, 8))),
                          " ".join(rng.choices(vocabulary, weights, k=rng.randint(10, 40))), f"h{n}"))
    indexed = store_context.indexed_observations(conn)
    unit = prompt_context.unique_word_weight(indexed)
    pruned = skipped = found = 0
    titles = [row[0] for row in conn.execute("SELECT title FROM observations")]
    for n in range(300):  # words as frequent in prompts as in notes, rare ones as often as any, a note's title
        prompt = " ".join(rng.choices(vocabulary, weights if n % 3 else None, k=rng.randint(1, 9)))
        prompt = f"{rng.choice(titles)} {prompt[:12]}" if n % 3 == 2 else prompt
        rows = store_context.prompt_matches(conn, "/p", fts.keyword_expression(prompt), 3)
        expected = [row[0] for row in rows if -row[5] / unit >= prompt_context.MIN_WORDS]
        assert [hit["id"] for hit in prompt_context.keyword_matches(conn, "/p", prompt, set(), 3)] == expected, prompt
        terms = fts.terms(prompt, drop_stopwords=True)
        essential = prompt_context.essential_terms(conn, terms, indexed)
        skipped += not essential
        pruned += 0 < len(essential) < len(terms)
        found += bool(expected)
    assert skipped > 50 and pruned > 50 and found >= 5, (skipped, pruned, found)  # every case was met
    conn.close()
