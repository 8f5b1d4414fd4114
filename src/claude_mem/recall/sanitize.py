"""Stored text is data, not instructions: make it single-line, short and inert. Stdlib only.

Everything injected into a Claude Code session passes through `clean`: newlines and control
characters become spaces, angle brackets become look-alike quotes (so `<system-reminder>` or
`</…>` can never open or close a tag), and hook banners and role prefixes lose their shape.
"""

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]+")
_SPACES = re.compile(r"\s{2,}")
_HOOK_EVENTS = (
    "SessionStart|SessionEnd|UserPromptSubmit|UserPromptExpansion|PreToolUse|PostToolUse|"
    "PostToolUseFailure|PostToolBatch|Stop|StopFailure|SubagentStart|SubagentStop|PreCompact|"
    "PostCompact|Notification|Setup|PermissionRequest"
)
# "SessionStart hook additional context:" is how Claude Code itself labels injected text.
_HOOK_BANNER = re.compile(r"\b(" + _HOOK_EVENTS + r")(\s*)(hooks?)\b", re.IGNORECASE)
_ROLE_PREFIX = re.compile(
    r"\b(system|human|assistant|user|developer|claude|tool|function)(\s*):", re.IGNORECASE
)
_FENCE = re.compile(r"`{3,}")


def clean(value: object, limit: int = 200) -> str:
    """One inert line of at most `limit` characters (an ellipsis marks a cut)."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    text = _CONTROL.sub(" ", text)
    text = text.replace("<", "\u2039").replace(">", "\u203a")
    text = _FENCE.sub("'", text)
    text = _HOOK_BANNER.sub(r"\1-\3", text)
    text = _ROLE_PREFIX.sub(r"\1 -", text)
    text = _SPACES.sub(" ", text).strip()
    if len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + "\u2026"
    return text


def estimate_tokens(text: str) -> int:
    """The budget's unit: characters / 4, rounded up."""
    return (len(text) + 3) // 4
