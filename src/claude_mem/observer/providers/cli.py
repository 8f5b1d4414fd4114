"""Find the Claude Code CLI and ask it whether it is logged in. Stdlib only and cheap.

`auto` selection and `status` use this without importing the Agent SDK: the bundled CLI is located
through the package's import spec (which does not import it), and `claude auth status` answers in
about 0.3 s, bounded by a hard timeout and cached for a minute.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

from claude_mem.runtime.observer_choice import bundled_cli, resolve_cli

AUTH_STATUS_TIMEOUT = 15.0
CACHE_SECONDS = 60.0
GUARD_VARIABLE = "CLAUDE_MEM_OBSERVER_CHILD"
# Variables Claude Code sets for its own children: a CLI that inherits them from a worker started
# by a hook believes it runs inside another session.
INHERITED_SESSION_VARIABLES = (
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_MESSAGING_SOCKET",
    "CLAUDE_CODE_MESSAGING_TOKEN",
    "CLAUDE_ENV_FILE",
    "CLAUDE_PID",
    "CLAUDE_PROJECT_DIR",
)

# Finding the CLI is defined once, beside the `auto` rule that needs it on the hook path.
__all__ = ["GUARD_VARIABLE", "auth_status", "bundled_cli", "child_env", "resolve_cli"]

_cache: dict[tuple[str, ...], tuple[float, bool, str]] = {}


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Overrides for the observer's CLI child, applied on top of the parent environment.

    Inherited session variables are blanked (the SDK merges onto `os.environ`, so an empty value is
    how to clear one); the guard variable makes our own hooks exit at once if they ever fire inside
    the observer; auto-memory stays off; the CLI retries once at most because the queue retries.
    """
    env = {name: "" for name in INHERITED_SESSION_VARIABLES if name in os.environ}
    env.update({name: "" for name in os.environ if name.startswith("CLAUDE_PLUGIN_")})
    env[GUARD_VARIABLE] = "1"
    env["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = "1"
    env.setdefault("CLAUDE_CODE_MAX_RETRIES", os.environ.get("CLAUDE_CODE_MAX_RETRIES", "1"))
    env.update(extra or {})
    return env


def auth_status(
    cli: str, env: dict[str, str] | None = None, timeout: float = AUTH_STATUS_TIMEOUT, *, fresh: bool = False,
) -> tuple[bool, str]:
    """(logged in, reason) from `claude auth status --json` run as the observer child would be."""
    env = {**os.environ, **child_env(env)}
    names = ("HOME", "CLAUDE_CONFIG_DIR", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
    key = (cli, *(env.get(name, "") for name in names))
    now = time.monotonic()
    cached = _cache.get(key)
    if cached and not fresh and now - cached[0] < CACHE_SECONDS:
        return cached[1], cached[2]
    try:
        done = subprocess.run(
            [cli, "auth", "status", "--json"],
            capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        result = (False, f"`claude auth status` did not answer within {timeout:g} s")
    except OSError as exc:
        result = (False, f"cannot run {cli}: {exc.strerror or exc}")
    else:
        result = _read_status(done.stdout, done.returncode)
    _cache[key] = (now, *result)
    return result


def _read_status(stdout: str, returncode: int) -> tuple[bool, str]:
    try:
        data = json.loads(stdout)
    except ValueError:
        return False, f"`claude auth status` gave no JSON (exit {returncode})"
    if not isinstance(data, dict):
        return False, "`claude auth status` gave unexpected JSON"
    if data.get("loggedIn"):
        method = data.get("authMethod") or "unknown"
        source = data.get("apiKeySource")
        return True, f"logged in ({method}{', ' + str(source) if source else ''})"
    return False, "Claude Code is not logged in (run `claude` and /login, or set ANTHROPIC_API_KEY)"
