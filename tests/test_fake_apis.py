"""The loopback fakes themselves: wire format, auth forms, request log, replies built from content,
and the real Claude Code CLI driven through tool calls by the fake Messages API."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.error
import urllib.request

from hypothesis import given
from hypothesis import strategies as st
from tests.conftest import FIXTURES, require
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.replies import observer_reply

from claude_mem.observer.events import PendingEvent
from claude_mem.observer.parser import parse
from claude_mem.observer.prompts import TurnEnd, turn_prompt
from claude_mem.observer.providers.cli import bundled_cli

KEY = "sk-fake-test-key"


def post(url: str, body: object, headers: dict[str, str]) -> tuple[int, str, str]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("content-type", ""), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("content-type", ""), exc.read().decode()


def session_edit_events() -> list[PendingEvent]:
    folder = os.path.join(FIXTURES, "hook-payloads", "session-edit")
    events = []
    for n, name in enumerate(sorted(os.listdir(folder))):
        payload = json.load(open(os.path.join(folder, name)))
        if payload["hook_event_name"] == "PostToolUse":
            events.append(PendingEvent(n, 1, "tool", 1, payload))
        elif payload["hook_event_name"] == "UserPromptSubmit":
            events.append(PendingEvent(n, 1, "prompt", 1, {"prompt": payload["prompt"], "prompt_number": 1}))
    return events


def test_messages_sse_stream_in_protocol_order_with_both_auth_forms() -> None:
    body = {"model": "claude-haiku-4-5", "max_tokens": 100, "stream": True, "messages": [
        {"role": "user", "content": "claude-mem observer v1\n<event id=\"1\" kind=\"tool\" tool=\"Read\" file=\"a.py\" status=\"read\"/>"},
    ]}
    with FakeAnthropic(api_key=KEY) as fake:
        for headers in ({"x-api-key": KEY}, {"authorization": f"Bearer {KEY}"}):
            status, kind, text = post(fake.url + "/v1/messages?beta=true", body, headers)
            assert status == 200 and kind == "text/event-stream"
            events = [line[7:] for line in text.splitlines() if line.startswith("event: ")]
            assert events[0] == "message_start" and events[-2:] == ["message_delta", "message_stop"]
            assert events.index("content_block_start") < events.index("content_block_delta") < events.index("content_block_stop")
            data = "".join(json.loads(line[6:])["delta"].get("text", "") for line in text.splitlines()
                           if line.startswith("data: ") and '"text_delta"' in line)
            assert "<title>Worked on a.py</title>" in data
        status, _, text = post(fake.url + "/v1/messages", body, {"x-api-key": "wrong"})
        assert status == 401 and json.loads(text)["error"]["type"] == "authentication_error"
        logged = json.dumps([r.headers for r in fake.requests])
        assert KEY not in logged and "Bearer ***" in logged
        assert fake.requests[0].query == {"beta": ["true"]} and fake.requests[0].path == "/v1/messages"


def test_system_role_entries_inside_messages_are_tolerated() -> None:
    """Claude Code 2.1.330 sends `role: "system"` messages (with `output_config`) inside `messages`."""
    body = {"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "claude-mem observer v1\n$ make test"}]},
        {"role": "system", "content": "SessionStart hook success: context", "output_config": {}},
    ]}
    with FakeAnthropic() as fake:
        status, _, text = post(fake.url + "/v1/messages", body, {})
    assert status == 200
    reply = json.loads(text)
    assert reply["type"] == "message" and "Ran make test" in reply["content"][0]["text"]
    assert reply["usage"]["input_tokens"] > 0


def test_openai_chat_completions_json_and_stream() -> None:
    messages = [{"role": "system", "content": "x"},
                {"role": "user", "content": "claude-mem observer v1\n<event id=\"1\" kind=\"tool\" tool=\"Write\" file=\"b.py\" status=\"created\"/>"}]
    with FakeOpenAI() as fake:
        status, _, text = post(fake.url + "/v1/chat/completions", {"model": "m", "messages": messages}, {})
        assert status == 200
        reply = json.loads(text)
        assert "<files_modified><file>b.py</file></files_modified>" in reply["choices"][0]["message"]["content"]
        status, kind, text = post(fake.url + "/v1/chat/completions",
                                  {"model": "m", "messages": messages, "stream": True, "stream_options": {"include_usage": True}}, {})
        assert kind == "text/event-stream" and text.rstrip().endswith("data: [DONE]")
        status, _, text = post(fake.url + "/v1/chat/completions", {"model": "m", "messages": []}, {})
        assert status == 400


def test_replies_come_from_the_session_edit_events() -> None:
    events = session_edit_events()
    prompt = turn_prompt(events, root="/home/dev/proj", turn_end=TurnEnd("edit hello.txt", "Done"))
    parsed = parse(observer_reply(prompt))
    assert parsed.ok
    files = {f for o in parsed.observations for f in o.files_read}
    assert files == {"hello.txt"}
    assert any("hello.txt" in o.files_modified for o in parsed.observations)
    assert any("sys.exit(0)" in o.title for o in parsed.observations)
    assert parsed.summary is not None and parsed.summary.files_edited == ("hello.txt",)
    reads_only = turn_prompt([e for e in events if e.payload.get("tool_name") == "Read"][:0])
    assert "<skip/>" in observer_reply(reads_only)


@given(st.lists(st.from_regex(r"[a-z]{1,8}/[a-z_]{1,10}\.(py|md|ts)", fullmatch=True), min_size=1, max_size=6, unique=True))
def test_reply_names_exactly_the_files_it_was_sent(paths: list[str]) -> None:
    events = [PendingEvent(i, 1, "tool", 1, {"tool_name": "Edit", "tool_input": {"file_path": f"/r/{p}", "old_string": "a", "new_string": "b"},
                                             "tool_response": {}}) for i, p in enumerate(paths)]
    parsed = parse(observer_reply(turn_prompt(events, root="/r")))
    assert {f for o in parsed.observations for f in o.files_modified} == set(paths)


def test_real_claude_cli_writes_then_edits_a_file_through_the_fake(tmp_path) -> None:
    cli = bundled_cli()
    require(cli is not None, "claude-agent-sdk's bundled Claude Code CLI is not installed")
    project = tmp_path / "proj"
    project.mkdir()
    with FakeAnthropic(api_key=KEY) as fake:
        env = {k: v for k, v in os.environ.items() if k not in ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")}
        env.update({"ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": KEY, "CLAUDE_CODE_MAX_RETRIES": "1",
                    "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "ENABLE_TOOL_SEARCH": "false"})
        done = subprocess.run(
            [cli, "-p", "please write then edit notes.txt", "--output-format", "json", "--allowedTools", "Bash,Write,Edit,Read"],
            cwd=project, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )
        posts = fake.posts("/v1/messages")
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["result"] == "Done: scenario finished after 3 tool call(s)"
    assert (project / "notes.txt").read_text() == "goodbye from fake model\nsecond line\n"
    assert len(posts) == 4
    assert all(p.headers["x-api-key"].startswith("***") for p in posts)
    assert any(m.get("role") == "system" for p in posts for m in p.body["messages"])  # 2.1.330 shape
    assert {t["name"] for t in posts[0].body["tools"]} >= {"Write", "Edit", "Bash"}
