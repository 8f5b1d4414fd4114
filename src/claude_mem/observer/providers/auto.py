"""`provider` resolution for the worker and `status`: the registered name, `auto` resolved.

`choose(settings)` returns the name and a one-line reason; the worker's `/health`, `status` and the
session-start context header show both. The `auto` rule itself lives in `runtime.observer_choice`
(stdlib only, so the session-start hook can apply it without a worker); here it gets its login probe:
`claude auth status`, bounded and cached (see `cli.py`). With `probe=False` the login is not checked
(for callers that must not spawn a process). It imports no SDK.
"""

from __future__ import annotations

from collections.abc import Mapping

from claude_mem.runtime.observer_choice import anthropic_key_source, resolve_cli
from claude_mem.runtime.observer_choice import choose as choose_rule
from claude_mem.settings import display

from ..provider import REGISTRY
from .cli import auth_status

__all__ = ["anthropic_key_source", "choose", "describe"]


def choose(settings: Mapping[str, object], *, probe: bool = True) -> tuple[str, str]:
    """(provider name, reason) for the `provider` setting; ProviderError for a name nobody registered."""
    wanted = REGISTRY.normalise(settings.get("provider"))
    return choose_rule({**settings, "provider": wanted}, login=auth_status if probe else None)


def describe(settings: Mapping[str, object], *, probe: bool = True) -> dict[str, object]:
    """The provider in use and whether it can work, in plain words (for `status` with no worker)."""
    name, reason = choose(settings, probe=probe)
    ok, detail = True, ""
    if name == "claude":
        cli_path = str(settings.get("cli_path") or "")
        cli = resolve_cli(cli_path)
        if cli is None:
            ok, detail = False, f"Claude Code CLI not found{' at ' + cli_path if cli_path else ''}"
        elif probe:
            ok, detail = auth_status(cli)
        detail = detail or f"CLI {cli}"
    elif name == "anthropic":
        source = anthropic_key_source(settings)
        ok, detail = bool(source), (f"key from {source}" if source else "no API key: set anthropic_api_key or ANTHROPIC_API_KEY")
    elif name == "openai":
        detail = f"{settings.get('openai_model')} at {display('openai_base_url', settings.get('openai_base_url'))}"
    elif name == "offline":
        detail = "no LLM: observations are extracted from the events directly"
    else:
        detail = "an installed plugin's provider"
    return {"name": name, "ok": ok, "reason": reason, "detail": detail}
