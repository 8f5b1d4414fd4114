"""Search at the speed of the index (issue 27): capped totals, rows holding every word first, snippets
for the page only, the worker's kept read connections and its project fast path."""

import os
import shutil

import pytest
from starlette.testclient import TestClient

from claude_mem.index import fts
from claude_mem.index.query import SearchQuery
from claude_mem.index.search import search
from claude_mem.recall.present import total_text
from claude_mem.store import db
from claude_mem.store import search as repository
from claude_mem.worker import routes_common
from claude_mem.worker.app import create_app
from claude_mem.worker.context import Readers
from recall_seed import add_observation, add_session, add_summary, stamp
from test_worker_app import BASE, make_ctx

APP = "/work/app"


@pytest.fixture
def store(tmp_path):
    """Three rows holding both words; one holding `alpha` only, so often that it alone outranks them;
    eight more that say `gamma`; a summary about both words. The observations are notes of no session:
    no neighbour lends them words (m017's context column is tested in test_context_field.py)."""
    conn = db.connect(str(tmp_path / "claude-mem.db"))
    session = add_session(conn, "sess", APP, stamp(100))
    ids = {
        "both": [add_observation(conn, APP, f"alpha beta note {n}", created_at=stamp(50 - n),
                                 narrative=f"One alpha and one beta, and {n} other words to tell them apart here.")
                 for n in range(3)],
        "alpha": add_observation(conn, APP, "alpha alpha alpha", created_at=stamp(10),
                                 narrative="alpha alpha alpha alpha alpha alpha"),
        "gamma": [add_observation(conn, APP, f"gamma {n}", created_at=stamp(40 - n))
                  for n in range(8)],
    }
    ids["summary"] = add_summary(conn, session, APP, stamp(5), request="alpha and beta together",
                                 learned="beta follows alpha", completed="both kept")
    yield conn, ids
    conn.close()


def refs(conn, text: str, **kwargs) -> list[str]:
    return [item["ref"] for item in search(conn, SearchQuery.build(text, mode="keyword", **kwargs)).items]


def test_rows_holding_every_word_come_first_and_pages_join_up(store):
    conn, ids = store
    both = [f"#{row_id}" for row_id in ids["both"]]
    assert refs(conn, "alpha")[0] == f"#{ids['alpha']}"  # alone, the one-word row ranks first ...
    full = refs(conn, "alpha beta")
    assert sorted(full[:3]) == sorted(both) and full[3] == f"#{ids['alpha']}"  # ... after every row with both
    assert len(full) == 4
    # Page by page, whether the rows with every word fill the page or not, the pages join up exactly.
    assert [refs(conn, "alpha beta", limit=1, offset=offset)[0] for offset in range(4)] == full
    assert refs(conn, "alpha beta", limit=2, offset=2) == full[2:]
    assert fts.all_terms_expression("alpha beta") == '"alpha" AND "beta"' and fts.all_terms_expression("alpha") == ""


def test_summaries_rank_every_word_first_and_get_snippets_on_the_page_only(store):
    conn, ids = store
    result = search(conn, SearchQuery.build("alpha beta", mode="keyword", kinds=("observation", "summary"), snippets=True))
    assert f"S{ids['summary']}" in [item["ref"] for item in result.items[:4]]
    assert result.items[-1]["ref"] == f"#{ids['alpha']}"
    summary = next(item for item in result.items if item["kind"] == "summary")
    assert "[alpha]" in summary["snippet"] or "[beta]" in summary["snippet"]
    assert all("[" in item["snippet"] for item in result.items)  # every row on the page is highlighted
    plain = search(conn, SearchQuery.build("alpha beta", mode="keyword", kinds=("observation", "summary")))
    assert [item["ref"] for item in plain.items] == [item["ref"] for item in result.items]
    assert not any("[" in item["snippet"] for item in plain.items)  # not asked for: the start of the text


def test_a_total_past_the_cap_is_a_floor(store, monkeypatch):
    conn, ids = store
    monkeypatch.setattr(repository, "TOTAL_CAP", 5)
    capped = search(conn, SearchQuery.build("gamma", mode="keyword", limit=2))
    assert (capped.total, capped.total_capped) == (5, True) and len(capped.items) == 2
    assert capped.as_dict()["total_capped"] is True
    exact = search(conn, SearchQuery.build("gamma", mode="keyword", limit=10))  # the page reaches past the cap
    assert (exact.total, exact.total_capped, len(exact.items)) == (8, False, 8)
    filtered = search(conn, SearchQuery.build("gamma", mode="keyword", limit=2, since=stamp(100)))
    assert (filtered.total, filtered.total_capped) == (5, True)
    few = search(conn, SearchQuery.build("alpha beta", mode="keyword", limit=2))
    assert (few.total, few.total_capped) == (4, False)
    assert (total_text(5, True), total_text(4)) == ("5+", "4")


def test_the_api_says_when_a_total_is_capped(data_dir, monkeypatch):
    conn = db.connect(db.db_path(str(data_dir)))
    session = add_session(conn, "sess", APP, stamp(10))
    for n in range(7):
        add_observation(conn, APP, f"websocket drop {n}", session_id=session, created_at=stamp(5 - n / 10))
    conn.close()
    monkeypatch.setattr(repository, "TOTAL_CAP", 3)
    with TestClient(create_app(make_ctx(data_dir, backup_interval_hours=0), services=[]), base_url=BASE) as client:
        page = client.get("/api/search", params={"q": "websocket", "mode": "keyword", "limit": 2, "project": APP}).json()
        assert (page["total"], page["total_capped"], len(page["items"])) == (3, True, 2)
        page = client.get("/api/search", params={"q": "websocket", "mode": "keyword", "limit": 20}).json()
        assert (page["total"], page["total_capped"], len(page["items"])) == (7, False, 7)
        assert all("[websocket]" in item["snippet"].lower() for item in page["items"])  # highlighted by default
        page = client.get("/api/search", params={"q": "websocket", "mode": "keyword", "snippets": "false"}).json()
        assert len(page["items"]) == 7 and not any("[" in item["snippet"] for item in page["items"])
        refused = client.get("/api/search", params={"q": "websocket", "snippets": "maybe"})
        assert refused.status_code == 400 and "snippets must be one of true, false" in refused.json()["error"]["message"]


def test_read_connections_are_kept_and_dropped_when_the_file_is_replaced(data_dir, tmp_path):
    path = db.db_path(str(data_dir))
    conn = db.connect(path)
    add_observation(conn, APP, "the first file", session_id=add_session(conn, "one", APP, stamp(1)))
    conn.close()
    readers = Readers(str(data_dir), keep=1)
    identity, first = readers.borrow()
    readers.give_back(identity, first)
    identity, again = readers.borrow()
    assert again is first  # kept, not reopened
    other_identity, other = readers.borrow()  # a second thread at the same time gets its own
    assert other is not first
    readers.give_back(identity, again)
    readers.give_back(other_identity, other)  # past `keep`: closed
    with pytest.raises(db.DatabaseError):
        other.execute("SELECT 1")

    replacement = str(tmp_path / "replacement.db")
    conn = db.connect(replacement)
    add_observation(conn, APP, "the second file", session_id=add_session(conn, "two", APP, stamp(1)))
    conn.close()
    for suffix in ("-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    shutil.copyfile(replacement, path + ".new")
    os.replace(path + ".new", path)  # a restore puts a new file in place
    identity, fresh = readers.borrow()
    assert fresh is not first
    assert fresh.execute("SELECT title FROM observations").fetchall() == [("the second file",)]
    with pytest.raises(db.DatabaseError):
        first.execute("SELECT 1")  # the stale one was closed, not handed out
    readers.give_back(identity, fresh)
    readers.close()
    with pytest.raises(db.DatabaseError):
        fresh.execute("SELECT 1")


def test_a_stored_key_needs_no_resolving_and_names_still_resolve(store):
    conn, _ids = store
    assert repository.project_is_stored(conn, APP)
    assert not repository.project_is_stored(conn, "app") and not repository.project_is_stored(conn, "/elsewhere")
    assert routes_common.project(conn, APP) == APP
    assert routes_common.project(conn, "app") == APP  # a display name goes the long way
    assert routes_common.project(conn, "/not/stored/yet") == "/not/stored/yet"


def test_snippets_are_the_same_made_in_one_pass_or_row_by_row(store, monkeypatch):
    conn, _ids = store
    wanted = SearchQuery.build("alpha beta", mode="keyword", snippets=True)  # observations alone, unfiltered: 4 matches
    one_pass = [item["snippet"] for item in search(conn, wanted).items]
    monkeypatch.setattr(repository, "SNIPPETS_IN_ONE_PASS", 0)
    assert [item["snippet"] for item in search(conn, wanted).items] == one_pass
    assert len(one_pass) == 4 and all("[alpha]" in snippet for snippet in one_pass)
