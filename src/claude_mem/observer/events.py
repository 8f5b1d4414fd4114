"""Queued events as the observer sees them, and their compact text rendering for prompts.

The rendering is what an observer LLM reads, so it is short: edits become diffs, commands become
`$ command` with their outcome, reads become a path. Each event is rendered once into a
`RenderedEvent` record: the prompt shows its `<event …>` text, and its fields hold the same shown
content as data (the command, the first line of its error or output, the diff's lines), which the
`offline` provider (and the test suite's fake) answer from (DESIGN §5) — they see what an LLM is
sent, and nothing parses the text back.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

from claude_mem import privacy
from claude_mem.store.models import PendingEvent

__all__ = ["EDIT_TOOLS", "PendingEvent", "RenderedEvent", "rendered_event"]

FIELD_CHARS = 1200  # longest single rendered field (command output, file content)
READ_CHARS = 200  # reads are routine: a glimpse is enough
EDIT_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")


@dataclass(frozen=True)
class RenderedEvent:
    """One event as the observer is shown it: attributes, a short body, and what the body shows as data."""

    id: int
    kind: str
    tool: str = ""
    file: str = ""
    status: str = ""
    reason: str = ""  # session_end
    body: str = ""
    command: str = ""  # Bash: the command
    description: str = ""  # Bash: what the command is for
    error_line: str = ""  # first line of stderr or of the error, as shown
    output_line: str = ""  # first line of stdout or of the output, as shown
    added: tuple[str, ...] = ()  # edits: the `+` lines of the shown diff, without the `+`
    removed: tuple[str, ...] = ()  # edits: the `-` lines of the shown diff, without the `-`

    @property
    def attrs(self) -> dict[str, str]:
        """The `<event>` tag's attributes (empty ones are left out of the text)."""
        return {"id": str(self.id), "kind": self.kind, "reason": self.reason, "tool": self.tool,
                "file": self.file, "status": self.status}

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


def _first_line(texts: list[str]) -> str:
    return texts[0].splitlines()[0] if texts and texts[0] else ""


EXIT_CODE_LINE = re.compile(r"^(?:Exit code|exit status|returned)\s*-?\d+\s*$", re.IGNORECASE)
TELLING_LINES = (re.compile(r"^(?:FAILED|ERROR)\b"), re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b:?"),
                 re.compile(r"\b(?:error|fatal|not found|denied|No such file)\b", re.IGNORECASE))


def _error_line(texts: list[str]) -> str:
    """The line of an error that says most: a `FAILED …` or `…Error: …` line over Claude Code's
    leading `Exit code N`, which tells nothing on its own."""
    lines = [line.strip() for line in (texts[0] if texts else "").splitlines() if line.strip()]
    for pattern in TELLING_LINES:
        for line in lines:
            if pattern.search(line) and not EXIT_CODE_LINE.match(line):
                return line
    return next((line for line in lines if not EXIT_CODE_LINE.match(line)), lines[0] if lines else "")


def _diff(event: RenderedEvent, status: str, lines: list[str]) -> RenderedEvent:
    """`event` showing the diff `lines` (shortened); `added`/`removed` are the lines it shows."""
    body = _short("\n".join(lines), FIELD_CHARS)
    shown = body.splitlines()
    return replace(event, status=status, body=body,
                   added=tuple(line[1:] for line in shown if line.startswith("+")),
                   removed=tuple(line[1:] for line in shown if line.startswith("-")))


def _edit(event: RenderedEvent, tool_input: dict[str, Any], response: Any) -> RenderedEvent:
    """An edit tool's event, shown as a diff."""
    patch = response.get("structuredPatch") if isinstance(response, dict) else None
    lines: list[str] = []
    if isinstance(patch, list):
        for hunk in patch:
            if isinstance(hunk, dict) and isinstance(hunk.get("lines"), list):
                lines.extend(str(line) for line in hunk["lines"])
    if event.tool == "Write":
        created = isinstance(response, dict) and response.get("type") == "create"
        if created or not lines:
            content = _text(tool_input.get("content"))
            return _diff(event, "created" if created else "written", ["+" + line for line in content.splitlines()])
        return _diff(event, "updated", lines)
    if not lines:
        edits = tool_input.get("edits") if event.tool == "MultiEdit" else [tool_input]
        for edit in edits if isinstance(edits, list) else []:
            if isinstance(edit, dict):
                lines += ["-" + s for s in _text(edit.get("old_string")).splitlines()]
                lines += ["+" + s for s in _text(edit.get("new_string")).splitlines()]
    return _diff(event, "edited", lines)


def _bash(event: RenderedEvent, tool_input: dict[str, Any], response: Any, error: str | None) -> RenderedEvent:
    """A Bash event: `$ command`, its description, and its outcome."""
    command = _text(tool_input.get("command")).strip()
    description = _text(tool_input.get("description")).strip()
    parts = [f"$ {command}"] + ([f"# {description}"] if description else [])
    errors: list[str] = []
    outputs: list[str] = []
    status = "ok"
    if isinstance(response, dict):
        if response.get("stdout"):
            outputs.append(_short(_text(response["stdout"]), FIELD_CHARS))
            parts.append("stdout: " + outputs[-1])
        if response.get("stderr"):
            errors.append(_short(_text(response["stderr"]), FIELD_CHARS))
            parts.append("stderr: " + errors[-1])
        if response.get("interrupted"):
            status = "interrupted"
    elif response:
        outputs.append(_short(_text(response), FIELD_CHARS))
        parts.append("output: " + outputs[-1])
    if error is not None:
        status = "failed"
        errors.append(_short(error, FIELD_CHARS))
        parts.append("error: " + errors[-1])
    return replace(event, status=status, body="\n".join(parts), command=command, description=description,
                   error_line=_error_line(errors), output_line=_first_line(outputs))


def _other_tool(event: RenderedEvent, tool_input: dict[str, Any], response: Any, error: str | None) -> RenderedEvent:
    """Any other tool: its input (less the path and content), then its error or output."""
    shown = {k: v for k, v in tool_input.items() if k not in ("file_path", "content")}
    parts = [f"input: {_short(_text(shown), FIELD_CHARS)}"] if shown else []
    errors: list[str] = []
    outputs: list[str] = []
    if error is not None:
        errors.append(_short(error, FIELD_CHARS))
        parts.append("error: " + errors[-1])
    elif response not in (None, "", {}, []):
        outputs.append(_short(_text(response), FIELD_CHARS))
        parts.append("output: " + outputs[-1])
    return replace(event, status="failed" if error is not None else "ok", body="\n".join(parts),
                   error_line=_error_line(errors), output_line=_first_line(outputs))


def rendered_event(event: PendingEvent, root: str = "") -> RenderedEvent:
    """One event as the observer is shown it (paths relative to `root`).

    The payload is cleaned once more (defence in depth: the hook did it, with the rules of its day)."""
    payload = privacy.clean_tree(event.payload)
    assert isinstance(payload, dict)
    shown = RenderedEvent(id=event.id, kind=event.kind)
    if event.kind == "prompt":
        return replace(shown, body=_short(_text(payload.get("prompt")), FIELD_CHARS * 2))
    if event.kind == "summarize":
        return replace(shown, body=_short(_text(payload.get("last_assistant_message")), FIELD_CHARS))
    if event.kind == "session_end":
        return replace(shown, reason=_text(payload.get("reason")))
    raw_input = payload.get("tool_input")
    tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
    response = payload.get("tool_response")
    error = _text(payload.get("error")) if event.kind == "tool_failure" else None
    path = tool_input.get("file_path") or tool_input.get("notebook_path") or tool_input.get("path")
    shown = replace(shown, tool=_text(payload.get("tool_name")) or "unknown",
                    file=relative(path, root) if isinstance(path, str) else "")
    if shown.tool == "Bash":
        shown = _bash(shown, tool_input, response, error)
    elif shown.tool in EDIT_TOOLS and error is None:
        shown = _edit(shown, tool_input, response)
    elif shown.tool == "Read" and error is None:
        content = response.get("file", {}).get("content") if isinstance(response, dict) else response
        shown = replace(shown, status="read", body=_short(content, READ_CHARS) if isinstance(content, str) else "")
    else:
        shown = _other_tool(shown, tool_input, response, error)
    return replace(shown, status="interrupted") if payload.get("is_interrupt") else shown
