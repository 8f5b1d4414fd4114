"""The memory tools declared with the `mcp` SDK: `search`, `timeline`, `get_observations` — the
reference the stdlib server (`stdio`, what Claude Code runs) is held to.

Their parameters and descriptions are written here once, in the SDK's typed style (the workflow
instructions, which name the tools as Claude Code will, come from `stdio.instructions`);
`catalog()` is what this server lists, and `catalog.json` (written by
`python -m claude_mem.mcp_server.server --write-catalog`) is the same, for the stdlib server. A test
starts both and asserts the same `initialize`, `tools/list` and answers.

Claude Code shows them as `mcp__plugin_persistent-memory_memory__<tool>` when the plugin (`persistent-memory`,
server `memory` in `.mcp.json`) is loaded.
Sync tools run in worker threads (mcp 2.x), so every call opens its own SQLite connection.
Results are plain text (`structured_output=False`): a typed return would reach the model as JSON.
"""

import asyncio
import json
import sys
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from claude_mem import __version__, paths
from claude_mem.mcp_server import calls
from claude_mem.mcp_server.stdio import CATALOG, SERVER_NAME, instructions

ObservationType = Literal["bugfix", "feature", "refactor", "change", "discovery", "decision"]
Kind = Literal["observation", "summary", "prompt", "auto-memory"]
Order = Literal["relevance", "newest", "oldest"]
Mode = Literal["hybrid", "keyword", "semantic"]  # index.query.MODES

INSTRUCTIONS = instructions()

_READ = ToolAnnotations(title=None, read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                        open_world_hint=False)

ProjectArg = Annotated[str | None, Field(
    max_length=4096,
    description="A project's name (folder name), key or a path inside it. Default: the project Claude Code "
                "runs in.")]
AllProjectsArg = Annotated[bool, Field(description="Search every project instead of one.")]


def _call(tool: Callable[[dict[str, Any]], str], arguments: dict[str, Any]) -> str:
    try:
        return tool(arguments)
    except calls.ToolFailure as exc:
        raise ToolError(str(exc)) from exc


def search(
    query: Annotated[str, Field(
        max_length=500,
        description='Keywords; several words match any of them, best first. "a phrase" in quotes matches as a '
                    "phrase, auth* matches a prefix. Empty: list the newest memories that pass the filters.")] = "",
    project: ProjectArg = None,
    all_projects: AllProjectsArg = False,
    types: Annotated[list[ObservationType] | None, Field(
        max_length=6, description="Only observations of these types.")] = None,
    kinds: Annotated[list[Kind] | None, Field(
        min_length=1, max_length=4,
        description="What to search: observations and auto-memory (Claude Code's own memory notes) by default;"
                    " also turn summaries, user prompts.")] = None,
    since: Annotated[str | None, Field(
        max_length=40, description="Happened at or after: 2026-11-20, 2026-11-20T14:30, or 7d / 12h / 2w.")] = None,
    until: Annotated[str | None, Field(
        max_length=40, description="Happened before this time; a bare date includes that whole day.")] = None,
    file: Annotated[str | None, Field(
        max_length=1000, description="Only observations that read or modified a file whose path contains this.")] = None,
    concept: Annotated[str | None, Field(
        max_length=100, description="Only observations tagged with this concept, e.g. gotcha, trade-off, pattern.")] = None,
    limit: Annotated[int, Field(ge=1, le=100, description="Results per page.")] = 20,
    offset: Annotated[int, Field(ge=0, le=1_000_000, description="Results to skip, for the next page.")] = 0,
    order: Annotated[Order, Field(description="relevance (default), newest or oldest.")] = "relevance",
    mode: Annotated[Mode | None, Field(description=(
        "hybrid (the default where embeddings exist): words and meaning fused; keyword: full-text BM25 of the "
        "query's words; semantic: by meaning alone, finds memories that share no word with the query."))] = None,
) -> str:
    """Step 1 of 3: find memories of this project by words and meaning (mode: hybrid, keyword,
    semantic). Returns one line per match —
    `#id date time type title` (`S<id>` for a turn summary, `P<id>` for a user prompt) — and no
    details, so it is cheap; page with offset. Then call timeline(anchor=<id>) to see what happened
    around a match, and get_observations(ids=[...]) for the full text of the few you need.
    Example: search(query="sqlite lock timeout", types=["bugfix"], since="30d").
    """
    return _call(calls.search, {
        "query": query, "project": project, "all_projects": all_projects, "types": types, "kinds": kinds,
        "since": since, "until": until, "file": file, "concept": concept, "limit": limit, "offset": offset,
        "order": order, "mode": mode})


def timeline(
    anchor: Annotated[int | str, Field(
        description="An observation id (12 or #12), a summary (S3), a prompt (P7), a time (2026-11-20T14:30) "
                    "or words (their best match).")],
    before: Annotated[int, Field(ge=0, le=50, description="Rows before the anchor.")] = 5,
    after: Annotated[int, Field(ge=0, le=50, description="Rows after the anchor.")] = 5,
    project: ProjectArg = None,
    all_projects: AllProjectsArg = False,
) -> str:
    """Step 2 of 3: what happened around one memory, in time order — observations, turn summaries
    and prompts interleaved, one line each, the anchor marked with →. An id anchor uses its own
    project; a time or words use this project unless told otherwise. Use it to understand the
    context of a search hit before fetching details with get_observations(ids=[...]).
    """
    return _call(calls.timeline, {"anchor": anchor, "before": before, "after": after, "project": project,
                                  "all_projects": all_projects})


def get_observations(
    ids: Annotated[list[int | str], Field(
        min_length=1, max_length=50,
        description="Ids from search or timeline: 12 or \"#12\" (observation), \"S3\" (summary), \"P7\" (prompt).")],
) -> str:
    """Step 3 of 3: the full text of chosen memories — title, subtitle, narrative, facts, concepts,
    files read and modified (summaries: request, investigated, learned, completed, next steps).
    Ask only for the ids that matter to the task (found with search or timeline); ids not found
    are listed at the end. Each fetch is counted, which tells which memories prove useful.
    """
    return _call(calls.get_observations, {"ids": ids})


def build_server() -> MCPServer:
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    for tool in (search, timeline, get_observations):
        # get_observations bumps a usage counter only: still read-only as far as the caller can tell.
        server.add_tool(tool, annotations=_READ, structured_output=False)
    return server


def catalog() -> dict[str, Any]:
    """`{"tools": […]}` as this server lists them (`tools/list`)."""
    async def listed() -> list[dict[str, Any]]:
        return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in await server.list_tools()]

    server = build_server()
    return {"tools": asyncio.run(listed())}


def write_catalog(path: str = CATALOG) -> None:
    """Write `catalog()` where the stdlib server reads it."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(catalog(), handle, indent=1, ensure_ascii=False)
        handle.write("\n")


def main() -> None:
    """Serve over stdio until the client closes the pipe (the reference server; Claude Code runs `stdio`)."""
    if sys.argv[1:] == ["--write-catalog"]:
        write_catalog()
        return
    paths.private_files()
    build_server().run("stdio")


if __name__ == "__main__":
    main()
