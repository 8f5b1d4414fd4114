"""Search by meaning (issue 12): the real all-MiniLM-L6-v2 int8 model, vectors as derived data, and
hybrid ranking — a memory is found even when it shares no word with the query."""

import json

import pytest

from claude_mem.domain import RecallError
from claude_mem.index import embedder, semantic
from claude_mem.index import search as registry
from claude_mem.index.query import SearchQuery
from claude_mem.index.search import available_modes, default_mode, search
from claude_mem.recall.forget import forget
from claude_mem.store import db, vectors
from recall_seed import add_observation

PROJECT = "/home/dev/app"
REALISTIC = [
    ("Fixed login failing after the JWT expired", "Users were logged out mid-session: the token refresh ran after expiry."),
    ("Moved the CSS grid of the settings page to flexbox", "The settings page layout broke on narrow screens."),
    ("Added a retry with backoff to the S3 upload", "Large uploads failed on flaky networks; three retries now."),
    ("Cache the parsed config between requests", "Parsing YAML on every request cost 12 ms."),
    ("Renamed the billing tables to follow the plural convention", "invoices, payments, refunds."),
    ("Pinned numpy below 2.0 for the data pipeline", "A dependency broke with the new ABI."),
    ("Dark mode colours now follow the design tokens", "The viewer reads the tokens from CSS variables."),
    ("Profiled the search endpoint: snippet() dominates", "Ranking takes 1 ms, snippets 2 ms per query."),
]


@pytest.fixture
def store(tmp_path):
    conn = db.connect(str(tmp_path / "claude-mem.db"))
    ids = {title: add_observation(conn, PROJECT, title, narrative=narrative) for title, narrative in REALISTIC}
    conn.commit()
    while semantic.embed_missing(conn, 16):
        pass
    yield conn, ids
    conn.close()


def test_the_model_runs_here():
    assert embedder.unavailable() is None, embedder.unavailable()  # the dev environment has the search extra
    assert {"hybrid", "keyword", "semantic"} <= set(available_modes())


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_a_memory_is_found_by_meaning_with_no_word_in_common(store, mode):
    conn, ids = store
    found = search(conn, SearchQuery.build("authentication bug", mode=mode, project=PROJECT, limit=3))
    assert ids["Fixed login failing after the JWT expired"] in [hit["id"] for hit in found.items]


def test_keyword_alone_misses_it_and_hybrid_is_the_default_once_vectors_exist(store):
    conn, _ids = store
    assert search(conn, SearchQuery.build("authentication bug", mode="keyword", project=PROJECT)).total == 0
    assert default_mode(conn) == "hybrid"


def test_filters_paging_and_order_work_by_meaning(store):
    conn, ids = store
    first = search(conn, SearchQuery.build("performance", mode="semantic", project=PROJECT, limit=2))
    second = search(conn, SearchQuery.build("performance", mode="semantic", project=PROJECT, limit=2, offset=2))
    assert not {hit["id"] for hit in first.items} & {hit["id"] for hit in second.items}
    assert search(conn, SearchQuery.build("login", mode="hybrid", project="/elsewhere")).total == 0
    newest = search(conn, SearchQuery.build("upload retry", mode="hybrid", project=PROJECT, order="newest", limit=20))
    stamps = [(hit["created_at"], hit["id"]) for hit in newest.items]
    assert stamps == sorted(stamps, reverse=True)


def test_every_row_gets_a_vector_and_forget_removes_it(store, tmp_path):
    conn, ids = store
    assert vectors.progress(conn) == {"embedded": len(REALISTIC), "queued": 0, "total": len(REALISTIC)}
    forget(conn, str(tmp_path), ids=[ids["Pinned numpy below 2.0 for the data pipeline"]])
    assert vectors.progress(conn)["embedded"] == len(REALISTIC) - 1
    assert conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == len(REALISTIC) - 1


def test_a_new_model_re_embeds_everything(store, monkeypatch):
    conn, _ids = store
    assert vectors.reset_model(conn, "another-model") == len(REALISTIC)
    assert vectors.progress(conn) == {"embedded": 0, "queued": len(REALISTIC), "total": len(REALISTIC)}
    assert {kind for kind, _id, _text in vectors.queued(conn, 100)} == {"observation"}


@pytest.mark.parametrize("text", ["", " ", "\x00\x01", "x" * 1_000_000, 'AND OR NOT "(', "名前 ∑ 🎉"])
def test_bad_queries_are_an_empty_result_or_a_clear_error_in_every_mode(store, text):
    conn, _ids = store
    for mode in ("hybrid", "semantic", "keyword"):
        try:
            result = search(conn, SearchQuery.build(text, mode=mode, project=PROJECT))
        except RecallError as exc:
            assert str(exc)
        else:
            assert result.total >= 0


def test_without_the_model_search_degrades_to_keyword_and_says_why(store, monkeypatch):
    conn, _ids = store

    def broken() -> embedder.Embedder:
        raise embedder.ModelUnavailable("the embedding model does not load: model.onnx is damaged")

    monkeypatch.setattr(embedder, "shared", broken)
    semantic._query_vector.cache_clear()  # an earlier test's embedding of "login" would hide the damage
    for mode in ("", "semantic", "hybrid"):
        found = search(conn, SearchQuery.build("login", mode=mode, project=PROJECT))
        assert found.total >= 1 and (found.mode, found.degraded) == ("keyword", "keyword") and "damaged" in found.note
    monkeypatch.setattr(registry, "INDEXES", {"keyword": registry.INDEXES["keyword"]})
    assert default_mode(conn) == "keyword"


def test_the_worker_backfills_vectors_and_health_reports_progress(tmp_path, monkeypatch):
    from test_worker_lifecycle import cli

    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("CLAUDE_MEM_WORKER_PORT", "0")
    monkeypatch.setenv("CLAUDE_MEM_PROVIDER", "offline")
    monkeypatch.setenv("CLAUDE_MEM_BACKUP_INTERVAL_HOURS", "0")
    conn = db.connect(db.db_path(str(tmp_path)))
    for title, narrative in REALISTIC:
        add_observation(conn, PROJECT, title, narrative=narrative)
    conn.commit()
    conn.close()
    cli("worker", "start")
    try:
        from test_worker_lifecycle import wait_for

        def done() -> bool:
            health = json.loads(cli("worker", "status", "--json").stdout)["health"]
            return health["vectors"]["embedded"] == health["vectors"]["total"] == len(REALISTIC)

        wait_for(done, timeout=60, message="vectors backfilled")
        assert "vectors:" in cli("status").stdout
    finally:
        cli("worker", "stop")


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_summaries_and_prompts_asked_for_by_meaning_come_from_keyword_search(tmp_path, mode):
    from recall_seed import add_prompt, add_session, add_summary, stamp

    conn = db.connect(str(tmp_path / "claude-mem.db"))
    session = add_session(conn, "kinds-session", PROJECT)
    add_observation(conn, PROJECT, "Websocket reconnect keeps the cursor", session_id=session)
    add_summary(conn, session, PROJECT, stamp(1), request="Fix the websocket reconnect", completed="Cursor kept")
    add_prompt(conn, session, 1, "why does the websocket reconnect lose the cursor", stamp(2))
    conn.commit()
    while semantic.embed_missing(conn, 16):
        pass
    for kinds, expected in (("summary", {"summary"}), ("prompt", {"prompt"}),
                            ("observation,summary,prompt", {"observation", "summary", "prompt"})):
        found = search(conn, SearchQuery.build("websocket reconnect", mode=mode, project=PROJECT, kinds=kinds))
        assert {hit["kind"] for hit in found.items} == expected
    conn.close()


def test_vectors_kept_in_memory_follow_every_write(store, tmp_path):
    conn, ids = store
    query = SearchQuery.build("authentication bug", mode="semantic", project=PROJECT, limit=20)
    jwt = ids["Fixed login failing after the JWT expired"]
    assert jwt in [hit["id"] for hit in search(conn, query).items]  # loads the vectors into memory
    other = db.connect(str(tmp_path / "claude-mem.db"))  # another connection writes, as the worker would
    added = add_observation(other, PROJECT, "OAuth sign-in rejected valid credentials", narrative="Password check.")
    other.commit()
    while semantic.embed_missing(other, 16):
        pass
    forget(other, str(tmp_path), ids=[jwt])
    other.close()
    found = [hit["id"] for hit in search(conn, query).items]
    assert added in found and jwt not in found
    typed = SearchQuery.build("authentication bug", mode="semantic", project=PROJECT, types="bugfix")
    assert search(conn, typed).total == 0  # filters beyond the project still apply (all are discoveries)
