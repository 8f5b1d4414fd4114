"""The viewer under test: Debian's Chromium driven by Playwright, the worker app on a real uvicorn."""

import os
import socket
import threading
from urllib.parse import urlparse

import pytest
import uvicorn

from claude_mem.worker.app import create_app
from claude_mem.worker.change_feed import ChangeFeed
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
    """The worker app for a data dir on 127.0.0.1:<port> in a thread, with the change feed (what any process
    writes reaches its stream); stoppable and restartable on that port."""

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
            create_app(self.ctx, services=[ChangeFeed()]), log_config=None, access_log=False, lifespan="on",
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

    def assert_clean(self, expected: tuple[str, ...] = ()) -> None:
        """No console or page errors (but those naming one of `expected`, e.g. a refused request's status)."""
        assert [error for error in self.console_errors if not any(text in error for text in expected)] == []
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


# -- a realistic store: sessions told as stories, observer tokens, tool events, fetches --------------------

INVOICES, SHOP = "/home/dev/invoice-sync", "/home/dev/shop-api"
STORY = (
    ("Retry the billing API on 502/503/504 with backoff", INVOICES, [
        ("The nightly invoice sync died again: logs/nightly-sync.log ends with a 503 from the billing API. Find out "
         "how we call the API and why a single 503 kills the whole run.", [
            ("discovery", "A single 503 from the billing API aborts the nightly sync",
             "HttpClient.request raises on any 5xx and sync_invoices does not catch it, so one transient error ends "
             "the run and the remaining invoices wait a day."),
        ]),
        ("Retry inside HttpClient, no new dependency: 502/503/504 and connection errors, at most 4 attempts, "
         "exponential backoff from 0.5 s with full jitter. Never retry POST.", [
            ("decision", "Retry idempotent requests only; POST is never retried",
             "Creating an invoice is not idempotent: a retried POST could bill a customer twice."),
            ("feature", "HttpClient retries 502/503/504 with exponential backoff and full jitter",
             "At most 4 attempts, delays from 0.5 s doubling to 8 s, Retry-After honoured."),
            ("bugfix", "Fix off-by-one in the retry loop that made one attempt too many",
             "range(attempts + 1) became range(attempts); the new test caught the fifth call."),
        ]),
        ("The full test suite takes 7 s now. Make the sleep injectable so the tests never wait.", [
            ("refactor", "Inject the sleep function into HttpClient so tests run instantly",
             "HttpClient takes sleep=time.sleep; the tests pass a recorder and assert the delays."),
        ]),
    ], "Retry transient billing API errors without ever retrying POST",
        "Retries with jitter live in HttpClient; POST is excluded on purpose", "Log each retry attempt"),
    ("Log each retry attempt with its delay", INVOICES, [
        ("Billing support cannot tell from the logs how often we retry. Add a log line for each retry attempt.", [
            ("change", "Log every retry attempt with its number and the delay before the next one",
             "log.warning('retry %d/%d in %.1fs', ...) in HttpClient._retry; the test checks the records."),
        ]),
    ], "Make retries visible in the logs", "Retries are logged at WARNING with attempt and delay", ""),
    ("Checkout totals round per line, not per order", SHOP, [
        ("Customers see a 1 cent difference between the cart and the invoice. Find where the totals diverge.", [
            ("discovery", "Cart rounds each line, invoice rounds the order total",
             "cart.total() sums rounded line totals while invoice.total() rounds once at the end."),
            ("bugfix", "Round per line everywhere so cart and invoice agree to the cent",
             "money.line_total() is the single rounding point; invoice uses it too."),
        ]),
    ], "Fix the cent difference between cart and invoice", "Rounding happens per line, in money.line_total()", ""),
)


def seed_story(data_dir, days: int = 21) -> dict:
    """The stories above as today's sessions plus `days` of earlier, generated work in both projects:
    prompts, observations with observer tokens and fetch counts, summaries and processed tool events."""
    import random

    from claude_mem.store import db
    from recall_seed import add_observation, add_prompt, add_session, add_summary, realistic_titles, stamp

    rng = random.Random(15)
    conn = db.connect(db.db_path(str(data_dir)))
    found: dict = {"sessions": []}
    titles = iter(realistic_titles(400))
    event = 0

    def session(content_id: str, title: str, project: str, hours_ago: float, turns, request: str, learned: str,
                next_steps: str) -> None:
        nonlocal event
        sid = add_session(conn, content_id, project, stamp(hours_ago))
        hours = hours_ago
        for number, (prompt, observations) in enumerate(turns, 1):
            hours -= 0.05
            add_prompt(conn, sid, number, prompt, stamp(hours))
            tokens_in, tokens_out = rng.randint(2500, 9000), rng.randint(250, 900)
            for kind, obs_title, narrative in observations:
                hours -= 0.05
                oid = add_observation(conn, project, obs_title, kind=kind, narrative=narrative, session_id=sid,
                                      created_at=stamp(hours), facts=(narrative.split(";")[0],))
                conn.execute("UPDATE observations SET input_tokens = ?, output_tokens = ?, prompt_number = ?,"
                             " fetch_count = ? WHERE id = ?",
                             (tokens_in, tokens_out, number, rng.choice((0, 0, 1, 2)), oid))
                for _ in range(rng.randint(2, 5)):
                    event += 1
                    conn.execute("INSERT INTO pending_events (event_key, session_id, kind, prompt_number, payload,"
                                 " status, created_at, processed_at) VALUES (?, ?, 'tool', ?, '{}', 'done', ?, ?)",
                                 (f"seed-{event}", sid, number, stamp(hours), stamp(hours)))
        if request:
            hours -= 0.05
            done = "; ".join(title for _, observations in turns for _, title, _ in observations[-1:])
            add_summary(conn, sid, project, stamp(hours), request=request, learned=learned, completed=done,
                        next_steps=next_steps)
        conn.execute("UPDATE sessions SET title = ?, status = 'completed', ended_at = ?, last_activity_at = ?"
                     " WHERE id = ?", (title, stamp(hours), stamp(hours), sid))
        found["sessions"].append(content_id)

    for day in range(days, 0, -1):
        for n in range(rng.randint(0, 2)):
            project = rng.choice((INVOICES, SHOP))
            turns = [(f"Continue with {next(titles)[1].lower()}.",
                      [(kind, title, f"{title}. The change keeps the code path small and is covered by a test.")
                       for kind, title in (next(titles) for _ in range(rng.randint(1, 4)))])
                     for _ in range(rng.randint(1, 3))]
            session(f"day{day}-{n}", turns[0][1][0][1], project, day * 24 - n * 3, turns, turns[0][0][:-1], "", "")
    for n, (title, project, turns, request, learned, next_steps) in enumerate(reversed(STORY)):
        session(f"story-{n}", title, project, 6 + n * 5, turns, request, learned, next_steps)
    conn.close()
    return found
