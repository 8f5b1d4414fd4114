"""Hostile numbers, dates and bodies on every surface (issue 11): huge ids, 1e309, NaN, year 99999,
5,000-digit strings and a 50 MB chunked body get a clear 400 / 413, a one-line CLI error or an MCP
error with a message — never a traceback, a 500, or a worker that swells to read what it refuses."""

import asyncio
import json
import socket
import time

import psutil
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from claude_mem.cli import cli
from claude_mem.mcp_server.server import build_server
from claude_mem.runtime import discovery
from claude_mem.worker.app import create_app
from test_worker_api import assert_error, seed
from test_worker_app import BASE, make_ctx
from test_worker_lifecycle import cli as run_cli
from test_worker_lifecycle import worker_env  # noqa: F401  (a fixture)

HOSTILE = ["1" + "0" * 30, "-1", "1e309", "NaN", "inf", "99999-01-01", "2026-13-45", "0000-00-00", "9" * 5000,
           "9223372036854775808", "999999999999d", "0001-01-01"]
QUERY_PARAMETERS = {
    "/api/observations": ("limit", "offset", "since", "until"),
    "/api/summaries": ("limit", "offset", "since", "until"),
    "/api/prompts": ("limit", "offset", "since", "until", "session"),
    "/api/sessions": ("limit", "offset", "since", "until"),
    "/api/search": ("limit", "offset", "since", "until"),
    "/api/timeline": ("anchor", "before", "after"),
    "/api/queue": ("limit", "offset"),
}


def as_int(value: str) -> object:
    return int(value) if value.lstrip("-").isdigit() and len(value) < 100 else value


@pytest.fixture
def seeded_dir(data_dir, monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_AUTOSTART", "false")
    seed(data_dir)
    return data_dir


def test_http_answers_every_hostile_value_with_a_client_error(seeded_dir):
    ctx = make_ctx(seeded_dir, backup_interval_hours=0)
    with TestClient(create_app(ctx, services=[]), base_url=BASE, raise_server_exceptions=False) as client:
        for path, names in QUERY_PARAMETERS.items():
            for name in names:
                for value in HOSTILE:
                    query = {name: value, **({"q": "parser"} if path == "/api/search" else {})}
                    response = client.get(path, params=query)
                    assert response.status_code < 500, (path, name, value[:20], response.text[:200])
                    if response.status_code >= 400:
                        assert response.json()["error"]["message"]
        for value in HOSTILE:
            assert client.get(f"/api/observations/{value}").status_code in (400, 404)
            for path in (f"/api/observations/{value}", f"/api/sessions/{value}"):
                assert client.delete(path, headers={"origin": BASE}).status_code in (400, 404)
            for path in ("/api/observations/batch", "/api/queue/retry"):
                response = client.post(path, json={"ids": [as_int(value)]}, headers={"origin": BASE})
                assert_error(response, 400)


COMMANDS = [["search", "parser", "--limit", "{}"], ["search", "parser", "--offset", "{}"],
            ["search", "parser", "--since", "{}"], ["search", "parser", "--until", "{}"], ["timeline", "{}"],
            ["timeline", "1", "--before", "{}"], ["timeline", "1", "--after", "{}"], ["get", "{}"],
            ["queue", "retry", "{}"], ["queue", "--limit", "{}"], ["forget", "{}", "--yes"]]


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
def test_the_cli_answers_every_hostile_value_in_one_line(seeded_dir, command):
    runner = CliRunner()
    for value in HOSTILE:
        result = runner.invoke(cli, [part.replace("{}", value) for part in command])
        assert result.exception is None or isinstance(result.exception, SystemExit), (value[:20], result.exception)
        assert "Traceback" not in result.output
        if result.exit_code:
            assert "Error" in result.output or "error" in result.output


def test_mcp_answers_every_hostile_value_with_a_message(seeded_dir, monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(seeded_dir))
    server = build_server()

    async def run() -> None:
        for value in HOSTILE:
            for name, arguments in (("search", {"query": "parser", "since": value}),
                                    ("search", {"query": "parser", "until": value}),
                                    ("timeline", {"anchor": as_int(value)}),
                                    ("get_observations", {"ids": [as_int(value)]})):
                try:
                    await server.call_tool(name, arguments)
                except Exception as exc:  # the SDK turns these into an error result with this message
                    assert str(exc).strip() and type(exc).__name__ not in ("OverflowError", "TypeError"), exc

    asyncio.run(run())


def chunked_put(port: int, total: int) -> tuple[int, float]:
    """PUT /api/settings with a chunked body of `total` bytes, sent lazily; (status, seconds)."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(f"PUT /api/settings HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n".encode())
        chunk = b"[" + b"1," * 32_000 + b"1]"
        sent = 0
        try:
            while sent < total:
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
            sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # the worker answered and closed: exactly what a limit should do
        status = sock.recv(64).split(b" ")[1]
    return int(status), time.monotonic() - started


def test_a_huge_chunked_body_is_refused_without_being_read(worker_env):  # noqa: F811
    run_cli("worker", "start")
    info = discovery.read_info(str(worker_env))
    worker = psutil.Process(info["pid"])
    before = worker.memory_info().rss
    status, _seconds = chunked_put(info["port"], 50 * 1024 * 1024)
    assert status == 413
    assert worker.memory_info().rss - before < 30 * 1024 * 1024
    health = json.loads(run_cli("worker", "status", "--json").stdout)
    assert health["running"]


def test_a_foreign_origin_cannot_read_or_count_a_fetch(seeded_dir):
    ctx = make_ctx(seeded_dir, backup_interval_hours=0)
    with TestClient(create_app(ctx, services=[]), base_url=BASE) as client:
        first = client.get("/api/observations", params={"limit": 1}).json()["items"][0]["id"]
        from test_worker_api import fetch_count

        before = fetch_count(seeded_dir, first)
        for path in (f"/api/observations/{first}", "/api/observations", "/api/search?q=parser", "/api/settings"):
            assert_error(client.get(path, headers={"origin": "https://evil.example"}), 403, "forbidden_origin")
        assert fetch_count(seeded_dir, first) == before
        assert client.get(f"/api/observations/{first}", headers={"origin": BASE}).status_code == 200  # the viewer
        assert client.get(f"/api/observations/{first}").status_code == 200  # CLI, MCP: no Origin
        assert fetch_count(seeded_dir, first) == before + 2


def test_credentials_inside_base_urls_are_masked_on_every_surface(seeded_dir, monkeypatch):
    password, key = "hunter2-" + "Zq9" * 5, "k3y" * 8
    url = f"https://bob:{password}@proxy.example/v1?api_key={key}"
    monkeypatch.setenv("CLAUDE_MEM_ANTHROPIC_BASE_URL", url)
    runner = CliRunner()
    assert runner.invoke(cli, ["settings", "set", "openai_base_url", url]).exit_code == 0
    assert runner.invoke(cli, ["settings", "set", "max_attempts", "zero"]).exit_code != 0
    outputs = [runner.invoke(cli, ["settings", "set", "openai_base_url", url]).output,
               runner.invoke(cli, ["settings"]).output, runner.invoke(cli, ["settings", "--json"]).output,
               runner.invoke(cli, ["status"]).output]
    ctx = make_ctx(seeded_dir, backup_interval_hours=0)
    with TestClient(create_app(ctx, services=[]), base_url=BASE) as client:
        outputs += [client.get("/api/settings").text, client.get("/health").text]
    for output in outputs:
        assert password not in output and key not in output, output[:300]
    assert any("proxy.example" in output for output in outputs)
