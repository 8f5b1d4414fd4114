"""Observer providers, registered by name in `provider.REGISTRY`: one factory per name of
`domain.PROVIDERS` (a test holds the two lists equal). Other names are installed plugins'
(`claude_mem.plugins`), loaded by the registry when they are chosen.

`claude`, `anthropic` and `openai` import their SDKs only when created; `auto` resolves to one of
them (or `offline`) through `auto.choose`. `offline` registers itself on import.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..provider import REGISTRY, Provider
from . import offline  # noqa: F401 - it registers itself
from .auto import choose, describe


def _claude(settings: Mapping[str, object]) -> Provider:
    from .claude import ClaudeProvider

    return ClaudeProvider(settings)


def _anthropic(settings: Mapping[str, object]) -> Provider:
    from .anthropic import AnthropicProvider

    return AnthropicProvider(settings)


def _openai(settings: Mapping[str, object]) -> Provider:
    from .openai import OpenAIProvider

    return OpenAIProvider(settings)


def _auto(settings: Mapping[str, object]) -> Provider:
    name, _reason = choose({**settings, "provider": "auto"})
    return REGISTRY.create(name, settings)


REGISTRY.register("claude", _claude)
REGISTRY.register("anthropic", _anthropic)
REGISTRY.register("openai", _openai)
REGISTRY.register("auto", _auto)


def create(settings: Mapping[str, object]) -> tuple[Provider, str]:
    """The provider the settings ask for, and why it was chosen; ProviderError for an unknown name."""
    name, reason = choose(settings)
    return REGISTRY.create(name, settings), reason


__all__ = ["REGISTRY", "choose", "create", "describe"]
