"""One search behind one seam: `SearchQuery` validation, the index entry point, and the surfaces
(CLI `--json`, HTTP, MCP text) agreeing on what a query finds."""

import json
import re

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from claude_mem.cli import cli
from claude_mem.domain import RecallError
from claude_mem.index.query import KINDS, MAX_LIMIT, MODES, ORDERS, SearchQuery
from claude_mem.index.search import available_modes, search
from claude_mem.mcp_server import answers
from claude_mem.store import db
from claude_mem.worker.app import create_app
from recall_seed import add_observation, add_prompt, add_session, add_summary, stamp
from test_worker_app import BASE, make_ctx

APP, LIB = "/home/dev/app", "/home/dev/lib"


# -- SearchQuery -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "message"), [
    ({"mode": "fuzzy"}, r"unknown search mode 'fuzzy' \(known: hybrid, keyword, semantic"),
    ({"types": ["bugfix", "nope"]}, r"unknown type\(s\) nope \(known: bugfix"),
    ({"types": "nope,bugfix"}, r"unknown type\(s\) nope"),
    ({"kinds": ("observation", "note")}, r"unknown kind\(s\) note \(known: observation, summary, prompt, auto-memory\)"),
    ({"kinds": ()}, r"unknown kind\(s\) \(none\)"),
    ({"order": "random"}, r"unknown order 'random' \(known: relevance, newest, oldest\)"),
    ({"limit": 0}, rf"limit must be 1..{MAX_LIMIT}, not 0"),
    ({"limit": MAX_LIMIT + 1}, rf"limit must be 1..{MAX_LIMIT}, not {MAX_LIMIT + 1}"),
    ({"offset": -1}, r"offset must be 0..1000000000000, not -1"),
    ({"since": "yesterday"}, r"since: not a date or time: 'yesterday'"),
    ({"until": "2026-02-30"}, r"until: not a date or time: '2026-02-30'"),
])
def test_bad_input_names_the_field_and_what_it_accepts(kwargs, message):
    with pytest.raises(RecallError, match=message):
        SearchQuery.build("cache", **kwargs)


def test_values_are_normalised_once():
    query = SearchQuery.build("cache", types="bugfix, decision,", kinds="summary,observation,summary",
                              since="2026-11-20T10:00:00Z", until="2026-11-20T12:00:00Z", project="", file="")
    assert query.filters.types == ("bugfix", "decision")
    assert query.kinds == ("summary", "observation")
    assert (query.filters.since, query.filters.until) == ("2026-11-20T10:00:00.000Z", "2026-11-20T12:00:00.000Z")
    assert query.filters.project is None and query.filters.file is None
    assert query.mode == "" and query.order == "relevance" and (query.limit, query.offset) == (20, 0)
    # A bare `until` date includes that whole day.
    day = SearchQuery.build("x", since="2026-11-20", until="2026-11-20").filters
    assert day.since is not None and day.until is not None and day.since < day.until
    # Without text nothing is ranked: a listing is by date, over observations.
    listing = SearchQuery.build(None, kinds=KINDS)
    assert listing.order == "newest" and listing.kinds == ("observation",)
    assert SearchQuery.build(None, order="oldest").order == "oldest"


def test_value_sets_are_defined_once():
    assert ORDERS == ("relevance", "newest", "oldest") and KINDS == ("observation", "summary", "prompt", "auto-memory")
    assert set(available_modes()) <= set(MODES)


def test_a_mode_without_an_index_degrades_to_keyword_and_says_why(tmp_path, monkeypatch):
    from claude_mem.index import search as registry

    monkeypatch.setattr(registry, "INDEXES", {"keyword": registry.INDEXES["keyword"]})
    conn = db.connect(str(tmp_path / "claude-mem.db"))
    try:
        asked = search(conn, SearchQuery(text="cache", mode="semantic"))  # named: keyword answers, saying why
        assert (asked.mode, asked.degraded) == ("keyword", "keyword") and "not available here" in asked.note
        with pytest.raises(RecallError, match=r"unknown search mode 'fuzzy'; available: keyword"):
            search(conn, SearchQuery(text="cache", mode="fuzzy"))
        assert search(conn, SearchQuery(text="cache")).total == 0  # the default falls back to keyword
    finally:
        conn.close()


# -- one query, every surface ----------------------------------------------------------------------

@pytest.fixture
def seeded(data_dir):
    conn = db.connect(db.db_path(str(data_dir)))
    app = add_session(conn, "sess-app", APP, stamp(100))
    lib = add_session(conn, "sess-lib", LIB, stamp(100))
    ids = {
        "lease": add_observation(conn, APP, "Cache lease renewal races", kind="bugfix", session_id=app,
                                 created_at=stamp(50), narrative="Two workers renewed the same cache lease."),
        "stale": add_observation(conn, APP, "Stale cache entry after deploy", kind="discovery", session_id=app,
                                 created_at=stamp(40), narrative="The cache key ignored the version."),
        "fix": add_observation(conn, APP, "Cache key includes the version", kind="bugfix", session_id=app,
                               created_at=stamp(30), narrative="Stale cache entries no longer survive a deploy."),
        "lib": add_observation(conn, LIB, "Cache warmup before the first request", kind="bugfix", session_id=lib,
                               created_at=stamp(20), narrative="Warm the cache eagerly."),
    }
    ids["summary"] = add_summary(conn, app, APP, stamp(35), request="Investigate the stale cache",
                                 learned="Cache keys must include the version", completed="Versioned the key")
    ids["prompt"] = add_prompt(conn, app, 1, "why is the cache stale after a deploy?", stamp(45))
    yield conn, ids
    conn.close()


@pytest.fixture
def client(data_dir, seeded):
    with TestClient(create_app(make_ctx(data_dir, backup_interval_hours=0), services=[]), base_url=BASE) as test:
        yield test


def cli_refs(*args: str) -> list[str]:
    result = CliRunner().invoke(cli, ["search", *args, "--json"])
    assert result.exit_code == 0, result.output
    return [item["ref"] for item in json.loads(result.stdout)["items"]]


def mcp_refs(output: str) -> list[str]:
    return re.findall(r"^([#SP]\d+) ", output, flags=re.M)


def test_the_same_query_finds_the_same_rows_everywhere(seeded, client):
    conn, ids = seeded
    direct = [hit["ref"] for hit in search(conn, SearchQuery.build("stale cache", kinds=KINDS)).items]
    assert set(direct) == {f"#{ids[key]}" for key in ("lease", "stale", "fix", "lib")} | {
        f"S{ids['summary']}", f"P{ids['prompt']}"}
    http = client.get("/api/search", params={"q": "stale cache", "kind": "observation,summary,prompt"}).json()
    assert [item["ref"] for item in http["items"]] == direct
    assert cli_refs("stale cache", "--kind", "observation", "--kind", "summary", "--kind", "prompt") == direct
    mcp = answers.search_text(conn, APP, "stale cache", all_projects=True, kinds=KINDS)
    assert mcp_refs(mcp) == direct


def test_a_filter_and_an_order_agree_everywhere(seeded, client):
    conn, ids = seeded
    query = SearchQuery.build("cache", project=APP, types="bugfix", order="oldest")
    direct = [hit["ref"] for hit in search(conn, query).items]
    assert direct == [f"#{ids['lease']}", f"#{ids['fix']}"]  # lib is another project, stale a discovery
    newest = [hit["ref"] for hit in search(conn, SearchQuery.build("cache", project=APP, types="bugfix",
                                                                   order="newest")).items]
    assert newest == direct[::-1]
    http = client.get("/api/search", params={"q": "cache", "project": APP, "type": "bugfix", "order": "oldest"})
    assert [item["ref"] for item in http.json()["items"]] == direct
    assert cli_refs("cache", "--project", APP, "--type", "bugfix", "--order", "oldest") == direct
    assert mcp_refs(answers.search_text(conn, APP, "cache", types=["bugfix"], order="oldest")) == direct
    listed = client.get("/api/observations", params={"project": APP, "type": "bugfix", "order": "oldest"}).json()
    assert [item["ref"] for item in listed["items"]] == direct and listed["total"] == 2


def test_validation_errors_map_at_each_edge(seeded, client):
    conn, _ = seeded
    response = client.get("/api/search", params={"q": "cache", "mode": "fuzzy"})
    assert response.status_code == 400 and "unknown search mode 'fuzzy'" in response.json()["error"]["message"]
    response = client.get("/api/search", params={"q": "cache", "since": "soon"})
    assert response.status_code == 400 and response.json()["error"]["message"].startswith("since: not a date")
    result = CliRunner().invoke(cli, ["search", "cache", "--until", "later"])
    assert result.exit_code == 1 and "until: not a date or time" in result.output and "Traceback" not in result.output
    with pytest.raises(RecallError, match="unknown order"):
        answers.search_text(conn, APP, "cache", order="sideways")


def test_mcp_search_tool_takes_the_mode_and_lists_its_values():
    """The mode set is one constant (index.query.MODES); the MCP tool's schema offers exactly it."""
    from typing import get_args

    from claude_mem.index.query import MODES
    from claude_mem.mcp_server.server import Mode

    assert tuple(get_args(Mode)) == MODES
