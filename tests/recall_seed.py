"""Realistic stored memory for the recall tests: sessions, observations, summaries, prompts."""

import hashlib
import itertools
import json
import random
import sqlite3
from datetime import UTC, datetime, timedelta

from claude_mem.domain import iso_from

_SUBJECTS = [
    "session lease renewal", "the spool ingest loop", "FTS5 trigger on observation update",
    "worker health endpoint", "settings file loader", "hook payload parser", "observer retry backoff",
    "backup rotation", "project root detection for worktrees", "secret redaction of env files",
    "SSE stream reconnect", "SQLite busy timeout handling", "the context budget calculation",
    "MCP server instructions", "prompt privacy stripping", "batch size limits for the observer",
]
_OPENERS = [
    ("bugfix", "Fix race condition in"), ("feature", "Add support for"), ("refactor", "Split and simplify"),
    ("change", "Raise the default limit of"), ("discovery", "Found that Claude Code retries"),
    ("decision", "Chose WAL mode and short timeouts for"), ("bugfix", "Fix crash in"), ("feature", "Support"),
    ("refactor", "Move"), ("change", "Tune"), ("discovery", "How Claude Code handles"), ("decision", "Keep"),
]
_TAILS = [
    "", "under load", "when two hooks race", "after a crash during a batch", "so nothing is lost",
    "because the CLI sends no tool id", "and document the new behaviour in the README", "on macOS",
    "for large repositories", "in CI", "with a regression test",
]


def realistic_titles(count: int) -> list[tuple[str, str]]:
    """(type, title) pairs of 6–12 words, all different, drawn evenly from each length."""
    buckets: dict[int, list[tuple[str, str]]] = {length: [] for length in range(6, 13)}
    combos = list(itertools.product(_OPENERS, _SUBJECTS, _TAILS))
    random.Random(7).shuffle(combos)
    for (kind, opener), subject, tail in combos:
        title = " ".join(f"{opener} {subject} {tail}".split())
        if len(title.split()) in buckets:
            buckets[len(title.split())].append((kind, title))
    result: list[tuple[str, str]] = []
    while len(result) < count:
        for length in range(6, 13):
            if buckets[length] and len(result) < count:
                result.append(buckets[length].pop(0))
        if not any(buckets.values()):
            raise ValueError(f"only {len(result)} distinct titles available")
    return result


def stamp(hours_ago: float, now: datetime | None = None) -> str:
    return iso_from((now or datetime.now(UTC)) - timedelta(hours=hours_ago))


def add_session(conn: sqlite3.Connection, content_id: str, project: str, started_at: str | None = None) -> int:
    return conn.execute(
        "INSERT INTO sessions (content_session_id, project, cwd, started_at) VALUES (?, ?, ?, coalesce(?, strftime('%Y-%m-%dT%H:%M:%fZ','now')))",
        (content_id, project, project, started_at),
    ).lastrowid


def add_observation(
    conn: sqlite3.Connection, project: str, title: str, *, kind: str = "discovery", narrative: str | None = None,
    session_id: int | None = None, created_at: str | None = None, subtitle: str | None = None,
    concepts: tuple = (), files_read: tuple = (), files_modified: tuple = (), facts: tuple = (),
    prompt_number: int | None = None,
) -> int:
    narrative = narrative or f"{title}. The change keeps the hook path fast and the store consistent."
    digest = hashlib.sha256(f"{session_id}|{title}|{narrative}".encode()).hexdigest()
    return conn.execute(
        "INSERT INTO observations (session_id, project, type, title, subtitle, narrative, facts, concepts,"
        " files_read, files_modified, content_hash, created_at, prompt_number)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, coalesce(?, strftime('%Y-%m-%dT%H:%M:%fZ','now')), ?)",
        (session_id, project, kind, title, subtitle, narrative, json.dumps(list(facts)), json.dumps(list(concepts)),
         json.dumps(list(files_read)), json.dumps(list(files_modified)), digest, created_at, prompt_number),
    ).lastrowid


def add_summary(conn: sqlite3.Connection, session_id: int, project: str, created_at: str | None = None,
                prompt_number: int | None = None, **fields: str) -> int:
    values = {"request": "", "investigated": "", "learned": "", "completed": "", "next_steps": "", "notes": ""}
    values.update(fields)
    return conn.execute(
        "INSERT INTO summaries (session_id, project, request, investigated, learned, completed, next_steps, notes,"
        " created_at, prompt_number) VALUES (?, ?, ?, ?, ?, ?, ?, ?, coalesce(?, strftime('%Y-%m-%dT%H:%M:%fZ','now')), ?)",
        (session_id, project, values["request"], values["investigated"], values["learned"], values["completed"],
         values["next_steps"], values["notes"], created_at, prompt_number),
    ).lastrowid


def add_prompt(conn: sqlite3.Connection, session_id: int, number: int, text: str, created_at: str | None = None,
               private: bool = False) -> int:
    return conn.execute(
        "INSERT INTO prompts (session_id, prompt_number, text, private, created_at)"
        " VALUES (?, ?, ?, ?, coalesce(?, strftime('%Y-%m-%dT%H:%M:%fZ','now')))",
        (session_id, number, text, int(private), created_at),
    ).lastrowid


def seed_project(conn: sqlite3.Connection, project: str, count: int, with_summary: bool = True) -> list[int]:
    """`count` observations over the last days (one every 3 hours, newest last) and a summary."""
    session = add_session(conn, f"sess-{project}-{count}", project, stamp(count * 3 + 1))
    ids = []
    for n, (kind, title) in enumerate(realistic_titles(count)):
        ids.append(add_observation(conn, project, title, kind=kind, session_id=session,
                                   created_at=stamp((count - n) * 3)))
    if with_summary:
        add_summary(
            conn, session, project, stamp(0.5),
            request="Make the session-start context respect its token budget",
            learned="Budgets are counted in characters divided by four; the oldest rows give way first",
            completed="Context builder with day groups, overflow line and resume handling",
            next_steps="Benchmark the hook at 10k observations and wire the MCP tool names",
        )
    return ids


def git_project(tmp_path) -> tuple[str, str]:
    """A new project directory (a git root) under `tmp_path`, and its project key."""
    from claude_mem import project as projects

    cwd = tmp_path / "app"
    (cwd / ".git").mkdir(parents=True)
    return str(cwd), projects.project_root(str(cwd))
