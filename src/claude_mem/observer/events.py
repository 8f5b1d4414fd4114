"""Queued events as the observer sees them, and their compact text rendering for prompts.

The rendering is what an observer LLM reads, so it is short: edits become diffs, commands become
`$ command` with their outcome, reads become a path. Each event is rendered once into a
`RenderedEvent` record; the prompt shows its `<event …>` text, and the `offline` and `fake`
providers answer from the same records (DESIGN §5), so they see exactly what an LLM is sent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from claude_mem.store.models import PendingEvent

__all__ = ["EDIT_TOOLS", "PendingEvent", "RenderedEvent", "render_event", "rendered_event"]

FIELD_CHARS = 1200  # longest single rendered field (command output, file content)
READ_CHARS = 200  # reads are routine: a glimpse is enough
EDIT_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")


@dataclass(frozen=True)
class RenderedEvent:
    """One event as the observer is shown it: attributes and a short body."""

    id: int
    kind: str
    tool: str = ""
    file: str = ""
    status: str = ""
    body: str = ""
    attrs: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The compact `<event>` block of a prompt."""
        head = " ".join(f'{key}="{_attr(value)}"' for key, value in self.attrs.items() if value)
        body = _escape_body(self.body)
        return f"<event {head}>\n{body}\n</event>" if body else f"<event {head}/>"


def _short(text: str, limit: int) -> str:
    text = text.strip("\n")
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3):]
    return f"{head}\n… [{len(text) - len(head) - len(tail)} chars omitted] …\n{tail}"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


def relative(path: str, root: str) -> str:
    """`path` relative to the project root when it lies inside it."""
    if root and path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1:]
    return path


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace("\n", " ")


def _escape_body(text: str) -> str:
    return re.sub(r"</?event\b", lambda m: m.group(0).replace("<", "‹"), text)


def _edit_body(tool: str, tool_input: dict[str, Any], response: Any) -> tuple[str, str]:
    """(status, diff-ish body) for an edit tool."""
    patch = response.get("structuredPatch") if isinstance(response, dict) else None
    lines: list[str] = []
    if isinstance(patch, list):
        for hunk in patch:
            if isinstance(hunk, dict) and isinstance(hunk.get("lines"), list):
                lines.extend(str(line) for line in hunk["lines"])
    if tool == "Write":
        created = isinstance(response, dict) and response.get("type") == "create"
        if created or not lines:
            content = _text(tool_input.get("content"))
            body = "\n".join("+" + line for line in content.splitlines())
            return ("created" if created else "written"), _short(body, FIELD_CHARS)
        return "updated", _short("\n".join(lines), FIELD_CHARS)
    if not lines:
        edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
        for edit in edits if isinstance(edits, list) else []:
            if isinstance(edit, dict):
                lines += ["-" + s for s in _text(edit.get("old_string")).splitlines()]
                lines += ["+" + s for s in _text(edit.get("new_string")).splitlines()]
    return "edited", _short("\n".join(lines), FIELD_CHARS)


def _bash_body(tool_input: dict[str, Any], response: Any, error: str | None) -> tuple[str, str]:
    parts = [f"$ {_text(tool_input.get('command')).strip()}"]
    if tool_input.get("description"):
        parts.append(f"# {_text(tool_input['description']).strip()}")
    status = "ok"
    if isinstance(response, dict):
        if response.get("stdout"):
            parts.append("stdout: " + _short(_text(response["stdout"]), FIELD_CHARS))
        if response.get("stderr"):
            parts.append("stderr: " + _short(_text(response["stderr"]), FIELD_CHARS))
        if response.get("interrupted"):
            status = "interrupted"
    elif response:
        parts.append("output: " + _short(_text(response), FIELD_CHARS))
    if error is not None:
        status = "failed"
        parts.append("error: " + _short(error, FIELD_CHARS))
    return status, "\n".join(parts)


def rendered_event(event: PendingEvent, root: str = "") -> RenderedEvent:
    """One event as the observer is shown it (paths relative to `root`)."""
    payload = event.payload
    attrs: dict[str, str] = {"id": str(event.id), "kind": event.kind}
    body = ""
    if event.kind == "prompt":
        body = _short(_text(payload.get("prompt")), FIELD_CHARS * 2)
    elif event.kind == "summarize":
        body = _short(_text(payload.get("last_assistant_message")), FIELD_CHARS)
    elif event.kind == "session_end":
        attrs["reason"] = _text(payload.get("reason"))
    else:
        tool = _text(payload.get("tool_name")) or "unknown"
        raw_input = payload.get("tool_input")
        tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
        response = payload.get("tool_response")
        error = _text(payload.get("error")) if event.kind == "tool_failure" else None
        attrs["tool"] = tool
        path = tool_input.get("file_path") or tool_input.get("notebook_path") or tool_input.get("path")
        if isinstance(path, str) and path:
            attrs["file"] = relative(path, root)
        if tool == "Bash":
            attrs["status"], body = _bash_body(tool_input, response, error)
        elif tool in EDIT_TOOLS and error is None:
            attrs["status"], body = _edit_body(tool, tool_input, response)
        elif tool == "Read" and error is None:
            attrs["status"] = "read"
            content = response.get("file", {}).get("content") if isinstance(response, dict) else response
            body = _short(_text(content), READ_CHARS) if isinstance(content, str) else ""
        else:
            attrs["status"] = "failed" if error is not None else "ok"
            shown = {k: v for k, v in tool_input.items() if k not in ("file_path", "content")}
            parts = [f"input: {_short(_text(shown), FIELD_CHARS)}"] if shown else []
            if error is not None:
                parts.append("error: " + _short(error, FIELD_CHARS))
            elif response not in (None, "", {}, []):
                parts.append("output: " + _short(_text(response), FIELD_CHARS))
            body = "\n".join(parts)
        if payload.get("is_interrupt"):
            attrs["status"] = "interrupted"
    return RenderedEvent(id=event.id, kind=event.kind, tool=attrs.get("tool", ""), file=attrs.get("file", ""),
                         status=attrs.get("status", ""), body=body, attrs=attrs)


def render_event(event: PendingEvent, root: str = "") -> str:
    """One event as a compact `<event>` block."""
    return rendered_event(event, root).text
