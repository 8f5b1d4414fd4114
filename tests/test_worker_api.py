"""The worker's HTTP API (DESIGN §7) in process: TestClient runs the lifespan over a seeded store."""

import json

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from claude_mem.store import db
from claude_mem.worker.app import create_app
from observer_support import add_event
from recall_seed import add_observation, add_prompt, add_session, add_summary, seed_project, stamp
from test_worker_app import BASE, OWN_ORIGIN, make_ctx

ALPHA, BETA = "/home/dev/alpha", "/home/dev/work/beta"
SECRET = "sk-ant-api03-verysecretvalue-0123456789"


def seed(data_dir) -> dict:
    conn = db.connect(db.db_path(str(data_dir)))
    alpha_ids = seed_project(conn, ALPHA, 30)
    conn.execute("UPDATE sessions SET last_activity_at = ? WHERE project = ?", (stamp(5), ALPHA))
    beta = add_session(conn, "beta-session-1", BETA, stamp(10))
    conn.execute("UPDATE sessions SET last_activity_at = ? WHERE id = ?", (stamp(0.1), beta))
    tagged = add_observation(conn, BETA, "Websocket reconnect loses the cursor", kind="bugfix", session_id=beta,
                             created_at=stamp(2), concepts=("gotcha",), files_modified=("src/net/socket.py",))
    plain = add_observation(conn, BETA, "Chose polling over websockets for the viewer", kind="decision",
                            session_id=beta, created_at=stamp(1))
    add_summary(conn, beta, BETA, stamp(0.5), request="Fix the reconnect", completed="Cursor kept on reconnect")
    add_prompt(conn, beta, 1, "why does the websocket drop the cursor", stamp(3))
    add_prompt(conn, beta, 2, "", stamp(2.5), private=True)
    failed = [add_event(conn, beta, "tool", {"tool_name": "Bash"}, f"ev-{n}") for n in range(3)]
    conn.execute(f"UPDATE pending_events SET status = 'failed', attempts = 3, last_error = 'boom'"
                 f" WHERE id IN ({failed[0]}, {failed[1]})")
    conn.close()
    return {"alpha": alpha_ids, "tagged": tagged, "plain": plain, "failed": failed[:2], "pending": failed[2]}


@pytest.fixture
def seeded(data_dir):
    return seed(data_dir)


@pytest.fixture
def client(data_dir, seeded, monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_ANTHROPIC_API_KEY", SECRET)
    ctx = make_ctx(data_dir, backup_interval_hours=0)
    with TestClient(create_app(ctx, services=[]), base_url=BASE) as test_client:
        yield test_client


def fetch_count(data_dir, obs_id):
    conn = db.connect_readonly(db.db_path(str(data_dir)))
    try:
        return conn.execute("SELECT fetch_count FROM observations WHERE id = ?", (obs_id,)).fetchone()[0]
    finally:
        conn.close()


def assert_error(response, status, code=None):
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"code", "message"} and error["message"]
    if code:
        assert error["code"] == code


# -- observations ------------------------------------------------------------------------------

def test_observations_list_pages_newest_first_with_full_rows(client, seeded, data_dir):
    body = client.get("/api/observations", params={"limit": 5}).json()
    assert body["total"] == 32 and body["limit"] == 5 and body["offset"] == 0 and len(body["items"]) == 5
    assert body["items"][0]["id"] == seeded["plain"]
    first = body["items"][0]
    assert first["kind"] == "observation" and first["ref"] == f"#{first['id']}"
    assert {"narrative", "facts", "concepts", "files_read", "files_modified", "fetch_count"} <= set(first)
    page2 = client.get("/api/observations", params={"limit": 5, "offset": 5}).json()["items"]
    assert not {i["id"] for i in page2} & {i["id"] for i in body["items"]}
    oldest = client.get("/api/observations", params={"order": "oldest", "limit": 1}).json()["items"][0]
    assert oldest["id"] == seeded["alpha"][0]
    assert fetch_count(data_dir, first["id"]) == 0  # listing is not fetching


@pytest.mark.parametrize(("query", "expected"), [
    ({"project": "beta"}, 2),
    ({"project": BETA}, 2),
    ({"project": "alpha", "type": "bugfix"}, None),
    ({"type": "bugfix,decision", "project": "beta"}, 2),
    ({"file": "net/socket"}, 1),
    ({"concept": "GOTCHA"}, 1),
    ({"since": "90m"}, 1),
    ({"until": "2000-01-01"}, 0),
    ({"project": "/home/dev/never-seen"}, 0),
])
def test_observations_list_filters(client, query, expected):
    body = client.get("/api/observations", params=query).json()
    if expected is None:
        assert body["total"] > 0 and all(item["type"] == "bugfix" for item in body["items"])
    else:
        assert body["total"] == expected


def test_one_observation_counts_a_fetch(client, seeded, data_dir):
    obs_id = seeded["tagged"]
    body = client.get(f"/api/observations/{obs_id}").json()
    assert body["id"] == obs_id and body["concepts"] == ["gotcha"] and body["kind"] == "observation"
    client.get(f"/api/observations/{obs_id}")
    assert fetch_count(data_dir, obs_id) == 2


def test_batch_returns_found_and_missing(client, seeded, data_dir):
    ids = [seeded["tagged"], "S1", 99999, seeded["tagged"]]
    body = client.post("/api/observations/batch", json={"ids": ids}).json()
    assert [item["kind"] for item in body["items"]] == ["observation", "summary", "observation"]
    assert body["missing"] == ["#99999"]
    assert fetch_count(data_dir, seeded["tagged"]) == 1


def test_forget_an_observation(client, seeded):
    obs_id = seeded["tagged"]
    report = client.delete(f"/api/observations/{obs_id}").json()
    assert report["counts"]["observations"] == 1
    assert_error(client.get(f"/api/observations/{obs_id}"), 404, "not_found")
    assert client.get("/api/search", params={"q": "cursor"}).json()["total"] == 0
    assert_error(client.delete(f"/api/observations/{obs_id}"), 404)


# -- summaries, prompts, sessions -------------------------------------------------------------

def test_summaries_prompts_and_sessions_lists(client):
    summaries = client.get("/api/summaries").json()
    assert summaries["total"] == 2 and summaries["items"][0]["request"] == "Fix the reconnect"
    assert summaries["items"][0]["content_session_id"] == "beta-session-1"
    assert client.get("/api/summaries", params={"project": "alpha"}).json()["total"] == 1
    prompts = client.get("/api/prompts").json()
    assert prompts["total"] == 1  # the private prompt is never listed
    assert prompts["items"][0]["text"].startswith("why does the websocket")
    assert client.get("/api/prompts", params={"session": "nope"}).json()["total"] == 0
    sessions = client.get("/api/sessions").json()
    assert sessions["total"] == 2 and sessions["items"][0]["content_session_id"] == "beta-session-1"
    beta = sessions["items"][0]
    assert (beta["observations"], beta["summaries"], beta["prompts"], beta["failed_events"]) == (2, 1, 1, 2)
    assert client.get("/api/sessions", params={"status": "completed"}).json()["total"] == 0
    assert client.get("/api/sessions", params={"limit": 1, "offset": 1}).json()["items"][0]["project"] == ALPHA


def test_forget_a_session_by_its_claude_code_id(client):
    report = client.delete("/api/sessions/beta-session-1").json()
    assert report["forgot"] == "session beta-session-1" and report["counts"]["observations"] == 2
    assert client.get("/api/sessions").json()["total"] == 1
    assert client.get("/api/observations", params={"project": BETA}).json()["total"] == 0
    assert_error(client.delete("/api/sessions/beta-session-1"), 404, "not_found")


# -- search, timeline, projects, stats, context ---------------------------------------------------

def test_search_ranks_filters_and_pages(client, seeded):
    body = client.get("/api/search", params={"q": "websocket cursor"}).json()
    assert body["items"][0]["id"] == seeded["tagged"] and body["total"] >= 1 and body["match"]
    kinds = client.get("/api/search", params={"q": "reconnect", "kind": "observation,summary,prompt"}).json()
    assert {item["kind"] for item in kinds["items"]} == {"observation", "summary"}
    newest = client.get("/api/search", params={"q": "hook", "order": "newest", "limit": 2, "offset": 1}).json()
    assert len(newest["items"]) == 2 and newest["offset"] == 1
    assert client.get("/api/search", params={"q": "spool", "project": "beta"}).json()["total"] == 0


def test_timeline_by_anchor_and_by_query(client, seeded):
    middle = seeded["alpha"][10]
    body = client.get("/api/timeline", params={"anchor": str(middle), "before": 2, "after": 2}).json()
    assert [item["anchor"] for item in body["items"]] == [False, False, True, False, False]
    assert body["project"] == ALPHA
    by_query = client.get("/api/timeline", params={"q": "websocket cursor", "before": 0, "after": 0}).json()
    assert by_query["anchor"]["id"] == seeded["tagged"]
    assert client.get("/api/timeline", params={"anchor": "S1", "before": 1, "after": 0}).json()["anchor"]["kind"] == "summary"
    assert_error(client.get("/api/timeline", params={"anchor": "S999"}), 404, "not_found")
    assert_error(client.get("/api/timeline", params={"q": "zzzqqqxx"}), 404, "not_found")


def test_projects_catalog_and_stats(client):
    projects = client.get("/api/projects").json()["items"]
    assert [(p["project"], p["name"]) for p in projects] == [(BETA, "beta"), (ALPHA, "alpha")]
    assert (projects[0]["observations"], projects[0]["summaries"], projects[0]["prompts"]) == (2, 1, 1)
    stats = client.get("/api/stats").json()
    assert stats["counts"]["observations"] == 32 and stats["counts"]["events"]["failed"] == 2
    assert stats["projects"] == 2 and sum(stats["observations_by_type"].values()) == 32
    assert stats["database_bytes"] > 0 and stats["stream"] == {"subscribers": 0, "published": 0}


def test_context_preview_is_what_a_session_would_get(client):
    body = client.get("/api/context", params={"project": "beta"}).json()
    assert body["project"] == BETA and not body["empty"] and body["shown"] == 2
    assert "Websocket reconnect loses the cursor" in body["text"]
    assert body["hook_output"]["hookSpecificOutput"]["additionalContext"] == body["text"]
    fresh = client.get("/api/context", params={"project": "/home/dev/brand-new"}).json()
    assert fresh["empty"] and "no memory stored yet" in fresh["text"]
    resumed = client.get("/api/context", params={"project": "beta", "source": "resume", "session": "x"}).json()
    assert resumed["shown"] == 2  # a session never injected gets everything


# -- queue -------------------------------------------------------------------------------------

def test_queue_lists_and_retries(client, seeded):
    body = client.get("/api/queue").json()
    assert body["counts"]["failed"] == 2 and body["counts"]["pending"] == 1
    assert [item["status"] for item in body["items"]] == ["failed", "failed", "pending"]
    assert body["items"][0]["last_error"] == "boom" and body["items"][0]["tool"] == "Bash"
    assert client.get("/api/queue", params={"status": "failed", "limit": 1}).json()["items"][0]["id"] == seeded["failed"][0]
    retried = client.post("/api/queue/retry", json={"ids": [seeded["failed"][0]]}).json()
    assert retried == {"requeued": 1, "counts": {"pending": 2, "claimed": 0, "done": 0, "failed": 1}}
    assert client.post("/api/queue/retry", json={"all": True}).json()["requeued"] == 1
    assert client.get("/api/queue", params={"status": "failed"}).json()["items"] == []


# -- malformed input, every route ----------------------------------------------------------------

BAD_QUERIES = [
    ("/api/observations", {"limit": "x"}), ("/api/observations", {"limit": "0"}),
    ("/api/observations", {"limit": "501"}), ("/api/observations", {"offset": "-1"}),
    ("/api/observations", {"type": "bogus"}), ("/api/observations", {"since": "yesterday-ish"}),
    ("/api/observations", {"until": "2026-13-45"}), ("/api/observations", {"order": "relevance"}),
    ("/api/observations", {"project": "no-such-project"}), ("/api/observations", {"lmit": "5"}),
    ("/api/observations/abc", {}), ("/api/observations/-1", {}), ("/api/observations/1", {"x": "1"}),
    ("/api/summaries", {"limit": "1e3"}), ("/api/summaries", {"since": "soon"}), ("/api/summaries", {"type": "bugfix"}),
    ("/api/prompts", {"offset": "x"}), ("/api/prompts", {"project": "nope"}),
    ("/api/sessions", {"status": "zombie"}), ("/api/sessions", {"limit": "99999999999999999999"}),
    ("/api/search", {}), ("/api/search", {"q": "   "}), ("/api/search", {"q": "a" * 1001}),
    ("/api/search", {"q": "x", "order": "random"}), ("/api/search", {"q": "x", "type": "summary"}),
    ("/api/search", {"q": "x", "kind": "note"}), ("/api/search", {"q": "x", "since": "2026-02-30"}),
    ("/api/search", {"q": "x", "limit": "-3"}), ("/api/search", {"query": "x"}),
    ("/api/timeline", {}), ("/api/timeline", {"anchor": "1", "q": "x"}), ("/api/timeline", {"anchor": "hello"}),
    ("/api/timeline", {"anchor": "1", "before": "201"}), ("/api/timeline", {"anchor": "1", "after": "x"}),
    ("/api/timeline", {"anchor": "2026-99-99"}),
    ("/api/projects", {"limit": "5"}), ("/api/stats", {"verbose": "1"}),
    ("/api/context", {}), ("/api/context", {"project": "beta", "source": "reboot"}),
    ("/api/context", {"project": "beta", "session": "s1"}), ("/api/context", {"project": "nowhere"}),
    ("/api/queue", {"status": "stuck"}), ("/api/queue", {"limit": "1001"}),
    ("/stream", {"kinds": "observation,gossip"}), ("/stream", {"kinds": ","}), ("/stream", {"since": "1"}),
]


@pytest.mark.parametrize(("path", "query"), BAD_QUERIES)
def test_bad_query_parameters_are_400(client, path, query):
    assert_error(client.get(path, params=query), 400, "bad_request")


@pytest.mark.parametrize(("path", "status"), [
    ("/api/observations/424242", 404), ("/favicon.ico", 404), ("/api/nothing", 404),
])
def test_unknown_things_are_404(client, path, status):
    assert_error(client.get(path), status, "not_found")


BAD_BODIES = [
    ("/api/observations/batch", b'{"ids": [1]}', "text/plain", 415),
    ("/api/observations/batch", b"{not json", "application/json", 400),
    ("/api/observations/batch", b"[1, 2]", "application/json", 400),
    ("/api/observations/batch", b"{}", "application/json", 400),
    ("/api/observations/batch", b'{"ids": []}', "application/json", 400),
    ("/api/observations/batch", b'{"ids": "1,2"}', "application/json", 400),
    ("/api/observations/batch", b'{"ids": [1], "more": 1}', "application/json", 400),
    ("/api/observations/batch", b'{"ids": [true]}', "application/json", 400),
    ("/api/observations/batch", b'{"ids": [0]}', "application/json", 400),
    ("/api/observations/batch", b'{"ids": [1.5]}', "application/json", 400),
    ("/api/observations/batch", b'{"ids": ["x!"]}', "application/json", 400),
    ("/api/observations/batch", json.dumps({"ids": list(range(1, 502))}).encode(), "application/json", 400),
    ("/api/observations/batch", b'{"ids": [' + b"1," * 40_000 + b"1]}", "application/json", 413),
    ("/api/queue/retry", b'{"all": true}', "application/x-www-form-urlencoded", 415),
    ("/api/queue/retry", b"", "application/json", 400),
    ("/api/queue/retry", b'{"all": false}', "application/json", 400),
    ("/api/queue/retry", b'{"all": "yes"}', "application/json", 400),
    ("/api/queue/retry", b'{"ids": [1], "all": true}', "application/json", 400),
    ("/api/queue/retry", b'{"ids": ["1"]}', "application/json", 400),
    ("/api/queue/retry", b'{"ids": [-4]}', "application/json", 400),
    ("/api/queue/retry", b'{"event_ids": [1]}', "application/json", 400),
    ("/api/queue/retry", b'"all"', "application/json", 400),
    ("/api/queue/retry", b'{"x": "' + b"a" * 70_000 + b'"}', "application/json", 413),
]


@pytest.mark.parametrize(("path", "body", "content_type", "status"), BAD_BODIES)
def test_malformed_bodies_are_refused_and_change_nothing(client, data_dir, path, body, content_type, status):
    assert_error(client.post(path, content=body, headers={"content-type": content_type}), status)
    assert client.get("/api/queue", params={"status": "failed"}).json()["counts"]["failed"] == 2


@pytest.mark.parametrize(("method", "path"), [
    ("DELETE", "/api/observations/x1"), ("DELETE", "/api/observations/99999"), ("DELETE", "/api/sessions/nope"),
    ("PUT", "/api/observations/1"), ("GET", "/api/queue/retry"), ("POST", "/api/search"), ("DELETE", "/stream"),
])
def test_wrong_targets_and_methods_are_json_errors(client, method, path):
    response = client.request(method, path)
    assert response.status_code in (400, 404, 405)
    assert set(response.json()["error"]) == {"code", "message"}


@hypothesis_settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=st.text(max_size=80), limit=st.text(max_size=6), anchor=st.text(max_size=20))
def test_arbitrary_parameters_never_cause_a_server_error(client, q, limit, anchor):
    for path, query in (("/api/search", {"q": q, "limit": limit}), ("/api/observations", {"file": q, "concept": q}),
                        ("/api/timeline", {"anchor": anchor}), ("/api/timeline", {"q": q}),
                        ("/api/summaries", {"since": anchor})):
        response = client.get(path, params=query)
        assert response.status_code in (200, 400, 404), (path, query, response.text)


# -- security --------------------------------------------------------------------------------

def state_changes(seeded):
    return [
        ("DELETE", f"/api/observations/{seeded['tagged']}", None),
        ("DELETE", "/api/sessions/beta-session-1", None),
        ("POST", "/api/observations/batch", {"ids": [seeded["tagged"]]}),
        ("POST", "/api/queue/retry", {"all": True}),
    ]


@pytest.mark.parametrize("index", range(4))
@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:1", "https://127.0.0.1:38999"])
def test_foreign_origin_cannot_change_anything(client, seeded, data_dir, index, origin):
    method, path, body = state_changes(seeded)[index]
    response = client.request(method, path, json=body, headers={"origin": origin})
    assert_error(response, 403, "forbidden_origin")
    stats = client.get("/api/stats").json()["counts"]
    assert (stats["observations"], stats["sessions"], stats["events"]["failed"]) == (32, 2, 2)
    assert fetch_count(data_dir, seeded["tagged"]) == 0


@pytest.mark.parametrize("index", range(4))
@pytest.mark.parametrize("origin", [None, OWN_ORIGIN, "http://localhost:38999"])
def test_no_origin_or_own_origin_may_change(client, seeded, index, origin):
    method, path, body = state_changes(seeded)[index]
    headers = {"origin": origin} if origin else {}
    assert client.request(method, path, json=body, headers=headers).status_code == 200


def test_foreign_host_is_refused_on_the_api(client):
    assert_error(client.get("/api/observations", headers={"host": "evil.example"}), 403, "forbidden_host")


def test_no_secret_or_environment_in_any_response(client, seeded):
    gets = ["/health", "/api/settings", "/api/observations", f"/api/observations/{seeded['tagged']}", "/api/summaries",
            "/api/prompts", "/api/sessions", "/api/search?q=websocket", "/api/timeline?anchor=1", "/api/projects",
            "/api/stats", "/api/context?project=beta", "/api/queue?status=all", "/api/nothing"]
    for path in gets:
        response = client.get(path)
        assert SECRET not in response.text and "CLAUDE_MEM_" not in response.text, path
        assert not any(name.lower().startswith("access-control-") for name in response.headers)
