"""Memory in use (issue 30): what a session was shown (recorded by the hooks) and what it then used —
fetched, found by a search it ran, or cited — derived by the worker from the captured events; the
figures `status --json` and `/api/stats` report. Real SQLite, the real hook commands, the real worker."""

import json
import os
import re
import subprocess
import sys
import urllib.request

import pytest

from claude_mem.recall import usage, use
from claude_mem.store import db
from claude_mem.store import use as store_use
from conftest import REPO
from recall_seed import add_observation, seed_project
from test_worker_lifecycle import cli, wait_for, worker_env  # noqa: F401  (fixture)

PLUGIN = "mcp__plugin_persistent-memory_memory__"


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    return str(root)


def hook(data_dir, name: str, payload: dict, **env: str) -> dict | None:
    """One hook exactly as hooks/hooks.json runs it (`python3 -I -S scripts/hook.py NAME`)."""
    environment = {**os.environ, "CLAUDE_MEM_DATA_DIR": str(data_dir), "CLAUDE_MEM_AUTOSTART": "false", **env}
    done = subprocess.run([sys.executable, "-I", "-S", os.path.join(REPO, "scripts", "hook.py"), name],
                          input=json.dumps(payload).encode(), capture_output=True, timeout=60, env=environment)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def event(project: str, name: str, session: str = "sess-use", **extra: object) -> dict:
    return {"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": project, "hook_event_name": name, **extra}


def tool(project: str, name: str, given: dict, response: object, number: int, session: str = "sess-use") -> dict:
    return event(project, "PostToolUse", session, tool_name=name, tool_input=given, tool_response=response,
                 tool_use_id=f"toolu_use{number:04d}")


def used_rows(conn) -> set[tuple[int, str]]:
    return {(row[0], row[1]) for row in conn.execute("SELECT observation_id, how FROM used")}


def seed_title(conn, row_id: int) -> str:
    return conn.execute("SELECT title FROM observations WHERE id = ?", (row_id,)).fetchone()[0]


def start(data_dir, project: str, session: str = "sess-use") -> list[int]:
    out = hook(data_dir, "session-start", event(project, "SessionStart", session, source="startup"))
    text = out["hookSpecificOutput"]["additionalContext"]
    return [int(found) for found in re.findall(r"(?m)^#(\d+) ", text)]


def test_each_way_of_using_memory_is_derived_once(data_dir, project):
    conn = db.connect(db.db_path(str(data_dir)))
    ids = seed_project(conn, project, 12)
    titled = add_observation(conn, project, "Spool files are renamed before the worker ingests them")
    unseen = add_observation(conn, project + "-other", "An observation of another project, never given to it")
    shown = start(data_dir, project)
    assert titled in shown and len(shown) == 13 and unseen not in shown
    search_text = f"Search \"spool\" in project shop:\n#{ids[0]} 2026-11-01 decision Title\n→ #{ids[1]} 2026-11-02 bugfix T\n"
    calls = [
        tool(project, PLUGIN + "get_observations", {"ids": [ids[2], f"#{ids[3]}", "S1", True]}, [{"type": "text", "text": "…"}], 1),
        tool(project, PLUGIN + "search", {"query": "spool"}, [{"type": "text", "text": search_text}], 2),
        tool(project, PLUGIN + "timeline", {"anchor": ids[4]}, f"#{ids[5]} 2026 x\n#{ids[4]} 2026 y\n", 3),
        tool(project, "Bash", {"command": f"claude-mem show {ids[6]} '#{ids[7]}' | head"}, {"stdout": "…"}, 4),
        tool(project, "mcp__github__search", {"query": "x"}, f"#{ids[8]} an issue of another server", 5),  # not ours
        tool(project, "Write", {"file_path": "/tmp/n.md", "content": f"per #{ids[9]} and issue #424242"}, {}, 6),
    ]
    for call in calls:
        hook(data_dir, "post-tool", call)
    hook(data_dir, "stop", event(project, "Stop", last_assistant_message=(
        f"Done. As #{ids[10]} says, and since spool files are renamed before the worker ingests them,"
        f" nothing is lost. (#{unseen} was never given to this session.)")))
    assert use.derive(conn) > 0
    assert used_rows(conn) == {
        (ids[2], "fetched"), (ids[3], "fetched"), (ids[0], "searched"), (ids[1], "searched"),
        (ids[4], "fetched"), (ids[5], "searched"), (ids[6], "fetched"), (ids[7], "fetched"),
        (ids[9], "cited"), (ids[10], "cited"), (titled, "cited"),
    }, [(row[0], row[1], seed_title(conn, row[0])) for row in conn.execute("SELECT observation_id, how FROM used")]
    assert use.derive(conn) == 0  # every event is read once
    # The same use again, later in the session: one row, counted twice.
    hook(data_dir, "post-tool", tool(project, PLUGIN + "get_observations", {"ids": [ids[2]]}, "…", 7))
    use.derive(conn)
    assert conn.execute("SELECT times FROM used WHERE observation_id = ? AND how = 'fetched'", (ids[2],)).fetchone()[0] == 2

    figures = usage.in_use(conn, None)
    assert figures["sessions"] == 1 and figures["shown"] == 13 and figures["used"] == 11
    assert figures["used_of_shown"] == 11 and figures["use_rate"] == round(11 / 13, 3)
    assert figures["by_how"] == {"fetched": 5, "searched": 3, "cited": 3}
    assert figures["tokens_injected"] > 0 and figures["injections"] == 1
    assert figures["recent_sessions"][0]["session"] == "sess-use"
    assert figures["projects"][0]["project"] == project and figures["projects"][0]["shown"] == 13
    assert figures["most_used"][0]["id"] == ids[2]
    assert {row["id"] for row in figures["least_used"]} <= set(shown) - {row_id for row_id, _ in used_rows(conn)}
    assert store_use.of_observations(conn, [ids[2]])[ids[2]]["used"] == 1
    conn.close()


def test_per_prompt_memory_counts_as_shown_and_a_new_index_keeps_the_history(data_dir, project):
    conn = db.connect(db.db_path(str(data_dir)))
    seed_project(conn, project, 3)
    start(data_dir, project)
    target = add_observation(conn, project, "Billing webhook retries use exponential backoff", kind="decision")
    out = hook(data_dir, "user-prompt", event(project, "UserPromptSubmit", prompt="How do billing webhook retries work?"))
    assert f"#{target} " in out["hookSpecificOutput"]["additionalContext"]
    ways = dict(conn.execute("SELECT via, COUNT(*) FROM injections GROUP BY via").fetchall())
    assert ways == {"index": 1, "prompt": 1}
    assert conn.execute("SELECT via FROM shown WHERE observation_id = ?", (target,)).fetchone()[0] == "prompt"
    # /clear: a full index again; what was shown before is history now (per-prompt memory may show it again).
    hook(data_dir, "session-start", event(project, "SessionStart", source="clear"))
    assert conn.execute("SELECT current FROM shown WHERE observation_id = ?", (target,)).fetchone()[0] == 1  # listed again
    assert conn.execute("SELECT COUNT(*) FROM shown").fetchone()[0] == 4
    conn.close()


@pytest.mark.parametrize("raw", [
    "not json", "[1, 2]", json.dumps({"tool_name": 5, "tool_input": "x", "tool_response": None}),
    json.dumps({"tool_name": PLUGIN + "get_observations", "tool_input": {"ids": "12"}, "tool_response": []}),
    json.dumps({"tool_name": PLUGIN + "get_observations", "tool_input": {"ids": [-1, 0, 2**70, 1.5, None, {}]}}),
    json.dumps({"tool_name": "Bash", "tool_input": {"command": "claude-mem show 'unclosed"}, "tool_response": {}}),
    json.dumps({"tool_name": PLUGIN + "search", "tool_response": "#" + "9" * 40 + "\n" + "#7 x\n" * 100_000}),
    json.dumps({"last_assistant_message": "#1 " * 100_000}),
])
def test_hostile_events_are_read_past_without_an_error(data_dir, project, raw):
    conn = db.connect(db.db_path(str(data_dir)))
    seed_project(conn, project, 2)
    session = conn.execute("INSERT INTO sessions (content_session_id, project) VALUES ('s-bad', ?)", (project,)).lastrowid
    for n, kind in enumerate(("tool", "summarize")):
        conn.execute("INSERT INTO pending_events (event_key, session_id, kind, payload) VALUES (?, ?, ?, ?)",
                     (f"bad-{n}", session, kind, raw))
    assert use.derive(conn) == 2
    assert store_use.waiting(conn) == 0
    conn.close()


def test_a_session_shown_an_index_that_fetches_one_id_counts_one_used_of_n_shown(worker_env, project):  # noqa: F811
    """The issue's Done-when, through the real hook commands and the real worker."""
    data_dir = str(worker_env)
    conn = db.connect(db.db_path(data_dir))
    seed_project(conn, project, 9)
    conn.close()
    cli("worker", "start")
    shown = start(data_dir, project, "sess-done")
    assert len(shown) == 9
    hook(data_dir, "user-prompt", event(project, "UserPromptSubmit", "sess-done", prompt="what changed?"))
    hook(data_dir, "post-tool", tool(project, PLUGIN + "get_observations", {"ids": [shown[3]]},
                                     [{"type": "text", "text": f"#{shown[3]} decision · …"}], 1, "sess-done"))
    hook(data_dir, "stop", event(project, "Stop", "sess-done", last_assistant_message="All done."))

    def figures() -> dict:
        return json.loads(cli("status", "--json").stdout)["usage"]

    wait_for(lambda: figures()["used"] == 1, 30, "the worker to derive the use")
    report = figures()
    assert report["sessions"] == 1 and report["shown"] == 9 and report["used_of_shown"] == 1
    assert report["by_how"]["fetched"] == 1 and report["use_rate"] == round(1 / 9, 3)
    assert report["days"] == 7 and report["tokens_injected"] > 0
    text = " ".join(cli("status").stdout.split())  # rich folds long lines to the terminal's width
    assert "1 session(s) shown 9 observation(s), 1 of them used (11%)" in text
    record = json.loads(cli("show", str(shown[3]), "--json").stdout)[0]
    assert record["use"]["shown"] == 1 and record["use"]["used"] == 1 and record["use"]["last_used"]
    assert "use: shown in 1 session(s), used in 1, last used" in cli("show", str(shown[3])).stdout
    port = json.loads(cli("worker", "status", "--json").stdout)["health"]["port"]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/stats?days=7", timeout=30) as answer:
        in_use = json.load(answer)["in_use"]  # what the viewer's Stats view draws
    assert (in_use["shown"], in_use["used_of_shown"], in_use["sessions"]) == (9, 1, 1)
    health = json.loads(cli("worker", "status", "--json").stdout)["health"]
    assert health["memory_use"]["waiting"] == 0 and health["memory_use"]["error"] is None
