"""The settings registry as the viewer's settings panel shows it: every key with its value, source,
description, constraints, whether it can be edited here, and when a change takes effect.

Secrets are write-only: their value and default are never in the view, only whether one is set
(`is_set`). Any other value passes through `settings.display`, so a credential pasted into a
non-secret value (a base URL with a password) is masked too.
"""

from __future__ import annotations

import os
from typing import Any

from claude_mem import settings

# When a changed value takes effect, read off how each setting is used:
# - "now": the hooks read settings on every call (capture, the prompt hook's memories, autostart);
# - "next_session": the session-start hook builds the context from them;
# - "restart": the worker reads them once at start (observer, backups, logging, its port).
# A key missing here (one added to the registry later) is "restart", the safe guess.
APPLIES: dict[str, str] = {
    "autostart": "now",
    "max_field_chars": "now", "skip_tools": "now", "excluded_projects": "now",
    "prompt_context": "now", "prompt_context_results": "now", "prompt_context_tokens": "now",
    "prompt_context_timeout_ms": "now",
    "context_observations": "next_session", "context_index_tokens": "next_session",
    "context_max_tokens": "next_session",
}
SOURCES = {"env": "environment", "file": "file", "default": "default"}


def applies(key: str) -> str:
    return APPLIES.get(key, "restart")


def _shown(key: str, value: object) -> object:
    """A non-secret value safe to send (each item of a list too)."""
    if isinstance(value, list):
        return [settings.display(key, item) for item in value]
    return settings.display(key, value)


def _source(key: str, data_dir: str) -> str:
    if key == "data_dir":  # never read from the file, whatever the file says
        return "environment" if os.environ.get(settings.ENV_PREFIX + "DATA_DIR") else "default"
    return SOURCES[settings.source_of(key, data_dir)]


def _not_editable(key: str, source: str) -> str | None:
    """Why the panel cannot change `key`, or None when it can."""
    if key == "data_dir":
        return "the data dir is chosen with CLAUDE_MEM_DATA_DIR in the environment, never in settings.json"
    if source == "environment":
        return (f"set by {settings.ENV_PREFIX}{key.upper()} in the environment, which overrides settings.json;"
                " change or unset it there")
    return None


def item(key: str, value: object, data_dir: str) -> dict[str, object]:
    """One key of the registry as the panel shows it."""
    spec = settings.SETTINGS[key]
    secret = settings.is_secret(key)
    source = _source(key, data_dir)
    reason = _not_editable(key, source)
    return {
        "key": key,
        "value": None if secret else _shown(key, value),
        "default": None if secret else _shown(key, spec.default),
        "source": source,
        "description": spec.description,
        "kind": spec.kind,
        "choices": list(spec.options()),
        "minimum": spec.minimum,
        "maximum": spec.maximum,
        "optional": spec.optional,
        "rule": spec.rule(),
        "secret": secret,
        "is_set": value not in (None, "", []),
        "editable": reason is None,
        "reason": reason,
        "applies": applies(key),
    }


def registry(data_dir: str, started: dict[str, Any]) -> dict[str, object]:
    """`{items, restart_needed, warnings}`: every setting in registry order; the keys whose value
    changed since the worker started (`started`, its settings then) and that only a restart applies;
    the refused values (`settings.problems`)."""
    values = settings.load(data_dir)
    return {
        "items": [item(key, values[key], data_dir) for key in settings.SETTINGS],
        "restart_needed": [key for key in settings.SETTINGS
                           if applies(key) == "restart" and key != "data_dir" and values[key] != started.get(key)],
        "warnings": settings.problems(data_dir),
    }


def env_set(keys: list[str], data_dir: str) -> list[str]:
    """The keys among `keys` whose value comes from the environment (the file cannot change them);
    `data_dir` is never in the file, which `settings.update_file` says itself."""
    return [key for key in keys
            if key in settings.SETTINGS and key != "data_dir" and _source(key, data_dir) == "environment"]
