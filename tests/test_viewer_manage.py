"""The viewer manages memory (Chromium + Playwright over the worker on real uvicorn): sessions and a
session's story, forgetting with a confirmation (cancel keeps everything; confirm removes the rows
from the database and, live, from every open viewer), what the CLI writes shown live, filters in the
address, and the keyboard."""

import json
import sqlite3

from claude_mem.store import db
from test_observer_worker import cli, wait_for, worker_env
from viewer_support import INVOICES, SHOP, browser, open_page, seed_story, served  # noqa: F401  (fixtures)


def count(data_dir, sql: str, *args) -> int:
    conn = db.connect_readonly(db.db_path(str(data_dir)))
    try:
        return conn.execute(sql, args).fetchone()[0]
    finally:
        conn.close()


def observation_id(data_dir, title: str) -> int:
    return count(data_dir, "SELECT id FROM observations WHERE title = ?", title)


def address(page) -> str:
    """The page's query string, read from the page (Playwright's `page.url` lags behind pushState
    until the next call into the browser)."""
    return page.evaluate("location.search")


def ask_to_forget(page, oid: int):
    """Open observation `oid`'s card in the feed and its forget dialog; returns the card."""
    card = page.locator(f'#feed .card[data-key="observation:{oid}"]')
    card.locator(".card-head").click()
    card.locator(".forget-observation").click()
    page.locator("#forget-dialog").wait_for()
    return card


def titles(page, selector="#feed .card .title") -> list[str]:
    return page.locator(selector).all_text_contents()


def test_sessions_list_and_a_session_told_as_a_story(served, open_page, data_dir):
    seed_story(data_dir)
    watched = open_page(served.start().url)
    page = watched.page
    page.click(".views a[data-view=sessions]")
    page.wait_for_selector("#sessions .session-row")
    assert address(page) == "?view=sessions"
    first = page.locator("#sessions .session-row").first
    assert first.locator(".session-title").text_content() == "Checkout totals round per line, not per order"
    assert "1 prompt · 2 observations · 1 summary" in first.inner_text() and "shop-api" in first.inner_text()
    assert first.locator(".status").text_content() == "completed"
    total = count(data_dir, "SELECT COUNT(*) FROM sessions")
    assert page.text_content("#sessions-count") == f"{total} sessions"
    page.select_option("#project", SHOP)
    wait_for(lambda: all("shop-api" in row for row in page.locator("#sessions .session-row").all_inner_texts()),
             10, "shop-api's sessions")
    assert "project=%2Fhome%2Fdev%2Fshop-api" in address(page) and "view=sessions" in address(page)
    assert page.locator("#forget-project").is_visible()

    page.select_option("#project", "")
    page.locator("#sessions .session-title", has_text="Retry the billing API").click()
    page.wait_for_selector("#story .card")
    assert "view=session&" in address(page) and "session=story-2" in address(page)
    assert page.text_content("#session-title") == "Retry the billing API on 502/503/504 with backoff"
    assert "invoice-sync" in page.text_content("#session-facts") and "3 prompts · 5 observations" in page.text_content(
        "#session-facts")
    story = page.locator("#story > .card").evaluate_all("cards => cards.map(c => c.dataset.key.split(':')[0])")
    assert story == ["prompt", "observation", "prompt", "observation", "observation", "observation", "prompt",
                     "observation", "summary"]
    assert page.locator("#story .card .tag").first.text_content() == "prompt 1"
    card = page.locator("#story .card", has_text="Retry idempotent requests only")
    card.locator(".card-head").click()
    assert "billed" not in card.locator(".narrative").text_content()
    assert "could bill a customer twice" in card.locator(".narrative").text_content()
    page.go_back()
    page.wait_for_selector("#view-sessions:not([hidden])")
    page.go_forward()
    page.wait_for_selector("#view-session:not([hidden])")
    page.reload()
    page.wait_for_selector("#story .card")
    assert page.text_content("#session-title") == "Retry the billing API on 502/503/504 with backoff"
    page.click("#session-back")
    page.wait_for_selector("#view-sessions:not([hidden])")
    watched.assert_clean()


def test_forgetting_an_observation_asks_first_and_cancel_changes_nothing(served, open_page, data_dir):
    seed_story(data_dir)
    title = "Retry idempotent requests only; POST is never retried"
    oid = observation_id(data_dir, title)
    watched = open_page(served.start().url)
    page = watched.page
    card = ask_to_forget(page, oid)
    dialog = page.locator("#forget-dialog")
    assert page.evaluate("document.querySelector('#forget-dialog').open") is True
    assert page.text_content("#forget-title") == "Forget this observation?"
    assert title in page.text_content("#forget-what")
    assert page.locator("#forget-counts li").all_text_contents() == ["1 observation"]
    assert page.evaluate("document.activeElement.id") == "forget-cancel"
    page.screenshot(path=str(data_dir.parent / "forget-dialog.png"))
    page.click("#forget-cancel")
    assert dialog.is_hidden()
    assert count(data_dir, "SELECT COUNT(*) FROM observations WHERE id = ?", oid) == 1
    assert card.is_visible()
    # Esc closes the dialog as Cancel does.
    card.locator(".forget-observation").click()
    dialog.wait_for()
    page.keyboard.press("Escape")
    assert dialog.is_hidden()
    page.wait_for_timeout(300)
    assert count(data_dir, "SELECT COUNT(*) FROM observations WHERE id = ?", oid) == 1
    watched.assert_clean()


def test_a_confirmed_forget_removes_the_rows_here_and_live_in_another_viewer(served, open_page, data_dir):
    seed_story(data_dir)
    title = "Fix off-by-one in the retry loop that made one attempt too many"
    oid = observation_id(data_dir, title)
    served.start()
    other = open_page(served.url + "?q=off-by-one")  # a second viewer, showing it as a search result
    other.page.wait_for_selector(f'#feed .card[data-key="observation:{oid}"]')
    matches = int(other.page.text_content("#feed-count").split()[0])  # the session's summary names it too
    story = open_page(served.url + "?view=session&session=story-2")  # a third, on its session page
    story.page.wait_for_selector(f'#story .card[data-key="observation:{oid}"]')
    wait_for(lambda: served.ctx.bus.subscriber_count == 2, 10, "two streams")
    watched = open_page(served.url)
    page = watched.page
    card = ask_to_forget(page, oid)
    page.click("#forget-confirm")
    card.wait_for(state="detached")
    assert count(data_dir, "SELECT COUNT(*) FROM observations WHERE id = ?", oid) == 0
    other.page.locator(f'#feed .card[data-key="observation:{oid}"]').wait_for(state="detached")
    assert other.page.text_content("#feed-count").startswith(f"{matches - 1} match")
    story.page.locator(f'#story .card[data-key="observation:{oid}"]').wait_for(state="detached")
    assert story.page.locator("#story .card").count() == 8
    for viewer in (watched, other, story):
        viewer.assert_clean()


def test_forgetting_a_session_and_a_project_names_what_goes_and_counts_it(served, open_page, data_dir):
    seed_story(data_dir)
    served.start()
    other = open_page(served.url + "?view=sessions")
    other.page.wait_for_selector('#sessions .session-row[data-session="story-1"]')
    watched = open_page(served.url + "?view=session&session=story-1")
    page = watched.page
    page.wait_for_selector("#story .card")
    page.click("#forget-session")
    page.locator("#forget-dialog").wait_for()
    assert page.text_content("#forget-title") == "Forget this session?"
    counts = page.locator("#forget-counts li").all_text_contents()
    assert "1 observation" in counts and "1 prompt" in counts and "1 summary" in counts
    assert "1 session" in counts
    page.click("#forget-cancel")
    assert count(data_dir, "SELECT COUNT(*) FROM sessions WHERE content_session_id = 'story-1'") == 1
    page.click("#forget-session")
    page.click("#forget-confirm")
    page.wait_for_selector("#session-gone:not([hidden])")
    assert page.locator("#story .card").count() == 0
    assert count(data_dir, "SELECT COUNT(*) FROM sessions WHERE content_session_id = 'story-1'") == 0
    other.page.locator('#sessions .session-row[data-session="story-1"]').wait_for(state="detached")

    before = count(data_dir, "SELECT COUNT(*) FROM observations WHERE project = ?", SHOP)
    assert before > 0
    page.goto(served.url + "?view=sessions&project=" + SHOP)
    page.click("#forget-project")
    page.locator("#forget-dialog").wait_for()
    assert "shop-api" in page.text_content("#forget-title")
    assert f"{before} observations" in page.locator("#forget-counts li").all_text_contents()
    page.click("#forget-confirm")
    page.locator("#forget-dialog").wait_for(state="hidden")
    wait_for(lambda: count(data_dir, "SELECT COUNT(*) FROM observations WHERE project = ?", SHOP) == 0, 10, "the forget")
    wait_for(lambda: "project=" not in address(page), 10, "the filter to drop the forgotten project")
    wait_for(lambda: not any("shop-api" in row for row in other.page.locator("#sessions .session-row").all_inner_texts()),
             10, "shop-api's sessions to leave the other viewer")
    assert count(data_dir, "SELECT COUNT(*) FROM observations WHERE project = ?", INVOICES) > 0
    watched.assert_clean()
    other.assert_clean()


def test_what_the_cli_writes_shows_live_and_its_forget_refreshes_the_totals(served, open_page, data_dir):
    """No reload: a note remembered from the CLI (another process) appears, a projects merge redraws its
    card, forgetting it from the CLI removes the card, and the totals beside the feed follow."""
    seed_story(data_dir)
    watched = open_page(served.start().url)
    page = watched.page
    page.wait_for_selector("#feed .card")
    stored = count(data_dir, "SELECT COUNT(*) FROM observations")
    assert page.text_content("#totals").startswith(f"{stored} observations")
    env = worker_env(data_dir)
    remembered = cli("remember", "Invoice numbers restart every year and are never reused.", "--project", INVOICES,
                     "--json", env=env)
    assert remembered.returncode == 0, remembered.stderr
    note = json.loads(remembered.stdout)["id"]
    card = page.locator(f'#feed .card[data-key="observation:{note}"]')
    card.wait_for()
    assert card.locator(".title").text_content() == "Invoice numbers restart every year and are never reused."
    wait_for(lambda: page.text_content("#totals").startswith(f"{stored + 1} observations"), 10, "the totals to count it")
    assert card.locator(".project").text_content() == "invoice-sync"
    assert cli("projects", "merge", INVOICES, SHOP, "--yes", env=env).returncode == 0  # its rows change project
    wait_for(lambda: card.locator(".project").text_content() == "shop-api", 10, "the card to show its new project")
    assert cli("forget", str(note), "--yes", env=env).returncode == 0
    card.wait_for(state="detached")
    wait_for(lambda: page.text_content("#totals").startswith(f"{stored} observations"), 10, "the totals after the forget")
    watched.assert_clean()


def test_filters_live_in_the_address_and_survive_reload_and_history(served, open_page, data_dir):
    seed_story(data_dir)
    watched = open_page(served.start().url)
    page = watched.page
    page.wait_for_selector("#feed .card")
    page.select_option("#project", INVOICES)
    page.select_option("#type", "decision")
    wait_for(lambda: titles(page) and all(tag == "decision" for tag in page.locator("#feed .card .tag").all_text_contents()),
             10, "decisions only")
    assert "type=decision" in address(page) and "project=%2Fhome%2Fdev%2Finvoice-sync" in address(page)
    assert page.text_content("#feed-title") == "decision observations"
    decisions = titles(page)
    page.fill("#search", "retry")
    wait_for(lambda: "q=retry" in address(page) and page.text_content("#feed-title") == "Search results", 10, "the search")
    page.select_option("#mode", "keyword")
    wait_for(lambda: "mode=keyword" in address(page) and titles(page), 10, "the keyword results")
    found = titles(page)
    assert found and set(found) <= set(decisions)
    page.reload()
    wait_for(lambda: titles(page) == found, 10, "the same results after a reload")
    assert page.input_value("#search") == "retry" and page.input_value("#type") == "decision"
    assert page.input_value("#mode") == "keyword" and page.input_value("#project") == INVOICES
    page.go_back()  # before the mode
    wait_for(lambda: "mode=" not in address(page) and page.input_value("#mode") == "", 10, "back: no mode")
    page.go_back()  # before the search
    wait_for(lambda: "q=" not in address(page) and page.text_content("#feed-title") == "decision observations", 10, "back")
    wait_for(lambda: titles(page) == decisions, 10, "the decisions again")
    page.go_forward()
    wait_for(lambda: page.input_value("#search") == "retry", 10, "forward: the search again")
    page.click(".views a[data-view=stats]")
    page.wait_for_selector("#view-stats:not([hidden])")
    assert "view=stats" in address(page) and "project=" in address(page)
    assert page.locator("#type").is_hidden()  # the type filter is the feed's
    watched.assert_clean()


def test_keyboard_search_select_open_and_escape(served, open_page, data_dir):
    seed_story(data_dir)
    watched = open_page(served.start().url)
    page = watched.page
    page.wait_for_selector("#feed .card")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "search"
    page.keyboard.type("jitter")  # j and k while typing are letters, not moves
    wait_for(lambda: page.text_content("#feed-title") == "Search results" and titles(page), 10, "the search")
    assert page.input_value("#search") == "jitter"
    page.keyboard.press("Escape")
    wait_for(lambda: page.input_value("#search") == "" and len(titles(page)) == 20, 10, "the feed again")
    assert page.text_content("#feed-title") == "Live feed"
    page.keyboard.press("Escape")  # an empty search box: Esc leaves it
    assert page.evaluate("document.activeElement.id") != "search"
    page.keyboard.press("j")
    page.keyboard.press("j")
    selected = page.locator("#feed .card.selected")
    assert selected.count() == 1 and "keyboard" in page.evaluate("document.body.className")  # outlined
    assert selected.get_attribute("data-key") == page.locator("#feed .card").nth(1).get_attribute("data-key")
    page.keyboard.press("k")
    assert page.locator("#feed .card").first.get_attribute("class").endswith("selected")
    page.keyboard.press("Enter")
    page.locator("#feed .card.selected .details:not([hidden])").wait_for()
    assert page.locator("#feed .card.selected .card-head").get_attribute("aria-expanded") == "true"
    page.keyboard.press("?")
    page.locator("#keys-dialog").wait_for()
    assert "next / previous item" in page.text_content("#keys-dialog")
    page.keyboard.press("Escape")
    page.locator("#keys-dialog").wait_for(state="hidden")
    # On the sessions list, Enter opens the selected session's page.
    page.click(".views a[data-view=sessions]")
    page.wait_for_selector("#sessions .session-row")
    page.locator("body").focus()
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_selector("#view-session:not([hidden]) #story .card")
    assert "session=story-0" in address(page)
    watched.assert_clean()


def test_the_author_of_a_session_and_an_observation_shows_when_team_memory_records_one(served, open_page, data_dir):
    seed_story(data_dir)
    conn = sqlite3.connect(db.db_path(str(data_dir)))
    columns = {row[1] for row in conn.execute("PRAGMA table_info(sessions)")}
    conn.close()
    served.start()
    watched = open_page(served.url)
    page = watched.page
    page.wait_for_selector("#feed .card")
    if "author" not in columns:  # team memory not in this store: nothing named, nothing broken
        assert page.locator("#feed .author").count() == 0
        return
    served.ctx.bus.publish("observation", {"id": 99999, "project": INVOICES, "type": "change", "title": "By a teammate",
                                           "author": "ana", "created_at": "2999-01-01T00:00:00.000Z"})
    page.locator("#feed .card", has_text="By a teammate").locator(".author").wait_for()
    assert page.locator("#feed .card", has_text="By a teammate").locator(".author").text_content() == "by ana"


def test_forgetting_an_observation_names_the_summary_of_its_turn_before_asking(served, open_page, data_dir):
    """Issue 26: the turn's summary restates the observation; the dialog says it goes too, and it does."""
    seed_story(data_dir)
    title = "Retry idempotent requests only; POST is never retried"
    oid = observation_id(data_dir, title)
    conn = sqlite3.connect(db.db_path(str(data_dir)))
    sid = conn.execute("SELECT s.id FROM summaries s JOIN observations o ON o.session_id = s.session_id"
                       " WHERE o.id = ? ORDER BY s.id LIMIT 1", (oid,)).fetchone()[0]
    conn.execute("UPDATE summaries SET prompt_number = (SELECT prompt_number FROM observations WHERE id = ?)"
                 " WHERE id = ?", (oid, sid))
    conn.commit()
    conn.close()
    watched = open_page(served.start().url)
    page = watched.page
    card = ask_to_forget(page, oid)
    page.wait_for_function("document.querySelectorAll('#forget-counts li').length >= 2")
    assert page.locator("#forget-counts li").all_text_contents() == ["1 observation", "1 summary"]
    assert f"the summary of its turn (S{sid})" in page.text_content("#forget-describe")
    page.click("#forget-confirm")
    card.wait_for(state="detached")
    assert count(data_dir, "SELECT COUNT(*) FROM summaries WHERE id = ?", sid) == 0
    watched.assert_clean()
