"""The viewer's stats view (Chromium + Playwright over the worker on real uvicorn): real figures from a
seeded store — observations by type per day, observer tokens per day and per tool event, the index
against the narratives it stands for, MCP fetches per observation — drawn as accessible inline SVG.
With CLAUDE_MEM_VIEWER_SCREENSHOTS=DIR the README's screenshots are written there."""

import os
import re

from conftest import REPO
from test_observer_worker import wait_for
from test_viewer_manage import count as scalar
from viewer_support import SHOP, browser, open_page, seed_story, served  # noqa: F401  (fixtures)

SCREENSHOTS = os.environ.get("CLAUDE_MEM_VIEWER_SCREENSHOTS")


def tiles(page) -> dict[str, str]:
    labels = page.locator("#stats .tile-label").all_text_contents()
    values = page.locator("#stats .tile-value").all_text_contents()
    return dict(zip(labels, values))


def test_stats_show_what_memory_costs_and_saves_per_project_and_overall(served, open_page, data_dir):
    seed_story(data_dir)
    watched = open_page(served.start().url + "?view=stats")
    page = watched.page
    page.wait_for_selector("#stats .tile")
    usage = page.evaluate("fetch('/api/stats?days=30').then(r => r.json()).then(s => s.usage)")
    shown = tiles(page)
    observations = scalar(data_dir, "SELECT COUNT(*) FROM observations")
    events = scalar(data_dir, "SELECT COUNT(*) FROM pending_events WHERE kind = 'tool' AND status = 'done'")
    assert shown["Observations"] == f"{observations:,}" and shown["Tool events"] == f"{events:,}"
    assert usage["tool_events"] == events and usage["observer_input_tokens"] > 0
    assert shown["Tokens per tool event"] == f"{round(usage['tokens_per_event']):,}"
    ratio = usage["index"]["narrative_tokens"] / usage["index"]["injected_tokens"]
    assert shown["Index vs narratives"] == f"{ratio:.1f}×" and ratio > 1
    fetches = scalar(data_dir, "SELECT SUM(fetch_count) FROM observations")
    assert shown["MCP fetches per observation"] == f"{fetches / observations:.2f}"

    charts = page.locator("#stats svg.chart")
    assert charts.count() == 4  # observations, observer tokens, index against narratives, memory in use
    for n in range(4):
        chart = charts.nth(n)
        assert chart.get_attribute("role") == "img"
        title_id, desc_id = chart.get_attribute("aria-labelledby").split()
        assert page.locator(f"#{title_id}").text_content() and page.locator(f"#{desc_id}").text_content()
    bars = page.locator("#stats svg.chart").first.locator("rect")
    assert bars.count() > 10
    bar_titles = bars.locator("title").all_text_contents()
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d · [a-z]+: \d+", text) for text in bar_titles)
    assert sum(int(text.rsplit(": ", 1)[1]) for text in bar_titles) == observations  # every one drawn once
    summaries = page.locator("#stats .chart-summary").all_text_contents()
    assert summaries[0].startswith(f"{observations} observations in 30 days")
    assert f"{events} tool events" in summaries[1]
    assert "Progressive disclosure leaves" in summaries[2]
    token_titles = page.locator("#stats svg.chart").nth(1).locator("rect title").all_text_contents()
    assert sum(int(t.split(": ")[1].split()[0].replace(",", "")) for t in token_titles if "input" in t) == usage[
        "observer_input_tokens"]

    page.select_option("#project", SHOP)
    wait_for(lambda: page.text_content("#stats-scope") == "shop-api"
             and tiles(page).get("Observations") == str(scalar(data_dir, "SELECT COUNT(*) FROM observations WHERE project = ?", SHOP)),
             10, "shop-api's figures")
    assert "project=%2Fhome%2Fdev%2Fshop-api" in page.evaluate("location.search")
    page.screenshot(path=str(data_dir.parent / "stats.png"), full_page=True)
    watched.assert_clean()


def test_stats_show_how_much_of_the_memory_shown_was_used(served, open_page, data_dir):
    """Issue 30: sessions shown an index, one of which then used two of its rows; the rest went unused."""
    from claude_mem.domain import utc_now
    from claude_mem.store import context as store_context
    from claude_mem.store import db
    from claude_mem.store import use as store_use

    seed_story(data_dir)
    conn = db.connect(db.db_path(str(data_dir)))
    rows = conn.execute("SELECT content_session_id, id, project FROM sessions ORDER BY id DESC LIMIT 3").fetchall()
    listed = [row[0] for row in conn.execute("SELECT id FROM observations WHERE project = ? ORDER BY id DESC LIMIT 8",
                                             (rows[0][2],))]
    for content_id, _, project in rows:
        assert store_context.record_injection(conn, content_id, project, "/tmp", utc_now(), listed, True, 900)
    used = rows[0][1]
    store_use.record_used(conn, [(used, listed[2], "fetched", utc_now()), (used, listed[5], "cited", utc_now())], 0)
    conn.close()
    watched = open_page(served.start().url + "?view=stats")
    page = watched.page
    page.wait_for_selector("#stats .use-lists")
    shown = tiles(page)
    assert shown["Memory used"] == "8%"  # 2 of 24 shown
    assert "2 of 24 shown" in page.locator("#stats .tile-note").all_text_contents()
    assert shown["Sessions given memory"] == "3"
    summary = page.locator("#stats .chart-summary").nth(3).text_content()
    assert summary.startswith("Sessions were shown 24 memories in 30 days and used 2 of them (8%)")
    assert "fetched 1, found by a search 0, cited 1" in summary
    most = page.locator("#stats .use-list").first.locator(".use-ref").all_text_contents()
    assert sorted(most) == sorted([f"#{listed[2]}", f"#{listed[5]}"])
    never = page.locator("#stats .use-list").nth(1).locator(".use-row").all_text_contents()
    assert never and all("shown in 3 sessions" in text for text in never)
    page.screenshot(path=str(data_dir.parent / "stats-use.png"), full_page=True)
    watched.assert_clean()


def test_an_empty_store_has_stats_too(served, open_page):
    watched = open_page(served.start().url + "?view=stats")
    page = watched.page
    page.wait_for_selector("#stats .tile")
    assert tiles(page)["Observations"] == "0"
    assert page.locator("#stats .chart-summary").first.text_content() == "No observations in the last 30 days."
    assert "No narratives stored yet" in page.locator("#stats .chart-summary").nth(2).text_content()
    watched.assert_clean()


def test_readme_screenshots_exist_and_stay_small():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as handle:
        images = re.findall(r"!\[[^\]]*\]\((docs/images/[^)]+)\)", handle.read())
    assert "docs/images/viewer.png" in images and "docs/images/viewer-stats.png" in images
    for image in images:
        path = os.path.join(REPO, image)
        assert os.path.isfile(path), f"README shows {image}, which does not exist"
        assert os.path.getsize(path) < 200_000, f"{image} is over 200 KB"


def test_screenshots_for_the_readme(served, open_page, data_dir):
    """The README's pictures of a realistic store (written only when CLAUDE_MEM_VIEWER_SCREENSHOTS names a dir)."""
    seed_story(data_dir, days=29)
    target = SCREENSHOTS or str(data_dir.parent)
    watched = open_page(served.start().url, viewport={"width": 1280, "height": 800}, color_scheme="light")
    page = watched.page
    page.wait_for_selector("#feed .card")
    # This test worker runs no observer service; the picture shows the badge of a worker whose observer runs.
    wait_for(lambda: served.ctx.bus.subscriber_count == 1, 10, "the page's stream")
    served.ctx.bus.publish("health", {"provider": {"name": "claude", "ok": True, "reason": ""},
                                      "queue": {"pending": 0, "claimed": 0, "done": 492, "failed": 0}})
    page.wait_for_selector("#health.ok")
    card = page.locator("#feed .card[data-key^=observation]", has_text="Round per line everywhere")
    card.locator(".card-head").click()
    card.locator(".narrative").wait_for()
    page.mouse.move(0, 0)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=os.path.join(target, "viewer.png"))
    page.click(".views a[data-view=stats]")
    page.wait_for_selector("#stats svg.chart")
    page.screenshot(path=os.path.join(target, "viewer-stats.png"))
    watched.assert_clean()
