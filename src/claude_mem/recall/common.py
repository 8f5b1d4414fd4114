"""What the recall library shares: its error, time and project parsing, row → dict."""

import json
import os
import re
import sqlite3
from datetime import datetime, timedelta, timezone

from claude_mem import project as projects

OBSERVATION_COLUMNS = (
    "id", "session_id", "project", "type", "title", "subtitle", "narrative", "facts", "concepts",
    "files_read", "files_modified", "prompt_number", "content_hash", "input_tokens", "output_tokens",
    "fetch_count", "created_at",
)
JSON_LIST_COLUMNS = ("facts", "concepts", "files_read", "files_modified", "files_edited")
_RELATIVE = re.compile(r"^(\d+)\s*([mhdw])$", re.IGNORECASE)
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


class RecallError(ValueError):
    """Bad input to a recall function (unknown id, bad date, empty text): one clear line."""


class UnknownRecord(RecallError):
    """The input is well-formed but names nothing stored (an id, a session, a search with no match)."""


def iso_utc(moment: datetime) -> str:
    """A datetime in the store's timestamp format (UTC, milliseconds, `Z`)."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def parse_time(text: str, end_of_day: bool = False, now: datetime | None = None) -> str:
    """`2026-11-20`, an ISO date-time (local unless it has an offset or `Z`) or `7d`/`12h`/`2w`/`30m`.

    A bare date is local midnight; with `end_of_day` it is the next midnight, so `--until 2026-11-20`
    includes that whole day.
    """
    raw = (text or "").strip()
    relative = _RELATIVE.match(raw)
    if relative:
        delta = timedelta(**{_UNITS[relative.group(2).lower()]: int(relative.group(1))})
        return iso_utc((now or datetime.now(timezone.utc)) - delta)
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
    return iso_utc(moment)


def known_projects(conn: sqlite3.Connection) -> list[str]:
    keys = {row[0] for row in conn.execute("SELECT DISTINCT project FROM sessions")}
    keys |= {row[0] for row in conn.execute("SELECT DISTINCT project FROM observations")}
    keys |= {row[0] for row in conn.execute("SELECT DISTINCT project FROM summaries")}
    return sorted(keys)


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


def _json_list(value: object) -> list:
    try:
        parsed = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return []
    return parsed if isinstance(parsed, list) else []


def row_dict(cursor: sqlite3.Cursor, row: tuple) -> dict:
    """A row as a dict, JSON list columns decoded."""
    item = {column[0]: value for column, value in zip(cursor.description, row)}
    for name in JSON_LIST_COLUMNS:
        if name in item:
            item[name] = _json_list(item[name])
    return item


def display_map(conn: sqlite3.Connection) -> dict[str, str]:
    return projects.display_names(known_projects(conn))


def parse_ref(text: str) -> tuple[str, int]:
    """`12`/`#12` → observation, `S3` → summary, `P7` → prompt."""
    raw = str(text).strip()
    match = re.fullmatch(r"(#|[SsPp])?(\d+)", raw)
    if not match:
        raise RecallError(f"not an id: {text!r} (use 12 or #12 for an observation, S3 for a summary, P7 for a prompt)")
    kind = {"s": "summary", "p": "prompt"}.get((match.group(1) or "").lower(), "observation")
    return kind, int(match.group(2))
