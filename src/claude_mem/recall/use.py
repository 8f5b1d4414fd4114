"""Which memories a session used, derived from what it did (issue 30), by the worker, never by a hook.

Every captured event is read once, in order (`store.use` keeps the watermark), and gives uses of
observations, each (session, observation, how):

- `fetched`: ids the session asked for in full — our MCP `get_observations` (its `ids`), the `timeline`'s
  anchor, or `claude-mem show ID…` run through Bash;
- `searched`: the observations listed in the result of a search it ran — our MCP `search` and `timeline`,
  or `claude-mem search|timeline` run through Bash (the rows of a result start with `#id`);
- `cited`: an observation the session was shown or used before, named by `#id` or by its title in a
  reply (the Stop hook's `last_assistant_message`) or in the input of another tool call. A `#123` the
  session was never given is an issue number or the like, not a citation, and is not counted.

Our MCP tools are known by name: `mcp__plugin_persistent-memory_<server>__<tool>` (the plugin) or
`mcp__memory__<tool>` (`claude-mem install`), or the server name the worker's environment sets
(`CLAUDE_MEM_MCP_SERVER`). A failed call is not a use.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterator
from typing import Any

from claude_mem.domain import MAX_ROW_ID
from claude_mem.runtime.mcp_names import SERVER_ENV, valid_server_name
from claude_mem.store import Store
from claude_mem.store import use as store

BATCH = 200  # events read per transaction
TEXT_CHARS = 200_000  # of one event's text searched for ids and titles
MIN_TITLE_CHARS = 20  # a shorter title is too likely to occur by chance
TOOLS = ("search", "timeline", "get_observations")
_ROW = re.compile(r"(?m)^[^\w#\n]{0,6}#(\d{1,18})\b")  # a result row: `#12 2026-…`, `│ #12 │`, `→ #12`
_CITED = re.compile(r"(?<![\w&/#])#(\d{1,18})\b")
_REF = re.compile(r"^#?(\d{1,18})$")
_CLI = re.compile(r"(?:^|[\s;&|(])(?:claude-mem|claude_mem)\s+(show|search|timeline)\b(.*)", re.S)


def _servers() -> tuple[str, ...]:
    name = os.environ.get(SERVER_ENV, "")
    return ("memory", name) if valid_server_name(name) else ("memory",)


def memory_tool(name: str) -> str | None:
    """`search`, `timeline` or `get_observations` for one of our MCP tools' names as Claude Code gives them."""
    match = re.fullmatch(r"mcp__(.+)__(search|timeline|get_observations)", name)
    if match is None:
        return None
    server = match.group(1)
    if server.startswith("plugin_persistent-memory_") or server in _servers():
        return match.group(2)
    return None


def texts(value: Any, depth: int = 0) -> Iterator[str]:
    """Every string inside a tool's input or response (a list of content blocks, a dict, a string)."""
    if isinstance(value, str):
        yield value
    elif depth < 20 and isinstance(value, dict):
        for item in value.values():
            yield from texts(item, depth + 1)
    elif depth < 20 and isinstance(value, list):
        for item in value:
            yield from texts(item, depth + 1)


def _joined(value: Any) -> str:
    out: list[str] = []
    size = 0
    for text in texts(value):
        out.append(text)
        size += len(text)
        if size > TEXT_CHARS:
            break
    return "\n".join(out)[:TEXT_CHARS]


def _id(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 < value <= MAX_ROW_ID else None
    if isinstance(value, str):
        match = _REF.match(value.strip())
        if match and 0 < int(match.group(1)) <= MAX_ROW_ID:
            return int(match.group(1))
    return None


def listed(text: str) -> set[int]:
    """The observation ids a search or timeline result lists (rows starting with `#id`)."""
    return {int(found) for found in _ROW.findall(text) if 0 < int(found) <= MAX_ROW_ID}


def _cli_uses(command: str, output: str) -> list[tuple[int, str]]:
    """Uses by `claude-mem show|search|timeline` run through Bash."""
    uses: list[tuple[int, str]] = []
    for verb, rest in _CLI.findall(command):
        if verb == "show":
            try:
                words = shlex.split(rest.split("\n", 1)[0], comments=True)
            except ValueError:
                words = rest.split()
            for word in words:
                if word in ("|", "&&", ";", "||") or word.startswith(">"):
                    break
                found = _id(word)
                if found is not None:
                    uses.append((found, "fetched"))
        else:
            uses.extend((found, "searched") for found in listed(output))
    return uses


def tool_uses(payload: dict[str, Any]) -> list[tuple[int, str]]:
    """(observation id, how) for one successful tool call: our MCP tools, or our CLI through Bash."""
    name = str(payload.get("tool_name") or "")
    given = payload.get("tool_input")
    given = given if isinstance(given, dict) else {}
    response = _joined(payload.get("tool_response"))
    tool = memory_tool(name)
    if tool == "get_observations":
        ids = given.get("ids")
        return [(found, "fetched") for found in map(_id, ids if isinstance(ids, list) else [ids]) if found is not None]
    if tool == "timeline":
        anchor = _id(given.get("anchor"))
        uses = [(found, "searched") for found in listed(response) if found != anchor]
        return uses + ([(anchor, "fetched")] if anchor is not None else [])
    if tool == "search":
        return [(found, "searched") for found in listed(response)]
    if name == "Bash" and isinstance(given.get("command"), str):
        return _cli_uses(given["command"][:TEXT_CHARS], response)
    return []


def citations(text: str, known: dict[int, str]) -> set[int]:
    """The observations of `known` (id -> title: what the session was given) that `text` names."""
    if not text or not known:
        return set()
    found = {int(number) for number in _CITED.findall(text) if int(number) in known}
    folded = text.casefold()
    found.update(row_id for row_id, title in known.items()
                 if len(title) >= MIN_TITLE_CHARS and row_id not in found and title.casefold() in folded)
    return found


def event_uses(kind: str, payload: dict[str, Any], known: dict[int, str]) -> list[tuple[int, str]]:
    """(observation id, how) of one captured event; `known`: what its session was given so far."""
    if kind == "summarize":
        return [(found, "cited") for found in citations(_joined(payload.get("last_assistant_message")), known)]
    if kind != "tool":
        return []
    uses = tool_uses(payload)
    if memory_tool(str(payload.get("tool_name") or "")) is None:  # `claude-mem show '#12'` fetches, not cites
        named = citations(_joined(payload.get("tool_input")), known) - {row_id for row_id, _ in uses}
        uses += [(found, "cited") for found in sorted(named)]
    return uses


def derive(conn: Store, limit: int = BATCH) -> int:
    """Read the next `limit` captured events and record the uses they show; how many events were read."""
    events = store.events_after(conn, store.scanned(conn), limit)
    if not events:
        return 0
    known: dict[int, dict[int, str]] = {}
    uses: list[tuple[int, int, str, str]] = []
    for _event_id, session_id, kind, raw, at in events:
        if kind not in ("tool", "summarize"):
            continue
        try:
            payload = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(payload, dict):
            continue
        if session_id not in known:
            known[session_id] = store.session_memory(conn, session_id)
        found = event_uses(kind, payload, known[session_id])
        if not found:
            continue
        given = known[session_id]
        given.update(store.titles(conn, {row_id for row_id, _ in found} - set(given)))  # used now: citable later
        uses.extend((session_id, row_id, how, at) for row_id, how in dict.fromkeys(found) if row_id in given)
    store.record_used(conn, uses, events[-1][0])
    return len(events)
