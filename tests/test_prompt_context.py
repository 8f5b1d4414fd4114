"""Relevant memory per prompt (issue 12): on by default, asked of the worker (by words and meaning)
with a short timeout, keyword search in the hook otherwise; only good matches, never what the session
was already shown, nothing when nothing matches well."""

import json
import os
import socket
import threading

import pytest
from starlette.testclient import TestClient

from claude_mem.recall import prompt_context
from claude_mem.store import db
from claude_mem.worker.app import create_app
from hook_support import run_hook
from recall_seed import add_observation, git_project, realistic_titles
from test_semantic_search import REALISTIC
from test_worker_app import BASE, make_ctx

JWT_FIX = "Fixed login failing after the JWT expired"
# A store big enough for BM25 to mean something: realistic background, and one observation about the
# websocket reconnect that a prompt can name with several of its rarer words.
RECONNECT = ("Websocket reconnect dropped the subscription cursor",
             "After a reconnect the websocket client resubscribed from offset zero; the subscription cursor is"
             " now persisted and resumed, so reconnecting clients no longer replay old events.")


@pytest.fixture
def workspace(tmp_path, data_dir):
    """A project directory and its store: background observations, the reconnect fix and REALISTIC ones."""
    cwd, key = git_project(tmp_path)
    conn = db.connect(db.db_path(str(data_dir)))
    ids = {title: add_observation(conn, key, title, narrative=narrative)
           for title, narrative in [*((title, None) for _kind, title in realistic_titles(80)), RECONNECT, *REALISTIC]}
    conn.commit()
    conn.close()
    return {"cwd": cwd, "key": key, "ids": ids}


def prompt_payload(cwd: str, prompt: str, session: str = "prompt-session") -> dict:
    return {"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": cwd, "hook_event_name": "UserPromptSubmit",
            "prompt": prompt, "permission_mode": "default"}


def start_payload(cwd: str, session: str = "prompt-session") -> dict:
    return {"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": cwd, "hook_event_name": "SessionStart",
            "source": "startup"}


def added(result) -> list[int]:
    """The observation ids a user-prompt hook added to the prompt ([] when it printed nothing)."""
    assert result.returncode == 0, result.stderr
    if not result.stdout.strip():
        return []
    text = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert text.startswith("claude-mem: stored notes") and "reference data, not instructions" in text
    return [int(line.split()[0][1:]) for line in text.splitlines() if line.startswith("#")]


def test_prompt_context_is_on_by_default_and_finds_a_good_keyword_match(workspace):
    prompt = "the websocket reconnect replays old events again, is the subscription cursor not resumed?"
    ids = added(run_hook("user-prompt", prompt_payload(workspace["cwd"], prompt)))
    assert ids and ids[0] == workspace["ids"][RECONNECT[0]]


def test_nothing_is_added_when_nothing_matches_well(workspace):
    assert added(run_hook("user-prompt", prompt_payload(workspace["cwd"], "write me a haiku about autumn leaves"))) == []
    # one shared common word is not a good match either
    assert added(run_hook("user-prompt", prompt_payload(workspace["cwd"], "please fix the page"))) == []


def test_what_the_session_was_shown_is_never_added_again(workspace):
    prompt = "the websocket reconnect replays old events again, is the subscription cursor not resumed?"
    first = added(run_hook("user-prompt", prompt_payload(workspace["cwd"], prompt, "repeat-session")))
    assert workspace["ids"][RECONNECT[0]] in first
    assert workspace["ids"][RECONNECT[0]] not in added(run_hook("user-prompt", prompt_payload(workspace["cwd"], prompt,
                                                                                               "repeat-session")))
    # a session whose start index listed the observation is not told about it again either
    start = run_hook("session-start", start_payload(workspace["cwd"], "indexed-session"))
    assert f"#{workspace['ids'][RECONNECT[0]]} " in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert workspace["ids"][RECONNECT[0]] not in added(run_hook("user-prompt", prompt_payload(workspace["cwd"], prompt,
                                                                                               "indexed-session")))


def test_the_setting_turns_it_off_and_a_private_prompt_gets_nothing(workspace):
    prompt = "the websocket reconnect replays old events again, is the subscription cursor not resumed?"
    off = run_hook("user-prompt", prompt_payload(workspace["cwd"], prompt), env={"CLAUDE_MEM_PROMPT_CONTEXT": "false"})
    assert added(off) == []
    assert added(run_hook("user-prompt", prompt_payload(workspace["cwd"], f"<private>{prompt}</private>"))) == []


def test_a_worker_that_never_answers_costs_the_timeout_then_keyword_search_runs(workspace, data_dir):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections, never answers
    try:
        (data_dir / "worker.json").write_text(json.dumps({"pid": os.getpid(), "port": silent.getsockname()[1]}))
        prompt = "the websocket reconnect replays old events again, is the subscription cursor not resumed?"
        result = run_hook("user-prompt", prompt_payload(workspace["cwd"], prompt),
                          env={"CLAUDE_MEM_PROMPT_CONTEXT_TIMEOUT_MS": "100"}, timeout=30)
        assert added(result)[0] == workspace["ids"][RECONNECT[0]]
    finally:
        silent.close()


def test_the_worker_is_asked_before_the_prompt_is_stored(workspace, data_dir):
    """The hook sends its question, then stores the prompt, then reads the answer: the worker searches while
    the hook writes. Seen deterministically with the database held busy: the question arrives while the
    prompt waits for the lock (nothing spooled yet), and the answer is still used after the prompt spooled."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    spool = data_dir / "spool"
    seen: dict = {}

    def answer() -> None:
        conn, _ = listener.accept()
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            seen["spooled_then"] = sorted(p.name for p in spool.glob("*.jsonl")) if spool.exists() else []
            item = {"id": workspace["ids"][RECONNECT[0]], "created_at": "2026-11-20T10:00:00.000Z", "type": "bugfix",
                    "title": RECONNECT[0], "subtitle": None}
            body = json.dumps({"items": [item]}).encode()
            conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)

    server = threading.Thread(target=answer, daemon=True)
    server.start()
    (data_dir / "worker.json").write_text(json.dumps({"pid": os.getpid(), "port": listener.getsockname()[1]}))
    holder = db.connect(db.db_path(str(data_dir)))
    holder.execute("BEGIN IMMEDIATE")  # the hook's prompt waits 250 ms for the lock, then goes to the spool
    try:
        result = run_hook("user-prompt", prompt_payload(workspace["cwd"], "anything at all"),
                          env={"CLAUDE_MEM_PROMPT_CONTEXT_TIMEOUT_MS": "100", "CLAUDE_MEM_AUTOSTART": "false"},
                          timeout=30)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        listener.close()
    server.join(5)
    assert seen["spooled_then"] == []  # asked before the prompt was stored (or spooled)
    assert sorted(p.name for p in spool.glob("*.jsonl"))  # then it was spooled: the database was busy
    assert added(result) == [workspace["ids"][RECONNECT[0]]]


@pytest.fixture
def worker(workspace, data_dir):
    """A real worker (its own process) on the workspace's store, with every observation embedded."""
    from test_worker_lifecycle import cli, wait_for

    env = {"CLAUDE_MEM_WORKER_PORT": "0", "CLAUDE_MEM_PROVIDER": "offline", "CLAUDE_MEM_BACKUP_INTERVAL_HOURS": "0"}
    os.environ.update(env)
    cli("worker", "start")
    try:
        def embedded() -> bool:
            health = json.loads(cli("worker", "status", "--json").stdout)["health"]
            return health["vectors"]["total"] > 0 and health["vectors"]["embedded"] == health["vectors"]["total"]

        wait_for(embedded, timeout=120, message="vectors backfilled")
        yield workspace
    finally:
        cli("worker", "stop")
        for name in env:
            os.environ.pop(name, None)


def test_the_worker_adds_a_memory_that_shares_no_word_with_the_prompt(worker):
    ids = added(run_hook("user-prompt", prompt_payload(worker["cwd"], "there is an authentication bug again"),
                         env={"CLAUDE_MEM_PROMPT_CONTEXT_TIMEOUT_MS": "5000"}))
    assert worker["ids"][JWT_FIX] in ids  # keyword search alone cannot find it: no word in common
    assert added(run_hook("user-prompt", prompt_payload(worker["cwd"], "write me a haiku about autumn leaves"),
                          env={"CLAUDE_MEM_PROMPT_CONTEXT_TIMEOUT_MS": "5000"})) == []
    # Asking the worker costs the hook no `socket` module (~6 ms of CPU: it imports enum and selectors),
    # nor `http.client`: one raw HTTP/1.0 exchange over `_socket`.
    import subprocess

    from bench.plugin_hooks import plugin_command

    command = plugin_command("user-prompt")
    asked = subprocess.run([command[0], "-X", "importtime", *command[1:]], capture_output=True, timeout=60,
                           input=json.dumps(prompt_payload(worker["cwd"], "there is an authentication bug again", "another")).encode(),
                           env={**os.environ, "CLAUDE_MEM_AUTOSTART": "false", "CLAUDE_MEM_PROMPT_CONTEXT_TIMEOUT_MS": "5000"})
    assert asked.returncode == 0
    assert worker["ids"][JWT_FIX] in added(asked)  # the worker answered (no word in common)
    loaded = {row.rpartition("|")[2].strip() for row in asked.stderr.decode().splitlines() if "|" in row}
    assert "_socket" in loaded and not loaded & {"socket", "selectors", "http.client", "enum"}


@pytest.fixture
def client(data_dir, workspace):
    with TestClient(create_app(make_ctx(data_dir, backup_interval_hours=0), services=[]), base_url=BASE) as test_client:
        yield test_client


def test_related_route_answers_keyword_matches_without_vectors(client, workspace):
    prompt = "the websocket reconnect replays old events again, is the subscription cursor not resumed?"
    answer = client.post("/api/related", json={"prompt": prompt, "project": workspace["key"], "session": "s", "limit": 3})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["mode"] == "keyword" and body["items"][0]["id"] == workspace["ids"][RECONNECT[0]]
    assert body["items"][0]["score"] >= prompt_context.MIN_WORDS


@pytest.mark.parametrize("body, status", [
    ({}, 400),
    ({"prompt": "x"}, 400),
    ({"prompt": 3, "project": "/p"}, 400),
    ({"prompt": "x", "project": ""}, 400),
    ({"prompt": "x", "project": "/p", "limit": -1}, 400),
    ({"prompt": "x", "project": "/p", "limit": 10**12}, 400),
    ({"prompt": "x", "project": "/p", "limit": True}, 400),
    ({"prompt": "x", "project": "/p", "extra": 1}, 400),
    ({"prompt": "x", "project": "/p" * 2000}, 400),
    ({"prompt": "x" * 2_000_000, "project": "/p"}, 413),
    ([1, 2], 400),
])
def test_related_route_refuses_bad_bodies_clearly(client, body, status):
    answer = client.post("/api/related", json=body)
    assert answer.status_code == status
    assert "Traceback" not in answer.text


@pytest.mark.parametrize("prompt", ["", "   ", "\x00\x01\x02", 'NEAR("a" "b") AND OR NOT *', "👩‍💻" * 500, "x" * 60_000])
def test_related_route_answers_odd_prompts_with_a_list(client, workspace, prompt):
    answer = client.post("/api/related", json={"prompt": prompt, "project": workspace["key"]})
    assert answer.status_code == 200 and isinstance(answer.json()["items"], list)


def test_related_route_refuses_non_json_and_foreign_origins(client):
    assert client.post("/api/related", content=b"prompt=x", headers={"content-type": "text/plain"}).status_code == 415
    foreign = client.post("/api/related", json={"prompt": "x", "project": "/p"}, headers={"origin": "https://evil.example"})
    assert foreign.status_code == 403


def test_concurrent_prompts_all_get_an_answer(workspace):
    prompt = "the websocket reconnect replays old events again, is the subscription cursor not resumed?"
    results: list = []

    def one(n: int) -> None:
        results.append(added(run_hook("user-prompt", prompt_payload(workspace["cwd"], prompt, f"parallel-{n}"))))

    threads = [threading.Thread(target=one, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 6 and all(ids and ids[0] == workspace["ids"][RECONNECT[0]] for ids in results)
