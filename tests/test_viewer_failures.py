"""The viewer's stats view lists recurring failures and their fixes (issue 31; Chromium + Playwright over the
worker on real uvicorn): failures captured through the real hook commands, the resolution derived as the
worker does, the fixing observation named; `/api/failures` behind it; stored text shown as text."""

from claude_mem.recall import failures
from claude_mem.store import db
from recall_seed import add_observation
from test_failure_notes import Session, make_repo
from viewer_support import browser, open_page, served  # noqa: F401  (fixtures)

ERROR = "E   ModuleNotFoundError: No module named 'urllib3'\n<img src=x onerror=alert(1)>"


def test_the_stats_view_lists_recurring_failures_with_their_fix(served, open_page, data_dir, tmp_path):
    root = make_repo(tmp_path / "shop")
    session = Session("sess-viewer", root)
    session.bash("pip install -e .", 1, ERROR)
    session.edit("shop/cart.py", "return sum(prices)", "return sum(prices)  # pinned urllib3<2")
    session.bash("pip install -e .", 0, "Successfully installed shop")
    session.bash("pip install -e .", 1, ERROR.replace("urllib3'", "urllib3' (attempt 2)"))
    session.bash("make lint", 2, "error: lint failed once")  # seen once: not recurring
    conn = db.connect(db.db_path(str(data_dir)))
    try:
        failures.resolve(conn)
        [(session_id, project)] = conn.execute("SELECT id, project FROM sessions").fetchall()
        [(edit_event,)] = conn.execute("SELECT id FROM pending_events WHERE payload LIKE '%\"Edit\"%'").fetchall()
        fixing = add_observation(conn, project, "Pinned urllib3<2 in the package", kind="bugfix",
                                 session_id=session_id, files_modified=("requirements.txt",))
        conn.execute("INSERT INTO observation_sources (observation_id, event_id) VALUES (?, ?)", (fixing, edit_event))
        conn.commit()
    finally:
        conn.close()

    watched = open_page(served.start().url + "?view=stats")
    page = watched.page
    page.wait_for_selector("#failures .failure")
    listed = page.evaluate("fetch('/api/failures').then(r => r.json())")["failures"]
    assert [(item["program"], item["count"], item["resolved"]) for item in listed] == [("pip install", 2, False)]
    items = page.locator("#failures .failure")
    assert items.count() == 1
    text = items.first.inner_text()
    assert "pip install" in text and "2 times" in text and "pip install -e ." in text
    assert f"#{fixing} Pinned urllib3<2 in the package" in text and "requirements.txt" in text
    assert "failed again since (1 open)" in text
    assert page.locator("#failures img").count() == 0  # stored text is shown as text, never as markup
    assert "ModuleNotFoundError" in text
    assert [obs["id"] for obs in listed[0]["fix_observations"]] == [fixing]
    other = page.evaluate("fetch('/api/failures?project=nowhere-known').then(r => r.status)")
    assert other == 400  # an unknown project is a clear error, not an empty list
    watched.assert_clean(expected=("400",))
