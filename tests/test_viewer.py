"""The viewer in Chromium (Playwright) against the worker app on real uvicorn over a seeded store."""

import pytest

from claude_mem.store import db
from observer_support import add_event
from recall_seed import add_observation, add_session, seed_project, stamp
from test_observer_worker import wait_for
from viewer_support import browser, open_page, served  # noqa: F401  (fixtures)

HOSTILE = "<img src=x onerror=alert(1)>"
ALPHA, BETA = "/home/dev/alpha", "/home/dev/beta"


def seed(data_dir) -> dict:
    """25 observations and a summary in alpha, two in beta (one hostile), one failed event."""
    conn = db.connect(db.db_path(str(data_dir)))
    alpha = seed_project(conn, ALPHA, 25)
    session = add_session(conn, "sess-beta", BETA, stamp(2))
    plain = add_observation(conn, BETA, "Websocket reconnect keeps the cursor", kind="feature", session_id=session,
                            created_at=stamp(1.5), narrative="The websocket client resumes from its last cursor.",
                            facts=("cursor stored per tab",), concepts=("reconnect",), files_modified=("src/ws.py",))
    hostile = add_observation(conn, BETA, HOSTILE, kind="bugfix", session_id=session, created_at=stamp(1),
                              subtitle="<script>alert(2)</script>", narrative=f"narrative {HOSTILE}",
                              facts=(HOSTILE,), files_read=("<b>bold</b>.py",))
    failed = add_event(conn, session, "tool", {"tool_name": "Bash"}, "evt-failed")
    conn.execute("UPDATE pending_events SET status = 'failed', attempts = 3, last_error = ? WHERE id = ?",
                 (f"observer said 500 {HOSTILE}", failed))
    conn.close()
    return {"alpha": alpha, "plain": plain, "hostile": hostile, "failed": failed}


def feed_titles(page) -> list[str]:
    return page.locator("#feed .card .title").all_text_contents()


def event_status(data_dir, event_id) -> str:
    conn = db.connect_readonly(db.db_path(str(data_dir)))
    try:
        return conn.execute("SELECT status FROM pending_events WHERE id = ?", (event_id,)).fetchone()[0]
    finally:
        conn.close()


def test_feed_lists_memory_newest_first_pages_on_and_stays_local(served, open_page, data_dir):
    seed(data_dir)
    watched = open_page(served.start().url)
    page = watched.page
    page.wait_for_selector("#feed .card")
    wait_for(lambda: len(feed_titles(page)) == 20, 10, "the first page of the feed")
    titles = feed_titles(page)
    assert titles[0] == "Make the session-start context respect its token budget"  # the summary, 30 min old
    assert titles[1:3] == [HOSTILE, "Websocket reconnect keeps the cursor"]  # 1 h and 1.5 h old
    stamps = page.locator("#feed .card").evaluate_all("cards => cards.map(c => c.dataset.created)")
    assert stamps == sorted(stamps, reverse=True)
    page.click("#more")
    wait_for(lambda: len(feed_titles(page)) == 28, 10, "the second page")
    assert page.locator("#more").is_hidden()
    keys = page.locator("#feed .card").evaluate_all("cards => cards.map(c => c.dataset.key)")
    assert len(keys) == len(set(keys)) == 28  # 27 observations + 1 summary, each once
    assert page.locator("#empty").is_hidden()
    assert page.locator("#project option").all_text_contents() == ["All projects", "beta", "alpha"]  # latest activity first
    assert "27 observations, 1 summary" in page.text_content("#totals")
    assert page.text_content("#health .badge-failed") == "1 failed"
    page.locator("#feed .card-head").first.focus()  # nothing expanded: the screenshot shows the feed itself
    page.screenshot(path="/tmp/viewer.png")
    watched.assert_clean()


def test_search_narrows_the_feed_and_clearing_it_brings_the_feed_back(served, open_page, data_dir):
    seed(data_dir)
    page = open_page(served.start().url).page
    wait_for(lambda: len(feed_titles(page)) == 20, 10, "the feed")
    page.fill("#search", "websocket")
    # the row that says it, then its neighbour in the session, found through the story around it (m017)
    wait_for(lambda: page.text_content("#feed-title") == "Search results" and len(feed_titles(page)) == 2,
             10, "the search results")
    assert feed_titles(page) == ["Websocket reconnect keeps the cursor", HOSTILE]
    assert page.locator("#feed .snippet mark").first.text_content().lower() == "websocket"
    assert page.text_content("#feed-count") == "2 matches"
    with page.expect_request(lambda request: "/api/search" in request.url and "mode=keyword" in request.url):
        page.select_option("#mode", "keyword")  # the search-mode switch: words only
    wait_for(lambda: page.text_content("#feed-count") == "2 matches", 10, "the keyword results")
    page.select_option("#mode", "")
    page.fill("#search", "zzzzunmatched")
    page.wait_for_selector("#no-results:not([hidden])")
    assert feed_titles(page) == [] and page.text_content("#no-results") == "Nothing matches this search."
    page.fill("#search", "")
    wait_for(lambda: len(feed_titles(page)) == 20, 10, "the feed again")
    page.select_option("#project", BETA)
    wait_for(lambda: len(feed_titles(page)) == 2, 10, "beta's feed")
    assert set(feed_titles(page)) == {HOSTILE, "Websocket reconnect keeps the cursor"}


def test_expanding_an_observation_shows_its_details_and_timeline(served, open_page, data_dir):
    seed(data_dir)
    page = open_page(served.start().url).page
    card = page.locator('#feed .card[data-key^="observation:"]', has_text="Websocket reconnect")
    card.locator(".card-head").click()
    card.locator(".narrative").wait_for()
    assert card.locator(".narrative").text_content() == "The websocket client resumes from its last cursor."
    details = card.locator(".details").inner_text()
    assert "cursor stored per tab" in details and "reconnect" in details and "src/ws.py" in details
    assert card.locator(".card-head").get_attribute("aria-expanded") == "true"
    card.locator(".timeline-link").click()
    anchor = card.locator(".timeline li.anchor")
    anchor.wait_for()
    assert "Websocket reconnect keeps the cursor" in anchor.text_content()
    assert card.locator(".timeline li").all_text_contents()[1].endswith(HOSTILE)  # the project's next item
    card.locator(".card-head").click()
    assert card.locator(".details").is_hidden()
    summary = page.locator('#feed .card[data-key^="summary:"]')
    assert "Benchmark the hook" in summary.locator(".fields").inner_text()  # shown without expanding


def test_new_memory_appears_live_once_without_reload(served, open_page, data_dir):
    seed(data_dir)
    served.start()
    watched = open_page(served.url)
    page = watched.page
    wait_for(lambda: len(feed_titles(page)) == 20, 10, "the feed")
    wait_for(lambda: served.ctx.bus.subscriber_count == 1, 10, "the page's stream")
    page.evaluate("window.__sameDocument = true")
    conn = db.connect(db.db_path(str(data_dir)))
    new_id = add_observation(conn, ALPHA, "Live observation from the observer", kind="decision", created_at=stamp(0))
    row = dict(zip(("id", "project", "type", "title", "created_at"),
                   conn.execute("SELECT id, project, type, title, created_at FROM observations WHERE id = ?",
                                (new_id,)).fetchone()))
    conn.close()
    served.ctx.bus.publish("observation", row)
    served.ctx.bus.publish("observation", row)  # the same id again must not show twice
    served.ctx.bus.publish("summary", {"id": 999, "project": ALPHA, "request": "Ship the viewer", "learned": "SSE works",
                                       "completed": "", "next_steps": "", "created_at": stamp(0)})
    wait_for(lambda: feed_titles(page)[:2] == ["Ship the viewer", "Live observation from the observer"]
             or feed_titles(page)[:2] == ["Live observation from the observer", "Ship the viewer"], 10, "live items")
    assert feed_titles(page).count("Live observation from the observer") == 1
    served.ctx.bus.publish("queue", {"pending": 4, "claimed": 1, "done": 9, "failed": 0})
    wait_for(lambda: page.text_content("#counts .count-pending strong") == "4", 10, "the queue counts")
    assert page.locator("#health .badge-failed").is_hidden()
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
    page.select_option("#project", BETA)
    wait_for(lambda: len(feed_titles(page)) == 2, 10, "beta's feed")
    served.ctx.bus.publish("observation", {**row, "id": new_id + 100, "title": "Another alpha one"})
    page.wait_for_timeout(500)
    assert "Another alpha one" not in feed_titles(page)  # another project's item stays out of the filtered feed
    watched.assert_clean()


def test_retry_button_requeues_a_failed_event(served, open_page, data_dir):
    ids = seed(data_dir)
    page = open_page(served.start().url).page
    item = page.locator(f'#failed li[data-id="{ids["failed"]}"]')
    item.wait_for()
    assert item.locator("pre.error").text_content() == f"observer said 500 {HOSTILE}"
    assert "count-failed alert" in page.locator("#counts .count-failed").get_attribute("class")
    item.locator("button.retry").click()
    wait_for(lambda: event_status(data_dir, ids["failed"]) == "pending", 10, "the event to be requeued")
    page.wait_for_selector("#queue-empty:not([hidden])")
    assert page.locator("#failed li").count() == 0
    assert page.text_content("#counts .count-pending strong") == "1"
    assert page.text_content("#counts .count-failed strong") == "0"


def test_hostile_stored_text_renders_as_text_and_runs_nothing(served, open_page, data_dir):
    ids = seed(data_dir)
    watched = open_page(served.start().url)
    page = watched.page
    card = page.locator(f'#feed .card[data-key="observation:{ids["hostile"]}"]')
    card.wait_for()
    assert card.locator(".title").text_content() == HOSTILE
    assert card.locator(".subtitle").text_content() == "<script>alert(2)</script>"
    card.locator(".card-head").click()
    card.locator(".narrative").wait_for()
    assert card.locator(".narrative").text_content() == f"narrative {HOSTILE}"
    assert "<b>bold</b>.py" in card.locator(".details").inner_text()
    page.locator("#failed li").wait_for()
    page.fill("#search", "onerror")
    wait_for(lambda: page.text_content("#feed-title") == "Search results", 10, "search results")
    page.wait_for_timeout(300)
    assert page.locator("main img, main script, main b:not(.empty b)").count() == 0
    assert page.evaluate("document.querySelectorAll('[onerror]').length") == 0
    assert watched.dialogs == []
    watched.assert_clean()


def test_empty_store_explains_how_memory_is_made(served, open_page):
    watched = open_page(served.start().url)
    page = watched.page
    page.wait_for_selector("#empty:not([hidden])")
    text = page.text_content("#empty")
    assert "No memory yet" in text and "observations" in text and "claude-mem status" in text
    assert feed_titles(page) == [] and page.locator("#more").is_hidden()
    assert page.text_content("#totals") == "Nothing stored yet."
    served.ctx.bus.publish("observation", {"id": 1, "project": ALPHA, "type": "change", "title": "First memory",
                                           "created_at": stamp(0)})
    wait_for(lambda: feed_titles(page) == ["First memory"], 10, "the first live item")
    assert page.locator("#empty").is_hidden()
    watched.assert_clean()


def test_a_lost_worker_shows_disconnected_and_the_feed_recovers(served, open_page, data_dir):
    seed(data_dir)
    page = open_page(served.start().url).page
    wait_for(lambda: len(feed_titles(page)) == 20, 10, "the feed")
    assert page.locator("#banner").is_hidden()
    served.stop()
    page.wait_for_selector("#banner:not([hidden])")
    assert "retrying" in page.text_content("#banner")
    assert page.text_content("#health .badge-text") == "disconnected"
    conn = db.connect(db.db_path(str(data_dir)))
    add_observation(conn, ALPHA, "Stored while the viewer was away", created_at=stamp(0))
    conn.close()
    served.start()  # the same port: the page's stream reconnects on its own
    page.wait_for_selector("#banner", state="hidden", timeout=20_000)
    wait_for(lambda: "Stored while the viewer was away" in feed_titles(page)[:1], 10, "the caught-up item")
    assert page.text_content("#health .badge-text") != "disconnected"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_phone_sized_screen_does_not_scroll_sideways(served, open_page, data_dir, scheme):
    seed(data_dir)
    watched = open_page(served.start().url, viewport={"width": 360, "height": 740}, color_scheme=scheme)
    page = watched.page
    wait_for(lambda: len(feed_titles(page)) == 20, 10, "the feed")
    page.locator("#feed .card-head").nth(1).click()
    page.locator("#feed .narrative").first.wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert (background == "rgb(22, 22, 21)") == (scheme == "dark")
    watched.assert_clean()


def test_the_page_uses_no_inline_code_and_the_csp_holds(served, open_page):
    watched = open_page(served.start().url)
    page = watched.page
    page.wait_for_selector("#empty:not([hidden])")
    assert page.evaluate("[...document.scripts].map(s => s.src)") == [f"{served.url}static/theme.js",
                                                                     f"{served.url}static/app.js"]
    blocked = page.evaluate("""() => new Promise(resolve => {
        document.addEventListener('securitypolicyviolation', () => resolve(true), {once: true});
        const s = document.createElement('script'); s.textContent = 'window.__inline = 1'; document.body.append(s);
        setTimeout(() => resolve(false), 1000);
    })""")
    assert blocked is True and page.evaluate("window.__inline") is None
    assert [error for error in watched.console_errors if "Content Security Policy" not in error] == []


def test_the_side_panel_shows_the_embedding_backfill_and_its_eta(served, open_page, data_dir):
    seed(data_dir)
    served.start()
    watched = open_page(served.url)
    page = watched.page
    wait_for(lambda: served.ctx.bus.subscriber_count == 1, 10, "the page's stream")
    provider = {"name": "offline", "ok": True, "reason": ""}
    backfill = {"model": "m", "available": True, "reason": "", "embedded": 1200, "queued": 3800, "total": 5000,
                "rate": 104.2, "eta_s": 37, "index": {"kind": "exact", "size": 1200}}
    served.ctx.bus.publish("health", {"provider": provider, "vectors": backfill})
    wait_for(lambda: page.text_content("#meaning") == "Search by meaning: 1,200 of 5,000 embedded · 104.2/s · about 37 s left",
             10, "the backfill line")
    served.ctx.bus.publish("health", {"provider": provider, "vectors": {**backfill, "embedded": 5000, "queued": 0}})
    wait_for(lambda: page.text_content("#meaning") == "Search by meaning: all 5,000 embedded", 10, "the done line")
    served.ctx.bus.publish("health", {"provider": provider, "vectors": {**backfill, "available": False,
                                                                         "reason": "the search extra is not installed"}})
    wait_for(lambda: page.text_content("#meaning") == "Search by meaning: off (the search extra is not installed)",
             10, "the off line")
    watched.assert_clean()
