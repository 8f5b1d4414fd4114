"""Nothing private or secret anywhere in the data dir: database, WAL, FTS shadow tables, spool,
quarantine, logs — after real hook processes captured payloads full of them (DESIGN §9)."""

import json
import os
import sqlite3

from claude_mem.store import capture, db
from hook_support import all_files, events, load, rows, run_hook
from secret_corpus import SECRETS
from test_hooks_spool import write_lock

CANARIES = {
    "span-in-prompt": "PRIVATE-CANARY-PROMPT-5501",
    "span-in-input": "PRIVATE-CANARY-INPUT-5502",
    "span-in-output": "PRIVATE-CANARY-OUTPUT-5503",
    "private-turn-prompt": "PRIVATE-TURN-CANARY-5504",
    "private-turn-tool": "PRIVATE-TURN-TOOL-CANARY-5505",
    "private-turn-stop": "PRIVATE-TURN-STOP-CANARY-5506",
    "span-in-bad-input": "PRIVATE-CANARY-BAD-5507",
    "span-in-spool": "PRIVATE-CANARY-SPOOL-5508",
    "span-in-huge": "PRIVATE-CANARY-HUGE-5509",
    "unclosed-span": "PRIVATE-CANARY-UNCLOSED-5510",
}
SECRET_TEXT = "\n".join(text for _family, text, _secret in SECRETS)
MUST_NOT_APPEAR = [secret for _family, _text, secret in SECRETS] + list(CANARIES.values())


def private(name: str) -> str:
    return f"<private>{CANARIES[name]}</private>"


def capture_everything(data_dir) -> None:
    session = load("session-edit/01-SessionStart.json")
    prompt = load("session-edit/02-UserPromptSubmit.json")
    tool = load("session-edit/06-PostToolUse.Bash.json")
    read = load("session-edit/05-PostToolUse.Read.json")
    stop = load("session-edit/07-Stop.json")
    runs = [
        ("session-start", session),
        ("user-prompt", {**prompt, "prompt": f"deploy with these {private('span-in-prompt')}\n{SECRET_TEXT}"}),
        ("post-tool", {**tool, "tool_input": {"command": f"echo {private('span-in-input')} && {SECRET_TEXT}"},
                       "tool_response": {"stdout": f"{SECRET_TEXT}\n{private('span-in-output')}", "stderr": SECRET_TEXT}}),
        ("post-tool", {**read, "tool_response": {"type": "text", "file": {"filePath": "/home/dev/proj/.env",
                                                                          "content": SECRET_TEXT}}}),
        ("post-tool", {**load("PostToolUseFailure.json"), "session_id": session["session_id"], "error": SECRET_TEXT}),
        ("post-tool", {**tool, "tool_use_id": "toolu_unclosed",
                       "tool_response": {"stdout": f"ok <private>{CANARIES['unclosed-span']} {SECRET_TEXT}"}}),
        ("stop", {**stop, "last_assistant_message": f"Done. {SECRET_TEXT}"}),
        # a fully private turn: nothing of it may be stored
        ("user-prompt", {**prompt, "prompt_id": "private-turn", "prompt": private("private-turn-prompt")}),
        ("post-tool", {**tool, "prompt_id": "private-turn", "tool_use_id": "toolu_private",
                       "tool_response": {"stdout": CANARIES["private-turn-tool"]}}),
        ("stop", {**stop, "prompt_id": "private-turn", "last_assistant_message": CANARIES["private-turn-stop"]}),
        ("user-prompt", {**prompt, "prompt_id": "public-again", "prompt": "back in public"}),
    ]
    for hook, payload in runs:
        result = run_hook(hook, payload)
        assert result.returncode == 0, result.stderr
    # Bad input (invalid JSON) carrying secrets and a private span → quarantine.
    broken = json.dumps({**tool, "tool_response": {"stdout": SECRET_TEXT + private("span-in-bad-input")}})[:-20]
    assert run_hook("post-tool", broken.encode()).returncode == 0
    # A huge payload: secrets at the head, at the cut and in the tail; a private span in the middle.
    filler = "z" * 4_000_000
    huge_out = f"{SECRET_TEXT}\n{filler}{private('span-in-huge')}{filler}\n{SECRET_TEXT}"
    for offset in (13_300, 13_333, 13_340):  # around the head cut (2/3 of 20,000)
        huge_out = huge_out[:offset] + " " + SECRETS[0][2] + " " + huge_out[offset:]
    assert run_hook("post-tool", {**tool, "tool_use_id": "toolu_huge", "tool_response": {"stdout": huge_out}}).returncode == 0
    # The database busy: the event goes to the spool.
    with write_lock(data_dir, 30):
        spooled = {**tool, "tool_use_id": "toolu_spooled",
                   "tool_response": {"stdout": SECRET_TEXT + private("span-in-spool")}}
        assert run_hook("post-tool", spooled).returncode == 0


def assert_clean(data_dir) -> None:
    files = all_files(data_dir)
    assert files
    for path in files:
        with open(path, "rb") as handle:
            content = handle.read()
        for needle in MUST_NOT_APPEAR:
            assert needle.encode() not in content, f"{needle[:12]}… found in {os.path.relpath(path, data_dir)}"
        assert b"<private>" not in content.lower(), path


def test_nothing_private_or_secret_anywhere_in_the_data_dir(data_dir):
    keeper = None
    try:
        # Holding a connection open keeps the WAL file around, so it is searched too.
        keeper = db.connect(db.db_path(str(data_dir)))
        capture_everything(data_dir)
        kinds = {os.path.relpath(os.path.dirname(p), data_dir) for p in all_files(data_dir)}
        assert {"spool", "quarantine", "logs", "."} <= kinds
        assert os.path.exists(db.db_path(str(data_dir)) + "-wal")
        assert_clean(data_dir)
        assert capture.ingest_spool(keeper, str(data_dir)) == 1
        assert_clean(data_dir)
    finally:
        if keeper is not None:
            keeper.close()
    assert_clean(data_dir)
    # The capture really happened (the test is not vacuous) and the FTS index holds the prompts.
    assert rows(data_dir, "SELECT COUNT(*) FROM prompts") == [(3,)]
    assert rows(data_dir, "SELECT private FROM prompts ORDER BY prompt_number") == [(0,), (1,), (0,)]
    kinds = [e["kind"] for e in events(data_dir)]
    assert kinds.count("tool") == 5 and kinds.count("tool_failure") == 1 and kinds.count("summarize") == 1
    conn = sqlite3.connect(db.db_path(str(data_dir)))
    try:
        assert conn.execute("SELECT COUNT(*) FROM prompts_fts WHERE prompts_fts MATCH '- {context} : deploy'"
                            ).fetchone() == (1,)  # in its own text (a neighbour's `context` holds it too)
        dump = "\n".join(conn.iterdump())
    finally:
        conn.close()
    for needle in MUST_NOT_APPEAR:
        assert needle not in dump
    assert "[REDACTED:" in dump
