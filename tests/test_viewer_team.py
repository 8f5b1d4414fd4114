"""Team memory in the viewer (Chromium + Playwright): a teammate's rows carry their author on cards and
sessions, an author filter appears once teammates' rows are here and lives in the address."""

from claude_mem.store import db
from test_observer_worker import wait_for
from test_viewer_manage import address, titles
from viewer_support import SHOP, browser, open_page, seed_story, served  # noqa: F401  (fixtures)


def pulled_from_bob(data_dir) -> list[str]:
    """Mark two of the story's observations and their session as pulled from Bob's machine."""
    conn = db.connect(db.db_path(str(data_dir)))
    try:
        rows = conn.execute("SELECT id, title, session_id FROM observations WHERE project = ? ORDER BY id LIMIT 2",
                            (SHOP,)).fetchall()
        for row_id, _, session_id in rows:
            conn.execute("UPDATE observations SET author = 'bob', device = 'bob-laptop-1', team_rev = ? WHERE id = ?",
                         (row_id, row_id))
            conn.execute("UPDATE sessions SET author = 'bob', device = 'bob-laptop-1', team_rev = 1 WHERE id = ?",
                         (session_id,))
        return [title for _, title, _ in rows]
    finally:
        conn.close()


def test_authors_show_and_filter_the_feed(served, open_page, data_dir):
    seed_story(data_dir)
    bobs = pulled_from_bob(data_dir)
    watched = open_page(served.start().url)
    page = watched.page
    page.wait_for_selector("#feed .card")
    wait_for(lambda: page.locator("#author").is_visible(), 10, "the author filter")
    assert page.locator("#author option").all_text_contents() == ["Everyone", "by bob"]
    assert page.locator("#team").is_hidden()  # team memory is not configured on this machine

    page.select_option("#author", "bob")
    wait_for(lambda: sorted(titles(page)) == sorted(bobs), 10, "only Bob's observations")
    assert "author=bob" in address(page)
    assert page.locator("#feed .card .author").all_text_contents() == ["by bob", "by bob"]
    assert "by bob" in page.text_content("#feed-title")

    page.reload()
    wait_for(lambda: sorted(titles(page)) == sorted(bobs), 10, "the filter after a reload")
    assert page.input_value("#author") == "bob"

    page.click(".views a[data-view=sessions]")
    page.wait_for_selector("#sessions .session-row")
    assert any("by bob" in row for row in page.locator("#sessions .session-row").all_inner_texts())
    watched.assert_clean()
