"""`auto` selection: `claude` if it works, else `anthropic` if a key is set, else `offline`.

`choose(settings)` returns the name and a one-line reason; the worker's `/health`, `status` and the
session-start context header show both. It imports no SDK: "claude works" means the CLI is found
and `claude auth status` says it is logged in (bounded and cached, see `cli.py`). With
`probe=False` the login is not checked (for callers that must not spawn a process).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .cli import auth_status, resolve_cli

CHOICES = ("claude", "anthropic", "openai", "offline")


def anthropic_key_source(settings: Mapping[str, object]) -> str:
    """Where an Anthropic credential comes from, or "" when there is none."""
    if settings.get("anthropic_api_key"):
        return "anthropic_api_key"
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        if os.environ.get(name):
            return name
    return ""


def choose(settings: Mapping[str, object], *, probe: bool = True) -> tuple[str, str]:
    """(provider name, reason) for the `provider` setting; `auto` is resolved here."""
    wanted = str(settings.get("provider") or "auto").strip().lower()
    if wanted in CHOICES:
        return wanted, "set by the provider setting"
    if wanted != "auto":
        return "offline", f"unknown provider {wanted!r}; using offline"
    cli_path = str(settings.get("cli_path") or "")
    cli = resolve_cli(cli_path)
    if cli is None:
        claude_reason = f"Claude Code CLI not found{' at ' + cli_path if cli_path else ''}"
    elif probe:
        ok, claude_reason = auth_status(cli)
        if ok:
            return "claude", f"auto: Claude Code {claude_reason}"
    else:
        return "claude", "auto: Claude Code CLI found (login not checked)"
    source = anthropic_key_source(settings)
    if source:
        return "anthropic", f"auto: {claude_reason}; Anthropic key from {source}"
    return "offline", f"auto: {claude_reason} and no Anthropic key; observations are extracted without an LLM"


def describe(settings: Mapping[str, object], *, probe: bool = True) -> dict[str, object]:
    """The provider in use and whether it can work, in plain words (for `status` and `/health`)."""
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
        detail = f"{settings.get('openai_model')} at {settings.get('openai_base_url')}"
    elif name == "offline":
        detail = "no LLM: observations are extracted from the events directly"
    return {"name": name, "ok": ok, "reason": reason, "detail": detail}
