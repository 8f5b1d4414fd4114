"""What the recall library shares: its errors, time and project parsing, project names."""

import os

from claude_mem import project as projects
from claude_mem.domain import RecallError, UnknownRecord, parse_ref, parse_time
from claude_mem.store import Store
from claude_mem.store import projects as store_projects
from claude_mem.store.context import known_projects

__all__ = ["RecallError", "UnknownRecord", "display_map", "known_projects", "parse_ref", "parse_time",
           "resolve_project"]


def resolve_project(conn: Store, value: str | None) -> str | None:
    """A project key from what a user typed: a key, a display name, or a path inside the project."""
    if value is None or value == "":
        return None
    keys = known_projects(conn)
    if value in keys:
        return value
    by_name = {name: key for key, name in projects.display_names(keys).items()}
    if value in by_name:
        return by_name[value]
    # Only an existing path can lie inside a project; a mistyped name must not resolve to the cwd's.
    root = store_projects.project_of_path(conn, value) if os.path.exists(value) else None
    if root in keys:
        return root
    matches = [key for key in keys if key.rstrip("/").endswith("/" + value.strip("/"))]
    if len(matches) == 1:
        return matches[0]
    raise RecallError(f"unknown project {value!r}" + (f" (known: {', '.join(sorted(by_name))})" if by_name else ""))


def display_map(conn: Store) -> dict[str, str]:
    return projects.display_names(known_projects(conn))

