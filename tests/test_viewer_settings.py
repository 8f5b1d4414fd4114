"""The viewer's settings panel, theme and small screens (Chromium + Playwright over the worker on real
uvicorn): edits validated by the worker (a bad value shows its reason and writes nothing), secrets
write-only, environment-set keys read-only with the reason, the restart offer; the theme remembered
and applied before the first paint; every view at 360 px."""

import json
import re

import pytest

from test_observer_worker import wait_for
from viewer_support import browser, open_page, seed_story, served  # noqa: F401  (fixtures)

SECRET = "sk-ant-api03-panel-secret-0123456789abcdef"


def setting(page, key: str):
    return page.locator(f'#settings .setting[data-key="{key}"]')


def settings_file(data_dir) -> dict:
    path = data_dir / "settings.json"
    return json.loads(path.read_text()) if path.exists() else {}


def test_a_bad_value_shows_the_reason_and_writes_nothing_a_good_one_is_saved(served, open_page, data_dir):
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "settings.json").write_text(json.dumps({"max_attempts": 4}))
    before = (data_dir / "settings.json").read_bytes()
    watched = open_page(served.start().url + "?view=settings")
    page = watched.page
    row = setting(page, "max_attempts")
    row.wait_for()
    assert row.locator(".source").text_content() == "settings.json"
    assert "default: 3" in row.inner_text()
    field = row.locator("input")
    assert field.get_attribute("type") == "number" and field.get_attribute("min") == "1" and field.get_attribute("max") == "20"
    assert field.input_value() == "4"
    field.fill("99")
    row.locator("button.save").click()
    row.locator(".setting-error:not([hidden])").wait_for()
    assert "out of range" in row.locator(".setting-error").text_content()
    assert (data_dir / "settings.json").read_bytes() == before  # nothing written
    assert field.input_value() == "99"  # the try stays for the user to fix
    page.screenshot(path=str(data_dir.parent / "settings.png"))
    field.fill("7")
    field.press("Enter")
    wait_for(lambda: settings_file(data_dir).get("max_attempts") == 7, 10, "the saved value")
    row.locator(".setting-status", has_text="saved").wait_for()
    assert row.locator(".setting-error").is_hidden()
    assert setting(page, "max_attempts").locator("input").input_value() == "7"
    # A restart-only setting changed: the panel says so and offers the restart.
    page.locator("#restart-needed:not([hidden])").wait_for()
    assert "max_attempts" in page.text_content("#restart-text")
    page.route("**/api/worker/restart", lambda route: route.fulfill(
        status=202, content_type="application/json", body='{"restarting": true, "port": 1}'))
    with page.expect_request(lambda request: request.url.endswith("/api/worker/restart") and request.method == "POST"):
        page.click("#restart")
    wait_for(lambda: page.text_content("#restart-text") == "Restarting the worker…", 10, "the restart note")
    watched.assert_clean(expected=("status of 422",))  # Chromium logs the refused PUT itself


def test_other_kinds_checkbox_select_and_list(served, open_page, data_dir):
    watched = open_page(served.start().url + "?view=settings")
    page = watched.page
    box = setting(page, "prompt_context").locator("input[type=checkbox]")
    box.wait_for()
    assert box.is_checked()
    box.uncheck()
    setting(page, "prompt_context").locator("button.save").click()
    wait_for(lambda: settings_file(data_dir).get("prompt_context") is False, 10, "the checkbox saved")
    setting(page, "prompt_context").locator(".setting-status", has_text="saved").wait_for()  # the panel redrawn
    choice = setting(page, "log_level").locator("select")
    assert choice.locator("option").all_text_contents() == ["debug", "info", "warning", "error"]
    choice.select_option("debug")
    setting(page, "log_level").locator("button.save").click()
    wait_for(lambda: settings_file(data_dir).get("log_level") == "debug", 10, "the choice saved")
    setting(page, "log_level").locator(".setting-status", has_text="saved").wait_for()
    tools = setting(page, "skip_tools").locator("textarea")
    assert tools.input_value().splitlines() == ["TodoWrite", "ListMcpResourcesTool", "AskUserQuestion"]
    tools.fill("TodoWrite\n\n  Glob  \n")
    setting(page, "skip_tools").locator("button.save").click()
    wait_for(lambda: settings_file(data_dir).get("skip_tools") == ["TodoWrite", "Glob"], 10, "the list saved")
    setting(page, "skip_tools").locator(".source", has_text="settings.json").wait_for()
    watched.assert_clean()


def test_a_secret_is_write_only_never_in_the_page_or_any_response(served, open_page, data_dir):
    watched = open_page(served.start().url + "?view=settings")
    page = watched.page
    bodies: list[bytes] = []
    page.on("response", lambda response: bodies.append(response.body()) if response.request.method != "HEAD" and
            "/stream" not in response.url else None)
    row = setting(page, "anthropic_api_key")
    row.wait_for()
    assert row.locator("input").get_attribute("type") == "password"
    assert row.locator(".secret-state").text_content() == "not set"
    row.locator("input").fill(SECRET)
    row.locator("button.save").click()
    wait_for(lambda: settings_file(data_dir).get("anthropic_api_key") == SECRET, 10, "the secret saved")
    row.locator(".secret-state", has_text=re.compile(r"^set$")).wait_for()
    assert setting(page, "anthropic_api_key").locator(".secret-state").text_content() == "set"
    assert setting(page, "anthropic_api_key").locator("input").input_value() == ""
    page.reload()
    setting(page, "anthropic_api_key").locator(".secret-state").wait_for()
    page.click(".views a[data-view=feed]")
    page.wait_for_selector("#view-feed:not([hidden])")
    assert SECRET not in page.content()
    assert SECRET not in page.evaluate("JSON.stringify([...document.querySelectorAll('input')].map(i => i.value))")
    assert bodies and not any(SECRET.encode() in body for body in bodies)
    assert not any(b"panel-secret" in body for body in bodies)
    watched.assert_clean()


def test_keys_set_in_the_environment_are_read_only_with_the_reason(served, open_page, data_dir, monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_MAX_OBSERVERS", "5")
    watched = open_page(served.start().url + "?view=settings")
    page = watched.page
    row = setting(page, "max_observers")
    row.wait_for()
    assert row.locator(".source").text_content() == "environment"
    assert row.locator("input, select, textarea, button").count() == 0
    assert row.locator(".setting-value").text_content() == "5"
    assert "CLAUDE_MEM_MAX_OBSERVERS" in row.locator(".reason").text_content()
    assert "CLAUDE_MEM_DATA_DIR" in setting(page, "data_dir").locator(".reason").text_content()
    watched.assert_clean()


def test_the_theme_is_remembered_and_applied_before_the_stylesheet(served, open_page, data_dir):
    seed_story(data_dir)
    watched = open_page(served.start().url, color_scheme="light")
    page = watched.page
    page.wait_for_selector("#feed .card")
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    light = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.select_option("#theme", "dark")
    wait_for(lambda: page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(22, 22, 21)", 10, "dark")
    assert page.evaluate("getComputedStyle(document.documentElement).colorScheme") == "dark"
    page.screenshot(path=str(data_dir.parent / "dark.png"))
    # Reload with the stylesheet held back: the theme is on <html> (and the canvas told) before any CSS.
    held = []
    page.route("**/static/style.css", lambda route: held.append(route))
    page.reload(wait_until="commit")
    wait_for(lambda: held or page.wait_for_timeout(50), 10, "the stylesheet request")  # (the wait lets events in)
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert page.evaluate("document.querySelector('meta[name=color-scheme]').content") == "dark"
    assert page.evaluate("document.styleSheets.length") == 0
    held[0].continue_()
    page.unroute("**/static/style.css")
    page.wait_for_selector("#feed .card")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(22, 22, 21)"
    assert page.input_value("#theme") == "dark"
    # Another tab follows the change; "system" follows the browser again.
    other = open_page(served.url, color_scheme="light")
    other.page.wait_for_selector("#feed .card")
    assert other.page.evaluate("document.documentElement.dataset.theme") == "light"  # a new context, its own storage
    page.select_option("#theme", "system")
    wait_for(lambda: page.evaluate("getComputedStyle(document.body).backgroundColor") == light, 10, "the system theme")
    page.reload()
    page.wait_for_selector("#feed .card")
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    assert page.evaluate("localStorage.getItem('claude-mem-theme')") is None
    watched.assert_clean()


@pytest.mark.parametrize("view", ["", "?view=sessions", "?view=session&session=story-2", "?view=stats",
                                  "?view=settings"])
def test_every_view_fits_a_phone_and_navigation_works_there(served, open_page, data_dir, view):
    seed_story(data_dir)
    watched = open_page(served.start().url + view, viewport={"width": 360, "height": 740}, color_scheme="dark")
    page = watched.page
    page.wait_for_selector("main > .view:not([hidden]) :is(.card, .session-row, .tile, .setting)")
    if view == "?view=session&session=story-2":
        page.locator("#story .card-head").nth(2).click()
        page.locator("#story .narrative").wait_for()
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    for link in page.locator(".views a").all():
        box = link.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 360
    page.screenshot(path=str(data_dir.parent / f"phone{view.replace('?', '-').replace('&', '-')}.png"), full_page=True)
    page.click(".views a[data-view=stats]" if "stats" not in view else ".views a[data-view=feed]")
    page.wait_for_selector("main > .view:not([hidden]) :is(.card, .tile)")
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    watched.assert_clean()
