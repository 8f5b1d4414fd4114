"""The stdlib MCP server (`claude_mem.mcp_server.stdio`, what Claude Code runs) against the `mcp` SDK
server (`claude_mem.mcp_server.server`, the reference): both started as real subprocesses over stdio,
fed the same JSON-RPC lines, must give the same `initialize`, the same `tools/list` and the same
answers; and bad input gets a JSON-RPC error from the stdlib server, never a crash or silence."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from claude_mem.mcp_server import stdio
from conftest import REPO
from mcp_support import connect, seed
from recall_seed import add_observation

SDK = [sys.executable, "-m", "claude_mem.mcp_server.server"]
# As the plugin starts it, with no site-packages at all (no mcp, no pydantic): the standard library alone.
STDLIB = [sys.executable, "-I", "-S", os.path.join(REPO, "scripts", "mcp_server.py")]
INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "shop"
    (path / ".git").mkdir(parents=True)
    return str(path)


def exchange(command: list[str], lines: list[bytes], data_dir, cwd: str, silent: tuple[bytes, ...] = (),
             **extra_env: str) -> list[dict]:
    """Every reply of one stdio session fed `lines` after the handshake, one at a time: each line but the
    `silent` ones (notifications, blanks, answers) waits for its reply, so no server can drop one at EOF."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "CLAUDE_MEM_DATA_DIR": str(data_dir),
           "CLAUDE_MEM_AUTOSTART": "false", "PYTHONPATH": os.path.join(REPO, "src"), **extra_env}
    head = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE}).encode(),
            b'{"jsonrpc": "2.0", "method": "notifications/initialized"}']
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=env, cwd=cwd)
    assert process.stdin is not None and process.stdout is not None
    replies = []
    try:
        for line in head + lines:
            process.stdin.write(line + b"\n")
            process.stdin.flush()
            if line == head[1] or line in silent:
                continue
            answer = process.stdout.readline()
            assert answer, f"no reply to {line[:200]!r}: {process.stderr.read().decode()[-2000:] if process.poll() else ''}"
            replies.append(json.loads(answer))
    finally:
        process.stdin.close()
        rest = process.stdout.read()
        process.wait(timeout=60)
    assert rest == b"", rest[:500]  # nothing more than one reply per request
    return replies


def request(number: int, method: str, params: object = None) -> bytes:
    message: dict = {"jsonrpc": "2.0", "id": number, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def call(number: int, name: str, arguments: dict) -> bytes:
    return request(number, "tools/call", {"name": name, "arguments": arguments})


def test_the_catalog_is_what_the_sdk_server_declares():
    from claude_mem.mcp_server.server import catalog

    assert stdio.load_catalog() == json.loads(json.dumps(catalog())), \
        "run: python -m claude_mem.mcp_server.server --write-catalog"


VALID_CALLS = [
    ("search", {"query": "spool ingest"}),
    ("search", {"query": "spool", "limit": 2, "offset": 1}),
    ("search", {"query": "", "types": ["decision"]}),
    ("search", {"query": "ingest", "kinds": ["summary", "prompt"], "all_projects": True}),
    ("search", {"query": "nothing-matches-this"}),
    ("search", {"query": "spool", "order": "newest", "mode": "keyword", "since": "30d"}),
    ("search", {"query": "x", "limit": "5", "all_projects": "true"}),  # coerced the way pydantic does
    ("search", {"query": "x", "project": "no-such-project"}),  # a tool error both ways
    ("timeline", {"anchor": 16}),
    ("timeline", {"anchor": "S1", "before": 2, "after": 2}),
    ("timeline", {"anchor": "spool", "all_projects": True}),
    ("timeline", {"anchor": 5.0}),
    ("get_observations", {"ids": [16, "S1", "#2", 99999]}),
    ("get_observations", {"ids": [99999]}),
    ("search", {"query": "spool", "bogus": 1}),  # unknown arguments are ignored
    ("nope", {}),
]
INVALID_CALLS = [
    ("search", {"limit": 0}), ("search", {"limit": 5.5}), ("search", {"query": 5}), ("search", {"types": "bugfix"}),
    ("search", {"order": "sideways"}), ("search", {"query": "x" * 501}), ("search", {"types": ["nonsense"]}),
    ("timeline", {}), ("timeline", {"before": 51, "anchor": 1}), ("get_observations", {"ids": []}),
    ("get_observations", {"ids": [[1]]}),
]


@pytest.mark.slow
def test_both_servers_answer_alike(data_dir, project, tmp_path):
    seed(data_dir, project, project + "-other")
    lines = [request(1, "tools/list"), request(2, "ping"), request(3, "prompts/list"), request(4, "resources/list")]
    lines += [call(10 + n, name, arguments) for n, (name, arguments) in enumerate(VALID_CALLS)]
    lines += [call(100 + n, name, arguments) for n, (name, arguments) in enumerate(INVALID_CALLS)]
    lines += [request(200 + n, "initialize", {**INITIALIZE, "protocolVersion": version})
              for n, version in enumerate(("2024-11-05", "2025-03-26", "2025-11-25", "1999-01-01"))]
    lines += [request(300, "no/such/method")]
    twin = tmp_path / "twin-data"  # fetches are counted: each server gets the same store of its own
    shutil.copytree(data_dir, twin)
    reference = {reply["id"]: reply for reply in exchange(SDK, lines, twin, project)}
    ours = {reply["id"]: reply for reply in exchange(STDLIB, lines, data_dir, project)}
    assert sorted(ours) == sorted(reference)
    for number in sorted(reference):
        if 100 <= number < 200:  # the messages differ (pydantic's against ours): both are tool errors
            assert reference[number]["result"]["isError"] is True, reference[number]
            assert ours[number]["result"]["isError"] is True, ours[number]
            continue
        assert ours[number] == reference[number], number
    assert [tool["name"] for tool in ours[1]["result"]["tools"]] == ["search", "timeline", "get_observations"]
    assert "#16 " in ours[10]["result"]["content"][0]["text"]


@pytest.mark.parametrize("server", ["", "memory"])
def test_the_instructions_name_the_tools_as_claude_code_will(data_dir, project, server):
    """As the plugin's (no CLAUDE_MEM_MCP_SERVER) or as `claude-mem install` registered them: both servers alike."""
    [reference] = exchange(SDK, [], data_dir, project, CLAUDE_MEM_MCP_SERVER=server)
    [ours] = exchange(STDLIB, [], data_dir, project, CLAUDE_MEM_MCP_SERVER=server)
    assert ours == reference
    prefix = f"mcp__{server}__" if server else "mcp__plugin_persistent-memory_memory__"
    assert f"named {prefix}search, {prefix}timeline and {prefix}get_observations." in ours["result"]["instructions"]


BAD_LINES = [
    (b"not json", -32700), (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', -32700), (b"[1, 2]", -32600),
    (b'"just a string"', -32600), (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "search"}', -32602),
    (b'{"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": [1]}', -32602),
    (b'{"jsonrpc": "2.0", "id": 9, "method": "no/such/method"}', -32601),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600), (b'{"jsonrpc": "2.0", "id": 10}', -32600),
    (b'{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"arguments": {}}}', -32602),
    (b'{"jsonrpc": "2.0", "id": 12, "method": "ping", "x": "\xff\xfe"}', -32700),  # not UTF-8
    (b"[" * 100_000 + b"]" * 100_000, -32700),
]


def test_bad_input_gets_an_error_reply_and_the_server_goes_on(data_dir, project):
    seed(data_dir, project, project + "-other")
    surrogate = b'{"jsonrpc": "2.0", "id": 20, "method": "tools/call", "params": {"name": "search",' \
                b' "arguments": {"query": "\\ud800 spool"}}}'
    surrogate_id = b'{"jsonrpc": "2.0", "id": "\\udfff", "method": "ping"}'
    silent = (b"", b"   ", b'{"jsonrpc": "2.0", "method": "notifications/cancelled"}', b'{"jsonrpc": "2.0", "id": 55, "result": {}}')
    lines = [line for line, _ in BAD_LINES] + [surrogate, surrogate_id, *silent, request(99, "ping")]
    replies = exchange(STDLIB, lines, data_dir, project, silent)
    assert replies[0]["id"] == 0 and replies[0]["result"]["serverInfo"]["name"] == "memory"
    errors = replies[1:len(BAD_LINES) + 1]
    assert [reply["error"]["code"] for reply in errors] == [code for _, code in BAD_LINES]
    tool = replies[len(BAD_LINES) + 1]
    assert tool["id"] == 20 and tool["result"]["isError"] is True
    assert "unpaired surrogate" in tool["result"]["content"][0]["text"]
    assert replies[len(BAD_LINES) + 2] == {"jsonrpc": "2.0", "id": "\udfff", "result": {}}
    assert replies[-1] == {"jsonrpc": "2.0", "id": 99, "result": {}}  # blank lines, notifications, answers: no reply
    assert len(replies) == len(BAD_LINES) + 4


def test_without_a_worker_meaning_falls_back_to_keyword_with_a_note(data_dir, project):
    """`-I -S`: no embedding model here, no worker running: the words still find the memory."""
    seed(data_dir, project, project + "-other")
    replies = exchange(STDLIB, [call(1, "search", {"query": "spool ingest", "mode": "semantic"})], data_dir, project)
    text = replies[1]["result"]["content"][0]["text"]
    assert replies[1]["result"]["isError"] is False
    first, second = text.splitlines()[:2]
    assert first.startswith("Note: no worker answered") and "search by meaning is not available here" in first
    assert second.startswith('Search "spool ingest" in project shop:') and "#16 " in text


def test_the_server_starts_on_the_standard_library_alone(data_dir, project):
    """Started with `-I -S` (no site-packages: no mcp, no pydantic) it answers initialize and tools/list
    without loading the store, and the first call loads what it needs."""
    script = ("import io, json, sys\nfrom claude_mem.mcp_server import stdio\nout = io.BytesIO()\n"
              "lines = [json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {}}),"
              " json.dumps({'jsonrpc': '2.0', 'id': 2, 'method': 'tools/list'})]\n"
              "stdio.serve(io.BytesIO('\\n'.join(lines).encode()), out)\n"
              "third = [m for m in sys.modules if not m.startswith(('claude_mem', '_')) and m.split('.')[0]"
              " not in sys.stdlib_module_names]\n"
              "print(len(out.getvalue().splitlines()), 'claude_mem.store' in sys.modules, third)\n")
    src = os.path.join(REPO, "src")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys; sys.path.insert(0, {src!r})\n" + script],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "CLAUDE_MEM_DATA_DIR": str(data_dir)})
    assert done.stdout.strip() == "2 False []", done.stdout + done.stderr


@pytest.mark.slow
def test_search_by_meaning_is_asked_of_the_running_worker(tmp_path, monkeypatch):
    """The server runs without the model (`-I -S`); the real worker has it: a query that shares no word
    with the memory finds it through the worker, by default (vectors exist) and by a named mode."""
    from test_semantic_search import PROJECT, REALISTIC
    from test_worker_lifecycle import cli, wait_for

    data_dir = tmp_path / "data"
    for name, value in (("CLAUDE_MEM_DATA_DIR", str(data_dir)), ("CLAUDE_MEM_WORKER_PORT", "0"),
                        ("CLAUDE_MEM_PROVIDER", "offline"), ("CLAUDE_MEM_BACKUP_INTERVAL_HOURS", "0")):
        monkeypatch.setenv(name, value)
    conn = connect(data_dir)
    for title, narrative in REALISTIC:
        add_observation(conn, PROJECT, title, narrative=narrative)
    conn.commit()
    conn.close()
    lines = [call(1, "search", {"query": "authentication bug", "all_projects": True, "limit": 3}),
             call(2, "search", {"query": "authentication bug", "all_projects": True, "limit": 3, "mode": "semantic"})]
    cli("worker", "start")
    try:
        def embedded() -> bool:
            health = json.loads(cli("worker", "status", "--json").stdout)["health"]
            return health["vectors"]["embedded"] == len(REALISTIC)

        wait_for(embedded, timeout=90, message="vectors backfilled")
        replies = exchange(STDLIB, lines, data_dir, str(tmp_path))
    finally:
        cli("worker", "stop")
    for reply in replies[1:]:
        text = reply["result"]["content"][0]["text"]
        assert reply["result"]["isError"] is False and not text.startswith("Note:"), text
        assert "Fixed login failing after the JWT expired" in text, text
    replies = exchange(STDLIB, lines[1:], data_dir, str(tmp_path))  # the worker gone: keyword, and a note
    text = replies[1]["result"]["content"][0]["text"]
    assert text.startswith("Note: no worker answered") and "these are keyword matches" in text and "JWT" not in text, text


def test_a_kept_connection_follows_the_database_file(data_dir, project, tmp_path):
    """The server keeps its connection between calls: it still sees every write made by others, and a
    database file replaced whole (a restore, a repair) is opened anew, not read through the old one."""
    conn = connect(data_dir)
    add_observation(conn, project, "Kestrel cache warms on boot")
    conn.close()
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "CLAUDE_MEM_DATA_DIR": str(data_dir),
           "CLAUDE_MEM_AUTOSTART": "false"}
    process = subprocess.Popen(STDLIB, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=env, cwd=project)
    assert process.stdin is not None and process.stdout is not None

    def search(number: int, words: str) -> str:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(call(number, "search", {"query": words}) + b"\n")
        process.stdin.flush()
        return json.loads(process.stdout.readline())["result"]["content"][0]["text"]

    try:
        process.stdin.write(request(0, "initialize", INITIALIZE) + b"\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 0
        assert "Kestrel cache warms on boot" in search(1, "kestrel")
        conn = connect(data_dir)  # a write by another process, on the same file
        add_observation(conn, project, "Kestrel cache now warms lazily")
        conn.close()
        assert "Kestrel cache now warms lazily" in search(2, "kestrel")
        other = tmp_path / "restored.db"  # a whole other file moved into place
        conn = connect(tmp_path / "restored-dir")
        add_observation(conn, project, "Osprey queue drains at night")
        conn.execute("VACUUM INTO ?", (str(other),))
        conn.close()
        for suffix in ("-wal", "-shm"):
            if os.path.exists(str(data_dir / "claude-mem.db") + suffix):
                os.unlink(str(data_dir / "claude-mem.db") + suffix)
        os.replace(other, data_dir / "claude-mem.db")
        assert "Osprey queue drains at night" in search(3, "osprey")
        assert "No match" in search(4, "kestrel")
    finally:
        process.stdin.close()
        process.wait(timeout=60)
