"""Helpers for observer tests: capture rows written the way the hooks write them (payload contract)."""

from __future__ import annotations

import glob
import json
import os
import sqlite3

from claude_mem.observer.pipeline import Pipeline
from claude_mem.store import db
from conftest import FIXTURES

SESSION_EDIT = os.path.join(FIXTURES, "hook-payloads", "session-edit")


def connect(data_dir: str) -> sqlite3.Connection:
    return db.connect(db.db_path(str(data_dir)))


async def drain(pipeline: Pipeline) -> int:
    """Step the pipeline until nothing is due (what its lanes do, without waiting); the batches processed."""
    done = 0
    while await pipeline.step():
        done += 1
    return done


def add_session(conn: sqlite3.Connection, content_id: str, project: str = "/home/dev/proj",
                last_activity: str | None = None) -> int:
    conn.execute(
        "INSERT OR IGNORE INTO sessions (content_session_id, project, cwd, last_activity_at)"
        " VALUES (?, ?, ?, COALESCE(?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))",
        (content_id, project, project, last_activity),
    )
    return conn.execute("SELECT id FROM sessions WHERE content_session_id = ?", (content_id,)).fetchone()[0]


def add_event(conn: sqlite3.Connection, session_id: int, kind: str, payload: dict, key: str,
              prompt_number: int | None = 1) -> int:
    cursor = conn.execute(
        "INSERT INTO pending_events (event_key, session_id, kind, prompt_number, payload) VALUES (?, ?, ?, ?, ?)",
        (key, session_id, kind, prompt_number, json.dumps(payload)),
    )
    return cursor.lastrowid


def add_prompt(conn: sqlite3.Connection, session_id: int, text: str, number: int = 1) -> None:
    conn.execute("INSERT OR IGNORE INTO prompts (session_id, prompt_number, text) VALUES (?, ?, ?)",
                 (session_id, number, text))
    add_event(conn, session_id, "prompt", {"prompt": text, "prompt_number": number},
              f"prompt:{session_id}:{number}", number)


def record_from_payload(payload: dict) -> tuple[str, dict] | None:
    """(kind, event payload) for a recorded hook payload, as the capture hook builds them."""
    name = payload["hook_event_name"]
    if name in ("PostToolUse", "PostToolUseFailure"):
        event = {
            "tool_name": payload["tool_name"], "tool_input": payload.get("tool_input"),
            "is_interrupt": bool(payload.get("is_interrupt")), "tool_use_id": payload.get("tool_use_id"),
            "cwd": payload["cwd"], "duration_ms": payload.get("duration_ms"),
        }
        if name == "PostToolUse":
            event["tool_response"] = payload.get("tool_response")
            return "tool", event
        event["error"] = payload.get("error", "")
        return "tool_failure", event
    if name == "Stop":
        return "summarize", {"last_assistant_message": payload.get("last_assistant_message", ""), "prompt_number": 1}
    if name == "SessionEnd":
        return "session_end", {"reason": payload.get("reason", "")}
    return None


def load_session_edit(conn: sqlite3.Connection, content_id: str | None = None, directory: str = SESSION_EDIT) -> int:
    """Write the recorded `session-edit` session into the capture tables; returns the session row id."""
    session_id = 0
    for index, path in enumerate(sorted(glob.glob(os.path.join(directory, "*.json")))):
        with open(path, encoding="utf-8") as handle:
            payload = json.load(handle)
        content = content_id or payload["session_id"]
        session_id = add_session(conn, content, payload["cwd"])
        if payload["hook_event_name"] == "UserPromptSubmit":
            add_prompt(conn, session_id, payload["prompt"])
            continue
        record = record_from_payload(payload)
        if record is not None:
            add_event(conn, session_id, record[0], record[1], f"{content}:{index}")
    return session_id
