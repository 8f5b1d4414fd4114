"""The viewer's degraded banner (Chromium + Playwright), fed from `/health`'s `degraded`: a real lock held
by another process shows as a banner with the reason, and it goes away by itself once the lock is let go."""

import subprocess
import sys

from claude_mem.store import db
from claude_mem.worker import health
from observer_support import add_event, add_session, connect
from test_faults_health import HOLD
from viewer_support import browser, open_page, served  # noqa: F401  (fixtures)

HOSTILE = "<img src=x onerror=alert(1)>"


def test_a_locked_database_shows_a_banner_with_the_reason_until_it_is_let_go(served, open_page, data_dir):
    served.start()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, db.db_path(str(data_dir))], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        watched = open_page(served.url)
        page = watched.page
        page.wait_for_selector("#degraded:not([hidden])", timeout=15_000)
        items = page.locator("#degraded-list li").all_text_contents()
        assert len(items) == 1 and "database is locked" in items[0] and "another process" in items[0], items
        assert page.locator("#banner").is_hidden()  # connected: the disconnection banner is another matter
        page.screenshot(path=str(data_dir.parent / "degraded.png"))
    finally:
        holder.communicate("go\n", timeout=30)
    page.wait_for_selector("#degraded", state="hidden", timeout=20_000)  # the next /health poll (10 s)
    watched.assert_clean()


def test_reasons_are_shown_as_text_and_settings_keep_their_own_banner(served, open_page, monkeypatch):
    monkeypatch.setattr(health, "DEGRADED_CHECKS", [lambda ctx: [("disk_full", f"disk full, 3 events waiting {HOSTILE}")]])
    watched = open_page(served.start().url)
    page = watched.page
    page.wait_for_selector("#degraded:not([hidden])")
    assert page.locator("#degraded-list li").all_text_contents() == [f"disk full, 3 events waiting {HOSTILE}"]
    assert page.locator("#degraded img").count() == 0
    watched.assert_clean()



def test_a_failed_event_says_whether_it_comes_back(served, open_page, data_dir):
    data_dir.mkdir(parents=True, exist_ok=True)
    conn = connect(str(data_dir))
    session = add_session(conn, "failing")
    classes = {"transient": "transient: retried by itself", "content": "content: stays failed"}
    ids = {}
    for index, failure_class in enumerate(classes):
        ids[failure_class] = add_event(conn, session, "tool", {"tool_name": "Bash"}, f"evt-{index}")
        conn.execute("UPDATE pending_events SET status = 'failed', attempts = 3, failure_class = ?,"
                     " last_error = 'x' WHERE id = ?", (failure_class, ids[failure_class]))
    conn.close()
    watched = open_page(served.start().url)
    page = watched.page
    for failure_class, shown in classes.items():
        item = page.locator(f'#failed li[data-id="{ids[failure_class]}"] .failed-head .muted')
        item.wait_for()
        assert item.text_content() == f"3 attempts · {shown}"
    watched.assert_clean()
