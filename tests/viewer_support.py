"""The viewer under test: Debian's Chromium driven by Playwright, the worker app on a real uvicorn."""

import os
import socket
import threading
from urllib.parse import urlparse

import pytest
import uvicorn

from claude_mem.worker.app import create_app
from conftest import require
from test_observer_worker import wait_for
from test_worker_app import make_ctx

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"]


@pytest.fixture(scope="module")
def browser():
    require(os.access(CHROMIUM, os.X_OK), f"Debian's chromium is not installed ({CHROMIUM}); apt-get install chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "the playwright package is not installed (pip install -e '.[dev]')")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Served:
    """The worker app for a data dir on 127.0.0.1:<port> in a thread; stoppable and restartable on that port."""

    def __init__(self, data_dir: str) -> None:
        self.data_dir = data_dir
        self.port = 0
        self.ctx = None
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None
        self.sock: socket.socket | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> "Served":
        self.ctx = make_ctx(self.data_dir, backup_interval_hours=0)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", self.port))
        self.port = self.ctx.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(
            create_app(self.ctx, services=[]), log_config=None, access_log=False, lifespan="on",
            timeout_graceful_shutdown=2))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        wait_for(lambda: self.server.started, 10, "the server to start")
        return self

    def stop(self) -> None:
        if self.server is None:
            return
        self.ctx.bus.close()  # ends open streams so the shutdown does not wait for them
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()
        self.server = None


@pytest.fixture
def served(data_dir):
    worker = Served(str(data_dir))
    yield worker
    worker.stop()


class Watched:
    """A page with everything it did recorded: requests, console errors, page errors, dialogs."""

    def __init__(self, page) -> None:
        self.page = page
        self.requests: list[str] = []
        self.console_errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("console", lambda message: message.type == "error" and self.console_errors.append(message.text))
        page.on("pageerror", lambda error: self.console_errors.append(f"page error: {error}"))

        def dialog(d):
            self.dialogs.append(f"{d.type}: {d.message}")
            d.dismiss()

        page.on("dialog", dialog)

    def foreign_requests(self) -> list[str]:
        return [url for url in self.requests if urlparse(url).hostname != "127.0.0.1"]

    def assert_clean(self) -> None:
        assert self.console_errors == []
        assert self.dialogs == []
        assert self.foreign_requests() == []


@pytest.fixture
def open_page(browser):
    """open_page(url, **context options) → Watched; pages close with the test."""
    contexts = []

    def opener(url: str, **options) -> Watched:
        context = browser.new_context(**{"viewport": {"width": 1280, "height": 900}, **options})
        contexts.append(context)
        watched = Watched(context.new_page())
        watched.page.set_default_timeout(10_000)
        watched.page.goto(url)
        return watched

    yield opener
    for context in contexts:
        context.close()
