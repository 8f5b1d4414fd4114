"""Issue 26, item 3: a later fact supersedes an earlier one — the reply contract's `<supersedes>`, the
offline observer's conservative rule, the store's checks, and every surface that shows the chain."""

import asyncio
import json

import pytest
from click.testing import CliRunner

from claude_mem import settings as settings_module
from claude_mem.cli import cli
from claude_mem.index.query import SearchQuery
from claude_mem.index.search import search
from claude_mem.mcp_server import answers
from claude_mem.observer.contract import observation_xml
from claude_mem.observer.parser import parse
from claude_mem.observer.pipeline import Pipeline
from claude_mem.observer.prompts import CONTRACT, turn_request
from claude_mem.observer.providers.offline import OfflineProvider, near_identical, superseding
from claude_mem.recall import context as session_context
from claude_mem.recall import records
from claude_mem.store import context as store_context
from claude_mem.store import db, memory, results
from claude_mem.store.models import ParsedObservation, PendingEvent, Related
from fakes.observer_provider import FakeProvider
from observer_support import add_event, add_prompt, add_session, connect, drain
from recall_seed import add_observation
from viewer_support import browser, open_page, served  # noqa: F401  (fixtures)

PROJECT = "/home/dev/proj"
BLOCK = "<observation><type>decision</type><title>Use uv</title><narrative>Faster.</narrative>{extra}</observation>"


def make_settings(**overrides):
    values = settings_module.load()
    values.update({"retry_backoff_seconds": 0.0, "max_attempts": 3}, **overrides)
    return values


# -- the reply contract ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("extra", "expected"), [
    ("<supersedes>12</supersedes>", 12), ("<supersedes> #7 </supersedes>", 7), ("", None),
    ("<supersedes>twelve</supersedes>", None), ("<supersedes>-3</supersedes>", None), ("<supersedes>0</supersedes>", None),
    ("<supersedes>12, 13</supersedes>", None), ("<supersedes>" + "9" * 40 + "</supersedes>", None),
    ("<supersedes><script>x</script></supersedes>", None), ("<supersedes>5", 5), ("<supersedes/>", None),
])
def test_parser_reads_supersedes_and_ignores_junk(extra, expected):
    [obs] = parse(BLOCK.format(extra=extra)).observations
    assert obs.supersedes == expected and obs.title == "Use uv" and obs.narrative == "Faster."


def test_supersedes_is_not_content_and_round_trips_through_the_contract():
    obs = ParsedObservation(type="decision", title="Use uv", narrative="Faster.", supersedes=4)
    assert "supersedes" not in results.rows.OBSERVATION_CONTENT and "supersedes" not in results.rows.content_values(obs)
    assert results.content_hash(obs) == results.content_hash(ParsedObservation("decision", "Use uv", "Faster."))
    [back] = parse(observation_xml(obs)).observations
    assert back == obs
    assert "<supersedes>" in CONTRACT and "<supersedes>" not in observation_xml(ParsedObservation("change", "t", "n"))


def test_turn_request_lists_related_observations_with_their_ids():
    event = PendingEvent(id=1, session_id=1, kind="prompt", prompt_number=1, payload={"prompt": "hello"})
    request = turn_request([event], related=[Related(3, "decision", "Use pip", ("a.py",))])
    assert "#3 [decision] Use pip (a.py)" in request.text and request.related[0].id == 3
    assert "Recorded before" not in turn_request([event]).text


# -- the offline rule --------------------------------------------------------------------------------------


def test_offline_rule_is_conservative():
    new = ParsedObservation("change", "Edited a.py: “return 1” → “return 2”", "n", files_modified=("a.py",))
    same = Related(5, "change", "Edited a.py: “return 1” → “return 2”", ("a.py",))
    assert superseding([new], [same])[0].supersedes == 5
    assert superseding([new], [Related(5, "bugfix", same.title, ("a.py",))])[0].supersedes is None  # other type
    assert superseding([new], [Related(5, "change", same.title, ("b.py",))])[0].supersedes is None  # other file
    assert superseding([new], [Related(5, "change", "Edited a.py: “x” → “y”", ("a.py",))])[0].supersedes is None
    assert near_identical("Edited  A.py!", "edited a.py") and not near_identical("", "")


def edit_session(conn, content_id: str) -> None:
    sid = add_session(conn, content_id)
    add_prompt(conn, sid, "change the return value")
    add_event(conn, sid, "tool", {"tool_name": "Edit", "tool_input": {
        "file_path": f"{PROJECT}/a.py", "old_string": "return 1", "new_string": "return 2"},
        "tool_response": {"structuredPatch": [{"lines": ["-    return 1", "+    return 2"]}]}}, f"{content_id}-e")
    add_event(conn, sid, "summarize", {"last_assistant_message": "done", "prompt_number": 1}, f"{content_id}-s")


def test_offline_second_near_identical_observation_on_the_same_file_supersedes_the_first(data_dir):
    conn = connect(data_dir)
    edit_session(conn, "s1")
    asyncio.run(drain(Pipeline(conn, make_settings(), OfflineProvider())))
    edit_session(conn, "s2")
    asyncio.run(drain(Pipeline(conn, make_settings(), OfflineProvider())))
    rows = conn.execute("SELECT id, superseded_by FROM observations ORDER BY id").fetchall()
    assert len(rows) == 2 and rows[0][1] == rows[1][0] and rows[1][1] is None


def test_the_observer_is_shown_related_observations_and_its_supersedes_is_stored(data_dir):
    conn = connect(data_dir)
    old = add_observation(conn, PROJECT, "Build uses pip", kind="decision", files_modified=("setup.py",))
    other = add_observation(conn, "/elsewhere", "Build uses pip", kind="decision", files_modified=("setup.py",))
    sid = add_session(conn, "s1")
    add_event(conn, sid, "tool", {"tool_name": "Edit", "tool_input": {
        "file_path": f"{PROJECT}/setup.py", "old_string": "pip", "new_string": "uv"}}, "e1")
    reply = BLOCK.format(extra=f"<supersedes>{old}</supersedes>")
    fake = FakeProvider(script={"steps": [{"text": reply}], "default": "skip"})
    asyncio.run(drain(Pipeline(conn, make_settings(), fake)))
    prompt = "\n".join(text for _session, text in fake.calls)
    assert f"#{old} [decision] Build uses pip (setup.py)" in prompt and f"#{other} " not in prompt
    new = conn.execute("SELECT id FROM observations WHERE title = 'Use uv'").fetchone()[0]
    assert conn.execute("SELECT superseded_by FROM observations WHERE id = ?", (old,)).fetchone()[0] == new
    assert conn.execute("SELECT superseded_by FROM observations WHERE id = ?", (other,)).fetchone()[0] is None


# -- the store ---------------------------------------------------------------------------------------------


def test_store_sets_it_only_for_an_older_observation_of_the_same_project_and_never_a_cycle(data_dir):
    conn = connect(data_dir)
    a = add_observation(conn, PROJECT, "first")
    b = add_observation(conn, PROJECT, "second")
    c = add_observation(conn, PROJECT, "third")
    foreign = add_observation(conn, "/other", "foreign")
    for old in (foreign, 10**6, -1, 0, 2**63 + 5, c, b):  # another project, unknown, invalid, newer, itself
        assert not results.supersede(conn, b, old)
    assert memory.mark_superseded(conn, b, a) and memory.mark_superseded(conn, c, b)
    assert conn.execute("SELECT kind, op, row_id FROM changes ORDER BY seq DESC LIMIT 2").fetchall() == [
        ("observation", "update", b), ("observation", "update", a)]  # the viewer's card updates live
    assert not results.supersede(conn, a, c)  # older cannot supersede newer (and no cycle)
    conn.execute("UPDATE observations SET superseded_by = NULL WHERE id = ?", (b,))
    assert conn.execute("SELECT superseded_by FROM observations ORDER BY id").fetchall()[:3] == [(b,), (None,), (None,)]
    conn.execute("DELETE FROM observations WHERE id = ?", (b,))  # ON DELETE SET NULL
    assert conn.execute("SELECT superseded_by FROM observations WHERE id = ?", (a,)).fetchone()[0] is None


def test_store_batch_ignores_an_invalid_supersedes(data_dir):
    conn = connect(data_dir)
    foreign = add_observation(conn, "/other", "foreign")
    sid = add_session(conn, "s1")
    for target in (foreign, 999_999):
        reply = BLOCK.format(extra=f"<supersedes>{target}</supersedes>").replace("Use uv", f"Use uv {target}")
        fake = FakeProvider(script={"steps": [{"text": reply}], "default": "skip"})
        add_event(conn, sid, "prompt", {"prompt": f"y {target}"}, f"q{target}")
        asyncio.run(drain(Pipeline(conn, make_settings(), fake)))
    assert conn.execute("SELECT COUNT(*) FROM observations WHERE superseded_by IS NOT NULL").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] >= 2


def test_related_observations_by_file_then_words(data_dir):
    conn = connect(data_dir)
    by_file = add_observation(conn, PROJECT, "Parser tolerates tags", files_read=("src/p.py",))
    by_word = add_observation(conn, PROJECT, "Quokka handling explained")
    gone = add_observation(conn, PROJECT, "Old parser fact", files_modified=("src/p.py",))
    newer = add_observation(conn, PROJECT, "New parser fact", files_modified=("src/p.py",))
    results.supersede(conn, newer, gone)
    add_observation(conn, "/other", "Quokka elsewhere", files_read=("src/p.py",))
    found = results.related_observations(conn, PROJECT, ["src/p.py"], '"quokka"')
    assert [r.id for r in found] == [newer, by_file, by_word]
    assert results.related_observations(conn, PROJECT, [], 'AND "(') == []  # an FTS5 syntax error is no answer


# -- effects -----------------------------------------------------------------------------------------------


@pytest.fixture
def chain(data_dir):
    conn = db.connect(db.db_path(str(data_dir)))
    old = add_observation(conn, PROJECT, "Deploys use the staging bucket zebra", created_at="2026-01-01T00:00:00.000Z")
    new = add_observation(conn, PROJECT, "Deploys use the release bucket", narrative="Moved off zebra staging.",
                          created_at="2026-01-02T00:00:00.000Z")
    assert memory.mark_superseded(conn, new, old)
    yield conn, old, new
    conn.close()


def test_index_and_prompt_memory_drop_the_superseded_one(chain):
    conn, old, new = chain
    assert [row[0] for row in store_context.index_rows(conn, PROJECT, None, 50)] == [new]
    assert [row[0] for row in store_context.prompt_matches(conn, PROJECT, '"zebra"', 10)] == [new]
    text = session_context.for_session(conn, PROJECT, "startup", None, settings_module.load(), "")["text"]
    assert f"#{new}" in text and f"#{old} " not in text


def test_search_ranks_the_superseded_one_below_its_successor(chain):
    conn, old, new = chain
    found = search(conn, SearchQuery.build("zebra staging bucket", mode="keyword", project=PROJECT))
    ids = [hit["id"] for hit in found.items]
    assert ids == [new, old] and found.items[1]["superseded_by"] == new


def test_show_json_mcp_say_superseded_by(chain, monkeypatch):
    conn, old, new = chain
    monkeypatch.setenv("COLUMNS", "160")
    runner = CliRunner()
    shown = runner.invoke(cli, ["show", str(old)])
    assert shown.exit_code == 0 and f"superseded by #{new}" in shown.output
    assert f"supersedes #{old}" in runner.invoke(cli, ["show", str(new)]).output
    [record] = json.loads(runner.invoke(cli, ["show", str(old), "--json"]).output)
    assert record["superseded_by"] == new and record["supersedes"] == []
    [later] = records.get_many(conn, [str(new)])
    assert later["supersedes"] == [old] and later["superseded_by"] is None
    listed = json.loads(runner.invoke(cli, ["search", "zebra", "--json"]).output)["items"]
    assert [(i["id"], i["superseded_by"]) for i in listed] == [(new, None), (old, new)]
    assert f"superseded by #{new}" in runner.invoke(cli, ["search", "zebra"]).output
    text = answers.observations_text(conn, [old])
    assert f"superseded by #{new}" in text


def test_remember_supersedes_by_hand(data_dir, monkeypatch):
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", PROJECT)
    runner = CliRunner()
    first = json.loads(runner.invoke(cli, ["remember", "Deploys need the VPN.", "--json"]).output)
    out = runner.invoke(cli, ["remember", "Deploys no longer need the VPN.", "--supersedes", str(first["id"])])
    assert out.exit_code == 0 and f"(supersedes #{first['id']})" in out.output
    [record] = json.loads(runner.invoke(cli, ["show", str(first["id"]), "--json"]).output)
    assert record["superseded_by"] == first["id"] + 1
    for text, bad in (("Another note", "999999"), ("Deploys no longer need the VPN.", str(first["id"] + 1))):
        wrong = runner.invoke(cli, ["remember", text, "--supersedes", bad])  # unknown; the same note itself
        assert wrong.exit_code == 1 and "cannot supersede" in wrong.output and "Traceback" not in wrong.output
    assert runner.invoke(cli, ["remember", "x", "--supersedes", "abc"]).exit_code == 2


def test_http_json_says_superseded_by(chain, data_dir):
    from starlette.testclient import TestClient

    from claude_mem.worker.app import create_app
    from test_worker_app import BASE, make_ctx

    _conn, old, new = chain
    with TestClient(create_app(make_ctx(data_dir, backup_interval_hours=0), services=[]), base_url=BASE) as client:
        assert client.get(f"/api/observations/{old}").json()["superseded_by"] == new
        assert client.get(f"/api/observations/{new}").json()["supersedes"] == [old]
        found = client.get("/api/search", params={"q": "zebra", "mode": "keyword"}).json()["items"]
        assert [(hit["id"], hit["superseded_by"]) for hit in found] == [(new, None), (old, new)]
        listed = client.get("/api/observations", params={"project": PROJECT}).json()["items"]
        assert {item["id"]: item["superseded_by"] for item in listed} == {old: new, new: None}


def test_viewer_card_shows_the_chain(chain, data_dir, served, open_page):
    _conn, old, new = chain
    watched = open_page(served.start().url)
    page = watched.page
    card = page.locator(f'#feed .card[data-key="observation:{old}"]')
    assert card.locator(".meta .superseded").text_content() == f"superseded by #{new}"
    card.locator(".card-head").click()
    card.locator(".chain").wait_for()
    assert card.locator(".chain").inner_text().strip() == f"Superseded by #{new}"
    card.locator(".chain-link").click()
    card.locator(".linked").wait_for()
    assert "Deploys use the release bucket" in card.locator(".linked").inner_text()
    successor = page.locator(f'#feed .card[data-key="observation:{new}"]')
    assert successor.locator(".meta .superseded").count() == 0
    successor.locator(".card-head").click()
    successor.locator(".chain").wait_for()
    assert successor.locator(".chain").inner_text().strip() == f"Supersedes #{old}"
    watched.assert_clean()


def test_search_by_date_keeps_date_order(chain):
    conn, old, new = chain
    oldest = search(conn, SearchQuery.build("zebra", mode="keyword", project=PROJECT, order="oldest"))
    assert [hit["id"] for hit in oldest.items] == [old, new]


def test_a_superseded_chain_settles_below_each_successor():
    from claude_mem.index.base import SearchResult
    from claude_mem.index.search import after_successors

    def hit(row_id, after=None, kind="observation"):
        return {"kind": kind, "id": row_id, "superseded_by": after}

    page = SearchResult(items=[hit(1, 2), hit(2, 3), hit(9, kind="summary"), hit(3), hit(4, 99)], total=5)
    assert [h["id"] for h in after_successors(page).items] == [9, 3, 2, 1, 4]
    assert after_successors(page, "newest") is page
