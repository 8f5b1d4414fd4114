"""How the worker serves the viewer (files, types, CSP, nothing else reachable), `claude-mem viewer`
against a real worker with the offline observer, and the viewer's files in the wheel."""

import glob
import json
import os
import re
import stat
import subprocess
import sys
import zipfile

import pytest
from starlette.testclient import TestClient

from claude_mem.viewer import STATIC_DIR
from claude_mem.worker import routes_viewer
from claude_mem.worker.app import create_app
from conftest import REPO
from observer_support import SESSION_EDIT
from test_observer_worker import cli, wait_for, worker_env
from test_worker_api_stream import HOOK_OF
from test_worker_app import BASE, make_ctx
from viewer_support import Watched, browser  # noqa: F401  (fixture)


@pytest.fixture
def client(data_dir):
    with TestClient(create_app(make_ctx(data_dir, backup_interval_hours=0), services=[]), base_url=BASE) as test_client:
        yield test_client


@pytest.mark.parametrize("path, media_type", [
    ("/", "text/html; charset=utf-8"), ("/static/app.js", "text/javascript; charset=utf-8"),
    ("/static/render.js", "text/javascript; charset=utf-8"), ("/static/style.css", "text/css; charset=utf-8"),
    ("/static/icon.svg", "image/svg+xml"),
])
def test_viewer_files_are_served_with_their_type_a_strict_csp_and_revalidation(client, path, media_type):
    response = client.get(path)
    assert response.status_code == 200 and response.headers["content-type"] == media_type
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self';" in policy and "connect-src 'self'" in policy
    assert "unsafe" not in policy and "*" not in policy and "http" not in policy
    assert response.headers["cache-control"] == "no-cache" and response.headers["etag"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "access-control-allow-origin" not in response.headers
    assert client.head(path).status_code == 200
    assert client.get(path, headers={"if-none-match": response.headers["etag"]}).status_code == 304


@pytest.mark.parametrize("path", [
    "/static/", "/static/__init__.py", "/static/..%2F__init__.py", "/static/../viewer/app.js", "/static/%2e%2e/app.py",
    "/static/app.js%00.css", "/static/APP.JS", "/static/app.js.map", "/index.html", "/static/style.css?x=../../etc/passwd",
])
def test_nothing_but_the_shipped_files_is_reachable(client, path):
    response = client.get(path)
    if path.startswith("/static/style.css?"):  # a query string changes nothing
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/css")
        return
    assert response.status_code in (404, 405)
    assert response.headers["content-type"] == "application/json"
    assert "error" in response.json()


def test_the_viewer_is_refused_to_foreign_hosts_and_not_writable(client):
    assert client.get("/", headers={"host": "evil.example:80"}).status_code == 403
    assert client.post("/", headers={"origin": BASE}).status_code == 405
    assert client.put("/static/app.js", headers={"origin": BASE}).status_code == 405


def test_the_page_loads_only_shipped_files_and_the_code_never_uses_html_sinks():
    files = routes_viewer.shipped_files(STATIC_DIR)
    assert {"index.html", "app.js", "render.js", "theme.js", "style.css", "icon.svg"} <= set(files)
    assert all(name.endswith((".html", ".js", ".css", ".svg")) for name in files)
    with open(files["index.html"], encoding="utf-8") as handle:
        html = handle.read()
    referenced = [ref for ref in re.findall(r'(?:src|href)="([^"]+)"', html) if not ref.startswith("?")]  # "?…": views
    assert referenced and all(ref.startswith("/static/") and ref[8:] in files for ref in referenced)
    assert "<script>" not in html and " style=" not in html  # no inline code or styles (the CSP refuses them)
    assert not re.search(r"\son[a-z]+=", html)  # no inline handlers
    for name in [name for name in files if name.endswith(".js")]:
        with open(files[name], encoding="utf-8") as handle:
            code = handle.read()
        sinks = re.findall(r"\.(?:inner|outer)HTML\b|insertAdjacentHTML|document\.write|\beval\(|new Function", code)
        assert sinks == [], f"{name} uses {sinks}"
        for module in re.findall(r'from "\./([^"]+)"', code):
            assert module in files
    for name, path in files.items():
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text), f"{name} names an outside URL"


def viewer_env(data_dir, tmp_path):
    """The worker env with BROWSER set to a recorder: `webbrowser` runs it with the URL."""
    opened = tmp_path / "opened.txt"
    recorder = tmp_path / "browser.sh"
    recorder.write_text(f'#!/bin/sh\necho "$1" >> "{opened}"\n')
    recorder.chmod(recorder.stat().st_mode | stat.S_IEXEC)
    return worker_env(data_dir, CLAUDE_MEM_PROVIDER="offline", BROWSER=f"{recorder} %s"), opened


def test_viewer_command_starts_the_worker_opens_the_page_and_memory_arrives_live(browser, data_dir, tmp_path):
    env, opened = viewer_env(data_dir, tmp_path)
    first = cli("viewer", env=env)
    try:
        assert first.returncode == 0, first.stderr + first.stdout
        with open(os.path.join(data_dir, "worker.json"), encoding="utf-8") as handle:
            url = f"http://127.0.0.1:{json.load(handle)['port']}/"
        assert first.stdout.splitlines()[0].startswith("worker started: pid ")
        assert first.stdout.splitlines()[-1] == url
        assert opened.read_text().split() == [url]
        again = cli("viewer", "--no-open", env=env)
        assert again.returncode == 0 and again.stdout == url + "\n"  # already running: only the URL
        assert opened.read_text().split() == [url]

        context = browser.new_context()
        watched = Watched(context.new_page())
        page = watched.page
        page.set_default_timeout(20_000)
        page.goto(url)
        page.wait_for_selector("#empty:not([hidden])")
        page.wait_for_function("document.querySelector('#health').classList.contains('ok')")
        assert page.text_content("#health .badge-text") == "offline · observing"
        for name in sorted(os.listdir(SESSION_EDIT)):
            with open(os.path.join(SESSION_EDIT, name), encoding="utf-8") as handle:
                payload = handle.read()
            assert cli("hook", HOOK_OF[json.loads(payload)["hook_event_name"]], env=env, stdin=payload).returncode == 0
        page.wait_for_selector('#feed .card[data-key^="observation:"]', timeout=60_000)
        page.wait_for_selector('#feed .card[data-key^="summary:"]', timeout=60_000)
        # The hooks arrive one by one, so the worker may observe the session in several batches: some
        # observation (not necessarily the newest) is the edit of hello.txt.
        page.wait_for_function(
            """[...document.querySelectorAll('#feed .card[data-key^="observation:"] .title')]
                 .some((title) => title.textContent.includes('hello.txt'))""", timeout=60_000)
        assert page.locator("#empty").is_hidden()
        wait_for(lambda: page.text_content("#counts .count-done strong") not in ("0", "–"), 30, "done counts")
        watched.assert_clean()
        context.close()
    finally:
        stopped = cli("worker", "stop", env=env)
        assert stopped.returncode == 0, stopped.stderr


def test_viewer_help_explains_and_a_failing_start_is_one_line(data_dir, tmp_path):
    env, _ = viewer_env(data_dir, tmp_path)
    helped = cli("viewer", "--help", env=env)
    assert helped.returncode == 0 and "--no-open" in helped.stdout and "live feed" in helped.stdout
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    failed = cli("viewer", "--no-open", env={**env, "CLAUDE_MEM_DATA_DIR": str(blocker / "data")})
    assert failed.returncode != 0 and "Traceback" not in failed.stderr
    assert len(failed.stderr.strip().splitlines()) == 1


def test_the_wheel_ships_the_viewer(tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), REPO],
                           capture_output=True, text=True, timeout=240)
    assert built.returncode == 0, built.stderr
    (wheel,) = glob.glob(str(tmp_path / "*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in routes_viewer.shipped_files(STATIC_DIR):
        assert f"claude_mem/viewer/{name}" in names
