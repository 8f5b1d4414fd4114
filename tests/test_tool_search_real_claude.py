"""The memory tools stay one step away when Claude Code defers them (issue 30, item 6).

The REAL Claude Code CLI (bundled with claude-agent-sdk) runs with tool search on, as it does by default
(no `ENABLE_TOOL_SEARCH=false`), the plugin loaded with `--plugin-dir` (hooks and MCP server), against
the fake Messages API. The fake model knows nothing of our tool names: it reads the `select:` query
from the session-start context the hook injected, calls ToolSearch with it, then the search tool."""

import json
import re

import pytest

from claude_support import run_claude
from fakes.anthropic_api import FakeAnthropic
from mcp_support import seeded_claude_home

PREFIX = "mcp__plugin_persistent-memory_memory__"
SEARCH = PREFIX + "search"
SELECT = f"select:{PREFIX}search,{PREFIX}timeline,{PREFIX}get_observations"


def tool_uses(bodies: list[dict], name: str) -> list[dict]:
    """The model's calls of tool `name`, as the requests after them repeat them."""
    found = {block["id"]: block for body in bodies for message in body["messages"] if message.get("role") == "assistant"
             and isinstance(message.get("content"), list) for block in message["content"]
             if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == name}
    return list(found.values())


def result_of(bodies: list[dict], call: dict) -> dict:
    """The tool_result Claude Code sent back for `call`."""
    for body in bodies:
        for message in body["messages"]:
            for block in message.get("content") if isinstance(message.get("content"), list) else ():
                if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") == call["id"]:
                    return block
    raise AssertionError(f"no result for {call['name']}")


def text_of(result: dict) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "\n".join(part.get("text", "") for part in content
                                                               if isinstance(part, dict))


@pytest.mark.slow
def test_a_session_reaches_the_deferred_memory_tools_through_the_context_in_one_step(data_dir, tmp_path):
    project, home, seeded = seeded_claude_home(data_dir, tmp_path, SEARCH)
    with FakeAnthropic() as fake:
        # tool search stays on: ENABLE_TOOL_SEARCH="" undoes cli_env's "false" (the CLI's default, `auto`)
        result = run_claude("please reach memory as the context says and look up spool ingest", fake.url,
                            str(project), str(home), {"CLAUDE_MEM_AUTOSTART": "false", "ENABLE_TOOL_SEARCH": ""})
        bodies = [request.body for request in fake.posts("/v1/messages") if isinstance(request.body, dict)]
    assert result.returncode == 0, result.stderr[-2000:]
    assert re.fullmatch(r"Done: scenario finished after \d+ tool call\(s\)", json.loads(result.stdout)["result"])
    main = [body for body in bodies if body.get("tools")]
    first = {tool.get("name") for tool in main[0]["tools"]}
    assert "ToolSearch" in first and SEARCH not in first  # deferred: the model cannot call it yet
    assert SELECT in json.dumps(main[0])  # what the session-start context says
    searches = tool_uses(main, "ToolSearch")
    assert [call["input"] for call in searches] == [{"query": SELECT, "max_results": 5}]
    loaded = result_of(main, searches[0])["content"]
    assert {part.get("tool_name") for part in loaded if isinstance(part, dict)} == {
        SEARCH, PREFIX + "timeline", PREFIX + "get_observations"}
    calls = tool_uses(main, SEARCH)
    assert [call["input"] for call in calls] == [{"query": "spool ingest"}]
    answer = result_of(main, calls[0])
    shown = text_of(answer)
    assert not answer.get("is_error"), shown
    assert shown.startswith('Search "spool ingest" in project shop:')
    assert f"#{seeded['detailed']} " in shown and "Spool files are renamed before ingest" in shown
