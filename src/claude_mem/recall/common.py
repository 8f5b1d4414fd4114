"""What the recall library shares: its errors, time and project parsing, project names."""

import os
import re
import sqlite3
from datetime import UTC, datetime, timedelta

from claude_mem import project as projects
from claude_mem.domain import RecallError, UnknownRecord, iso_from, parse_ref
from claude_mem.store.memory import known_projects

__all__ = ["RecallError", "UnknownRecord", "display_map", "known_projects", "parse_ref", "parse_time",
           "resolve_project"]

_RELATIVE = re.compile(r"^(\d+)\s*([mhdw])$", re.IGNORECASE)
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_time(text: str, end_of_day: bool = False, now: datetime | None = None) -> str:
    """`2026-11-20`, an ISO date-time (local unless it has an offset or `Z`) or `7d`/`12h`/`2w`/`30m`.

    A bare date is local midnight; with `end_of_day` it is the next midnight, so `--until 2026-11-20`
    includes that whole day.
    """
    raw = (text or "").strip()
    relative = _RELATIVE.match(raw)
    if relative:
        delta = timedelta(**{_UNITS[relative.group(2).lower()]: int(relative.group(1))})
        return iso_from((now or datetime.now(UTC)) - delta)
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00") if raw.endswith("Z") else raw)
    except ValueError:
        raise RecallError(
            f"not a date or time: {text!r} (use 2026-11-20, 2026-11-20T14:30, or 7d / 12h / 2w)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.astimezone()  # naive input means the user's local time
    if end_of_day and len(raw) == 10:
        moment += timedelta(days=1)
    return iso_from(moment)


def resolve_project(conn: sqlite3.Connection, value: str | None) -> str | None:
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
    root = projects.project_root(value) if os.path.exists(value) else None
    if root in keys:
        return root
    matches = [key for key in keys if key.rstrip("/").endswith("/" + value.strip("/"))]
    if len(matches) == 1:
        return matches[0]
    raise RecallError(f"unknown project {value!r}" + (f" (known: {', '.join(sorted(by_name))})" if by_name else ""))


def display_map(conn: sqlite3.Connection) -> dict[str, str]:
    return projects.display_names(known_projects(conn))

