"""`GET /stream` (SSE) on real uvicorn servers: in a thread over the app, and a real worker process fed
through the real hooks with the offline observer."""

import json
import os
import socket
import threading
import time

import httpx
import pytest
import uvicorn

from claude_mem.worker import routes_stream
from claude_mem.worker.app import create_app
from claude_mem.worker.change_feed import ChangeFeed
from observer_support import SESSION_EDIT
from test_observer_worker import cli, wait_for, worker_env
from test_worker_app import make_ctx

HOOK_OF = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt", "PostToolUse": "post-tool",
           "Stop": "stop", "SessionEnd": "session-end"}


def sse(lines):
    """(kind, data) per event and ("comment", text) per comment line, from an SSE line iterator."""
    kind, data = None, []
    for line in lines:
        if line.startswith(":"):
            yield "comment", line[1:].strip()
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "" and kind:
            yield kind, json.loads("\n".join(data))
            kind, data = None, []


@pytest.fixture
def served(data_dir, monkeypatch):
    """The app with its change feed on a real uvicorn server in a thread; yields (ctx, base url)."""
    monkeypatch.setattr(routes_stream, "HEARTBEAT_SECONDS", 0.3)
    ctx = make_ctx(data_dir, backup_interval_hours=0)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    ctx.port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(ctx, services=[ChangeFeed()]), log_config=None, access_log=False,
                                           lifespan="on", timeout_graceful_shutdown=2))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_for(lambda: server.started, 10, "the server to start")
    yield ctx, f"http://127.0.0.1:{ctx.port}"
    ctx.bus.close()
    server.should_exit = True
    thread.join(10)
    sock.close()


def open_stream(base, path="/stream"):
    return httpx.stream("GET", base + path, timeout=httpx.Timeout(10.0))


def test_stream_sends_health_then_live_events_heartbeats_and_ends_when_the_bus_closes(served):
    ctx, base = served
    with open_stream(base) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["cache-control"] == "no-cache"
        events = sse(response.iter_lines())
        kind, health = next(event for event in events if event[0] != "comment")
        assert kind == "health" and health["status"] == "ok" and health["port"] == ctx.port
        row = {"id": 7, "title": "two\nlines", "narrative": "<b>ü</b>"}
        ctx.bus.publish("observation", row)
        assert next(event for event in events if event[0] != "comment") == ("observation", row)
        assert next(events) == ("comment", "heartbeat")
        ctx.bus.publish("summary", {"id": 1})
        ctx.bus.close()
        assert [event for event in events if event[0] != "comment"] == [("summary", {"id": 1})]  # then it ends


def test_stream_filters_kinds_and_unsubscribes_on_disconnect(served):
    ctx, base = served
    with open_stream(base, "/stream?kinds=queue,summary") as response:
        lines = response.iter_lines()
        assert next(lines).startswith("retry:")
        wait_for(lambda: ctx.bus.subscriber_count == 1, 10, "the subscription")
        ctx.bus.publish("observation", {"id": 1})
        ctx.bus.publish("queue", {"pending": 0, "claimed": 0, "done": 3, "failed": 0})
        first = next(event for event in sse(lines) if event[0] != "comment")
        assert first == ("queue", {"pending": 0, "claimed": 0, "done": 3, "failed": 0})
    wait_for(lambda: ctx.bus.subscriber_count == 0, 10, "the stream to unsubscribe after the client left")


def test_retry_through_the_api_publishes_queue_counts(served, data_dir):
    ctx, base = served
    with open_stream(base, "/stream?kinds=queue") as response:
        lines = response.iter_lines()
        next(lines)
        wait_for(lambda: ctx.bus.subscriber_count == 1, 10, "the subscription")
        from claude_mem.store import db
        from observer_support import add_event, add_session

        conn = db.connect(db.db_path(str(data_dir)))
        event_id = add_event(conn, add_session(conn, "s1"), "tool", {}, "k1")
        conn.execute("UPDATE pending_events SET status = 'failed' WHERE id = ?", (event_id,))
        conn.close()
        assert httpx.post(base + "/api/queue/retry", json={"ids": [event_id]}).json()["requeued"] == 1
        assert next(event for event in sse(lines) if event[0] != "comment")[1]["pending"] == 1


def test_a_real_worker_streams_what_the_observer_stores_and_stops_promptly(data_dir):
    env = worker_env(data_dir, CLAUDE_MEM_PROVIDER="offline")
    started = cli("worker", "start", env=env)
    assert started.returncode == 0, started.stderr + started.stdout
    with open(os.path.join(data_dir, "worker.json"), encoding="utf-8") as handle:
        port = json.load(handle)["port"]
    received: list[tuple[str, object]] = []
    ended = threading.Event()

    def reader():
        try:
            with httpx.stream("GET", f"http://127.0.0.1:{port}/stream", timeout=httpx.Timeout(60.0)) as response:
                for event in sse(response.iter_lines()):
                    received.append(event)
            received.append(("end", "clean"))
        except httpx.HTTPError as exc:
            received.append(("end", repr(exc)))
        ended.set()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    stopped = False
    try:
        wait_for(lambda: any(kind == "health" for kind, _ in received), 30, "the stream's first event")
        for name in sorted(os.listdir(SESSION_EDIT)):
            with open(os.path.join(SESSION_EDIT, name), encoding="utf-8") as handle:
                payload = handle.read()
            hook = HOOK_OF[json.loads(payload)["hook_event_name"]]
            assert cli("hook", hook, env=env, stdin=payload).returncode == 0
        wait_for(lambda: any(kind == "summary" for kind, _ in received), 60, "a summary event")
        wait_for(lambda: any(kind == "queue" for kind, _ in received), 30, "a queue event")
        wait_for(lambda: any(kind == "prompt" for kind, _ in received), 30, "a prompt event")
        kinds = {kind for kind, _ in received}
        assert {"health", "prompt", "observation", "summary", "queue"} <= kinds
        prompt = next(data for kind, data in received if kind == "prompt")
        assert prompt["text"] == "edit hello.txt" and prompt["ref"].startswith("P")
        observation = next(data for kind, data in received if kind == "observation")
        assert "hello.txt" in observation["title"] and observation["id"] > 0
        assert next(data for kind, data in received if kind == "summary")["request"] == "edit hello.txt"
        began = time.monotonic()
        assert cli("worker", "stop", env=env, timeout=30).returncode == 0
        stopped = True
        took = time.monotonic() - began
        assert ended.wait(10), "the stream did not end when the worker stopped"
        assert received[-1] == ("end", "clean")
        with open(os.path.join(data_dir, "logs", "worker.log"), encoding="utf-8") as handle:
            assert "timeout graceful shutdown exceeded" not in handle.read()
        print(f"worker stop with a stream client connected: {took:.2f} s")
    finally:
        if not stopped:
            cli("worker", "stop", env=env, timeout=30)
