"""Issue 29: a memory found through the story around it (m017's `context` column), and never through
text that was forgotten or kept private; the field priors; the upgrade of a store from before m017."""

import asyncio
import sqlite3

import pytest

from claude_mem.index.query import SearchQuery
from claude_mem.index.search import search
from claude_mem.recall import forget as forgetting
from claude_mem.store import context_field, db, migrations
from claude_mem.store.context import own_text
from claude_mem.worker.context_fill import ContextFillService
from recall_seed import add_observation, add_prompt, add_session, add_summary, stamp

APP = "/work/app"


def refs(conn, text: str, **kwargs) -> list[str]:
    kwargs.setdefault("mode", "keyword")
    kwargs.setdefault("project", APP)
    return [item["ref"] for item in search(conn, SearchQuery.build(text, **kwargs)).items]


def consistent(conn) -> None:
    """Every full-text index agrees with the rows and contexts it was built from (FTS5's own check)."""
    for table in ("observations", "summaries", "prompts"):
        conn.execute(f"INSERT INTO {table}_fts ({table}_fts, rank) VALUES ('integrity-check', 1)")


@pytest.fixture
def story(tmp_path):
    """One session: a prompt, then five observations in order; another session with one unrelated row."""
    conn = db.connect(str(tmp_path / "claude-mem.db"))
    session = add_session(conn, "sess-story", APP, stamp(10))
    add_prompt(conn, session, 1, "why does the nightly export crash on large projects", stamp(9))
    ids = {}
    for n, (name, title, narrative) in enumerate([
        ("hunt", "Looked at the nightly export job", "The export worker runs at 02:00 and reads every project."),
        ("cause", "Export crashes with MemoryError on projects over 2 GB", "The whole project was read into memory."),
        ("fix", "Stream rows in chunks of 500", "Rows are now written as they are read; memory stays flat."),
        ("test", "Added a regression test with a 3 GB fixture", "It runs in the slow test job."),
        ("docs", "Wrote the release note", "Mentions the new chunk size setting."),
    ]):
        ids[name] = add_observation(conn, APP, title, session_id=session, created_at=stamp(8 - n), narrative=narrative,
                                    prompt_number=1)
    other = add_session(conn, "sess-other", APP, stamp(5))
    ids["other"] = add_observation(conn, APP, "Bumped the linter", session_id=other, created_at=stamp(4),
                                   narrative="Ruff 0.6 flags two new rules.")
    assert context_field.queued(conn) > 0  # the rows stored after a row reach its context off the write path
    context_field.settle(conn)  # what the worker does within a second
    yield conn, ids, tmp_path
    conn.close()


def test_a_memory_is_found_through_its_neighbours_words(story):
    conn, ids, _ = story
    # "MemoryError" is only in `cause`; the fix beside it is found too, ranked after the row that says it
    found = refs(conn, "MemoryError")
    assert found[0] == f"#{ids['cause']}"
    assert f"#{ids['fix']}" in found and f"#{ids['hunt']}" in found
    assert f"#{ids['docs']}" not in found  # three rows away: outside the window of two
    assert f"#{ids['other']}" not in found  # another session lends nothing
    # words split over two neighbours: the pair's rows hold both (one in its own text), the other session neither
    assert {f"#{ids['fix']}", f"#{ids['test']}"} <= set(refs(conn, "chunks regression", limit=3))
    assert f"#{ids['other']}" not in refs(conn, "chunks regression")
    # the prompt of the turn is part of every observation's story
    assert set(refs(conn, "crash large projects")) >= {f"#{ids[name]}" for name in ("hunt", "fix", "docs")}
    consistent(conn)


def test_a_quoted_phrase_and_a_snippet_stay_in_the_rows_own_text(story):
    conn, ids, _ = story
    assert refs(conn, '"chunks of 500"') == [f"#{ids['fix']}"]
    found = search(conn, SearchQuery.build("MemoryError", mode="keyword", project=APP, snippets=True)).items
    neighbour = next(item for item in found if item["id"] == ids["fix"])
    assert "MemoryError" not in neighbour["snippet"]  # it quotes its own text, not the neighbour's


def test_forgotten_text_is_not_found_through_a_neighbour(story):
    conn, ids, tmp_path = story
    assert f"#{ids['fix']}" in refs(conn, "MemoryError")
    forgetting.forget(conn, str(tmp_path), ids=[ids["cause"]])
    assert refs(conn, "MemoryError") == []
    assert refs(conn, "MemoryError", kinds=("observation", "summary", "prompt")) == []
    assert not [text for (text,) in conn.execute("SELECT text FROM search_context") if "MemoryError" in text]
    # the rows that were two apart are now neighbours: the window closed over the gap
    assert f"#{ids['docs']}" in refs(conn, "nightly export job")
    consistent(conn)


def test_an_edit_and_a_private_prompt_rewrite_the_neighbours_context(story):
    conn, ids, _ = story
    assert f"#{ids['fix']}" in refs(conn, "whole")
    conn.execute("UPDATE observations SET narrative = 'Everything was loaded into RAM at once.' WHERE id = ?",
                 (ids["cause"],))
    assert f"#{ids['fix']}" in refs(conn, "RAM")  # the neighbours learn the new text ...
    assert refs(conn, "whole") == []  # ... and forget the old
    assert len(refs(conn, "large")) == 5  # a word of the turn's prompt alone
    conn.execute("UPDATE prompts SET private = 1")
    assert refs(conn, "large") == []  # a private prompt lends its words to no one
    assert not [text for (text,) in conn.execute("SELECT text FROM search_context") if "crash on large" in text]
    consistent(conn)


def test_summaries_and_prompts_carry_their_turns_story(story):
    conn, _ids, _ = story
    session = conn.execute("SELECT id FROM sessions WHERE content_session_id = 'sess-story'").fetchone()[0]
    add_prompt(conn, session, 2, "now make the chunk size configurable", stamp(2))
    summary = add_summary(conn, session, APP, stamp(1), prompt_number=2, request="configurable chunk size",
                          learned="settings are read once at start", completed="added export_chunk_rows")
    context_field.settle(conn)
    # the summary is found by its turn's prompt; the first prompt by the one after it
    assert f"S{summary}" in refs(conn, "configurable", kinds=("summary",))
    assert refs(conn, "nightly", kinds=("prompt",))[0] == "P1"
    assert "P1" in refs(conn, "configurable", kinds=("prompt",))
    consistent(conn)


def _legacy_store(path: str, sessions: int, per_session: int) -> None:
    """A store written by the release before m017 (schema 16)."""
    conn = db.connect(path, migrate=False)
    migrations.migrate(conn, target=16)
    for s in range(sessions):
        session = add_session(conn, f"sess-{s}", APP, stamp(100))
        for n in range(per_session):
            add_observation(conn, APP, f"Row {s}-{n} about topic{s}x{n}", session_id=session, created_at=stamp(90 - n),
                            narrative=f"Session {s} keeps word{s}y{n} here.")
    conn.close()


def test_a_small_store_is_indexed_with_context_by_the_upgrade_itself(tmp_path):
    path = str(tmp_path / "claude-mem.db")
    _legacy_store(path, sessions=3, per_session=4)
    conn = db.connect(path)
    assert not context_field.filling(conn)
    assert conn.execute("SELECT COUNT(*) FROM search_context WHERE kind = 0").fetchone()[0] == 12
    found = refs(conn, "word1y1", limit=10)
    assert found[0] == "#6" and set(found) == {"#5", "#6", "#7", "#8"}  # itself, then its session's rows in reach
    consistent(conn)


def test_a_read_only_open_of_a_store_from_before_the_context_field_waits_for_nothing(tmp_path):
    path = str(tmp_path / "claude-mem.db")
    _legacy_store(path, sessions=1, per_session=2)
    reader = db.connect_readonly(path)
    assert reader is not None and not context_field.filling(reader)
    reader.close()


def test_a_large_store_is_indexed_newest_first_by_the_worker_while_search_goes_on(tmp_path, monkeypatch):
    path = str(tmp_path / "claude-mem.db")
    _legacy_store(path, sessions=6, per_session=5)
    monkeypatch.setattr(context_field, "SYNC_ROWS", 10)
    monkeypatch.setattr(context_field, "BATCH", 7)
    conn = db.connect(path)
    assert context_field.filling(conn) and context_field.waiting(conn) == 30
    assert refs(conn, "word0y0") == []  # not indexed yet: the note says why
    note = search(conn, SearchQuery.build("word0y0", mode="keyword")).note
    assert "30" in note and "index" in note
    # a row written meanwhile is indexed at once, with its (not yet indexed) neighbours' words
    session = conn.execute("SELECT id FROM sessions WHERE content_session_id = 'sess-5'").fetchone()[0]
    new = add_observation(conn, APP, "Fresh row", session_id=session, narrative="brandnew words")
    assert refs(conn, "brandnew") == [f"#{new}"] and f"#{new}" in refs(conn, "word5y4")
    assert context_field.queued(conn) == 2  # rows 29 and 30 would learn of it, once indexed themselves
    conn.execute("DELETE FROM observations WHERE id = 29")  # an edit and a delete among rows waiting: no harm
    conn.execute("UPDATE observations SET narrative = 'changed text' WHERE id = 3")

    class Ctx:
        data_dir = str(tmp_path)
        index_status = None

        def connect(self):
            return db.connect(path)

    service = ContextFillService()
    service._ctx = Ctx()  # type: ignore[assignment]
    first = service.work_once()
    assert first == 7 and refs(conn, "word5y2")  # newest first
    while context_field.filling(conn):
        service.work_once()
    assert service.status()["waiting"] == 0 and service.indexed == 29
    while service.work_once():  # then the rows a newer neighbour joined
        pass
    assert service.status()["queued"] == 0 and f"#{new}" in refs(conn, "word5y4")
    assert refs(conn, "word0y0")[0] == "#1" and refs(conn, "changed")[0] == "#3"
    assert conn.execute("SELECT COUNT(*) FROM search_context WHERE kind = 0").fetchone()[0] == 30
    consistent(conn)
    asyncio.run(service.stop())


def test_the_worker_service_keeps_contexts_current_within_a_second(tmp_path):
    conn = db.connect(str(tmp_path / "claude-mem.db"))
    session = add_session(conn, "sess", APP, stamp(3))
    first = add_observation(conn, APP, "The first note", session_id=session, narrative="alpha")
    add_observation(conn, APP, "The second note", session_id=session, narrative="omega")
    assert refs(conn, "omega") == ["#2"]  # the first row does not know of the second yet

    class Ctx:
        data_dir = str(tmp_path)
        index_status = None

        def connect(self):
            return db.connect(str(tmp_path / "claude-mem.db"))

    service = ContextFillService()

    async def run() -> None:
        await service.start(Ctx())  # type: ignore[arg-type]
        for _ in range(100):
            await asyncio.sleep(0.05)
            if service.refreshed:
                break
        await service.stop()

    asyncio.run(run())
    assert service.status() == {"waiting": 0, "queued": 0, "indexed": 0, "refreshed": 1, "error": None}
    assert refs(conn, "omega") == ["#2", f"#{first}"]
    conn.close()


def test_own_text_expression_is_valid_fts(story):
    conn, ids, _ = story
    rows = conn.execute("SELECT rowid FROM observations_fts WHERE observations_fts MATCH ?",
                        (own_text('"MemoryError"'),)).fetchall()
    assert rows == [(ids["cause"],)]
    with pytest.raises(sqlite3.OperationalError):
        conn.execute("SELECT rowid FROM observations_fts WHERE observations_fts MATCH ?", ("{nope} : x",)).fetchall()


# -- field priors -------------------------------------------------------------------------------------


@pytest.fixture
def team(tmp_path):
    conn = db.connect(str(tmp_path / "claude-mem.db"))
    ids = {}
    for n, (author, kind, title, files) in enumerate([
        ("alice", "decision", "Cache entries expire after ten minutes", ("/work/app/src/cache.py",)),
        ("bob", "decision", "Cache entries expire after ten minutes", ()),
        (None, "bugfix", "Cache entries expired too early", ("/work/app/src/clock.py",)),
        (None, "discovery", "Cache entries live in Redis", ()),
    ]):
        row = add_observation(conn, APP, title, kind=kind, created_at=stamp(10 - n), files_modified=files,
                              narrative="Cache entries and their expiry.")
        if author:
            conn.execute("UPDATE observations SET author = ? WHERE id = ?", (author, row))
        ids[author or kind] = row
    yield conn, ids
    conn.close()


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_query_naming_one_author_file_or_type_lifts_their_rows(team, mode):
    conn, ids = team
    assert refs(conn, "what did alice say about cache entries expire", mode=mode)[0] == f"#{ids['alice']}"
    assert refs(conn, "what did bob say about cache entries expire", mode=mode)[0] == f"#{ids['bob']}"
    assert refs(conn, "cache entries in clock.py", mode=mode)[0] == f"#{ids['bugfix']}"
    assert refs(conn, "bugs with cache entries", mode=mode)[0] == f"#{ids['bugfix']}"
    # naming both teammates says nothing of which one; an unknown name is just a word
    both = {item["id"]: item["score"] for item in search(conn, SearchQuery.build(
        "alice and bob on cache entries expire", mode=mode, project=APP)).items}
    assert both[ids["alice"]] == both[ids["bob"]]  # the same text, neither lifted
    assert refs(conn, "what did zed say about cache entries", mode=mode)


def test_priors_do_not_apply_where_a_filter_fixes_the_field(team):
    from claude_mem.index import priors as field_priors
    from claude_mem.store.search import SearchFilters

    conn, _ids = team
    assert field_priors.priors(conn, "alice decisions", SearchFilters()).author == "alice"
    assert field_priors.priors(conn, "alice decisions", SearchFilters()).types == ("decision",)
    assert field_priors.priors(conn, "alice decisions", SearchFilters(author="bob")).author is None
    assert field_priors.priors(conn, "alice decisions", SearchFilters(types=("bugfix",))).types == ()
    assert not field_priors.priors(conn, "", SearchFilters())


# -- time in the question -----------------------------------------------------------------------------


@pytest.fixture
def seasons(tmp_path):
    """The same note stored in March, May and July 2026, and a migration in June."""
    conn = db.connect(str(tmp_path / "claude-mem.db"))
    ids = {}
    for month in ("03", "05", "07"):
        ids[month] = add_observation(conn, APP, "Tuned the cache eviction policy", created_at=f"2026-{month}-10T12:00:00.000Z",
                                     narrative=f"Eviction now prefers cold keys (round {month}).")
    ids["migration"] = add_observation(conn, APP, "Ran the schema migration to v5", created_at="2026-06-15T12:00:00.000Z",
                                       narrative="The orders table moved to the new layout.")
    yield conn, ids
    conn.close()


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_date_in_the_query_lifts_the_rows_of_that_time(seasons, mode):
    conn, ids = seasons
    assert refs(conn, "cache eviction in March 2026", mode=mode)[0] == f"#{ids['03']}"
    assert refs(conn, "cache eviction in July 2026", mode=mode)[0] == f"#{ids['07']}"
    assert refs(conn, "cache eviction in May", mode=mode)[0] == f"#{ids['05']}"  # the latest May before the newest row
    assert len(refs(conn, "cache eviction in 2019", mode=mode)) >= 3  # nothing is filtered out
    # before/after an event: the window ends or starts where the event's best match was stored
    if mode == "hybrid":
        return  # (below: rows differing by one word, whose cosines min-max fusion spreads over the whole range)
    before = refs(conn, "cache eviction before the schema migration", mode=mode)
    assert before.index(f"#{ids['07']}") > max(before.index(f"#{ids['03']}"), before.index(f"#{ids['05']}"))
    after = refs(conn, "cache eviction after the schema migration", mode=mode)
    assert after.index(f"#{ids['07']}") < min(after.index(f"#{ids['03']}"), after.index(f"#{ids['05']}"))


def test_queries_made_only_of_dates_or_of_hostile_words_answer_cleanly(seasons):
    conn, _ids = seasons
    for text in ("March 2026", "yesterday", "in 2026 before after", "the the the", "before", "\ud800 in March",
                 "x" * 5000, " ".join(["March"] * 10_000)):
        for mode in ("keyword", "hybrid"):
            result = search(conn, SearchQuery.build(text, mode=mode, project=APP))
            assert result.total >= len(result.items)
