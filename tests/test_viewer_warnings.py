"""The viewer's settings-warning banner (Chromium + Playwright), fed from `/health`'s `warnings`."""

import json

from test_observer_worker import wait_for
from viewer_support import browser, open_page, served  # noqa: F401  (fixtures)

HOSTILE = "<img src=x onerror=alert(1)>"


def test_refused_settings_show_as_a_banner_and_go_away_when_fixed(served, open_page, data_dir):
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "settings.json").write_text(json.dumps({"max_attempts": "lots", "claude_model": [HOSTILE]}))
    watched = open_page(served.start().url)
    page = watched.page
    page.wait_for_selector("#settings-warnings:not([hidden])")
    items = page.locator("#settings-warnings-list li").all_text_contents()
    assert len(items) == 2
    assert any("max_attempts = 'lots' from file (settings.json) is refused" in item for item in items)
    assert any(HOSTILE in item for item in items)  # shown as text, never as markup
    assert page.locator("#settings-warnings img").count() == 0
    assert page.locator("#banner").is_hidden()  # the disconnection banner is another matter
    # Fixed on disk: a fresh /health (page reload) hides the banner.
    (data_dir / "settings.json").write_text(json.dumps({"max_attempts": 5}))
    page.reload()
    wait_for(lambda: page.text_content("#health .badge-text") not in ("connecting…", "disconnected"), 10, "health")
    assert page.locator("#settings-warnings").is_hidden()
    watched.assert_clean()


def test_no_banner_when_every_setting_is_good(served, open_page):
    watched = open_page(served.start().url)
    page = watched.page
    wait_for(lambda: page.text_content("#health .badge-text") not in ("connecting…", "disconnected"), 10, "health")
    assert page.locator("#settings-warnings").is_hidden()
    watched.assert_clean()
