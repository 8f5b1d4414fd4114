"""Which observer provider the settings select: the `auto` rule, defined once.

`observer.providers.auto.choose` runs it with a login probe (`claude auth status`) for the worker
and `status`; the session-start context runs it without one when no worker is running, so it is
stdlib only and import-light (no typing, subprocess or shutil): finding the CLI is a PATH walk and
a walk of `sys.path`.
"""

import os
import sys

from claude_mem import plugins
from claude_mem.domain import PROVIDERS, ClaudeMemError

TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy only: the hooks never pay for these imports
    from collections.abc import Callable, Mapping

    Login = Callable[[str], tuple[bool, str]]

SET_BY_SETTING = "set by the provider setting"


class UnknownProvider(ClaudeMemError, ValueError):
    """The `provider` value names no provider of `domain.PROVIDERS` and no installed plugin's."""


def normalise(name: object) -> str:
    """The provider name a `provider` value means (`Claude ` is `claude`); UnknownProvider if none.

    A name that is not built in may be a plugin's (`plugins.PROVIDERS`): only then are the installed
    distributions scanned."""
    wanted = str(name if name is not None else "auto").strip().lower() or "auto"
    if wanted in PROVIDERS:
        return wanted
    added = plugins.names(plugins.PROVIDERS)
    if wanted not in added:
        raise UnknownProvider(f"unknown observer provider {str(name)!r} (known: {', '.join([*PROVIDERS, *added])})")
    return wanted


def bundled_cli() -> "str | None":
    """The Claude Code CLI shipped inside the `claude-agent-sdk` wheel, if installed (not imported).

    A walk of `sys.path`, not `importlib.util.find_spec`: the session-start hook calls this, and
    importing importlib.util (with contextlib and warnings) would cost it about a millisecond.
    """
    for folder in sys.path:
        candidate = os.path.join(folder or os.curdir, "claude_agent_sdk", "_bundled", "claude")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _on_path(program: str) -> "str | None":
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or os.curdir, program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def resolve_cli(cli_path: str = "") -> "str | None":
    """The CLI the `claude` observer would run: `cli_path`, else the bundled one, else `claude` on PATH."""
    if cli_path:
        path = os.path.expanduser(cli_path)
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    return bundled_cli() or _on_path("claude")


def anthropic_key_source(settings: "Mapping[str, object]") -> str:
    """Where an Anthropic credential comes from, or "" when there is none."""
    if settings.get("anthropic_api_key"):
        return "anthropic_api_key"
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        if os.environ.get(name):
            return name
    return ""


def choose(settings: "Mapping[str, object]", login: "Login | None" = None) -> "tuple[str, str]":
    """(provider name, one-line reason) for the `provider` setting, with `auto` resolved.

    `auto` is `claude` when the CLI is found and `login(cli)` says it is logged in (without `login`,
    finding the CLI is enough), else `anthropic` when a key is set, else `offline`.
    """
    wanted = normalise(settings.get("provider"))
    if wanted != "auto":
        return wanted, SET_BY_SETTING
    cli_path = str(settings.get("cli_path") or "")
    cli = resolve_cli(cli_path)
    if cli is None:
        claude_reason = f"Claude Code CLI not found{' at ' + cli_path if cli_path else ''}"
    elif login is None:
        return "claude", "auto: Claude Code CLI found (login not checked)"
    else:
        ok, claude_reason = login(cli)
        if ok:
            return "claude", f"auto: Claude Code {claude_reason}"
    source = anthropic_key_source(settings)
    if source:
        return "anthropic", f"auto: {claude_reason}; Anthropic key from {source}"
    return "offline", f"auto: {claude_reason} and no Anthropic key; observations are extracted without an LLM"
