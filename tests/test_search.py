"""Search (BM25, OR, phrases, prefixes, escaping, filters, paging, order) and timeline."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claude_mem.index import fts
from claude_mem.index.query import SearchQuery
from claude_mem.index.search import search as run_search
from claude_mem.recall.common import RecallError
from claude_mem.recall.timeline import timeline
from claude_mem.store import db
from recall_seed import add_observation, add_prompt, add_session, add_summary, stamp

APP, LIB = "/work/app", "/work/lib"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """One populated database shared by the read-only tests of this module. Each observation has a session
    of its own: no neighbour lends it words (m017's context column is tested in test_context_field.py)."""
    conn = db.connect(str(tmp_path_factory.mktemp("search") / "claude-mem.db"))
    app = add_session(conn, "sess-app", APP, stamp(100))

    def own(name: str) -> int:
        return add_session(conn, f"sess-{name}", APP, stamp(100))

    lib = add_session(conn, "sess-lib", LIB, stamp(100))
    ids = {
        "lease": add_observation(conn, APP, "Fix race condition in session lease renewal", kind="bugfix", session_id=own("lease"),
                                 created_at=stamp(50), concepts=("gotcha",), files_modified=("/work/app/src/lease.py",),
                                 narrative="Two workers renewed the same lease; the update now checks the owner."),
        "cache": add_observation(conn, APP, "Stale cache entry served after deploy", kind="discovery", session_id=own("cache"),
                                 created_at=stamp(40), concepts=("problem-solution",), files_read=("/work/app/src/cache.py",),
                                 narrative="The cache key ignored the version, so a stale cache entry survived deploys."),
        "parser": add_observation(conn, APP, "Parser handles unicode identifiers like café", kind="feature", session_id=own("parser"),
                                  created_at=stamp(30), narrative="The tokenizer accepts non-ASCII letters in names."),
        "auth": add_observation(conn, APP, "Authentication tokens rotate every hour", kind="decision", session_id=own("auth"),
                                created_at=stamp(20), narrative="Short-lived auth tokens limit the damage of a leak."),
        "libcache": add_observation(conn, LIB, "Cache warmup runs before the first request", kind="change",
                                    session_id=lib, created_at=stamp(10), narrative="Warm the cache eagerly."),
    }
    ids["summary"] = add_summary(conn, app, APP, stamp(35), request="Investigate the stale cache after deploys",
                                 learned="Cache keys must include the version", completed="Added version to key")
    ids["prompt"] = add_prompt(conn, app, 1, "why does the cache serve stale data after a deploy?", stamp(45))
    add_prompt(conn, app, 2, "secret cache plans", stamp(44), private=True)
    yield conn, ids
    conn.close()


def search(conn, text, **kwargs) -> dict:
    """The search as every surface runs it: one SearchQuery, the one entry point, the printed shape."""
    return run_search(conn, SearchQuery.build(text, **kwargs)).as_dict()


def refs(result: dict) -> list[str]:
    return [item["ref"] for item in result["items"]]


def test_multi_word_is_or_ranked_by_relevance(store):
    conn, ids = store
    result = search(conn, "stale cache")
    assert result["match"] == '"stale" OR "cache"'
    assert refs(result)[0] == f"#{ids['cache']}"  # matches both terms, twice
    assert set(refs(result)) == {f"#{ids['cache']}", f"#{ids['libcache']}"}
    assert result["total"] == 2


def test_phrase_prefix_and_stemming(store):
    conn, ids = store
    assert refs(search(conn, '"session lease"')) == [f"#{ids['lease']}"]
    assert refs(search(conn, '"lease session"')) == []
    assert refs(search(conn, "authent*")) == [f"#{ids['auth']}"]
    assert refs(search(conn, "renewing")) == [f"#{ids['lease']}"]  # porter stemming
    assert refs(search(conn, "cafe")) == [f"#{ids['parser']}"]  # diacritics folded


def test_filters(store):
    conn, ids = store
    assert refs(search(conn, "cache", project=LIB)) == [f"#{ids['libcache']}"]
    assert refs(search(conn, "cache", types=["change"])) == [f"#{ids['libcache']}"]
    assert refs(search(conn, "cache OR lease OR tokens", file="cache.py")) == [f"#{ids['cache']}"]
    assert refs(search(conn, "cache OR lease", concept="GOTCHA")) == [f"#{ids['lease']}"]
    assert refs(search(conn, "cache", since=stamp(15))) == [f"#{ids['libcache']}"]
    assert refs(search(conn, "cache", until=stamp(15))) == [f"#{ids['cache']}"]
    assert refs(search(conn, "cache", file="100%_")) == []  # LIKE wildcards are literal


def test_summaries_and_prompts_when_asked(store):
    conn, ids = store
    result = search(conn, "stale cache", kinds=("observation", "summary", "prompt"), project=APP)
    assert set(refs(result)) == {f"#{ids['cache']}", f"S{ids['summary']}", f"P{ids['prompt']}"}
    assert search(conn, "secret", kinds=("prompt",))["total"] == 0  # private prompts never match
    assert refs(search(conn, "cache", kinds=("summary",), types=["bugfix"])) == []


def test_pagination_and_order(store):
    conn, ids = store
    everything = "cache lease tokens unicode"
    full = search(conn, everything, limit=10)
    assert full["total"] == 5
    pages = [refs(search(conn, everything, limit=2, offset=offset)) for offset in (0, 2, 4)]
    assert sum(pages, []) == refs(full)
    newest = refs(search(conn, everything, order="newest"))
    assert newest == [f"#{ids[k]}" for k in ("libcache", "auth", "parser", "cache", "lease")]
    assert refs(search(conn, everything, order="oldest")) == newest[::-1]


def test_listing_without_query(store):
    conn, ids = store
    result = search(conn, None, project=APP, types=["bugfix", "decision"])
    assert refs(result) == [f"#{ids['auth']}", f"#{ids['lease']}"] and result["total"] == 2


@pytest.mark.parametrize("kwargs, message", [
    ({"types": ["nope"]}, "unknown type"), ({"order": "random"}, "unknown order"), ({"limit": 0}, "limit"),
    ({"since": "yesterday"}, "not a date"), ({"kinds": ("thing",)}, "unknown kind"),
])
def test_bad_input_is_a_clear_error(store, kwargs, message):
    with pytest.raises(RecallError, match=message):
        search(store[0], "cache", **kwargs)


@given(st.text())
def test_no_query_string_raises(store, query):
    conn, _ = store
    result = search(conn, query, kinds=("observation", "summary", "prompt"))
    assert result["total"] >= len(result["items"])


@given(st.text(alphabet=st.sampled_from('ab"*() -:^+NOTRANDOR\\\'\x00é'), max_size=30))
def test_fts_syntax_characters_are_always_escaped(store, query):
    conn, _ = store
    expression = fts.match_expression(query)
    if expression:
        conn.execute("SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH ?", (expression,)).fetchone()


def test_stopwords_dropped_and_punctuation_trimmed():
    assert fts.terms("how do I fix the cache?", drop_stopwords=True) == ['"fix"', '"cache"']
    assert len(fts.terms("how do I fix the cache")) == 6
    assert fts.match_expression("!!! ...") == ""


def test_timeline_around_an_observation_interleaves_kinds(store):
    conn, ids = store
    result = timeline(conn, str(ids["cache"]), before=2, after=2)
    assert [item["ref"] for item in result["items"]] == [
        f"#{ids['lease']}", f"P{ids['prompt']}", f"#{ids['cache']}", f"S{ids['summary']}", f"#{ids['parser']}",
    ]
    assert [item["anchor"] for item in result["items"]] == [False, False, True, False, False]
    assert result["project"] == APP  # the lib observation is out of scope


def test_timeline_anchors(store):
    conn, ids = store
    assert timeline(conn, f"S{ids['summary']}", 0, 1)["items"][-1]["ref"] == f"#{ids['parser']}"
    by_time = timeline(conn, stamp(25).replace("Z", "+00:00"), 1, 1, project=APP)
    assert [item["ref"] for item in by_time["items"]] == [f"#{ids['parser']}", f"#{ids['auth']}"]
    by_query = timeline(conn, "authentication tokens", 1, 0)
    assert by_query["anchor"]["id"] == ids["auth"]
    with pytest.raises(RecallError, match="no observation #9999"):
        timeline(conn, "9999")
    with pytest.raises(RecallError, match="nothing matches"):
        timeline(conn, "zzzqqq")
    with pytest.raises(RecallError, match="before and after"):
        timeline(conn, "1", before=-1)
