"""The settings panel's API: the registry (values, sources, secrets write-only, what applies when),
validated edits, and `POST /api/worker/restart` on a real worker process."""

import http.client
import json
import time

import pytest
from starlette.testclient import TestClient

from claude_mem import settings
from claude_mem.runtime import discovery
from claude_mem.worker import restart, settings_view
from claude_mem.worker.app import create_app
from test_worker_api import assert_error
from test_worker_app import BASE, make_ctx
from test_worker_lifecycle import cli, wait_for, worker_env, worker_processes  # noqa: F401

FILE_SECRET = "sk-ant-api03-filesecret-abcdefghijklmnop"
ENV_SECRET = "sk-proj-envsecret-0123456789abcdefghij"
URL_PASSWORD = "hunter2-url-password"
ITEM_KEYS = {"key", "value", "default", "source", "description", "kind", "choices", "minimum", "maximum", "optional",
             "rule", "secret", "is_set", "editable", "reason", "applies"}


@pytest.fixture
def client(data_dir, monkeypatch):
    settings.update_file({"anthropic_api_key": FILE_SECRET, "backups_keep": 7,
                          "openai_base_url": f"https://user:{URL_PASSWORD}@llm.example/v1"}, str(data_dir))
    monkeypatch.setenv("CLAUDE_MEM_OPENAI_API_KEY", ENV_SECRET)
    monkeypatch.setenv("CLAUDE_MEM_MAX_ATTEMPTS", "5")
    ctx = make_ctx(data_dir)
    with TestClient(create_app(ctx, services=[]), base_url=BASE) as test_client:
        yield test_client


def registry(client) -> dict:
    response = client.get("/api/settings/registry")
    assert response.status_code == 200
    return response.json()


def by_key(body) -> dict:
    return {item["key"]: item for item in body["items"]}


def assert_no_secret(text: str) -> None:
    for secret in (FILE_SECRET, ENV_SECRET, URL_PASSWORD, "filesecret", "envsecret"):
        assert secret not in text


def test_registry_lists_every_setting_in_order_with_its_source(client, data_dir):
    body = registry(client)
    assert set(body) == {"items", "restart_needed", "warnings"}
    assert [item["key"] for item in body["items"]] == list(settings.SETTINGS)
    assert all(set(item) == ITEM_KEYS for item in body["items"])
    items = by_key(body)
    expected = {"value": 7, "default": 5, "source": "file", "kind": "int", "minimum": 1, "maximum": 1000,
                "editable": True, "reason": None, "applies": "restart", "secret": False, "is_set": True}
    assert {key: items["backups_keep"][key] for key in expected} == expected
    assert items["max_attempts"]["source"] == "environment" and items["max_attempts"]["value"] == 5
    assert not items["max_attempts"]["editable"] and "CLAUDE_MEM_MAX_ATTEMPTS" in items["max_attempts"]["reason"]
    assert items["log_level"]["source"] == "default" and items["log_level"]["choices"] == list(settings.LOG_LEVELS)
    assert items["skip_tools"]["kind"] == "list" and items["skip_tools"]["value"] == settings.DEFAULTS["skip_tools"]
    data = items["data_dir"]
    assert data["value"] == str(data_dir) and data["source"] == "environment" and not data["editable"]
    assert "CLAUDE_MEM_DATA_DIR" in data["reason"]
    assert items["worker_port"]["optional"] and items["worker_port"]["value"] is None
    assert items["provider"]["description"] == settings.SETTINGS["provider"].description


def test_secrets_are_write_only_from_the_file_and_the_environment(client):
    body = registry(client)
    items = by_key(body)
    for key, source in (("anthropic_api_key", "file"), ("openai_api_key", "environment")):
        assert items[key]["secret"] and items[key]["is_set"] and items[key]["source"] == source
        assert items[key]["value"] is None and items[key]["default"] is None
    base_url = items["openai_base_url"]
    assert not base_url["secret"] and "llm.example" in base_url["value"]  # shown, its password masked
    responses = [client.get("/api/settings/registry"), client.get("/api/settings"), client.get("/health"),
                 client.put("/api/settings", json={"anthropic_api_key": "sk-ant-api03-another-new-secret-key"})]
    for response in responses:
        assert response.status_code == 200
        assert_no_secret(response.text)
        assert "another-new-secret" not in response.text
    assert by_key(responses[-1].json())["anthropic_api_key"]["is_set"]
    assert settings.read_file(settings.data_dir())["anthropic_api_key"] == "sk-ant-api03-another-new-secret-key"


def test_an_unset_secret_says_so(data_dir):
    with TestClient(create_app(make_ctx(data_dir), services=[]), base_url=BASE) as client:
        items = by_key(registry(client))
    expected = {"is_set": False, "value": None, "default": None, "source": "default", "editable": True}
    assert {key: items["anthropic_api_key"][key] for key in expected} == expected


def test_what_a_change_needs_to_apply(client):
    items = by_key(registry(client))
    assert items["skip_tools"]["applies"] == "now" and items["autostart"]["applies"] == "now"
    assert items["prompt_context_results"]["applies"] == "now"
    assert items["context_max_tokens"]["applies"] == "next_session"
    assert items["provider"]["applies"] == "restart" and items["worker_port"]["applies"] == "restart"
    assert settings_view.applies("a_key_added_later") == "restart"
    assert registry(client)["restart_needed"] == []
    body = client.put("/api/settings", json={"backups_keep": 9, "skip_tools": ["Bash"]}).json()
    assert body["changed"] == ["backups_keep", "skip_tools"]
    assert body["restart_needed"] == ["backups_keep"]  # skip_tools applies at once
    assert by_key(body)["skip_tools"]["value"] == ["Bash"]
    client.put("/api/settings", json={"backups_keep": 7})
    assert registry(client)["restart_needed"] == []


def test_edits_are_validated_and_nothing_is_written_on_a_refusal(client, data_dir):
    before = settings.read_file(str(data_dir))
    for change, status, reason in (({"backups_keep": 0}, 422, "out of range"), ({"log_level": "loud"}, 422, "one of"),
                                   ({"no_such_key": 1}, 422, "unknown setting"),
                                   ({"backups_keep": 3, "max_attempts": 4}, 409, "CLAUDE_MEM_MAX_ATTEMPTS"),
                                   ({"data_dir": "/tmp/x"}, 422, "CLAUDE_MEM_DATA_DIR")):
        response = client.put("/api/settings", json=change)
        assert_error(response, status)
        assert reason in response.json()["error"]["message"], change
        assert settings.read_file(str(data_dir)) == before
    assert_error(client.put("/api/settings", json=[1]), 400)
    assert_error(client.get("/api/settings/registry", params={"x": "1"}), 400)


def test_warnings_carry_refused_values_masked(data_dir, monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_BACKUPS_KEEP", "lots")
    with TestClient(create_app(make_ctx(data_dir), services=[]), base_url=BASE) as client:
        body = registry(client)
    assert any("backups_keep = 'lots' from env" in line for line in body["warnings"])
    assert by_key(body)["backups_keep"]["source"] == "default"  # the refused value is not used


def test_restart_needs_a_daemon(client):
    assert_error(client.post("/api/worker/restart"), 409)


# -- the real worker --------------------------------------------------------------------------------------

def call(port, method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        headers = {"Origin": f"http://127.0.0.1:{port}"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        conn.close()


def healthy(port):
    try:
        return call(port, "GET", "/health")[1]
    except OSError:
        return None


def test_restart_replaces_the_worker_on_the_same_port_and_applies_settings(worker_env):  # noqa: F811
    data_dir = str(worker_env)
    cli("worker", "start")
    info = discovery.read_info(data_dir)
    port = info["port"]
    assert call(port, "PUT", "/api/settings", {"backups_keep": 9})[0] == 200
    assert call(port, "GET", "/api/settings/registry")[1]["restart_needed"] == ["backups_keep"]
    asked = time.monotonic()
    status, body = call(port, "POST", "/api/worker/restart")
    assert status == 202 and body == {"restarting": True, "port": port}

    def restarted():  # a worker younger than the request (`started` has whole seconds only)
        health, fresh = healthy(port), discovery.read_info(data_dir)
        return fresh if health and fresh and health["uptime"] < time.monotonic() - asked else None

    fresh = wait_for(restarted, 40, "the restarted worker")
    assert fresh["port"] == port and fresh["data_dir"] == data_dir
    assert healthy(port)["data_dir"] == data_dir
    assert call(port, "GET", "/api/settings/registry")[1]["restart_needed"] == []  # it started with the new value
    assert worker_processes(data_dir) == [fresh["pid"]]  # one worker: the lock was handed over, never freed


def test_a_restart_keeps_the_port_unless_worker_port_changed(data_dir):
    ctx = make_ctx(data_dir, worker_port=None)  # started on the default port, say it fell back to 38999
    assert restart.next_port(ctx) == ctx.port
    settings.update_file({"worker_port": 0}, str(data_dir))  # "any free port": this one will do
    assert restart.next_port(ctx) == ctx.port
    settings.update_file({"worker_port": 40123}, str(data_dir))
    assert restart.next_port(ctx) == 40123
