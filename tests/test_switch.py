"""`CLAUDE_MEM`, one switch per session (issue 30, item 4), through the real hook commands as hooks.json
runs them (`python3 -I -S scripts/hook.py …`), the stdlib MCP server and the status line.

`off` (or any unknown value) stores and shows nothing, not even a database file; `read` shows the
index and per-prompt memory and writes nothing; `write` stores and shows nothing. A running worker's
capture socket changes none of it: the switch is read before the hand-off."""

import asyncio
import hashlib
import json
import os
import subprocess
import sys

import pytest
from mcp import Client, StdioServerParameters

from claude_mem.runtime import switch
from claude_mem.store import db
from conftest import REPO
from hook_support import load, rows, run_hook
from recall_seed import add_observation, add_session, git_project
from test_hookpath_socket import Worker

SESSION = [("session-edit/01-SessionStart.json", "session-start"),
           ("session-edit/02-UserPromptSubmit.json", "user-prompt"),
           ("session-edit/03-PostToolUse.Write.json", "post-tool"),
           ("session-edit/06-PostToolUse.Bash.json", "post-tool"),
           ("session-edit/07-Stop.json", "stop"),
           ("session-edit/08-SessionEnd.json", "session-end")]
PROMPT = "why do the zebra certificates expire before the rotation"


@pytest.fixture
def project(tmp_path):
    cwd, key = git_project(tmp_path)
    return cwd, key


def session_payloads(cwd: str, session_id: str = "switch-session") -> list[tuple[str, dict]]:
    """The recorded edit session, moved into `cwd`, the user-prompt asking `PROMPT`."""
    found = []
    for name, hook in SESSION:
        payload = {**load(name), "cwd": cwd, "session_id": session_id}
        if hook == "user-prompt":
            payload["prompt"] = PROMPT
        found.append((hook, payload))
    return found


def run_session(cwd: str, value: str | None, **env: str) -> dict[str, list[dict]]:
    """Every hook of one session under CLAUDE_MEM=`value`: each hook's decoded stdout by hook name."""
    extra = {**env, **({switch.VARIABLE: value} if value is not None else {})}
    printed: dict[str, list[dict]] = {}
    for hook, payload in session_payloads(cwd):
        done = run_hook(hook, payload, env={**extra, "CLAUDE_PROJECT_DIR": cwd})
        assert done.returncode == 0, done.stderr
        out = done.stdout.decode()
        printed.setdefault(hook, []).append(json.loads(out) if out.strip() else {})
        if value is not None and switch.mode({switch.VARIABLE: value}) == switch.OFF and hook != "session-start":
            assert not out, (hook, out)
    return printed


def snapshot(data_dir) -> dict[str, str]:
    """Every file of the data dir and its hash; the shared-memory index (`-shm`, where readers mark what they
    read) and an empty WAL are not content."""
    found = {}
    for root, _dirs, names in os.walk(str(data_dir)):
        for name in names:
            path = os.path.join(root, name)
            if name.endswith("-shm") or (name.endswith("-wal") and os.path.getsize(path) == 0):
                continue
            with open(path, "rb") as handle:
                found[os.path.relpath(path, str(data_dir))] = hashlib.sha256(handle.read()).hexdigest()
    return found


def seeded(data_dir, key: str) -> tuple[int, int]:
    """A store with filler notes and two about zebra certificates: (older id, newest id)."""
    conn = db.connect(db.db_path(str(data_dir)))
    session = add_session(conn, f"earlier-session-{key}", key)
    for n in range(20):
        add_observation(conn, key, f"Filler observation {n} about the parser and the queue", session_id=session,
                        created_at=f"2026-11-01T10:{n:02d}:00.000Z")
    older = add_observation(conn, key, "Zebra certificates expire before the rotation job runs", session_id=session,
                            created_at="2026-11-02T10:00:00.000Z")
    newest = add_observation(conn, key, "Zebra certificates rotation moved to a nightly job", session_id=session,
                             created_at="2026-11-03T10:00:00.000Z")
    conn.commit()
    conn.close()
    return older, newest


def context_of(printed: dict[str, list[dict]], hook: str) -> str:
    return "".join((out.get("hookSpecificOutput") or {}).get("additionalContext", "") for out in printed[hook])


def captured(data_dir) -> tuple[int, int, int, int]:
    """(sessions, prompts, events, shown rows) in the store."""
    counts = [rows(data_dir, f"SELECT count(*) FROM {table}") for table in ("sessions", "prompts", "pending_events", "shown")]
    return tuple(found[0][0] if found else 0 for found in counts)  # type: ignore[return-value]


def test_the_values_and_what_they_mean():
    cases = {None: "on", "": "on", "on": "on", "1": "on", "TRUE": "on", " off ": "off", "0": "off", "false": "off",
             "no": "off", "read": "read", "Write": "write", "offf": "off", "yes please": "off"}
    for value, expected in cases.items():
        env = {} if value is None else {switch.VARIABLE: value}
        assert switch.mode(env) == expected, value
        assert (switch.problem(env) is None) == (value in (None, "", "on", "1", "TRUE", " off ", "0", "false", "no",
                                                           "read", "Write")), value
    assert [mode for mode in switch.MODES if switch.captures(mode)] == ["on", "write"]
    assert [mode for mode in switch.MODES if switch.shows(mode)] == ["on", "read"]


@pytest.mark.parametrize("value", ["off", "0", "false", "no", "OFF"])
def test_off_stores_nothing_not_even_a_database_and_shows_nothing(data_dir, project, value):
    cwd, _key = project
    printed = run_session(cwd, value)
    assert not os.path.exists(data_dir)
    start = printed["session-start"][0]
    assert set(start) == {"systemMessage"} and "memory is off for this session" in start["systemMessage"]
    assert all(out == {} for hook, outs in printed.items() if hook != "session-start" for out in outs)


def test_off_leaves_an_existing_store_untouched(data_dir, project):
    cwd, key = project
    seeded(data_dir, key)
    before = snapshot(data_dir)
    printed = run_session(cwd, "off")
    assert snapshot(data_dir) == before
    assert "additionalContext" not in json.dumps(printed)
    # the same session without the switch is stored and shown the index: the test above can fail
    printed = run_session(cwd, None)
    assert "Zebra certificates rotation" in context_of(printed, "session-start")
    assert captured(data_dir)[:3] == (2, 1, 5)


def test_an_unknown_value_is_taken_as_off_and_said_once(data_dir, project):
    cwd, key = project
    seeded(data_dir, key)
    before = snapshot(data_dir)
    errors = []
    for hook, payload in session_payloads(cwd):
        done = run_hook(hook, payload, env={switch.VARIABLE: "of"})
        assert done.returncode == 0
        errors.append(done.stderr.decode())
        if hook == "session-start":
            message = json.loads(done.stdout)["systemMessage"]
            assert "'of'" in message and "memory is off" in message and "additionalContext" not in done.stdout.decode()
        else:
            assert not done.stdout
    assert snapshot(data_dir) == before
    assert "CLAUDE_MEM='of' is not one of on, off, read, write: taken as off" in errors[0]
    assert not any(errors[1:])


def test_read_shows_the_index_and_prompt_memory_and_writes_nothing(data_dir, project):
    cwd, key = project
    older, newest = seeded(data_dir, key)
    before = snapshot(data_dir)
    # the index lists only the newest note: per-prompt memory must leave out that one, and add the older one
    printed = run_session(cwd, "read", CLAUDE_MEM_CONTEXT_OBSERVATIONS="1")
    assert snapshot(data_dir) == before
    assert captured(data_dir) == (1, 0, 0, 0)
    index = context_of(printed, "session-start")
    assert f"#{newest} " in index and f"#{older} " not in index
    assert "read-only session (CLAUDE_MEM=read)" in printed["session-start"][0]["systemMessage"]
    related = context_of(printed, "user-prompt")
    assert f"#{older} " in related and f"#{newest} " not in related
    assert all(out == {} for hook in ("post-tool", "stop", "session-end") for out in printed[hook])


def test_read_without_any_store_says_so_and_creates_none(data_dir, project):
    printed = run_session(project[0], "read")
    assert not os.path.exists(data_dir)
    assert printed["session-start"] == [{"systemMessage": printed["session-start"][0]["systemMessage"]}]
    assert "no memory yet" in printed["session-start"][0]["systemMessage"]


def test_write_captures_everything_and_shows_nothing(data_dir, project):
    cwd, key = project
    seeded(data_dir, key)
    printed = run_session(cwd, "write", CLAUDE_MEM_CONTEXT_OBSERVATIONS="1")
    assert "additionalContext" not in json.dumps(printed)
    assert "shown no memory (CLAUDE_MEM=write)" in printed["session-start"][0]["systemMessage"]
    assert printed["user-prompt"] == [{}]
    assert captured(data_dir) == (2, 1, 5, 0)  # the session, its prompt, 5 events; nothing recorded as shown
    # and the same prompt in a normal session is shown the matching memory: the check above can fail
    normal = run_session(cwd, None, CLAUDE_MEM_CONTEXT_OBSERVATIONS="1")
    assert "Zebra certificates expire" in context_of(normal, "user-prompt")


def test_a_running_workers_capture_socket_takes_nothing_from_a_switched_off_session(data_dir, project):
    cwd, key = project
    seeded(data_dir, key)
    worker = Worker(str(data_dir))
    try:
        before = snapshot(data_dir)
        for value in ("off", "read", "bogus"):
            run_session(cwd, value)
            assert snapshot(data_dir) == before, value
        run_session(cwd, "write")  # the worker takes the post-tool events of a recorded session
        assert captured(data_dir)[2] == 5
    finally:
        worker.close()


def mcp_search(data_dir, cwd: str, value: str) -> tuple[str, str]:
    """(the server's instructions, the search tool's answer) from the plugin's stdlib MCP server."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "CLAUDE_MEM_DATA_DIR": str(data_dir),
           "CLAUDE_MEM_AUTOSTART": "false", switch.VARIABLE: value}

    async def run() -> tuple[str, str]:
        params = StdioServerParameters(command=sys.executable, args=[os.path.join(REPO, "scripts", "mcp_server.py")],
                                       env=env, cwd=cwd)
        async with Client(params, read_timeout_seconds=60) as client:
            found = await client.call_tool("search", {"query": "zebra certificates"})
            assert not found.is_error
            return client.instructions or "", found.content[0].text

    return asyncio.run(asyncio.wait_for(run(), timeout=90))


def test_the_mcp_tools_say_memory_is_off_under_off_and_write(data_dir, project):
    cwd, key = project
    seeded(data_dir, key)
    for value in ("off", "write"):
        instructions, answer = mcp_search(data_dir, cwd, value)
        assert answer == f"memory is off for this session (CLAUDE_MEM={value})"
        assert "memory is off" in instructions
    instructions, answer = mcp_search(data_dir, cwd, "read")
    assert "Zebra certificates" in answer and "memory is off" not in instructions


def statusline(cwd: str, value: str) -> str:
    done = subprocess.run([sys.executable, "-I", "-S", os.path.join(REPO, "scripts", "statusline.py")],
                          input=json.dumps({"cwd": cwd}).encode(), capture_output=True, timeout=60,
                          env={**os.environ, switch.VARIABLE: value})
    assert done.returncode == 0
    return done.stdout.decode().strip()


def test_the_status_line_says_off_read_only_or_write_only(data_dir, project):
    cwd, key = project
    seeded(data_dir, key)
    assert statusline(cwd, "off") == "memory: off for this session (CLAUDE_MEM=off)"
    assert statusline(cwd, "read").startswith("memory: 22 notes") and "read-only (CLAUDE_MEM=read)" in statusline(cwd, "read")
    assert "write-only (CLAUDE_MEM=write)" in statusline(cwd, "write")
    assert "only" not in statusline(cwd, "on")


def test_read_with_a_damaged_database_shows_nothing_says_why_and_writes_nothing(data_dir, project):
    cwd, _key = project
    os.makedirs(data_dir)
    with open(os.path.join(data_dir, "claude-mem.db"), "wb") as handle:
        handle.write(b"this is not a database" * 100)
    before = snapshot(data_dir)
    for hook, payload in session_payloads(cwd)[:2]:
        done = run_hook(hook, payload, env={switch.VARIABLE: "read"})
        assert done.returncode == 0 and not done.stdout, done.stdout
        assert b"memory not shown (" in done.stderr and b"Traceback" not in done.stderr
    assert snapshot(data_dir) == before


def test_read_honours_excluded_projects_and_private_prompts(data_dir, project):
    cwd, key = project
    seeded(data_dir, key)
    payloads = dict(session_payloads(cwd)[:2])
    private = {**payloads["user-prompt"], "prompt": "<private>zebra certificates rotation</private>"}
    env = {switch.VARIABLE: "read", "CLAUDE_MEM_CONTEXT_OBSERVATIONS": "1"}
    done = run_hook("user-prompt", private, env=env)
    assert done.returncode == 0 and not done.stdout
    public = run_hook("user-prompt", {**private, "prompt": "zebra certificates rotation"}, env=env)
    assert b"Zebra certificates expire" in public.stdout  # the same words, not private: shown
    for hook, payload in payloads.items():
        done = run_hook(hook, payload, env={switch.VARIABLE: "read", "CLAUDE_MEM_EXCLUDED_PROJECTS": key})
        assert done.returncode == 0 and not done.stdout, (hook, done.stdout)


@pytest.mark.parametrize(("value", "said"), [("off", "stores nothing and is shown nothing"),
                                             ("read", "is shown memory but stores nothing"),
                                             ("write", "is stored but shown no memory"),
                                             ("of", "not one of on, off, read, write")])
def test_status_says_what_the_switch_in_this_shell_does(data_dir, value, said):
    environment = {**os.environ, "CLAUDE_MEM_DATA_DIR": str(data_dir), "CLAUDE_MEM": value}
    command = [sys.executable, "-m", "claude_mem", "status"]
    text = " ".join(subprocess.run(command, capture_output=True, text=True, env=environment, timeout=60,
                                   check=True).stdout.split())
    assert f"CLAUDE_MEM='{value}' in this shell" in text and said in text
    report = json.loads(subprocess.run([*command, "--json"], capture_output=True, text=True, env=environment,
                                       timeout=60, check=True).stdout)["switch"]
    assert report["mode"] == (value if value in ("off", "read", "write") else "off")
    environment["CLAUDE_MEM"] = "on"
    assert "in this shell" not in subprocess.run(command, capture_output=True, text=True, env=environment,
                                                 timeout=60, check=True).stdout
