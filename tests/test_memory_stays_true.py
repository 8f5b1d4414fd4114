"""Issue 26 end to end, as a user meets it: in a real git repository driven through the real hook
commands and the offline observer, an observation about a file is `current`; after the file is edited
and committed it is `changed` (naming the file) in search JSON, the MCP answer and the session-start
index; after the file is deleted, `deleted`. (Supersession, ids, event time, forget and notes have
their own end-to-end tests: test_supersession, test_store, test_event_time, test_forget,
test_note_projects.)"""

from __future__ import annotations

import asyncio
import json
import os

from click.testing import CliRunner

from claude_mem import settings as settings_module
from claude_mem import store
from claude_mem.cli import cli
from claude_mem.mcp_server import answers
from claude_mem.observer.pipeline import Pipeline
from claude_mem.observer.providers.offline import OfflineProvider
from hook_support import run_hook
from observer_support import drain
from test_fingerprints import git, repo, session_payloads, write  # noqa: F401 - `repo` is a fixture

HOOKS = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt", "PostToolUse": "post-tool",
         "Stop": "stop", "SessionEnd": "session-end"}
CONTENTS = {"Write": "hello from fake model\nsecond line\n", "Edit": "goodbye from fake model\nsecond line\n"}


def capture_and_observe(data_dir: str, root: str) -> None:
    """The session-edit fixture session through the real hook commands, then the offline observer."""
    for payload in session_payloads(root):
        tool = payload.get("tool_name")
        if tool in CONTENTS:  # the tool ran before PostToolUse: the file is as it left it
            write(os.path.join(root, "hello.txt"), CONTENTS[tool])
        result = run_hook(HOOKS[payload["hook_event_name"]], payload, {"CLAUDE_PROJECT_DIR": root})
        assert result.returncode == 0 and result.stderr == b"", result.stderr
    values = settings_module.load()
    values.update({"retry_backoff_seconds": 0.0, "provider": "offline"})
    with store.open(data_dir) as db:
        asyncio.run(drain(Pipeline(db, values, OfflineProvider())))


def search_json(root: str) -> list[dict[str, object]]:
    cwd = os.getcwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(cli, ["search", "hello", "--mode", "keyword", "--json"])
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    return list(json.loads(result.output)["items"])


def index_text(root: str) -> str:
    cwd = os.getcwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(cli, ["context"])
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    return str(result.output)


def test_an_observation_goes_from_current_to_changed_to_deleted(data_dir, repo, monkeypatch):  # noqa: F811
    root = str(repo)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", root)
    capture_and_observe(data_dir, root)
    observed = {item["id"] for item in search_json(root) if item["freshness"] != "unknown"}
    assert observed, "the offline observer made no observation about a file"
    assert {item["freshness"] for item in search_json(root) if item["id"] in observed} == {"current"}

    write(os.path.join(root, "hello.txt"), "rewritten by hand\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "rewrite hello")
    changed = [item for item in search_json(root) if item["id"] in observed]
    assert {item["freshness"] for item in changed} == {"changed"}
    assert all(item["changed_files"] == ["hello.txt"] for item in changed)
    with store.open(data_dir) as db:
        mcp = answers.search_text(db, root, "hello")
    assert "(changed: hello.txt)" in mcp
    assert "(changed: hello.txt)" in index_text(root)

    os.unlink(os.path.join(root, "hello.txt"))
    deleted = [item for item in search_json(root) if item["id"] in observed]
    assert {item["freshness"] for item in deleted} == {"deleted"}
    with store.open(data_dir) as db:
        assert "(deleted: hello.txt)" in answers.search_text(db, root, "hello")
    assert "(deleted: hello.txt)" in index_text(root)
