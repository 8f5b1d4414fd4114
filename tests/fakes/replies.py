"""Observer replies built from what a request contains, never from what a test expects.

The fake model reads the latest observer prompt, finds the files and commands named in it and
answers with observations about exactly those — so a provider or pipeline test passes only when
the real request carried the real events through the real client.
"""

from __future__ import annotations

import json
import re
from typing import Any
from xml.sax.saxutils import escape

PROMPT_HEADER = "claude-mem observer v1"

_FILE_KEYS = re.compile(r'"(?:file_path|filePath|path|notebook_path)"\s*:\s*"([^"]+)"')
_COMMAND = re.compile(r'"command"\s*:\s*"((?:[^"\\]|\\.)*)"')
_TOOL = re.compile(r'"tool_name"\s*:\s*"([A-Za-z_][\w.-]*)"')
# The pipeline's rendering: `<event id=".." kind="tool" tool="Edit" file="a.py" ...>` and `$ cmd` lines.
_EVENT = re.compile(r"<event\s+([^<>]*?)/?>")
_ATTR = re.compile(r'(\w+)="([^"]*)"')
_DOLLAR = re.compile(r"^\$ (.+)$", re.M)
_WRITES = ("Write", "Edit", "MultiEdit", "NotebookEdit")


def text_of(content: Any) -> str:
    """The text of a message `content` (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(block.get("text") or block.get("content") or "") for block in content if isinstance(block, dict))
    return ""


def is_observer_text(text: str) -> bool:
    return PROMPT_HEADER in text


def latest_observer_prompt(messages: list[dict[str, Any]]) -> str | None:
    """The last user message's text when it is an observer prompt."""
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    if not users:
        return None
    text = text_of(users[-1].get("content"))
    return text if is_observer_text(text) else None


def facts_of(prompt: str) -> dict[str, list[str]]:
    """Files (and which of them were written), commands and tools named in an observer prompt."""
    files: list[str] = list(_FILE_KEYS.findall(prompt))
    tools: list[str] = list(_TOOL.findall(prompt))
    modified: list[str] = []
    for match in _EVENT.finditer(prompt):
        attrs = dict(_ATTR.findall(match.group(1)))
        if attrs.get("tool"):
            tools.append(attrs["tool"])
        if attrs.get("file"):
            files.append(attrs["file"])
            if attrs.get("tool") in _WRITES:
                modified.append(attrs["file"])
    if not _EVENT.search(prompt) and any(tool in _WRITES for tool in tools):
        modified = list(files)
    commands = [json.loads(f'"{raw}"') for raw in _COMMAND.findall(prompt)] + _DOLLAR.findall(prompt)
    unique = lambda items: list(dict.fromkeys(item.strip() for item in items if item.strip()))  # noqa: E731
    return {"files": unique(files), "modified": unique(modified), "commands": unique(commands), "tools": unique(tools)}


def wants_summary(prompt: str) -> bool:
    body = prompt.split(PROMPT_HEADER, 1)[-1]
    return "The user's turn has ended" in body or "summarize" in body.lower()


def _files(tag: str, files: list[str]) -> str:
    return f"<{tag}>" + "".join(f"<file>{escape(f)}</file>" for f in files) + f"</{tag}>"


def observer_reply(prompt: str) -> str:
    """An observer reply for one prompt: an observation per file and per command, or `<skip/>`."""
    found = facts_of(prompt)
    modified = found["modified"]
    blocks: list[str] = []
    for path in found["files"]:
        kind = "change" if path in modified else "discovery"
        blocks.append(
            "<observation>"
            f"<type>{kind}</type>"
            f"<title>Worked on {escape(path)}</title>"
            f"<narrative>The session touched {escape(path)} using {escape(', '.join(found['tools']) or 'a tool')}.</narrative>"
            f"<facts><fact>file {escape(path)}</fact></facts>"
            "<concepts><concept>what-changed</concept></concepts>"
            + _files("files_read", [path])
            + _files("files_modified", [path] if path in modified else [])
            + "</observation>"
        )
    for command in found["commands"]:
        blocks.append(
            "<observation><type>discovery</type>"
            f"<title>Ran {escape(command[:80])}</title>"
            f"<narrative>The session ran the command {escape(command)}.</narrative>"
            f"<facts><fact>command {escape(command)}</fact></facts>"
            "</observation>"
        )
    if wants_summary(prompt):
        everything = found["files"] + found["commands"]
        blocks.append(
            "<summary>"
            f"<request>Work on {escape(', '.join(everything) or 'the session')}</request>"
            f"<investigated>{escape(', '.join(found['files']))}</investigated>"
            f"<learned>{len(found['files'])} file(s) and {len(found['commands'])} command(s) were involved</learned>"
            f"<completed>{escape(', '.join(found['commands']))}</completed>"
            "<next_steps>None</next_steps>"
            + _files("files_read", found["files"])
            + _files("files_edited", modified)
            + "<notes></notes></summary>"
        )
    return "\n".join(blocks) if blocks else "Nothing durable in this batch.\n<skip/>"


def estimate_tokens(payload: Any) -> int:
    """A deterministic token estimate (chars / 4) of everything the model would read."""
    return max(1, len(json.dumps(payload, ensure_ascii=False)) // 4)
