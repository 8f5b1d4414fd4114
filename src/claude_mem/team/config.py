"""Who we are to the team and what we share: the team settings, read once, with one clear problem
line when team memory is asked for but cannot run."""

from __future__ import annotations

import fnmatch
import getpass
import os
import subprocess
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from claude_mem import privacy, project
from claude_mem.settings import MASK


@dataclass(frozen=True)
class TeamConfig:
    url: str
    patterns: tuple[str, ...]
    author: str
    share_prompts: bool
    interval: float

    @property
    def enabled(self) -> bool:
        return bool(self.url)

    def problem(self) -> str | None:
        """Why team memory cannot run although it is configured (None: it can, or it is off)."""
        if not self.enabled:
            return None
        try:
            import psycopg  # noqa: F401
        except ImportError:
            return "team memory needs the PostgreSQL driver: pip install 'claude-mem-py[team]'"
        if not self.patterns:
            return "team_database_url is set but team_projects is empty: no project is shared"
        return None

    def kinds(self) -> tuple[str, ...]:
        """What this machine pushes, in dependency order (a session before what it holds)."""
        return ("session", "prompt", "observation", "summary") if self.share_prompts else (
            "session", "observation", "summary")

    def shares(self, key: str, remote: str | None) -> bool:
        """Whether a project (local key, normalised remote) is shared: a pattern matches its key or its
        remote, or names the same repository in any spelling (`git@github.com:acme/app.git`)."""
        for pattern in self.patterns:
            if fnmatch.fnmatchcase(key, pattern) or (remote and fnmatch.fnmatchcase(remote, pattern.lower())):
                return True
            if remote and project.normalise_remote(pattern) == remote:
                return True
        return False


def git_author() -> str:
    """`git config user.name`, else the login name."""
    try:
        found = subprocess.run(["git", "config", "--global", "user.name"], capture_output=True, text=True,
                               timeout=3, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        found = ""
    if found:
        return found
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def from_settings(values: dict[str, Any]) -> TeamConfig:
    return TeamConfig(
        url=str(values.get("team_database_url") or "").strip(),
        patterns=tuple(str(item).strip() for item in values.get("team_projects") or () if str(item).strip()),
        author=str(values.get("team_author") or "").strip() or git_author(),
        share_prompts=bool(values.get("team_share_prompts")),
        interval=float(values.get("team_sync_seconds") or 1.0),
    )


def team_project(key: str, remote: str | None) -> str:
    """A project's name on the team server: its normalised remote, or its path when it has none."""
    return remote or key


def safe_error(exc: BaseException, url: str) -> str:
    """One line about a failure, without the URL's password (or any other secret) in it."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    secret = urlsplit(url).password if url else None
    for literal in filter(None, (url, secret)):
        text = text.replace(literal, MASK)
    return privacy.redact(text)[:500]


def server_label(url: str) -> str:
    """host:port/database of the team server, for status lines (never the user or the password)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or os.environ.get("PGHOST", "local socket")
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "an unparsable team_database_url"
    return f"{host}{port}{parts.path or ''}"


def check_url(url: str) -> str | None:
    """Why `url` is not a PostgreSQL URL this command can use (None: it is one)."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018  (raises ValueError on a bad port)
    except ValueError as exc:
        return f"not a usable URL: {exc}"
    if parts.scheme not in ("postgresql", "postgres"):
        return "expected a URL of the form postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
    if not parts.path.strip("/"):
        return "the URL names no database: postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
    return None


def member_url(admin_url: str, role: str, password: str) -> str:
    """The URL a member connects with: the admin URL's host, port, database and options (sslmode, …)
    with the member's role and password instead of the admin's."""
    parts = urlsplit(admin_url.strip())
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, f"{quote(role, safe='')}:{quote(password, safe='')}@{host}", parts.path,
                       parts.query, ""))
