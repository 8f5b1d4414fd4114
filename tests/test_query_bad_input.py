"""Bad input to search (issue 29, "Bad input"): queries of stop-words only, dates only, 10k words, FTS5
syntax, lone surrogates, and an author filter naming no author — in every search mode, in process
(`index.search.search`) and through `claude-mem search --json` — get a valid result (empty where
nothing can match) or a one-line error, never a traceback.

Ranking changes under these tests: they assert the result's shape and emptiness, never an order.
"""

import json
import os
import subprocess
import sys

import pytest

from claude_mem.domain import RecallError
from claude_mem.index import embedder, semantic
from claude_mem.index.base import SearchResult
from claude_mem.index.query import KINDS, MODES, SearchQuery
from claude_mem.index.search import available_modes, search
from claude_mem.store import db
from conftest import require
from recall_seed import add_observation, add_prompt, add_session, add_summary

PROJECT = "/home/dev/shop"
NOTES = [
    ("Cache the parsed config between requests", "Parsing YAML on every request cost 12 ms."),
    ("Fixed login failing after the JWT expired", "Users were logged out mid-session: the token refresh ran late."),
    ("Added a retry with backoff to the S3 upload", "Large uploads failed on flaky networks; three retries now."),
    ("Pinned numpy below 2.0 for the data pipeline", "A dependency broke with the new ABI."),
    ("Profiled the search endpoint: snippet() dominates", "Ranking takes 1 ms, snippets 2 ms per query."),
]
FOUND = "cache"  # a word one memory holds: the control that shows the store answers at all

TEN_THOUSAND = " ".join(f"zq{number}" for number in range(10_000))
# Text with no word in it: nothing can match, by words or by meaning.
WORDLESS = ["*", "^", ":", '"', '""', "()", "(", ")", "-", "^*:", "\ud800", "\udfff\ud800", "\x00\x1b"]
# Words no memory holds (keyword search finds nothing; meaning may still come close).
ABSENT = ["May 2023", "yesterday", "in March 2023", "2023-07-07", "last week", TEN_THOUSAND,
          " ".join(["lorem"] * 10_000), "NEAR(zebra quokka)", "zebra AND OR NOT quokka", "{title}: zebra",
          '"unbalanced zebra', 'zebra "quokka', "-zebra", "zebra*", "^zebra", "title:zebra", "(zebra OR quokka"]
# FTS5 syntax around words that do exist, and stop-words: a result of any size, in a valid shape.
ANY = ["the and of", "how do I", "what is it", "NEAR(cache config)", 'NEAR("cache" "config", 2)', "AND OR NOT",
       "cache AND", "NOT cache", "{title}: cache", "title: cache", "(cache)", 'cache "', '"cache', "cache*", "*cache",
       "-cache", "^cache", "cache \udfff", "col:cache", FOUND]


def fill(conn: db.Store) -> None:
    session = add_session(conn, "sess-bad-input", PROJECT)
    for title, narrative in NOTES:
        add_observation(conn, PROJECT, title, narrative=narrative, session_id=session)
    add_summary(conn, session, PROJECT, request="Speed up the config cache", learned="YAML parsing was the cost")
    add_prompt(conn, session, 1, "why is the config cache slow?")
    conn.commit()
    if embedder.unavailable() is None:
        while semantic.embed_missing(conn, 16):
            pass


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    conn = db.connect(str(tmp_path_factory.mktemp("bad-input") / "claude-mem.db"))
    fill(conn)
    yield conn
    conn.close()


def runnable(mode: str) -> None:
    require(mode in available_modes(), f"search mode {mode} needs the embedding model: {embedder.unavailable()}")


def valid(result: SearchResult, query: SearchQuery) -> SearchResult:
    """A well-formed page: a list of hits with a kind and an id, a total that counts them, JSON-ready."""
    assert isinstance(result, SearchResult)
    assert isinstance(result.items, list) and isinstance(result.total, int)
    assert 0 <= len(result.items) <= query.limit and result.total >= len(result.items)
    assert all(hit["kind"] in KINDS and isinstance(hit["id"], int) for hit in result.items)
    assert result.mode in MODES
    json.dumps(result.as_dict())
    return result


def ask(conn: db.Store, text: str, mode: str, **filters: str) -> SearchResult:
    query = SearchQuery.build(text, mode=mode, **filters)  # type: ignore[arg-type]
    return valid(search(conn, query), query)


@pytest.mark.parametrize("mode", MODES)
def test_the_store_answers_in_every_mode(store, mode):
    """The control: a word a memory holds is found, so the empty results below mean something."""
    runnable(mode)
    assert ask(store, FOUND, mode).total >= 1


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("text", WORDLESS)
def test_text_without_words_finds_nothing(store, mode, text):
    runnable(mode)
    assert ask(store, text, mode).items == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("text", ABSENT, ids=lambda text: text[:30])
def test_words_no_memory_holds(store, mode, text):
    runnable(mode)
    found = ask(store, text, mode)
    if mode == "keyword":
        assert found.items == [] and found.total == 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("text", ANY)
def test_fts_syntax_and_stop_words_are_plain_words(store, mode, text):
    runnable(mode)
    ask(store, text, mode)


@pytest.mark.parametrize("text", [*WORDLESS, *ABSENT[:6], *ANY])
def test_every_kind_of_record_in_keyword_search(store, text):
    """Summaries and prompts go through their own FTS tables: the same input, the same calm answer."""
    query = SearchQuery.build(text, mode="keyword", kinds=KINDS, snippets=True)
    valid(search(store, query), query)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("text", [FOUND, "the and of", "May 2023", "*", TEN_THOUSAND])
def test_an_author_that_does_not_exist_finds_nothing(store, mode, text):
    runnable(mode)
    assert ask(store, text, mode, author="nobody-here").items == []


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_an_empty_query_is_no_traceback(store, text):
    """Surfaces refuse an empty query with a message (below); the index answers it with nothing."""
    for mode in available_modes():
        assert ask(store, text, mode).items == []


# -- the CLI --------------------------------------------------------------------------------------------

@pytest.fixture
def data(data_dir, tmp_path, monkeypatch):
    """This test's data dir, holding the notes (and their vectors where the model runs)."""
    monkeypatch.chdir(tmp_path)
    conn = db.connect(db.db_path(str(data_dir)))
    try:
        fill(conn)
    finally:
        conn.close()
    return data_dir


def cli_search(text: str | bytes | None, *options: str) -> subprocess.CompletedProcess[str]:
    """`claude-mem search OPTIONS -- TEXT` (after `--`, a query such as `-cache` is not read as an option)."""
    query = () if text is None else ("--", text)
    return subprocess.run([sys.executable, "-m", "claude_mem", "search", *options, *query], capture_output=True,
                          text=True, errors="replace", timeout=120, stdin=subprocess.DEVNULL, cwd=os.getcwd())


def answered(done: subprocess.CompletedProcess[str]) -> dict:
    """A search that ran: exit 0, the JSON page on stdout, and no traceback anywhere."""
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    assert done.returncode == 0, done.stderr
    page = json.loads(done.stdout)
    assert isinstance(page["items"], list) and page["total"] >= len(page["items"])
    return page


def refused(done: subprocess.CompletedProcess[str]) -> str:
    """A clear refusal: a non-zero exit and one line that says what was wrong."""
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    assert done.returncode in (1, 2) and done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: ")
    return last


def an_argument(text: str) -> bool:
    """Whether `text` can be a command-line argument as it is (no NUL; lone surrogates go as bytes, below)."""
    return "\x00" not in text and not any("\ud800" <= char <= "\udfff" for char in text)


# Keyword search runs for every input; a search by meaning (0.5 s a process: the model loads) for one
# of each family.
CLI_ALL = [text for text in (*WORDLESS, *ABSENT, *ANY) if an_argument(text)]
CLI_BY_MEANING = ["the and of", "May 2023", "yesterday", TEN_THOUSAND, "NEAR(a b)", '"', "*", "{title}: x", FOUND]


@pytest.mark.parametrize("text", CLI_ALL, ids=lambda text: text[:30])
def test_cli_keyword(data, text):
    page = answered(cli_search(text, "--json", "--mode", "keyword"))
    if text in WORDLESS or text in ABSENT:
        assert page["items"] == []
    if text == FOUND:
        assert page["total"] >= 1


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
@pytest.mark.parametrize("text", CLI_BY_MEANING, ids=lambda text: text[:30])
def test_cli_by_meaning(data, mode, text):
    runnable(mode)
    page = answered(cli_search(text, "--json", "--mode", mode))
    assert page["mode"] == mode
    if text in ('"', "*"):
        assert page["items"] == []
    if text == FOUND:
        assert page["total"] >= 1


def test_cli_default_mode(data):
    runnable("hybrid")
    for text in ("May 2023", "NEAR(a b)", "*"):
        page = answered(cli_search(text, "--json"))
        assert page["mode"] == "hybrid"  # vectors exist: hybrid is the default
    assert page["items"] == []


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "semantic"])
def test_cli_an_author_that_does_not_exist(data, mode):
    runnable(mode)
    assert answered(cli_search(FOUND, "--json", "--mode", mode, "--author", "nobody-here"))["items"] == []


def test_cli_lone_surrogates_and_undecodable_bytes(data):
    """Bytes that are not UTF-8 reach Python as lone surrogates: searched as nothing, not a crash."""
    for raw in (b"\xed\xa0\x80", b"\xff\xfe cache", b"\x80"):
        page = answered(cli_search(raw, "--json", "--mode", "keyword"))
        if raw != b"\xff\xfe cache":
            assert page["items"] == []


@pytest.mark.parametrize("text", ["", "   "])
def test_cli_an_empty_query_is_one_line(data, text):
    assert "empty query" in refused(cli_search(text, "--json"))


def test_cli_a_query_that_looks_like_an_option(data):
    """`-x` is read as an option (click's usage error, exit 2); after `--` it is a query like any other."""
    assert "No such option" in refused(cli_search(None, "-x", "--json"))
    assert answered(cli_search("-x", "--json", "--mode", "keyword"))["items"] == []


def test_a_bad_value_is_a_recall_error_not_a_traceback(store):
    with pytest.raises(RecallError, match="since: not a date or time"):
        SearchQuery.build("cache", since="May 2023")
