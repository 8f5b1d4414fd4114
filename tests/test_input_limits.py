"""Hostile numbers, dates and bodies on every surface (issue 11): huge ids, 1e309, NaN, year 99999,
5,000-digit strings and a 50 MB chunked body get a clear 400 / 413, a one-line CLI error or an MCP
error with a message — never a traceback, a 500, or a worker that swells to read what it refuses.
Also: a foreign Origin counts no fetch, and credentials inside a base URL never come back."""

import json
import socket
import time

import psutil
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from claude_mem import settings
from claude_mem.cli import cli
from claude_mem.observer.service import ObserverService
from claude_mem.runtime import discovery
from claude_mem.worker.app import create_app
from mcp_support import call, text
from test_worker_api import assert_error, fetch_count, seed
from test_worker_app import BASE, make_ctx
from test_worker_lifecycle import cli as run_cli
from test_worker_lifecycle import worker_env  # noqa: F401  (a fixture)

HOSTILE = ["1" + "0" * 30, "-1", "1e309", "NaN", "inf", "99999-01-01", "2026-13-45", "0000-00-00", "9" * 5000,
           "9223372036854775808", "999999999999d", "0001-01-01"]
# Every numeric or date query parameter of the API, by route.
QUERY_PARAMETERS = [
    *((path, name) for path in ("/api/observations", "/api/summaries", "/api/prompts", "/api/sessions", "/api/search")
      for name in ("limit", "offset", "since", "until")),
    ("/api/timeline", "anchor"), ("/api/timeline", "before"), ("/api/timeline", "after"), ("/api/queue", "limit"),
]
NUMERIC_SETTINGS = [key for key, spec in settings.SETTINGS.items() if spec.kind in ("int", "float")]


def as_int(value: str) -> object:
    return int(value) if value.lstrip("-").isdigit() and len(value) < 100 else value


def as_number(value: str) -> object:
    """The value as JSON would carry a number where it can (1e309 becomes inf, 5,000 digits stay a string)."""
    try:
        return as_int(value) if value.lstrip("-").isdigit() else float(value)
    except ValueError:
        return value


def assert_clear(response, statuses=(400,)) -> str:
    assert response.status_code in statuses, (response.status_code, response.text[:200])
    error = response.json()["error"]
    assert error["code"] and error["message"] and len(error["message"]) < 400, error
    return error["message"]


@pytest.fixture
def seeded_dir(data_dir, monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_AUTOSTART", "false")
    seed(data_dir)
    return data_dir


@pytest.fixture
def client(seeded_dir):
    ctx = make_ctx(seeded_dir, backup_interval_hours=0)
    with TestClient(create_app(ctx, services=[]), base_url=BASE, raise_server_exceptions=False) as test_client:
        yield test_client


# -- HTTP ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "name"), QUERY_PARAMETERS, ids=[f"{p} {n}" for p, n in QUERY_PARAMETERS])
def test_every_numeric_and_date_parameter_refuses_every_hostile_value(client, path, name):
    for value in HOSTILE:
        query = {name: value, **({"q": "parser"} if path == "/api/search" else {})}
        # An anchor that is neither an id nor a date shape is search words: "nothing matches" is a 404.
        assert_clear(client.get(path, params=query), (400, 404) if name == "anchor" else (400,))


@pytest.mark.parametrize("value", HOSTILE, ids=[value[:20] for value in HOSTILE])
def test_ids_in_paths_and_bodies_refuse_every_hostile_value(client, value):
    assert_clear(client.get(f"/api/observations/{value}"))
    assert_clear(client.delete(f"/api/observations/{value}", headers={"origin": BASE}))
    assert_clear(client.delete(f"/api/sessions/{value}", headers={"origin": BASE}), (400, 404))
    for path in ("/api/observations/batch", "/api/queue/retry"):
        for ids in ([as_int(value)], [as_number(value)]):
            response = client.post(path, content=json.dumps({"ids": ids}),  # inf and NaN as Python writes them
                                   headers={"content-type": "application/json", "origin": BASE})
            assert_clear(response)


@pytest.mark.parametrize("key", NUMERIC_SETTINGS)
def test_numeric_settings_refuse_every_hostile_value(client, seeded_dir, key):
    for value in HOSTILE:
        for body in (json.dumps({key: value}), f'{{"{key}": {value}}}'):  # as a string, and bare
            try:
                json.loads(body)
            except ValueError:
                assert_clear(client.put("/api/settings", content=body,
                                        headers={"content-type": "application/json", "origin": BASE}))
                continue
            response = client.put("/api/settings", content=body,
                                  headers={"content-type": "application/json", "origin": BASE})
            assert key in assert_clear(response, (422,))
    assert not (seeded_dir / "settings.json").exists()


# -- CLI -----------------------------------------------------------------------------------------------

COMMANDS = [["search", "parser", "--limit", "{}"], ["search", "parser", "--offset", "{}"],
            ["search", "parser", "--since", "{}"], ["search", "parser", "--until", "{}"], ["timeline", "{}"],
            ["timeline", "1", "--before", "{}"], ["timeline", "1", "--after", "{}"], ["show", "{}"],
            ["queue", "retry", "{}"], ["queue", "--limit", "{}"], ["forget", "{}", "--yes"],
            ["settings", "set", "max_attempts", "{}"], ["settings", "set", "retry_backoff_seconds", "{}"]]


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c[:3]) for c in COMMANDS])
def test_the_cli_answers_every_hostile_value_in_one_line(seeded_dir, command):
    runner = CliRunner()
    for value in HOSTILE:
        result = runner.invoke(cli, [part.replace("{}", value) for part in command])
        # 1: refused by the domain (one "Error:" line); 2: refused by click's own type check (usage + one line).
        assert result.exit_code in (1, 2), (value[:20], result.exit_code, result.output[:200])
        assert isinstance(result.exception, SystemExit), (value[:20], result.exception)
        assert "Traceback" not in result.output
        assert result.output.strip().splitlines()[-1].startswith("Error: "), result.output[:300]
        if result.exit_code == 1:  # ours quote at most 40 characters of the value; click's quote it whole
            assert result.output.count("\n") == 1 and len(result.output) < 400, result.output[:300]


# -- MCP -----------------------------------------------------------------------------------------------

MCP_ARGUMENTS = [("search", "since"), ("search", "until"), ("search", "limit"), ("search", "offset"),
                 ("timeline", "anchor"), ("timeline", "before"), ("timeline", "after"), ("get_observations", "ids")]


@pytest.mark.parametrize(("tool", "name"), MCP_ARGUMENTS, ids=[f"{t} {n}" for t, n in MCP_ARGUMENTS])
def test_mcp_answers_every_hostile_value_with_a_message(seeded_dir, monkeypatch, tool, name):
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(seeded_dir))
    base = {"search": {"query": "parser", "all_projects": True}, "timeline": {"anchor": 1},
            "get_observations": {}}[tool]
    for value in HOSTILE:
        # A date goes as text (an inf would reach the server as null, which means "no filter").
        forms = {value} if name in ("since", "until") else {as_int(value), as_number(value), value}
        for argument in forms:
            wrapped = [argument] if name == "ids" else argument
            result = call(tool, {**base, name: wrapped})
            message = text(result)
            assert result.is_error, (tool, name, value[:20], message[:200])
            assert message.strip() and "Traceback" not in message, message[:200]


# -- a body past the limit -------------------------------------------------------------------------------

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


# -- side effects and secrets ------------------------------------------------------------------------------

def test_a_foreign_origin_cannot_read_or_count_a_fetch(seeded_dir):
    ctx = make_ctx(seeded_dir, backup_interval_hours=0)
    with TestClient(create_app(ctx, services=[]), base_url=BASE) as client:
        first = client.get("/api/observations", params={"limit": 1}).json()["items"][0]["id"]
        before = fetch_count(seeded_dir, first)
        for path in (f"/api/observations/{first}", "/api/observations", "/api/search?q=parser", "/api/settings"):
            assert_error(client.get(path, headers={"origin": "https://evil.example"}), 403, "forbidden_origin")
        assert_error(client.post("/api/observations/batch", json={"ids": [first]},
                                 headers={"origin": "http://127.0.0.1:1"}), 403, "forbidden_origin")
        assert fetch_count(seeded_dir, first) == before
        assert client.get(f"/api/observations/{first}", headers={"origin": BASE}).status_code == 200  # the viewer
        assert client.get(f"/api/observations/{first}").status_code == 200  # CLI, MCP: no Origin
        assert fetch_count(seeded_dir, first) == before + 2


def test_credentials_inside_base_urls_are_masked_on_every_surface(seeded_dir, monkeypatch):
    password, key = "hunter2-" + "Zq9" * 5, "k3y" * 8
    url = f"http://bob:{password}@127.0.0.1:9/v1?api_key={key}"
    monkeypatch.setenv("CLAUDE_MEM_ANTHROPIC_BASE_URL", url.replace("127.0.0.1:9", "proxy.example"))
    runner = CliRunner()
    assert runner.invoke(cli, ["settings", "set", "provider", "openai"]).exit_code == 0
    assert runner.invoke(cli, ["settings", "set", "openai_base_url", url]).exit_code == 0
    assert runner.invoke(cli, ["settings", "set", "max_attempts", "zero"]).exit_code != 0
    outputs = [runner.invoke(cli, ["settings", "set", "openai_base_url", url]).output,
               runner.invoke(cli, ["settings", "set", "openai_base_url", url.replace("http", "ftp")]).output,
               runner.invoke(cli, ["settings"]).output, runner.invoke(cli, ["settings", "--json"]).output,
               runner.invoke(cli, ["status"]).output, runner.invoke(cli, ["status", "--json"]).output,
               runner.invoke(cli, ["context", "--project", "alpha"]).output]
    # A worker with the real openai observer on that URL: /health quotes its provider's health.
    ctx = make_ctx(seeded_dir, backup_interval_hours=0)
    with TestClient(create_app(ctx, services=[ObserverService()]), base_url=BASE) as client:
        health = client.get("/health")
        assert health.json()["provider"]["name"] == "openai" and "127.0.0.1:9" in health.text
        outputs += [health.text, client.get("/api/settings").text, client.get("/api/context?project=alpha").text,
                    client.get("/api/queue?status=all").text]
    for output in outputs:
        assert password not in output and key not in output, output[:300]
    assert sum("127.0.0.1:9" in output for output in outputs) >= 5  # the rest of the URL is still shown
