"""What `status` and `doctor` say about Claude Code's auto memory beside ours (issue 30): whether it is on
for a project, where its directory is, how many of its files we index, and how many tokens each memory
puts into a session at its start (ours: the session-start context `recall.context.build`; Claude Code's:
`MEMORY.md`'s loaded part, characters / 4). Reads only: nothing is synced or written here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from claude_mem import project as identity
from claude_mem.recall import context
from claude_mem.recall.sanitize import estimate_tokens
from claude_mem.runtime import auto_memory as files
from claude_mem.store import Store
from claude_mem.store import auto_memory as repository


def memory_index_tokens(directory: str) -> tuple[int, str]:
    """(tokens of `MEMORY.md`'s loaded part, what is wrong reading it or "") from the file itself."""
    path = os.path.join(directory, files.INDEX_FILE)
    try:
        note = files.read_note(path)
    except FileNotFoundError:
        return 0, ""
    except OSError as exc:
        return 0, f"{path}: cannot be read ({exc.strerror or exc})"
    if note.binary:
        return 0, f"{path}: is a binary file"
    return estimate_tokens(files.loaded_part(note.body)), note.problem and f"{path}: {note.problem}"


def overview(conn: Store | None, key: str, root: str | None = None, values: dict[str, Any] | None = None,
             data_dir: str | None = None, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """{project, enabled, why_off, directory, source, exists, indexed, binary, capped, synced_at, problems,
    tokens: {claude_mem, auto_memory}} for project `key` (`root`: its checkout, default the key)."""
    where = files.locate(root or key, environ)
    exists = os.path.isdir(where.directory)
    theirs, problem = memory_index_tokens(where.directory) if exists and where.enabled else (0, "")
    synced = repository.last_sync(conn, key) if conn is not None else None
    ours = context.build(conn, key, "startup", values=values, data_dir=data_dir)["tokens"]
    problems = list(where.problems) + ([problem] if problem else [])
    if synced:
        problems.extend(str(line) for line in synced["problems"] if str(line) not in problems)  # type: ignore[attr-defined]
    return {
        "project": key, "enabled": where.enabled, "why_off": where.why_off, "directory": where.directory,
        "source": where.source, "exists": exists,
        "indexed": repository.counts(conn, key) if conn is not None else 0,
        "binary": synced["binary"] if synced else 0, "capped": synced["capped"] if synced else 0,
        "synced_at": synced["synced_at"] if synced else None, "problems": problems[:20],
        "tokens": {"claude_mem": ours, "auto_memory": theirs},
    }


def here(conn: Store | None, values: dict[str, Any] | None = None, data_dir: str | None = None,
         cwd: str | None = None) -> dict[str, Any]:
    """`overview` of the project Claude Code would run in here (`CLAUDE_PROJECT_DIR`, else the cwd)."""
    from claude_mem.store import projects

    where = os.environ.get("CLAUDE_PROJECT_DIR") or cwd or os.getcwd()
    key = projects.project_here(conn, cwd or os.getcwd())
    return overview(conn, key, identity.project_root(where), values, data_dir)


def for_data_dir(data_dir: str, values: dict[str, Any]) -> dict[str, Any]:
    """`here` read through a connection that creates and changes nothing (`checkup.open_untouched`), or
    {error} when the database cannot be read."""
    from typing import cast

    from claude_mem import paths
    from claude_mem.store import DatabaseError, checkup

    path = paths.db_path(data_dir)
    conn: Store | None = None
    try:
        if os.path.exists(path):
            conn = cast(Store, checkup.open_untouched(path))
        return here(conn, values, data_dir)
    except (OSError, DatabaseError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        if conn is not None:
            conn.close()


def summary_line(found: Mapping[str, Any]) -> str:
    """One line: on/off, where, indexed, tokens of each memory at session start."""
    state = "on" if found["enabled"] else f"off ({found['why_off']})"
    where = found["directory"] + ("" if found["exists"] else " (not created yet)")
    tokens = found["tokens"]
    extra = "".join(f", {count} {what}" for count, what in ((found["binary"], "binary skipped"),
                                                            (found["capped"], "past the cap")) if count)
    return (f"Claude Code auto memory {state}: {where}; {found['indexed']} file(s) indexed{extra}; at session start"
            f" claude-mem injects ~{tokens['claude_mem']} tokens, auto memory (MEMORY.md) ~{tokens['auto_memory']}")
