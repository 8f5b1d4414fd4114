"""Bad input never fails Claude Code: exit 0, one stderr line, a log line, a bounded quarantine copy."""

import json
import os
import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claude_mem.capture import diagnostics, payload
from claude_mem.hooks import runner
from claude_mem.store import capture
from hook_support import HOOKS, events, load, rows, run_hook

GOOD = {
    "session-start": "session-edit/01-SessionStart.json",
    "user-prompt": "session-edit/02-UserPromptSubmit.json",
    "post-tool": "session-edit/06-PostToolUse.Bash.json",
    "stop": "session-edit/07-Stop.json",
    "session-end": "session-edit/08-SessionEnd.json",
}


def wrong_types(hook: str) -> bytes:
    payload = load(GOOD[hook])
    payload["session_id"] = 12345
    return json.dumps(payload).encode()


def wrong_field_type(hook: str) -> bytes:
    payload = load(GOOD[hook])
    field = {"session-start": "source", "user-prompt": "prompt", "post-tool": "tool_name",
             "stop": "last_assistant_message", "session-end": "reason"}[hook]
    payload[field] = ["not", "a", "string"]
    return json.dumps(payload).encode()


BAD_INPUTS = {
    "empty": lambda hook: b"",
    "whitespace": lambda hook: b"  \n",
    "invalid-json": lambda hook: b'{"session_id": "abc", "hook_event_name": ',
    "json-array": lambda hook: b"[1, 2, 3]",
    "wrong-session-type": wrong_types,
    "wrong-field-type": wrong_field_type,
    "non-utf8": lambda hook: json.dumps(load(GOOD[hook])).encode().replace(b"/home", b"/h\xff\xfeme"),
}


@pytest.mark.parametrize("hook", HOOKS)
@pytest.mark.parametrize("kind", sorted(BAD_INPUTS))
def test_bad_input_is_reported_once_and_stores_nothing(hook, kind, data_dir):
    raw = BAD_INPUTS[kind](hook)
    result = run_hook(hook, raw)
    assert result.returncode == 0
    assert result.stdout == b""  # nothing reaches the model, for every hook
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"claude-mem: hook {hook}: ignored bad input"), lines
    log = open(diagnostics.log_path(str(data_dir)), encoding="utf-8").read().splitlines()
    assert len(log) == 1 and f"hook={hook} bad input" in log[0]
    copies = os.listdir(data_dir / "quarantine")
    assert len(copies) == 1
    assert os.path.getsize(data_dir / "quarantine" / copies[0]) <= diagnostics.QUARANTINE_BYTES
    assert rows(data_dir, "SELECT COUNT(*) FROM sessions") in ([], [(0,)])


@pytest.mark.parametrize("hook", HOOKS)
def test_ten_megabytes_are_cut_stored_and_reported(hook, data_dir):
    payload = load(GOOD[hook])
    huge = "0123456789abcdef" * (10 * 1024 * 1024 // 16)
    payload["tool_response"] = {"stdout": huge, "stderr": "", "interrupted": False}
    if hook == "user-prompt":
        payload["prompt"] = huge
    result = run_hook(hook, payload)
    assert result.returncode == 0
    if hook == "session-start":
        assert json.loads(result.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    else:
        assert result.stdout == b""
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1 and "long fields cut" in lines[0]
    assert len(open(diagnostics.log_path(str(data_dir))).read().splitlines()) == 1
    [copy] = os.listdir(data_dir / "quarantine")
    assert os.path.getsize(data_dir / "quarantine" / copy) <= diagnostics.QUARANTINE_BYTES
    assert rows(data_dir, "SELECT COUNT(*) FROM sessions") == [(1,)]
    for event in events(data_dir):
        assert len(json.dumps(event["payload"])) < 3 * 20_000


def test_unknown_hook_name_exits_zero_with_one_line(data_dir):
    result = run_hook("session-start", b"{}")  # sanity: the launcher itself works
    assert result.returncode == 0
    import subprocess
    import sys

    from conftest import REPO

    result = subprocess.run([sys.executable, "-I", "-S", os.path.join(REPO, "scripts", "hook.py"), "pre-compact"],
                            input=b"{}", capture_output=True, timeout=60)
    assert result.returncode == 0 and result.stdout == b""
    assert len(result.stderr.decode().splitlines()) == 1


def test_a_failure_inside_the_transaction_leaves_no_partial_rows(data_dir, monkeypatch):
    """The session row is written before the event; an error at the event must take both back."""
    def broken(*args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error (injected)")

    monkeypatch.setattr(capture, "_insert_event", broken)
    payload = load("session-edit/06-PostToolUse.Bash.json")
    assert runner.handle("post-tool", json.dumps(payload).encode(), {}) == 0
    assert rows(data_dir, "SELECT COUNT(*) FROM sessions") == [(0,)]
    assert rows(data_dir, "SELECT COUNT(*) FROM pending_events") == [(0,)]
    assert len(os.listdir(data_dir / "spool")) == 1  # not lost: the worker will ingest it
    monkeypatch.undo()


def test_an_internal_error_still_exits_zero(data_dir, monkeypatch, capsys):
    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(runner, "handle", explode)
    monkeypatch.setattr("sys.stdin", open(os.devnull))
    assert runner.run_from_argv(["post-tool"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.splitlines()) == 1
    assert "internal error: RuntimeError: boom" in open(diagnostics.log_path(str(data_dir))).read()


def test_quarantine_keeps_a_bounded_number_of_copies(data_dir):
    for _ in range(diagnostics.QUARANTINE_KEEP + 5):
        diagnostics.quarantine(str(data_dir), "post-tool", b"not json")
    assert len(os.listdir(data_dir / "quarantine")) == diagnostics.QUARANTINE_KEEP


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
FIELDS = st.fixed_dictionaries({}, optional={
    "session_id": JSON | st.text(min_size=1), "cwd": JSON | st.just("/home/dev/proj"),
    "hook_event_name": st.sampled_from(["SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure",
                                        "Stop", "SessionEnd", "PreToolUse"]) | JSON,
    "prompt": JSON, "tool_name": JSON | st.just("Bash"), "tool_input": JSON, "tool_response": JSON,
    "tool_use_id": JSON, "error": JSON, "is_interrupt": JSON, "duration_ms": JSON, "reason": JSON,
    "last_assistant_message": JSON, "prompt_id": JSON, "source": JSON, "transcript_path": JSON,
})


@given(st.sampled_from(HOOKS), FIELDS)
def test_parser_accepts_or_rejects_cleanly(hook, fields):
    """Any JSON object: a record (JSON-serialisable, UTF-8 clean) or BadInput/Unregistered, nothing else."""
    raw = json.dumps(fields).encode()
    try:
        record = payload.build_record(hook, payload.decode(raw), "/p", 200)
    except (payload.BadInput, payload.Unregistered):
        return
    text = json.dumps(record, ensure_ascii=False)
    text.encode("utf-8")
    assert record["kind"] in ("session_start", "prompt", "tool", "tool_failure", "summarize", "session_end")
    assert record["content_session_id"] == fields["session_id"]


@given(st.binary(max_size=300))
def test_decode_never_raises_anything_but_bad_input(raw):
    try:
        payload.decode(raw)
    except payload.BadInput:
        pass


def test_lone_surrogates_are_stored_as_replacement_characters(data_dir):
    raw = json.dumps(load(GOOD["post-tool"])).replace('"Bash"', '"Ba\\ud800sh"')
    raw = raw.replace('"session_id": "', '"session_id": "\\udfff')
    result = run_hook("post-tool", raw.encode())
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    [event] = events(data_dir)
    assert event["payload"]["tool_name"] == "Ba?sh"
