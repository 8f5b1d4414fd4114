"""`claude-mem import transcripts`: Claude Code transcripts become the events the hooks capture.

Recorded transcripts from the real CLI (tests/fixtures/transcripts/) and transcripts written here in
the same format; a real SQLite store; the real CLI with the plugin for the live comparison; a real
worker with the offline observer for the end-to-end check.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from claude_mem import importers
from claude_mem.capture import payload as capture_payload
from claude_mem.cli import cli
from claude_mem.importers import transcript_reader, transcripts
from claude_mem.store import capture as capture_store
from conftest import FIXTURES, require
from hook_support import events, rows
from secret_corpus import SECRETS

RECORDED = os.path.join(FIXTURES, "transcripts")
RECORDED_PROJECTS = os.path.join(RECORDED, "projects")
PROJECT = "/home/dev/proj"  # the placeholder the recorded transcripts use (see their README)
EDIT_SESSION = "8b31f370-da4d-45ca-ae74-9c835a1150f7"
FAIL_SESSION = "e2cee829-e773-4764-97c5-e7bd0af9fdc6"
AGENT_SESSION = "c7ad7cc6-a22e-4cb7-a62b-1d74c771972c"
CLAUDE_MEM = os.path.join(os.path.dirname(sys.executable), "claude-mem")


def run_import(*args: str) -> Result:
    return CliRunner().invoke(cli, ["import", "transcripts", *args], catch_exceptions=False)


def hook_events() -> dict[str, list[list]]:
    with open(os.path.join(RECORDED, "hook-events.json"), encoding="utf-8") as handle:
        return json.load(handle)


def stored_events(data_dir) -> dict[str, list[list]]:
    """Per session, as hook-events.json lists them: kind, event key, prompt number, tool name."""
    found: dict[str, list[list]] = {}
    for session, kind, key, number, payload in rows(
        data_dir, "SELECT s.content_session_id, e.kind, e.event_key, e.prompt_number, e.payload FROM pending_events e"
        " JOIN sessions s ON s.id = e.session_id ORDER BY e.id"
    ):
        found.setdefault(session, []).append([kind, key, number, json.loads(payload).get("tool_name")])
    return found


def snapshot(data_dir) -> list:
    return [rows(data_dir, f"SELECT * FROM {table} ORDER BY id") for table in ("sessions", "prompts", "pending_events")]


# -- transcripts written here, in the format the recorded ones show ------------------------------------


class Transcript:
    """A transcript of one session, line by line as Claude Code 2.1 writes it."""

    def __init__(self, session_id: str, cwd: str, start: float = 1_795_000_000.0) -> None:
        self.session_id, self.cwd, self.clock = session_id, cwd, start
        self.lines: list[dict] = []
        self.prompt_id = ""
        self.tools = 0

    def _stamp(self) -> str:
        self.clock += 1
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.clock)) + ".000Z"

    def _chain(self, kind: str, **fields: object) -> dict:
        line = {"parentUuid": None, "isSidechain": False, "type": kind, "uuid": f"u{len(self.lines)}",
                "timestamp": self._stamp(), "cwd": self.cwd, "sessionId": self.session_id, "version": "2.1.330",
                **fields}
        self.lines.append(line)
        return line

    def prompt(self, text: str) -> Transcript:
        self.prompt_id = f"p-{self.session_id}-{len(self.lines)}"
        self._chain("user", promptId=self.prompt_id, message={"role": "user", "content": text})
        return self

    def tool(self, name: str, tool_input: dict, result: object, *, error: bool = False) -> Transcript:
        self.tools += 1
        tool_id = f"toolu_{self.session_id}_{self.tools}"
        self._chain("assistant", message={"id": f"msg_{tool_id}", "role": "assistant", "stop_reason": "tool_use",
                                          "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}]})
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": result if error else json.dumps(result)}
        if error:
            block["is_error"] = True
        self._chain("user", promptId=self.prompt_id, message={"role": "user", "content": [block]},
                    toolUseResult=f"Error: {result}" if error else result)
        return self

    def answer(self, text: str) -> Transcript:
        self._chain("assistant", message={"id": f"msg_a{len(self.lines)}", "role": "assistant", "stop_reason": "end_turn",
                                          "content": [{"type": "text", "text": text}]})
        return self

    def end(self) -> Transcript:
        self.lines.append({"type": "cost-state", "sessionId": self.session_id, "totalCostUSD": 0.01})
        return self

    def write(self, folder) -> str:
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(str(folder), f"{self.session_id}.jsonl")
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(line, separators=(",", ":")) + "\n" for line in self.lines)
        return path


def a_session(session_id: str, cwd: str, turns: int = 1) -> Transcript:
    transcript = Transcript(session_id, cwd)
    for turn in range(turns):
        transcript.prompt(f"fix the parser, step {turn}")
        transcript.tool("Bash", {"command": f"pytest -q tests/test_parser.py -k step{turn}"},
                        {"stdout": "3 passed", "stderr": "", "interrupted": False})
        transcript.tool("Edit", {"file_path": f"{cwd}/parser.py", "old_string": "a", "new_string": "b"},
                        {"filePath": f"{cwd}/parser.py", "structuredPatch": []})
        transcript.answer(f"Fixed step {turn}.")
    return transcript.end()


# -- recorded from the real CLI ----------------------------------------------------------------------------


def test_recorded_transcripts_import_as_the_hooks_captured_them(data_dir):
    result = run_import(RECORDED_PROJECTS)
    assert result.exit_code == 0, result.output
    assert stored_events(data_dir) == hook_events()
    assert "Imported 3 of 3 sessions: 20 events" in result.output
    assert rows(data_dir, "SELECT DISTINCT project, cwd, status FROM sessions") == [(PROJECT, PROJECT, "completed")]
    # Rows carry the transcript's times, not the import's.
    assert rows(data_dir, "SELECT started_at FROM sessions WHERE content_session_id = ?", (EDIT_SESSION,)) == [
        ("2026-11-23T10:50:57.271Z",)]
    failure = [e for e in events(data_dir) if e["kind"] == "tool_failure"][0]["payload"]
    assert failure["error"] == "Exit code 3\nboom" and failure["tool_input"]["command"] == "echo boom >&2; exit 3"
    by_key = {e["event_key"]: e["payload"] for e in events(data_dir)}
    patch = by_key["toolu_fake000003"]["tool_response"]["structuredPatch"]  # the Edit, structured as PostToolUse has it
    assert patch[0]["lines"][:2] == ["-hello from fake model", "+goodbye from fake model"]
    # A sub-agent's transcript keeps only the text the model saw of its tools' results.
    assert by_key["toolu_fake000016"]["tool_response"].startswith("The file /home/dev/proj/notes.txt has been updated")


def test_a_main_transcript_brings_its_sub_agents(data_dir):
    main = os.path.join(RECORDED_PROJECTS, "-home-dev-proj", f"{AGENT_SESSION}.jsonl")
    assert run_import(main).exit_code == 0
    assert stored_events(data_dir) == {AGENT_SESSION: hook_events()[AGENT_SESSION]}


def test_importing_twice_adds_nothing(data_dir):
    run_import(RECORDED_PROJECTS)
    before = snapshot(data_dir)
    again = run_import(RECORDED_PROJECTS)
    assert again.exit_code == 0, again.output
    assert "Imported 0 of 3 sessions: 0 events" in again.output
    assert "3 sessions already stored" in again.output
    assert snapshot(data_dir) == before


@pytest.mark.slow
def test_a_session_captured_live_by_the_hooks_is_not_doubled(data_dir, tmp_path, monkeypatch):
    """The real CLI with the plugin: the hooks capture two sessions; importing their transcripts into
    the same store adds nothing, and into a fresh store gives the same events in the same order."""
    from claude_support import run_claude
    from fakes.anthropic_api import FakeAnthropic

    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    with FakeAnthropic() as fake:
        for prompt in ("please write then edit hello.txt", "please fail a command"):
            done = run_claude(prompt, fake.url, str(project), str(home), {"CLAUDE_MEM_AUTOSTART": "false"})
            assert done.returncode == 0, done.stderr[-2000:]
    live = events(data_dir)
    assert [e["kind"] for e in live] == ["prompt", "tool", "tool", "tool", "summarize", "session_end",
                                         "prompt", "tool_failure", "summarize", "session_end"]
    before = snapshot(data_dir)
    result = run_import(str(home / ".claude" / "projects"))
    assert result.exit_code == 0, result.output
    assert snapshot(data_dir) == before
    assert "2 sessions already stored" in result.output

    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(tmp_path / "fresh"))
    assert run_import(str(home / ".claude" / "projects")).exit_code == 0
    imported = events(tmp_path / "fresh")
    assert [(e["kind"], e["event_key"], e["prompt_number"]) for e in imported] == \
           [(e["kind"], e["event_key"], e["prompt_number"]) for e in live]
    for mine, theirs in zip(imported, live):  # the same payloads, but for the duration transcripts do not record
        # and the files' fingerprints: only the live hook saw the files as they were then
        live_payload = {key: value for key, value in theirs["payload"].items() if key not in ("files", "commit")}
        assert mine["payload"] == {**live_payload, **({"duration_ms": None} if "duration_ms" in theirs["payload"] else {})}
    assert any("files" in e["payload"] for e in live) and not any("files" in e["payload"] for e in imported)
    assert rows(tmp_path / "fresh", "SELECT project, status FROM sessions") == \
           rows(data_dir, "SELECT project, status FROM sessions")


def test_a_live_session_with_other_keys_is_matched_turn_by_turn(data_dir, tmp_path):
    """A TUI session ends with reason prompt_input_exit, an old CLI sends no prompt_id: the keys differ,
    and the import still adds nothing to the session the hooks captured."""
    transcript = a_session("live-1", str(tmp_path / "proj"), turns=2)
    folder = tmp_path / "projects" / "p"
    transcript.write(folder)
    env = {"CLAUDE_PROJECT_DIR": str(tmp_path / "proj")}
    config = {"skip_tools": [], "excluded_projects": [], "max_field_chars": 20_000}
    sessions, _ = transcript_reader.find_sessions([str(folder)])
    from claude_mem import store

    conn = store.open(str(data_dir))
    try:
        for call in transcript_reader.SessionReader(sessions[0], transcript_reader.Notes()):
            hook_payload = dict(call.payload)
            hook_payload.pop("prompt_id", None)  # a 2.0 CLI: the hook keys prompts by the transcript's size instead
            if call.hook == "session-end":
                hook_payload["reason"] = "prompt_input_exit"
            if call.hook == "stop":
                hook_payload["last_assistant_message"] += " (worded as Stop saw it)"
            with store.transaction(conn):
                capture_store.apply_record(conn, capture_payload.capture_record(call.hook, hook_payload, config, env))
    finally:
        conn.close()
    before = snapshot(data_dir)
    result = run_import(str(folder))
    assert result.exit_code == 0, result.output
    assert snapshot(data_dir) == before
    # The session continued after its end (a resume): only the new turn, and a second session end, are added.
    transcript.prompt("and now the lexer").tool("Bash", {"command": "make lexer"}, {"stdout": "ok"}).answer("Done.").end()
    transcript.write(folder)
    assert run_import(str(folder)).exit_code == 0
    added = events(data_dir)[len(before[2]):]
    assert [(e["kind"], e["prompt_number"]) for e in added] == [("prompt", 3), ("tool", 3), ("summarize", 3),
                                                                 ("session_end", 3)]
    assert rows(data_dir, "SELECT status FROM sessions") == [("completed",)]


def test_an_interrupted_import_leaves_whole_sessions_and_continues(data_dir, tmp_path, monkeypatch):
    folder = tmp_path / "projects" / "p"
    for n in range(3):
        a_session(f"s{n}", str(tmp_path / "proj"), turns=2).write(folder)
    real = capture_store.apply_record
    calls = {"n": 0}

    def dies_in_the_second_session(conn, record):
        if record["content_session_id"] == "s1" and record["kind"] == "tool":
            calls["n"] += 1
            if calls["n"] == 3:
                raise KeyboardInterrupt
        return real(conn, record)

    monkeypatch.setattr(transcripts, "apply_record", dies_in_the_second_session)
    result = run_import(str(folder))
    assert result.exit_code == 130
    assert "run the same command again" in result.output
    assert rows(data_dir, "SELECT content_session_id FROM sessions ORDER BY id") == [("s0",)]
    assert len(events(data_dir)) == 9  # 2 × (prompt, 2 tools, summarize) + session end
    monkeypatch.setattr(transcripts, "apply_record", real)
    again = run_import(str(folder))
    assert again.exit_code == 0, again.output
    assert "Imported 2 of 3 sessions: 18 events" in again.output
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(tmp_path / "clean"))
    run_import(str(folder))
    assert [(e["kind"], e["event_key"]) for e in events(data_dir)] == \
           [(e["kind"], e["event_key"]) for e in events(tmp_path / "clean")]


# -- the hooks' rules apply ----------------------------------------------------------------------------------


def test_private_spans_and_secrets_are_removed_as_the_hooks_remove_them(data_dir, tmp_path):
    cwd = str(tmp_path / "proj")
    transcript = Transcript("priv", cwd)
    transcript.prompt("deploy with <private>my home address is 1 Elm St</private> the staging key")
    for index, (_, text, _) in enumerate(SECRETS):
        transcript.tool("Bash", {"command": f"cat config-{index}"}, {"stdout": text, "stderr": "", "interrupted": False})
    transcript.answer("Deployed.")
    transcript.prompt("<private>the whole turn is mine</private>")
    transcript.tool("Read", {"file_path": f"{cwd}/diary.txt"}, {"file": {"content": "dear diary"}})
    transcript.answer("Read it.")
    transcript.prompt("back to work").answer("OK.").end()
    transcript.write(tmp_path / "projects" / "p")
    result = run_import(str(tmp_path / "projects"))
    assert result.exit_code == 0, result.output
    assert "tool calls and turn ends of <private> turns" in result.output
    stored = json.dumps([e["payload"] for e in events(data_dir)], ensure_ascii=False)
    stored += json.dumps(rows(data_dir, "SELECT text FROM prompts"), ensure_ascii=False)
    assert "1 Elm St" not in stored and "the whole turn is mine" not in stored and "dear diary" not in stored
    leaked = [secret for _, _, secret in SECRETS if secret in stored or json.dumps(secret)[1:-1] in stored]
    assert not leaked
    assert rows(data_dir, "SELECT prompt_number, private FROM prompts") == [(1, 0), (2, 1), (3, 0)]
    assert [e["kind"] for e in events(data_dir)] == ["prompt", *["tool"] * len(SECRETS), "summarize", "prompt",
                                                     "summarize", "session_end"]


def test_skip_tools_and_excluded_projects(data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_SKIP_TOOLS", "Bash")
    result = run_import(RECORDED_PROJECTS)
    assert result.exit_code == 0, result.output
    tools = [e["payload"]["tool_name"] for e in events(data_dir) if e["kind"].startswith("tool")]
    assert "Bash" not in tools and tools.count("Write") == 2
    assert "3 tool calls of skip_tools" in result.output
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(tmp_path / "other"))
    monkeypatch.setenv("CLAUDE_MEM_EXCLUDED_PROJECTS", json.dumps(["/home/dev/*"]))
    excluded = run_import(RECORDED_PROJECTS)
    assert excluded.exit_code == 0
    assert "3 sessions of excluded_projects" in excluded.output
    assert events(tmp_path / "other") == []


def test_max_field_chars_cuts_huge_outputs_and_overlong_lines_are_skipped(data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_MEM_MAX_FIELD_CHARS", "1000")
    transcript = Transcript("huge", str(tmp_path / "proj")).prompt("show the log")
    transcript.tool("Bash", {"command": "cat big.log"}, {"stdout": "HEAD" + "x" * 5_000_000 + "TAIL", "stderr": ""})
    transcript.answer("That is a big log.").end()
    blob = {"type": "api-request-blob", "sessionId": "huge", "message": {"content": "y" * 3_000_000}}
    transcript.lines.insert(1, blob)
    folder = tmp_path / "projects" / "p"
    transcript.write(folder)
    result = run_import(str(folder))
    assert result.exit_code == 0, result.output
    stdout = [e for e in events(data_dir) if e["kind"] == "tool"][0]["payload"]["tool_response"]["stdout"]
    assert stdout.startswith("HEAD") and stdout.endswith("TAIL") and len(stdout) < 1100
    # A line past the reader's limit is skipped without being held, and named.
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(tmp_path / "other"))
    sessions, _ = transcript_reader.find_sessions([str(folder)])
    from claude_mem import settings

    source = transcripts.TranscriptSource(sessions, settings.load(), max_line_bytes=1_000_000)
    report = importers.run(source, str(tmp_path / "other"))
    assert report.skipped == {"damaged line(s) skipped": 2} and "longer than" in report.problems[0]
    assert report.added["prompt"] == 1 and report.added["tool"] == 0


# -- damaged and foreign input --------------------------------------------------------------------------------


def test_unknown_line_types_are_counted_and_skipped(data_dir, tmp_path):
    transcript = a_session("future", str(tmp_path / "proj"))
    transcript.lines[1:1] = [{"type": "hologram", "sessionId": "future"}, {"type": "hologram"}, {"no": "type"}]
    transcript.write(tmp_path / "projects" / "p")
    result = run_import(str(tmp_path / "projects"))
    assert result.exit_code == 1
    assert "2 line(s) of unknown type 'hologram' skipped (first at" in result.output
    assert "future.jsonl:2" in result.output
    assert [e["kind"] for e in events(data_dir)] == ["prompt", "tool", "tool", "summarize", "session_end"]


def test_a_truncated_line_is_named_and_the_rest_imported(data_dir, tmp_path):
    folder = tmp_path / "projects" / "p"
    path = a_session("cut", str(tmp_path / "proj"), turns=2).write(folder)
    with open(path, encoding="utf-8") as handle:
        lines = handle.readlines()
    lines[3] = lines[3][: len(lines[3]) // 2] + "\n"  # the first Edit call, cut mid-line
    lines[-1] = lines[-1][:20]  # and the file ends inside its last line
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(lines)
    result = run_import(str(folder))
    assert result.exit_code == 1
    output = result.output
    assert "2 damaged line(s) skipped" in output
    assert "cut.jsonl:4: not a complete JSON line, skipped" in output
    assert "cut.jsonl:13: not a complete JSON line (the file ends inside it), skipped" in output
    kinds = [e["kind"] for e in events(data_dir)]
    assert kinds == ["prompt", "tool", "summarize", "prompt", "tool", "tool", "summarize", "session_end"]


def test_a_directory_of_mixed_junk(data_dir, tmp_path):
    folder = tmp_path / "projects" / "p"
    a_session("good", str(tmp_path / "proj")).write(folder)
    (folder / "binary.jsonl").write_bytes(bytes(range(11, 256)) * 16 + b"\n\xff\xfe{}\n")
    (folder / "empty.jsonl").write_text("")
    (folder / "arrays.jsonl").write_text("[1, 2]\n42\nnull\n")
    (folder / "other.jsonl").write_text(json.dumps({"level": "info", "msg": "a log line"}) + "\n")
    (folder / "notes.txt").write_text("not a transcript")
    (folder / "good").mkdir()
    (folder / "good" / "memory").mkdir()
    (folder / "good" / "memory" / "MEMORY.md").write_text("# auto memory")
    os.symlink(folder / "missing-target.jsonl", folder / "dangling.jsonl")
    result = run_import(str(tmp_path / "projects"), str(tmp_path / "nowhere"))
    assert result.exit_code == 1
    output = result.output
    assert "Imported 1 of" in output
    assert "not found: " in output and "nowhere" in output
    assert "binary.jsonl:1: not UTF-8 text, skipped" in output and "binary.jsonl:2: not UTF-8 text" in output
    assert "arrays.jsonl:1: a JSON list, not an object" in output
    assert "unknown type '(no type: NoneType)'" in output
    assert "cannot read" in output and "dangling.jsonl" in output
    assert {e["kind"] for e in events(data_dir)} == {"prompt", "tool", "summarize", "session_end"}


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=8)
BLOCK = st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["text", "tool_use", "tool_result", "thinking"]) | JSON, "text": JSON | st.text(max_size=30),
    "id": st.sampled_from(["t1", "t2"]) | JSON, "tool_use_id": st.sampled_from(["t1", "t2"]) | JSON,
    "name": st.sampled_from(["Bash", "Edit"]) | JSON, "input": JSON, "content": JSON, "is_error": JSON})
ENTRY = st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["user", "assistant", "attachment", "system", "cost-state", "mode", "hologram"]) | JSON,
    "message": st.fixed_dictionaries({}, optional={"id": JSON, "content": JSON | st.text(max_size=40) | st.lists(BLOCK, max_size=3)})
    | JSON, "timestamp": st.sampled_from(["2026-11-23T10:42:05.609Z", "2026-11-23T10:42:05Z", "yesterday"]) | JSON,
    "sessionId": st.sampled_from(["prop", "other"]) | JSON, "cwd": st.just("/home/dev/proj") | JSON,
    "promptId": JSON, "uuid": JSON, "isMeta": JSON, "isSidechain": JSON, "isCompactSummary": JSON, "toolUseResult": JSON})


@hypothesis_settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(ENTRY | JSON, max_size=12), st.binary(max_size=40))
def test_any_lines_give_hook_calls_the_gate_accepts_or_rejects_cleanly(tmp_path_factory, entries, junk):
    """The transcript parser on anything: hook calls whose payloads the hooks' gate stores or refuses
    with BadInput/Unregistered, and every other line counted; nothing else, never an exception."""
    folder = tmp_path_factory.mktemp("prop")
    with open(folder / "prop.jsonl", "wb") as handle:
        handle.writelines(json.dumps(entry).encode() + b"\n" for entry in entries)
        handle.write(junk)
    notes = transcript_reader.Notes()
    config = {"skip_tools": [], "excluded_projects": [], "max_field_chars": 500}
    for call in transcript_reader.SessionReader(transcript_reader.SessionFiles("prop", str(folder / "prop.jsonl")), notes):
        assert call.payload["session_id"] == "prop"
        try:
            record = capture_payload.capture_record(call.hook, call.payload, config, {})
        except (capture_payload.BadInput, capture_payload.Unregistered):
            continue
        json.dumps(record, ensure_ascii=False).encode("utf-8")
    assert notes.skipped_lines <= len(entries) + junk.count(b"\n") + 1


# -- options ------------------------------------------------------------------------------------------------------


def test_dry_run_writes_nothing_and_estimates_observer_tokens(data_dir, tmp_path):
    result = run_import("--dry-run", RECORDED_PROJECTS)
    assert result.exit_code == 0, result.output
    assert not os.path.exists(data_dir)
    output = result.output.replace("\n", " ")
    assert "Dry run, nothing written: 3 of 3 sessions would add 20 events" in output
    assert "proj" in output and "observer tokens (est.)" in result.output
    tokens = int(output.split("about ")[1].split(" observer")[0].replace(",", ""))
    assert 1_000 < tokens < 100_000
    run_import(os.path.join(RECORDED_PROJECTS, "-home-dev-proj", f"{EDIT_SESSION}.jsonl"))
    database = data_dir / "claude-mem.db"
    before = database.read_bytes(), snapshot(data_dir)
    again = run_import("--dry-run", RECORDED_PROJECTS)
    assert "2 of 3 sessions would add 14 events" in again.output.replace("\n", " ")
    # Read through a read-only connection: the file is unchanged and its write-ahead log holds nothing
    # (SQLite may leave its empty -wal/-shm companions, as any reader does).
    assert (database.read_bytes(), snapshot(data_dir)) == before
    wal = data_dir / "claude-mem.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0


def test_since_and_project_filter_whole_sessions(data_dir, tmp_path):
    old = a_session("old", str(tmp_path / "alpha"))
    new = Transcript("new", str(tmp_path / "beta"), start=old.clock + 10 * 86400)
    new.prompt("hello").answer("hi").end()
    other = Transcript("other", str(tmp_path / "alpha"), start=old.clock + 10 * 86400)
    other.prompt("again").answer("yes").end()
    folder = tmp_path / "projects" / "p"
    for transcript in (old, new, other):
        transcript.write(folder)
    day = time.strftime("%Y-%m-%d", time.gmtime(old.clock + 5 * 86400))
    result = run_import("--since", day, "--project", "alpha", str(folder))
    assert result.exit_code == 0, result.output
    assert rows(data_dir, "SELECT content_session_id FROM sessions") == [("other",)]
    assert "2 sessions left out by --since/--project" in result.output
    assert run_import("--since", "yesterday-ish", str(folder)).exit_code == 2


def test_default_location_and_claude_config_dir(data_dir, tmp_path, monkeypatch):
    assert "does not exist" in run_import().output
    config = tmp_path / "config"
    shutil.copytree(RECORDED_PROJECTS, config / "projects")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    assert run_import().exit_code == 0
    assert stored_events(data_dir) == hook_events()


# -- end to end ---------------------------------------------------------------------------------------------


def claude_mem(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([CLAUDE_MEM, *args], env=env, capture_output=True, text=True, timeout=120)


def wait_for_empty_queue(env: dict[str, str], timeout: float = 90) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while True:
        counts = json.loads(claude_mem("status", "--json", env=env).stdout)["store"]["counts"]["events"]
        if counts["pending"] == 0 and counts["claimed"] == 0 and counts["done"] > 0:
            return counts
        assert time.monotonic() < deadline, f"the worker did not drain the queue: {counts}"
        time.sleep(0.3)


@pytest.mark.slow
def test_imported_history_becomes_memory_for_the_next_session(data_dir, tmp_path):
    require(os.path.exists(CLAUDE_MEM), "the claude-mem console script is not installed in this venv")
    env = {**os.environ, "CLAUDE_MEM_PROVIDER": "offline", "CLAUDE_MEM_WORKER_PORT": "0",
           "CLAUDE_MEM_AUTOSTART": "false", "CLAUDE_MEM_RETRY_BACKOFF_SECONDS": "0.1"}
    imported = claude_mem("import", "transcripts", RECORDED_PROJECTS, env=env)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    started = claude_mem("worker", "start", env=env)
    assert started.returncode == 0, started.stderr
    try:
        assert wait_for_empty_queue(env)["done"] == 20
    finally:
        stopped = claude_mem("worker", "stop", env=env)
        assert stopped.returncode == 0, stopped.stderr
    stored = rows(data_dir, "SELECT id, title FROM observations ORDER BY id")
    edits = [title for _, title in stored if "hello.txt" in title or "notes.txt" in title]
    assert len(edits) == 2 and any("boom" in title for _, title in stored), stored
    assert len(rows(data_dir, "SELECT id FROM summaries")) == 4
    context = claude_mem("context", "--project", PROJECT, env=env)
    assert context.returncode == 0, context.stderr
    assert all(f"#{id_} " in context.stdout for id_, _ in stored)
    assert all(title in context.stdout for title in edits)
    assert "## Latest summary" in context.stdout
