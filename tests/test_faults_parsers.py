"""Bounded parsers everywhere (issue 33, item 7): a 5,000-level JSON body, a huge one, broken UTF-8
or an unpaired surrogate to EVERY route of the worker's route table that takes a method with a body
gets a 4xx with a JSON message — never a 500, never a traceback in the log, never a side effect; and
every malformed MCP request gets a JSON-RPC error reply from the real stdio server process."""

import json
import logging
import os
import socket
import subprocess
import sys

import pytest
from starlette.routing import Route
from starlette.testclient import TestClient

from claude_mem.runtime import discovery
from claude_mem.worker import bodies
from claude_mem.worker.app import create_app
from conftest import REPO
from test_worker_api import seed
from test_worker_app import BASE, make_ctx
from test_worker_lifecycle import cli as run_cli
from test_worker_lifecycle import worker_env  # noqa: F401  (a fixture)

DEEP = b"[" * 5000 + b"]" * 5000
HOSTILE_BODIES = {
    "deep array": (DEEP, 400),
    "deep object": (b'{"ids": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"}", 400),
    "deep, just past the bound": (b'{"x": ' + b"[" * bodies.MAX_DEPTH + b"]" * bodies.MAX_DEPTH + b"}", 400),
    "huge": (b'{"ids": [' + b"1," * 40_000 + b"1]}", 413),
    "bad utf-8": (b'{"ids": "\xff\xfe"}', 400),
    "lone surrogate value": (b'{"query": "\\ud800", "ids": [1]}', 400),
    "lone surrogate key": (b'{"\\udfff": 1}', 400),
    "truncated": (b'{"ids": [1', 400),
}


def body_routes(app) -> list[tuple[str, str]]:
    """(method, path) of every route in the app's table with a method that may carry a body, its path
    parameters filled in with a value that names nothing stored."""
    found = []
    for route in app.routes:
        if not isinstance(route, Route):
            continue
        for method in sorted((route.methods or set()) & bodies.WITH_BODY):
            path = route.path
            for name in route.param_convertors:
                path = path.replace("{" + name + ":path}", "nothing-here").replace("{" + name + "}", "999999")
            found.append((method, path))
    return found


@pytest.fixture
def app_client(data_dir, monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_AUTOSTART", "false")
    seed(data_dir)
    ctx = make_ctx(data_dir, backup_interval_hours=0)
    with TestClient(create_app(ctx, services=[]), base_url=BASE, raise_server_exceptions=False) as client:
        yield client


def test_the_route_table_has_the_routes_that_take_bodies(app_client):
    routes = body_routes(app_client.app)
    # the four that read a JSON body, and the DELETE/restart ones that must not act on a hostile body
    for expected in (("POST", "/api/observations/batch"), ("POST", "/api/related"), ("POST", "/api/queue/retry"),
                     ("PUT", "/api/settings"), ("DELETE", "/api/observations/999999"), ("POST", "/api/worker/restart")):
        assert expected in routes, routes
    assert len(routes) >= 8


@pytest.mark.parametrize("kind", sorted(HOSTILE_BODIES))
def test_every_body_route_refuses_hostile_json_with_a_message(app_client, kind, caplog):
    body, status = HOSTILE_BODIES[kind]
    settings_before = app_client.get("/api/settings").json()
    caplog.set_level(logging.ERROR, logger="claude_mem")
    for method, path in body_routes(app_client.app):
        response = app_client.request(method, path, content=body, headers={"content-type": "application/json"})
        assert response.status_code == status, (method, path, kind, response.status_code, response.text[:200])
        error = response.json()["error"]
        assert error["code"] and 0 < len(error["message"]) < 300, error
        assert response.headers["x-content-type-options"] == "nosniff"  # still behind the security middleware
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert app_client.get("/api/settings").json() == settings_before
    assert app_client.get("/api/observations", params={"limit": 100}).json()["items"]  # nothing forgotten


def test_a_body_that_is_not_json_is_refused_on_every_route(app_client):
    for method, path in body_routes(app_client.app):
        response = app_client.request(method, path, content=b'{"all": true}', headers={"content-type": "text/plain"})
        assert response.status_code == 415, (method, path, response.text[:200])


def test_good_bodies_still_work_and_a_missing_one_is_named(app_client):
    first = app_client.get("/api/observations", params={"limit": 1}).json()["items"][0]["id"]
    assert app_client.post("/api/observations/batch", json={"ids": [first]}).json()["items"][0]["id"] == first
    assert app_client.post("/api/queue/retry", json={"all": True}).status_code == 200
    missing = app_client.post("/api/queue/retry", headers={"content-type": "application/json"})
    assert missing.status_code == 400 and "needs a JSON body" in missing.json()["error"]["message"]


def test_a_real_worker_answers_a_deep_body_with_400_and_keeps_serving(worker_env):  # noqa: F811
    run_cli("worker", "start")
    port = discovery.read_info(str(worker_env))["port"]
    for path in ("/api/observations/batch", "/api/settings", "/api/queue/retry"):
        method = "PUT" if path == "/api/settings" else "POST"
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(DEEP)}\r\nConnection: close\r\n\r\n".encode() + DEEP)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        head, _, payload = answer.partition(b"\r\n\r\n")
        assert head.split(b" ")[1] == b"400", answer[:300]
        assert "nested deeper" in json.loads(payload)["error"]["message"]
    assert json.loads(run_cli("worker", "status", "--json").stdout)["running"]
    log = (worker_env / "logs" / "worker.log") if (worker_env / "logs").is_dir() else None
    if log is not None and log.exists():
        assert "Traceback" not in log.read_text(errors="replace")


# -- MCP: the real stdio server process ------------------------------------------------------------------

MALFORMED_MCP = [
    # (line, the id the error must carry)
    (b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"search"}', 2),
    (b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":["search"]}', 3),
    (DEEP, None),
    (b'{"jsonrpc":"2.0","id":4,"method":"ping","params":' + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"}", None),
    (b"42", None),
    (b'"ping"', None),
    (b"null", None),
    (b'[{"jsonrpc":"2.0","id":5,"method":"ping"}]', None),
    (b"[]", None),
    (b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"search","arguments":"q"}}', 6),
    (b'{"jsonrpc":"2.0","id":7,"method":"no/such"}', 7),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None),
    (b'{"jsonrpc":"2.0","id":8', None),
    (b"\xff\xfe\x00", None),
]


def mcp_lines(lines: list[bytes], data_dir) -> list[dict]:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "CLAUDE_MEM_DATA_DIR": str(data_dir),
           "CLAUDE_MEM_AUTOSTART": "false"}
    done = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "mcp_server.py")],
                          input=b"\n".join(lines) + b"\n", capture_output=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert b"Traceback" not in done.stderr, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_every_malformed_mcp_request_gets_a_json_rpc_error(data_dir):
    ping = b'{"jsonrpc":"2.0","id":"alive","method":"ping"}'
    lines = [line for bad, _ in MALFORMED_MCP for line in (bad, ping)]
    replies = mcp_lines(lines, data_dir)
    assert len(replies) == 2 * len(MALFORMED_MCP), replies
    for (bad, expected_id), reply, after in zip(MALFORMED_MCP, replies[0::2], replies[1::2]):
        if bad.startswith(b'{"jsonrpc":"2.0","id":6'):  # a tool call with bad arguments: the tool's error
            assert reply["result"]["isError"] and "arguments" in reply["result"]["content"][0]["text"]
            continue
        assert "error" in reply and reply["error"]["code"] < 0 and reply["error"]["message"], (bad[:60], reply)
        if expected_id is not None:
            assert reply["id"] == expected_id, reply
        assert after == {"jsonrpc": "2.0", "id": "alive", "result": {}}, (bad[:60], after)


def test_a_surrogate_id_gets_its_reply_under_the_same_id(data_dir):
    """An id with an unpaired surrogate (escaped, or as raw bytes) is echoed escaped, so the client that
    sent it can match the reply; the line stays ASCII JSON."""
    lines = [b'{"jsonrpc":"2.0","id":"\\ud800","method":"tools/call","params":{"name":"search","arguments":{}}}',
             b'{"jsonrpc":"2.0","id":"\xed\xa0\x80","method":"ping"}',
             b'{"jsonrpc":"2.0","id":"\\udc00","method":"no/such"}']
    replies = mcp_lines(lines, data_dir)
    assert [reply["id"] for reply in replies] == ["\ud800", "\ud800", "\udc00"], replies
    assert "result" in replies[0] and replies[1]["result"] == {} and replies[2]["error"]["code"] == -32601


def test_a_lone_surrogate_in_a_query_is_an_error_reply_not_silence(data_dir):
    lines = [b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"\\ud800"}}}',
             b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"timeline","arguments":{"anchor":"\\udc00x"}}}']
    replies = mcp_lines(lines, data_dir)
    assert [reply["id"] for reply in replies] == [1, 2]
    for reply in replies:
        assert reply["result"]["isError"] and "surrogate" in reply["result"]["content"][0]["text"], reply


def test_a_huge_mcp_line_is_refused_and_the_next_request_answered(data_dir):
    from claude_mem.mcp_server import stdio

    huge = b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"' + b"a" * (stdio.MAX_LINE + 10) + b'"}}'
    replies = mcp_lines([huge, b'{"jsonrpc":"2.0","id":10,"method":"ping"}'], data_dir)
    assert replies[0]["error"]["code"] == stdio.INVALID_REQUEST and "over" in replies[0]["error"]["message"]
    assert replies[1] == {"jsonrpc": "2.0", "id": 10, "result": {}}
