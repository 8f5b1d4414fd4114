"""A fake Anthropic Messages API: `POST /v1/messages` (SSE and JSON, with or without `?beta=true`).

Speaks to the `anthropic` package (Bearer auth, JSON or SSE) and to the real Claude Code CLI
(`x-api-key`, always SSE, `role: "system"` entries inside `messages` since 2.1.330). Observer
prompts get replies built from their content (`replies.py`); other conversations follow a tool
script chosen by a phrase in the first user message, so the real CLI can be driven through tool
calls (and our hooks) offline.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from dataclasses import dataclass
from typing import Any

from .replies import estimate_tokens, latest_observer_prompt, text_of
from .server import FakeServer, Handler, Recorded


@dataclass(frozen=True)
class ToolStep:
    name: str
    input: dict[str, Any]


def _cwd_of(body: dict[str, Any]) -> str:
    blob = json.dumps(body)
    match = re.search(r"(?:Primary working directory|Working directory):\s*([^\s\\]+)", blob)
    return match.group(1) if match else os.getcwd()


SEARCH_TOOL = "mcp__plugin_persistent-memory_memory__search"
MAX_WAITS = 60
# What the session-start context tells the model to do when the memory tools are deferred (recall/context.py)
TOOL_SEARCH_HINT = re.compile(r"call ToolSearch with query `(select:[^`]+)`")


def _deferred_listed(request_text: str, name: str) -> bool:
    """Whether Claude Code lists `name` among its deferred tools (one name a line) in this request (JSON text)."""
    return re.search(r'\\n' + re.escape(name) + r'(\\n|")', request_text) is not None


def _through_tool_search(words: str, request_text: str, called: tuple[str, ...]) -> list[ToolStep]:
    """A model that reaches deferred memory tools as the injected context says: it reads the `select:` query
    from the context, loads the tools with ToolSearch, then searches. It works (a second per step) until
    Claude Code lists the tools, as a slow MCP start allows; no hint in the context: no tool call at all."""
    hint = TOOL_SEARCH_HINT.search(request_text)
    if hint is None:
        return []
    pause = ToolStep("Bash", {"command": "sleep 1", "description": "Work for a second"})
    waited = called.count("Bash")
    if "ToolSearch" not in called and not _deferred_listed(request_text, SEARCH_TOOL) and waited < MAX_WAITS:
        return [pause] * (waited + 1)
    return [pause] * waited + [ToolStep("ToolSearch", {"query": hint.group(1), "max_results": 5}),
                               ToolStep(SEARCH_TOOL, {"query": words})]


def scenario(first_user_text: str, cwd: str, offered: frozenset[str] = frozenset(), called: tuple[str, ...] = (),
             request_text: str = "") -> list[ToolStep]:
    """Tool steps for a conversation, chosen by a phrase in its first user message (`offered`: the
    tools of the current request; `called`: the tools called so far, for scenarios that adapt;
    `request_text`: the whole request as JSON, system prompt and injected context included)."""
    match = re.search(r"reach memory as the context says and look up ([\w ]+)", first_user_text)
    if match:
        return _through_tool_search(match.group(1).strip(), request_text, called)
    match = re.search(r"wait for the memory tools, then search memory for ([\w ]+)", first_user_text)
    if match:  # a model at work (a second per step) until Claude Code offers the tool, as a slow MCP start allows
        search = ToolStep(SEARCH_TOOL, {"query": match.group(1).strip()})
        pause = ToolStep("Bash", {"command": "sleep 1", "description": "Work for a second"})
        waited = called.count("Bash")
        if SEARCH_TOOL in called or SEARCH_TOOL in offered or waited >= MAX_WAITS:
            return [pause] * waited + [search]
        return [pause] * (waited + 1)
    match = re.search(r"write then edit ([\w.-]+)", first_user_text)
    if match:
        path = os.path.join(cwd, match.group(1))
        return [
            ToolStep("Write", {"file_path": path, "content": "hello from fake model\nsecond line\n"}),
            ToolStep("Edit", {"file_path": path, "old_string": "hello from fake model", "new_string": "goodbye from fake model"}),
            ToolStep("Bash", {"command": f"cat {path}", "description": "Show the file"}),
        ]
    match = re.search(r"search memory for ([\w ]+)", first_user_text)
    if match:  # the persistent-memory plugin's MCP search tool, as Claude Code names it
        return [ToolStep(SEARCH_TOOL, {"query": match.group(1).strip()})]
    if "fail a command" in first_user_text:
        return [ToolStep("Bash", {"command": "echo boom >&2; exit 3", "description": "Fail on purpose"})]
    return []


class FakeAnthropic(FakeServer):
    """The fake Messages API. `api_key`, when set, must arrive as `x-api-key` or Bearer."""

    def __init__(self, api_key: str | None = None) -> None:
        super().__init__()
        self.api_key = api_key
        self.counter = itertools.count(1)

    # -- what the model says -----------------------------------------------------------------
    def answer(self, body: dict[str, Any]) -> tuple[str, list[dict[str, Any]], str]:
        """(text, content blocks, stop_reason) for one request."""
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        observer_prompt = latest_observer_prompt(messages)
        if observer_prompt is not None:
            from .replies import observer_reply

            text = observer_reply(observer_prompt)
            return text, [{"type": "text", "text": text}], "end_turn"
        users = [m for m in messages if m.get("role") == "user"]
        first = text_of(users[0].get("content")) if users else ""
        done = sum(
            1
            for m in users
            if isinstance(m.get("content"), list)
            for block in m["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        )
        tools = body.get("tools") or []
        offered = frozenset(str(tool.get("name")) for tool in tools if isinstance(tool, dict))
        called = tuple(str(block.get("name")) for m in messages if m.get("role") == "assistant"
                       and isinstance(m.get("content"), list) for block in m["content"]
                       if isinstance(block, dict) and block.get("type") == "tool_use")
        steps = scenario(first, _cwd_of(body), offered, called, json.dumps(body)) if tools else []
        if done < len(steps):
            step = steps[done]
            block = {"type": "tool_use", "id": f"toolu_fake{next(self.counter):06d}", "name": step.name, "input": step.input}
            return "", [block], "tool_use"
        if steps:
            text = f"Done: scenario finished after {done} tool call(s)"
        else:
            last = text_of(users[-1].get("content")) if users else ""
            text = f"FAKE-REPLY #{next(self.counter)}: {last[-200:]}"
        return text, [{"type": "text", "text": text}], "end_turn"

    # -- wire protocol ---------------------------------------------------------------------------
    def authorized(self, handler: Handler) -> bool:
        if self.api_key is None:
            return True
        raw = handler.raw_headers
        bearer = raw.get("authorization", "")
        return raw.get("x-api-key") == self.api_key or bearer == f"Bearer {self.api_key}"

    def route(self, handler: Handler, request: Recorded) -> None:
        if request.method == "POST" and request.path.endswith("/v1/messages/count_tokens"):
            handler.send_json(200, {"input_tokens": estimate_tokens(request.body)})
            return
        if request.method != "POST" or not request.path.endswith("/v1/messages"):
            handler.send_json(200, {"data": []} if "/models" in request.path else {})
            return
        if not self.authorized(handler):
            error = {"type": "authentication_error", "message": "invalid x-api-key"}
            handler.send_json(401, {"type": "error", "error": error})
            return
        body = request.body if isinstance(request.body, dict) else {}
        if not body.get("messages"):
            handler.send_json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "messages: required"}})
            return
        text, blocks, stop = self.answer(body)
        model = str(body.get("model") or "claude-fake")
        usage = {"input_tokens": estimate_tokens({"system": body.get("system"), "messages": body["messages"]}),
                 "output_tokens": max(1, len(json.dumps(blocks)) // 4)}
        message_id = f"msg_fake{next(self.counter):06d}"
        if body.get("stream"):
            self.stream(handler, message_id, model, blocks, stop, usage, truncate=request.fault == "truncate")
            return
        message = {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": blocks,
                   "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if request.fault == "truncate":
            handler.send_truncated_json(message)
        else:
            handler.send_json(200, message)

    def stream(self, handler: Handler, message_id: str, model: str, blocks: list[dict[str, Any]], stop: str,
               usage: dict[str, int], *, truncate: bool) -> None:
        handler.start_sse()
        start: dict[str, Any] = {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
                 "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 1}}
        handler.send_sse({"type": "message_start", "message": start}, "message_start")
        handler.send_sse({"type": "ping"}, "ping")
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                handler.send_sse({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}, "content_block_start")
                text = block["text"]
                pieces = [text[i : i + 64] for i in range(0, len(text), 64)] or [""]
                for n, piece in enumerate(pieces):
                    if truncate and n >= len(pieces) // 2:
                        return  # connection closes mid-stream: no message_stop
                    delta = {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}
                    handler.send_sse(delta, "content_block_delta")
            else:
                head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                handler.send_sse({"type": "content_block_start", "index": index, "content_block": head}, "content_block_start")
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
                handler.send_sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta")
            handler.send_sse({"type": "content_block_stop", "index": index}, "content_block_stop")
        if truncate:
            return
        handler.send_sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                          "usage": {"output_tokens": usage["output_tokens"]}}, "message_delta")
        handler.send_sse({"type": "message_stop"}, "message_stop")
