"""The viewer's management API over real SQLite: a session as a story, forget with its preview and
its `forget` SSE event, and the `usage` figures of `/api/stats`."""

import time
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import httpx
import pytest
from starlette.testclient import TestClient

from claude_mem.recall import lists
from claude_mem.recall.sanitize import estimate_tokens
from claude_mem.store import backup, db
from claude_mem.worker.app import create_app
from observer_support import add_event
from recall_seed import add_observation, add_prompt, add_session, add_summary, stamp
from test_worker_api import ALPHA, BETA, assert_error, seed
from test_worker_api_stream import served, sse  # noqa: F401
from test_worker_app import BASE, make_ctx

STORY = "story-session-1"


def connect(data_dir):
    return db.connect(db.db_path(str(data_dir)))


def seed_story(data_dir) -> dict:
    """A session of two turns, stored out of order, with a private prompt and a turnless note."""
    conn = connect(data_dir)
    session = add_session(conn, STORY, BETA, stamp(20))
    ids = {
        "p1": add_prompt(conn, session, 1, "make the parser strict", stamp(19)),
        "p2": add_prompt(conn, session, 2, "now document it", stamp(10)),
        "private": add_prompt(conn, session, 3, "", stamp(9), private=True),
    }
    ids["s1"] = add_summary(conn, session, BETA, stamp(11), request="Strict parser", completed="Parser refuses junk")
    ids["o2"] = add_observation(conn, BETA, "README documents the strict parser", kind="change", session_id=session,
                                created_at=stamp(9.5), facts=("README updated",))
    ids["o1"] = add_observation(conn, BETA, "Parser refuses unknown keys", kind="feature", session_id=session,
                                created_at=stamp(18), concepts=("parser",))
    ids["loose"] = add_observation(conn, BETA, "A note without a turn number", session_id=session,
                                   created_at=stamp(12))
    for name, number in (("o1", 1), ("s1", 1), ("o2", 2)):
        table = "summaries" if name.startswith("s") else "observations"
        conn.execute(f"UPDATE {table} SET prompt_number = ? WHERE id = ?", (number, ids[name]))
    conn.close()
    return ids


@pytest.fixture
def seeded(data_dir):
    return {**seed(data_dir), **seed_story(data_dir)}


@pytest.fixture
def client(data_dir, seeded):
    ctx = make_ctx(data_dir, backup_interval_hours=0)
    with TestClient(create_app(ctx, services=[]), base_url=BASE) as test_client:
        test_client.ctx = ctx
        yield test_client


def rows(data_dir, sql, *args):
    conn = db.connect_readonly(db.db_path(str(data_dir)))
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


# -- sessions -----------------------------------------------------------------------------------------

def test_session_list_items_name_their_project(client):
    items = client.get("/api/sessions", params={"limit": 50}).json()["items"]
    names = {item["project"]: item["name"] for item in items}
    assert names == {ALPHA: "alpha", BETA: "beta"}
    keys = {"id", "content_session_id", "project", "cwd", "title", "status", "observer_provider", "started_at",
            "ended_at", "last_activity_at", "prompts", "observations", "summaries", "failed_events", "name"}
    assert all(keys <= set(item) for item in items)


def test_session_page_tells_the_story_in_order(client, seeded):
    body = client.get(f"/api/sessions/{STORY}").json()
    session = body["session"]
    listed = next(item for item in client.get("/api/sessions").json()["items"] if item["content_session_id"] == STORY)
    assert session == listed and session["name"] == "beta" and body["truncated"] is False
    order = [item["ref"] for item in body["items"]]
    # turn 1: prompt, observation, summary; the turnless note (made after P1, before P2) joins turn 1
    # by time; turn 2: prompt, observation. The private prompt is never shown.
    assert order == [f"P{seeded['p1']}", f"#{seeded['o1']}", f"#{seeded['loose']}", f"S{seeded['s1']}",
                     f"P{seeded['p2']}", f"#{seeded['o2']}"]
    by_kind = {item["kind"]: item for item in reversed(body["items"])}  # the first of each kind
    assert by_kind["prompt"]["text"] == "make the parser strict" and by_kind["prompt"]["prompt_number"] == 1
    observation = next(item for item in body["items"] if item["id"] == seeded["o1"] and item["kind"] == "observation")
    assert observation["concepts"] == ["parser"] and observation["type"] == "feature" and observation["narrative"]
    assert {"subtitle", "facts", "files_read", "files_modified", "created_at", "title"} <= set(observation)
    summary = by_kind["summary"]
    assert summary["request"] == "Strict parser" and {"investigated", "learned", "completed", "next_steps"} <= set(summary)


def test_session_page_caps_its_items(data_dir, seeded):
    conn = connect(data_dir)
    try:
        story = lists.session_story(conn, STORY, limit=2)
    finally:
        conn.close()
    assert story["truncated"] is True and len(story["items"]) == 2


def test_session_page_errors(client):
    assert_error(client.get("/api/sessions/no-such-session"), 404, "not_found")
    assert_error(client.get("/api/sessions/" + "x" * 1001), 400)
    assert_error(client.get(f"/api/sessions/{STORY}", params={"limit": 5}), 400)


# -- forget: preview ----------------------------------------------------------------------------------

def test_forget_preview_counts_without_deleting(client, seeded, data_dir):
    one = client.get("/api/forget/preview", params={"observation": seeded["tagged"]}).json()
    assert one == {"describe": f"1 observation(s) (#{seeded['tagged']})", "counts": {"observations": 1, "events": 0}}
    session = client.get("/api/forget/preview", params={"session": STORY}).json()
    assert session["describe"] == f"session {STORY}"
    assert session["counts"] == {"prompts": 3, "pending_events": 0, "summaries": 1, "observations": 3, "sessions": 1}
    project = client.get("/api/forget/preview", params={"project": "beta"}).json()
    assert project["describe"] == f"project {BETA}" and project["counts"]["sessions"] == 2
    assert project["counts"]["observations"] == 5
    assert client.get("/api/forget/preview", params={"project": BETA}).json() == project
    assert rows(data_dir, "SELECT COUNT(*) FROM observations")[0][0] == 35  # nothing deleted


@pytest.mark.parametrize(("params", "status"), [
    ({}, 400),
    ({"observation": "1", "session": STORY}, 400),
    ({"observation": "abc"}, 400),
    ({"observation": "-3"}, 400),
    ({"observation": "999999"}, 404),
    ({"session": "nope"}, 404),
    ({"project": "gamma"}, 404),
    ({"project": "/home/dev/never-seen"}, 404),
    ({"project": "x" * 5000}, 400),
    ({"obs": "1"}, 400),
])
def test_forget_preview_refuses_bad_targets(client, params, status):
    assert_error(client.get("/api/forget/preview", params=params), status)


# -- forget ---------------------------------------------------------------------------------------------

def test_forget_observation_reports_what_was_removed(client, seeded, data_dir):
    response = client.delete(f"/api/observations/{seeded['plain']}")
    assert response.status_code == 200
    body = response.json()
    assert body["removed"] == {"observations": [seeded["plain"]], "summaries": [], "prompts": [], "sessions": [],
                               "project": None}
    assert body["counts"]["observations"] == 1 and set(body) == {"forgot", "counts", "removed", "backups"}
    assert not rows(data_dir, "SELECT 1 FROM observations WHERE id = ?", seeded["plain"])
    assert_error(client.delete(f"/api/observations/{seeded['plain']}"), 404)
    assert_error(client.delete("/api/observations/nope"), 400)


def test_forget_observation_takes_the_summary_of_its_turn_and_the_preview_says_so(client, seeded, data_dir):
    """Issue 26: the turn's summary restates the observation; the preview (the viewer's dialog) names it."""
    preview = client.get("/api/forget/preview", params={"observation": seeded["o1"]}).json()
    assert preview == {"describe": f"1 observation(s) (#{seeded['o1']}) and the summary of its turn (S{seeded['s1']})",
                       "counts": {"observations": 1, "events": 0, "summaries": 1}}
    body = client.delete(f"/api/observations/{seeded['o1']}").json()
    assert body["removed"]["summaries"] == [seeded["s1"]] and body["counts"]["summaries"] == 1
    assert not rows(data_dir, "SELECT 1 FROM summaries WHERE id = ?", seeded["s1"])
    loose = client.get("/api/forget/preview", params={"observation": seeded["loose"]}).json()
    assert loose["counts"] == {"observations": 1, "events": 0}  # no turn number: no summary goes


def test_forget_session_lists_its_rows_and_keeps_the_cli_guarantees(client, seeded, data_dir):
    snapshot = backup.snapshot(str(data_dir), keep=5)
    body = client.delete(f"/api/sessions/{STORY}").json()
    removed = body["removed"]
    assert removed["sessions"] == [STORY] and removed["project"] is None
    assert removed["observations"] == sorted([seeded["o1"], seeded["o2"], seeded["loose"]])
    assert removed["summaries"] == [seeded["s1"]]
    assert removed["prompts"] == sorted([seeded["p1"], seeded["p2"], seeded["private"]])
    assert body["backups"]["rewritten"] == [snapshot]
    for path in (db.db_path(str(data_dir)), snapshot):
        with open(path, "rb") as handle:
            assert b"make the parser strict" not in handle.read()  # bytes scrubbed, backups too
    assert_error(client.get(f"/api/sessions/{STORY}"), 404)


def test_forget_project_by_name_path_or_key(client, seeded, data_dir):
    assert_error(client.delete("/api/projects/gamma"), 404)
    assert client.get("/api/forget/preview", params={"project": "alpha"}).status_code == 200
    body = client.delete("/api/projects/" + quote(ALPHA, safe="")).json()
    assert body["removed"]["project"] == ALPHA and len(body["removed"]["observations"]) == 30
    assert body["removed"]["sessions"] == [f"sess-{ALPHA}-30"] and len(body["removed"]["summaries"]) == 1
    assert not rows(data_dir, "SELECT 1 FROM observations WHERE project = ?", ALPHA)
    conn = connect(data_dir)  # a manual note (no session) of beta goes with its project
    manual = add_observation(conn, BETA, "A manual note about beta")
    conn.close()
    body = client.delete("/api/projects/beta").json()
    assert manual in body["removed"]["observations"] and body["removed"]["project"] == BETA
    assert sorted(body["removed"]["sessions"]) == sorted(["beta-session-1", STORY])
    assert rows(data_dir, "SELECT COUNT(*) FROM sessions")[0][0] == 0
    assert_error(client.delete("/api/projects/beta"), 404)


def test_state_changing_routes_refuse_a_foreign_origin(client, seeded, data_dir):
    hostile = {"origin": "http://attacker.example"}
    for method, path in (("DELETE", f"/api/observations/{seeded['plain']}"), ("DELETE", f"/api/sessions/{STORY}"),
                         ("DELETE", "/api/projects/beta"), ("POST", "/api/worker/restart")):
        response = client.request(method, path, headers=hostile)
        assert response.status_code == 403 and response.json()["error"]["code"] == "forbidden_origin", path
    assert rows(data_dir, "SELECT COUNT(*) FROM observations")[0][0] == 35


def test_forget_reaches_every_open_stream(served, data_dir):  # noqa: F811
    ctx, base = served
    seeded = {**seed(data_dir), **seed_story(data_dir)}
    with httpx.stream("GET", base + "/stream?kinds=forget", timeout=httpx.Timeout(10.0)) as first, \
            httpx.stream("GET", base + "/stream", timeout=httpx.Timeout(10.0)) as second:
        events = [sse(first.iter_lines()), sse(second.iter_lines())]
        assert next(e for e in events[1] if e[0] != "comment")[0] == "health"
        deadline = time.monotonic() + 10
        while ctx.bus.subscriber_count < 2 and time.monotonic() < deadline:  # both subscribed before the forget
            time.sleep(0.05)
        response = httpx.delete(f"{base}/api/sessions/{STORY}", timeout=30)
        assert response.status_code == 200
        for stream in events:  # (rows seeded just before a client subscribed may reach it first)
            _, data = next(e for e in stream if e[0] == "forget")
            assert data == response.json()["removed"]
            assert data["sessions"] == [STORY] and seeded["o1"] in data["observations"]


# -- stats: usage ------------------------------------------------------------------------------------------

def day(days_ago: int) -> str:
    return (datetime.now(UTC) - timedelta(days=days_ago)).strftime("%Y-%m-%d")


def seed_usage(data_dir) -> dict:
    """Observer turns with token counts (one turn's counts sit on each row it made) and processed tool calls."""
    conn = connect(data_dir)
    session = conn.execute("SELECT id FROM sessions WHERE content_session_id = 'beta-session-1'").fetchone()[0]
    at = f"{day(2)}T10:00:00.000Z"
    turn = [add_observation(conn, BETA, f"Turn row {n}", kind="bugfix", session_id=session, created_at=at)
            for n in range(2)]
    add_summary(conn, session, BETA, at, request="turn summary")
    conn.execute(f"UPDATE observations SET input_tokens = 1000, output_tokens = 200 WHERE id IN ({turn[0]}, {turn[1]})")
    conn.execute("UPDATE summaries SET input_tokens = 1000, output_tokens = 200 WHERE created_at = ?", (at,))
    late = add_observation(conn, BETA, "Another turn", kind="decision", session_id=session,
                           created_at=f"{day(0)}T01:00:00.000Z")
    conn.execute("UPDATE observations SET input_tokens = 500, output_tokens = 100, fetch_count = 3 WHERE id = ?", (late,))
    old = add_observation(conn, BETA, "Long ago", kind="bugfix", session_id=session, created_at="2001-01-01T00:00:00.000Z")
    conn.execute("UPDATE observations SET input_tokens = 99999 WHERE id = ?", (old,))
    for n in range(4):
        event = add_event(conn, session, "tool" if n else "tool_failure", {"tool_name": "Bash"}, f"usage-{n}")
        conn.execute("UPDATE pending_events SET status = 'done', processed_at = ? WHERE id = ?", (at, event))
    conn.close()
    return {"turn": turn, "late": late}


def test_stats_keep_their_keys_and_add_usage(client, data_dir):
    seed_usage(data_dir)
    body = client.get("/api/stats").json()
    assert {"counts", "observations_by_type", "projects", "database_bytes", "stream", "uptime", "usage"} <= set(body)
    usage = body["usage"]
    assert usage["project"] is None and len(usage["days"]) == 30
    assert usage["days"][-1] == day(0) and usage["days"][0] == day(29) and usage["days"] == sorted(usage["days"])
    per_day = {(row["day"], row["type"]): row["count"] for row in usage["observations_per_day"]}
    stored = rows(data_dir, "SELECT COUNT(*) FROM observations WHERE type = 'bugfix' AND created_at LIKE ?", day(2) + "%")
    assert per_day[(day(2), "bugfix")] == stored[0][0] >= 2 and per_day[(day(0), "decision")] >= 1
    in_range = rows(data_dir, "SELECT COUNT(*) FROM observations WHERE created_at >= ?", day(29))[0][0]
    assert sum(per_day.values()) == in_range == body["counts"]["observations"] - 1  # all but the one of 2001
    tokens = {row["day"]: (row["input"], row["output"]) for row in usage["observer_tokens_per_day"]}
    assert list(tokens) == usage["days"]
    assert tokens[day(2)] == (1000, 200)  # one turn, counted once though three rows carry it
    assert tokens[day(0)] == (500, 100)
    assert usage["observer_input_tokens"] == 1500 and usage["observer_output_tokens"] == 300
    assert usage["tool_events"] == 4 and usage["tokens_per_event"] == 450.0
    assert usage["fetches"]["fetches"] == 3 and usage["fetches"]["observations"] == body["counts"]["observations"]
    index = usage["index"]
    assert index["projects"] == 2 and index["observations"] > 0
    assert index["injected_tokens"] > 0 and index["narrative_tokens"] > 0
    assert index["ratio"] == round(index["narrative_tokens"] / index["injected_tokens"], 3)


def test_stats_for_one_project_and_a_short_range(client, data_dir):
    seed_usage(data_dir)
    usage = client.get("/api/stats", params={"project": "beta", "days": 1}).json()["usage"]
    assert usage["project"] == BETA and usage["days"] == [day(0)]
    assert usage["observer_tokens_per_day"] == [{"day": day(0), "input": 500, "output": 100}]
    assert usage["tool_events"] == 0 and usage["tokens_per_event"] is None
    context = client.get("/api/context", params={"project": "beta"}).json()
    index = usage["index"]
    assert index["projects"] == 1 and index["injected_tokens"] == context["tokens"]
    assert index["observations"] == context["shown"]
    alpha = client.get("/api/stats", params={"project": ALPHA}).json()["usage"]
    assert alpha["fetches"] == {"observations": 30, "fetches": 0, "per_observation": 0.0}
    # what the index stands for: the full text of the 30 listed observations, far more than their index rows
    assert alpha["index"]["narrative_tokens"] > sum(estimate_tokens(t) for t in ("x" * 100,) * 30)


@pytest.mark.parametrize("params", [{"days": "0"}, {"days": "367"}, {"days": "ten"}, {"days": "9" * 40},
                                    {"project": "gamma"}, {"range": "7"}])
def test_stats_refuse_bad_parameters(client, params):
    assert_error(client.get("/api/stats", params=params), 400)


def test_stats_on_an_empty_store(data_dir):
    ctx = make_ctx(data_dir, backup_interval_hours=0)
    with TestClient(create_app(ctx, services=[]), base_url=BASE) as client:
        usage = client.get("/api/stats", params={"days": 366}).json()["usage"]
    assert len(usage["days"]) == 366 and usage["observations_per_day"] == []
    assert usage["index"] == {"projects": 0, "observations": 0, "injected_tokens": 0, "narrative_tokens": 0, "ratio": None}
    assert usage["fetches"]["per_observation"] is None and usage["tokens_per_event"] is None
