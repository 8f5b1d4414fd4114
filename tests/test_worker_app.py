"""The worker app in process (TestClient runs the lifespan): /health, security middleware, errors,
services lifecycle, event bus."""

import asyncio
import json
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from claude_mem import __version__, settings
from claude_mem.worker import services as services_module
from claude_mem.worker.app import create_app
from claude_mem.worker.bus import EventBus
from claude_mem.worker.context import WorkerContext
from claude_mem.worker.security import host_is_local, origin_is_own

PORT = 38999
BASE = f"http://127.0.0.1:{PORT}"
OWN_ORIGIN = f"http://127.0.0.1:{PORT}"


class Recorder:
    def __init__(self, name, journal, fail_start=False, hang_stop=False):
        self.name, self.journal, self.fail_start, self.hang_stop = name, journal, fail_start, hang_stop

    async def start(self, ctx):
        if self.fail_start:
            raise RuntimeError("boom")
        self.journal.append(("start", self.name))

    async def stop(self):
        self.journal.append(("stop", self.name))
        if self.hang_stop:
            await asyncio.sleep(3600)


def make_ctx(data_dir, **overrides):
    values = settings.load(str(data_dir))
    values.update(overrides)
    ctx = WorkerContext(settings=values, data_dir=str(data_dir))
    ctx.port = PORT
    ctx.connect().close()
    return ctx


@pytest.fixture
def client(data_dir):
    ctx = make_ctx(data_dir, anthropic_api_key="sk-ant-api03-secretsecret", backup_interval_hours=0)
    with TestClient(create_app(ctx, services=[]), base_url=BASE) as test_client:
        yield test_client


def test_health_reports_what_design_7_lists(client, data_dir):
    body = client.get("/health").json()
    for key in ("status", "pid", "version", "data_dir", "port", "uptime", "provider", "queue"):
        assert key in body
    assert body["status"] == "ok" and body["version"] == __version__
    assert body["data_dir"] == str(data_dir) and body["port"] == PORT
    assert set(body["provider"]) == {"name", "ok", "reason"} and body["provider"]["name"] == "auto"
    assert body["queue"] == {"pending": 0, "claimed": 0, "done": 0, "failed": 0}


def test_health_counts_the_queue(client, data_dir):
    from claude_mem.store import db

    conn = db.connect(db.db_path(str(data_dir)))
    conn.execute("INSERT INTO sessions (content_session_id, project, cwd) VALUES ('s1', '/p', '/p')")
    for key, status in (("a", "pending"), ("b", "pending"), ("c", "failed")):
        conn.execute("INSERT INTO pending_events (event_key, session_id, kind, payload, status) "
                     "VALUES (?, 1, 'tool', '{}', ?)", (key, status))
    conn.close()
    assert client.get("/health").json()["queue"] == {"pending": 2, "claimed": 0, "done": 0, "failed": 1}


def test_provider_health_is_pluggable(data_dir):
    ctx = make_ctx(data_dir, backup_interval_hours=0)

    async def observer_health():
        return {"name": "fake", "ok": True, "reason": ""}

    ctx.provider_health = observer_health
    with TestClient(create_app(ctx, services=[]), base_url=BASE) as test_client:
        assert test_client.get("/health").json()["provider"] == {"name": "fake", "ok": True, "reason": ""}


@pytest.mark.parametrize("host", ["evil.example", "evil.example:38999", "127.0.0.1.evil.example",
                                  "localhost.evil", "10.0.0.1", "", "127.0.0.1:abc"])
def test_foreign_host_is_refused(client, host):
    response = client.get("/health", headers={"host": host})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden_host"


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "LOCALHOST:38999", "127.0.0.1:1", "[::1]:38999"])
def test_local_hosts_are_served(client, host):
    assert client.get("/health", headers={"host": host}).status_code == 200


@pytest.mark.parametrize("origin", ["http://evil.example", "null", f"https://127.0.0.1:{PORT}",
                                    "http://127.0.0.1:1", f"http://127.0.0.1:{PORT}/x", "garbage"])
@pytest.mark.parametrize("method", ["PUT", "POST", "DELETE", "PATCH"])
def test_state_changing_request_from_foreign_origin_is_refused(client, data_dir, origin, method):
    response = client.request(method, "/api/settings", json={"backups_keep": 2}, headers={"origin": origin})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden_origin"
    assert "backups_keep" not in settings.read_file(str(data_dir))


def test_own_origin_and_no_origin_may_change_settings(client, data_dir):
    assert client.put("/api/settings", json={"backups_keep": 2}, headers={"origin": OWN_ORIGIN}).status_code == 200
    assert client.put("/api/settings", json={"backups_keep": 3}).status_code == 200
    assert settings.read_file(str(data_dir))["backups_keep"] == 3


def test_reads_from_foreign_origin_are_refused_without_cors_headers(client):
    response = client.get("/health", headers={"origin": "http://evil.example"})
    assert response.status_code == 403  # even a read: it may have effects, and it is not theirs to read
    assert not any(name.lower().startswith("access-control-") for name in response.headers)
    preflight = client.options("/api/settings", headers={
        "origin": "http://evil.example", "access-control-request-method": "PUT"})
    assert preflight.status_code in (403, 405)
    assert not any(name.lower().startswith("access-control-") for name in preflight.headers)
    assert response.headers["x-content-type-options"] == "nosniff"


def test_secrets_never_leave_the_worker(client, monkeypatch):
    secret = "sk-ant-api03-secretsecret"
    monkeypatch.setenv("CLAUDE_MEM_ANTHROPIC_API_KEY", secret)
    for response in (client.get("/health"), client.get("/api/settings"),
                     client.put("/api/settings", json={"openai_api_key": "sk-openai-another-secret"})):
        assert response.status_code == 200
        assert secret not in response.text and "sk-openai-another-secret" not in response.text
    shown = client.get("/api/settings").json()
    assert shown["anthropic_api_key"] == settings.MASK and shown["openai_api_key"] == settings.MASK


@pytest.mark.parametrize(("request_args", "status", "code"), [
    (("GET", "/nope"), 404, "not_found"),
    (("DELETE", "/health"), 405, "method_not_allowed"),
])
def test_errors_are_json(client, request_args, status, code):
    response = client.request(*request_args)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code and response.json()["error"]["message"]


@pytest.mark.parametrize(("body", "content_type", "status"), [
    (b"{not json", "application/json", 400),
    (b"[1, 2]", "application/json", 400),
    (b"{}", "application/json", 400),
    (b'{"no_such_key": 1}', "application/json", 422),
    (b'{"backups_keep": "many"}', "application/json", 422),
    (b'{"data_dir": "/etc"}', "application/json", 422),
    (b'{"backups_keep": 2}', "text/plain", 415),
    (b'{"x": "' + b"a" * 70_000 + b'"}', "application/json", 413),
])
def test_malformed_settings_updates_are_refused(client, data_dir, body, content_type, status):
    response = client.put("/api/settings", content=body, headers={"content-type": content_type})
    assert response.status_code == status
    assert set(response.json()["error"]) == {"code", "message"}
    assert settings.read_file(str(data_dir)) == {}


def test_unexpected_errors_are_500_without_details(data_dir):
    from starlette.routing import Route

    async def broken(request):
        raise RuntimeError("secret internals /etc/passwd")

    ctx = make_ctx(data_dir, backup_interval_hours=0)
    app = create_app(ctx, services=[], extra_routes=[Route("/broken", broken)])
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as test_client:
        response = test_client.get("/broken")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal" and "passwd" not in response.text


@given(st.text(max_size=60))
def test_host_and_origin_checks_never_raise(value):
    assert isinstance(host_is_local(value), bool)
    assert isinstance(origin_is_own(value, PORT), bool)


def test_services_start_in_order_and_stop_in_reverse(data_dir):
    journal = []
    chosen = [Recorder("a", journal), Recorder("broken", journal, fail_start=True), Recorder("b", journal)]
    ctx = make_ctx(data_dir, backup_interval_hours=0)
    with TestClient(create_app(ctx, services=chosen), base_url=BASE) as test_client:
        body = test_client.get("/health").json()
        assert body["status"] == "degraded" and "broken" in body["problems"]
    assert journal == [("start", "a"), ("start", "b"), ("stop", "b"), ("stop", "a")]


def test_a_stuck_service_cannot_hold_up_shutdown():
    journal = []

    async def scenario():
        await services_module.stop_services(
            [Recorder("first", journal), Recorder("stuck", journal, hang_stop=True)], timeout=0.2)

    asyncio.run(asyncio.wait_for(scenario(), timeout=10))
    assert journal == [("stop", "stuck"), ("stop", "first")]


def test_default_services_include_backups_and_the_services_installed_plugins_add(install_plugin):
    names = [service.name for service in services_module.default_services({})]
    assert names[0] == "backups" and "test-env" not in names
    install_plugin("claude_mem.worker_services", "env-recorder", "test_worker_support:env_recorder")
    assert [service.name for service in services_module.default_services({})] == [*names, "test-env"]


def test_a_plugin_service_that_cannot_be_made_is_named_in_health(data_dir, install_plugin):
    install_plugin("claude_mem.worker_services", "missing", "no_such_module_here:make")
    services = services_module.plugin_services()
    assert [service.name for service in services] == ["plugin missing"]
    with TestClient(create_app(make_ctx(data_dir, backup_interval_hours=0), services=services), base_url=BASE) as client:
        body = client.get("/health").json()
    assert body["status"] == "degraded" and "ModuleNotFoundError" in json.dumps(body["problems"])


def test_bus_fans_out_by_kind_and_never_blocks_publishers():
    async def scenario():
        bus = EventBus(queue_size=4)
        everything = bus.subscribe()
        only_queue = bus.subscribe(["queue"])
        for number in range(10):
            bus.publish("observation", {"id": number})
        bus.publish("queue", {"pending": 1})
        assert everything.dropped == 7  # the slow subscriber lost its oldest events, publishers went on
        received = [everything.queue.get_nowait().data for _ in range(everything.queue.qsize())]
        assert received == [{"id": 7}, {"id": 8}, {"id": 9}, {"pending": 1}]
        assert (await only_queue.get()).data == {"pending": 1}
        thread = threading.Thread(target=bus.publish, args=("health", {"ok": True}))
        thread.start()
        thread.join()
        event = await asyncio.wait_for(everything.get(), timeout=5)
        assert event.kind == "health"
        with pytest.raises(ValueError):
            bus.publish("nonsense", {})
        with pytest.raises(ValueError):
            bus.subscribe(["nonsense"])
        only_queue.close()
        assert bus.subscriber_count == 1

    asyncio.run(scenario())


def test_bus_subscription_iterates_and_unsubscribes_when_done():
    async def scenario():
        bus = EventBus()
        async with bus.subscribe(["summary"]) as subscription:
            bus.publish("summary", json.loads('{"id": 1}'))
            async for event in subscription:
                assert event.data == {"id": 1}
                break
            assert bus.subscriber_count == 1
        return bus.subscriber_count

    assert asyncio.run(scenario()) == 0


def test_health_warns_about_refused_settings(client, data_dir, monkeypatch):
    assert client.get("/health").json()["warnings"] == []
    (data_dir / "settings.json").write_text(json.dumps({"max_attempts": 0, "provider": "Bogus"}))
    monkeypatch.setenv("CLAUDE_MEM_LOG_LEVEL", "loud")
    body = client.get("/health").json()
    assert body["status"] == "degraded" and body["problems"] == {}
    text = "\n".join(body["warnings"])
    assert len(body["warnings"]) == 3
    assert "max_attempts = 0 from file (settings.json) is refused: out of range" in text
    assert "provider = 'Bogus' from file" in text and "using 'auto' from the default" in text
    assert "log_level = 'loud' from env (CLAUDE_MEM_LOG_LEVEL)" in text


def test_put_settings_refuses_a_bad_value_with_the_reason_and_writes_nothing(client, data_dir):
    assert client.put("/api/settings", json={"backups_keep": 2}).status_code == 200
    for change, reason in (({"worker_port": 70000}, "out of range"), ({"provider": "bogus"}, "not one of auto"),
                           ({"backups_keep": 7, "max_attempts": -1}, "max_attempts")):
        response = client.put("/api/settings", json=change)
        assert response.status_code == 422, change
        assert reason in response.json()["error"]["message"]
        assert settings.read_file(str(data_dir)) == {"backups_keep": 2}
    response = client.put("/api/settings", json={"provider": " Offline "})
    shown = {item["key"]: item for item in response.json()["items"]}  # the settings registry
    assert response.status_code == 200 and shown["provider"]["value"] == "offline"
    assert settings.read_file(str(data_dir))["provider"] == "offline"


def test_health_names_the_provider_the_observer_service_runs(data_dir):
    ctx = make_ctx(data_dir, provider="auto", backup_interval_hours=0)
    ctx.provider_name = "offline"
    with TestClient(create_app(ctx, services=[]), base_url=BASE) as test_client:
        assert test_client.get("/health").json()["provider"]["name"] == "offline"
