"""The plugin's MCP server inside the REAL Claude Code CLI (bundled with claude-agent-sdk), offline
against the fake Messages API: the CLI starts it from `.mcp.json`, offers its tools to the model
under their plugin names, calls one, and sends the plain-text result back to the model."""

import json
import re

import pytest

from claude_support import run_claude
from fakes.anthropic_api import FakeAnthropic
from mcp_support import seeded_claude_home

PREFIX = "mcp__plugin_persistent-memory_memory__"


@pytest.mark.slow
def test_claude_code_offers_and_calls_the_memory_tools(data_dir, tmp_path):
    # The plugin runs `python3 scripts/mcp_server.py` with whichever python3 is on PATH: the standard
    # library is all the server needs, no venv.
    project, home, seeded = seeded_claude_home(data_dir, tmp_path, PREFIX + "search")
    with FakeAnthropic() as fake:
        # Claude Code may send its first requests before the MCP server has connected (a slow start
        # under load): the model works, a second per step, until the tools are offered, then searches.
        result = run_claude("please wait for the memory tools, then search memory for spool ingest", fake.url,
                            str(project), str(home), {"CLAUDE_MEM_AUTOSTART": "false"})
        bodies = [request.body for request in fake.posts("/v1/messages") if isinstance(request.body, dict)]
    assert result.returncode == 0, result.stderr[-2000:]
    assert re.fullmatch(r"Done: scenario finished after \d+ tool call\(s\)", json.loads(result.stdout)["result"])
    main = [body for body in bodies if body.get("tools")]
    tool_names = {tool.get("name") for tool in main[-1]["tools"]}
    assert {PREFIX + "search", PREFIX + "timeline", PREFIX + "get_observations"} <= tool_names
    search_tool = next(tool for tool in main[-1]["tools"] if tool.get("name") == PREFIX + "search")
    assert "Step 1 of 3" in search_tool["description"]
    assert search_tool["input_schema"]["properties"]["limit"]["maximum"] == 100
    # The server's instructions reach the model.
    assert any("Use it in three steps, cheapest first" in json.dumps(body) for body in main)
    # The tool result — our plain text, not JSON — is in the request after the call.
    results = [block for body in main for message in body["messages"] if isinstance(message.get("content"), list)
               for block in message["content"] if isinstance(block, dict) and block.get("type") == "tool_result"]
    assert results, "the model's search call produced no tool_result"
    content = results[-1]["content"]
    shown = content if isinstance(content, str) else "\n".join(part.get("text", "") for part in content)
    assert not results[-1].get("is_error"), shown
    assert shown.startswith('Search "spool ingest" in project shop:')
    assert f"#{seeded['detailed']} " in shown and "Spool files are renamed before ingest" in shown
