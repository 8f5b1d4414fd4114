"""Helpers for the MCP tests: a seeded store, calls through a real MCP client."""

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.types import CallToolResult

from claude_mem.mcp_server.server import build_server
from claude_mem.store import db
from recall_seed import add_observation, add_prompt, add_session, add_summary, seed_project, stamp


def connect(data_dir: object) -> sqlite3.Connection:
    return db.connect(db.db_path(str(data_dir)))


def seed(data_dir: object, project: str, other: str) -> dict[str, Any]:
    """12 observations + a summary in `project`, 3 in `other`, one hand-written observation with
    every field, a summary and a prompt in a session of its own."""
    conn = connect(data_dir)
    try:
        ids = seed_project(conn, project, 12)
        others = seed_project(conn, other, 3, with_summary=False)
        session = add_session(conn, "sess-detailed", project, stamp(0.4))
        detailed = add_observation(
            conn, project, "Spool files are renamed before ingest so no line is read twice", kind="decision",
            narrative="The worker renames a spool file atomically before reading it.\nHooks keep appending to a new file.",
            subtitle="atomic rename", session_id=session, created_at=stamp(0.3), concepts=("pattern", "gotcha"),
            files_read=("src/claude_mem/hooks/spool.py",), files_modified=("src/claude_mem/worker/ingest.py",),
            facts=("rename is atomic on POSIX", "a crashed ingest leaves the renamed file for the next run"),
        )
        summary = add_summary(conn, session, project, stamp(0.2), request="Make spool ingest crash-safe",
                              learned="rename(2) is atomic", completed="ingest renames first")
        prompt = add_prompt(conn, session, 1, "please make the spool ingest crash safe", stamp(0.35))
    finally:
        conn.close()
    return {"ids": ids, "others": others, "detailed": detailed, "summary": summary, "prompt": prompt}


def seeded_claude_home(data_dir: object, tmp_path: Path, allowed: str) -> tuple[Path, Path, dict[str, Any]]:
    """(project `shop`, HOME, what `seed` stored) for a real `claude -p` run whose user settings allow tool
    `allowed` (-p mode refuses a tool that is not allowed)."""
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    seeded = seed(data_dir, str(project), str(tmp_path / "billing"))
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": [allowed]}}))
    return project, home, seeded


async def _call(name: str, arguments: dict[str, Any]) -> CallToolResult:
    async with Client(build_server()) as client:
        return await client.call_tool(name, arguments)


def call(name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
    """One tool call through the MCP protocol against an in-process server."""
    return asyncio.run(_call(name, arguments or {}))


def text(result: CallToolResult) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return result.content[0].text


def ok(name: str, arguments: dict[str, Any] | None = None) -> str:
    result = call(name, arguments)
    assert not result.is_error, text(result)
    assert result.structured_content is None  # plain text: Claude Code would show JSON otherwise
    return text(result)
