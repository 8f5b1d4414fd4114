"""Stored text is data, not instructions: make it single-line, short and inert. Stdlib only.

Everything injected into a Claude Code session passes through `clean`: Unicode is normalised
(NFKC, so full-width `＜system＞` is `<system>`) and stripped of zero-width and bidi controls (so
`Sys\u200btem:` is `System:` and no text reads backwards); newlines and control characters become
spaces; angle brackets become look-alike quotes (so `<system-reminder>` or `</…>` can never open or
close a tag); hook banners and role prefixes lose their shape; and instruction-like phrases
("ignore all previous instructions", "you are now …") are quoted as what they are: stored text.

Its patterns come from `fastpath.patterns` (compiled once per machine and kept, so the session-start
hook that runs every one of them does not import `re`).
"""

from claude_mem.fastpath.patterns import regex

_CONTROL = regex(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]+")
_SPACES = regex(r"\s{2,}")
_HOOK_EVENTS = (
    "SessionStart|SessionEnd|UserPromptSubmit|UserPromptExpansion|PreToolUse|PostToolUse|"
    "PostToolUseFailure|PostToolBatch|Stop|StopFailure|SubagentStart|SubagentStop|PreCompact|"
    "PostCompact|Notification|Setup|PermissionRequest"
)
# "SessionStart hook additional context:" is how Claude Code itself labels injected text.
_HOOK_BANNER = regex(r"(?i)\b(" + _HOOK_EVENTS + r")(\s*)(hooks?)\b")
_ROLE_PREFIX = regex(r"(?i)\b(system|human|assistant|user|developer|claude|tool|function)(\s*):")
_FENCE = regex(r"`{3,}")
# Invisible characters that hide or reorder text: zero-width, word joiner, BOM, bidi embeddings,
# overrides, isolates and marks.
_INVISIBLE = regex(r"[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\u061c\ufeff\u180e]+")
_INSTRUCTION = regex(
    r"(?i)\b(?:(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|every\s*)*"
    r"(?:previous|prior|above|earlier|preceding|former|existing|system)?\s*"
    r"(?:instructions?|prompts?|rules?|messages?|context|directives?|guidelines?)"
    r"|you\s+are\s+now\b|from\s+now\s+on\b|new\s+(?:instructions?|rules?|system\s+prompt)\b"
    r"|system\s+prompt\b|act\s+as\s+(?:if|an?|the)\b|pretend\s+(?:to\s+be|you\s+are)\b)",
)


def clean(value: object, limit: int = 200) -> str:
    """One inert line of at most `limit` characters (an ellipsis marks a cut)."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if not text.isascii():
        import unicodedata  # only non-ASCII text pays for it (this runs in the session-start hook)

        text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    text = _CONTROL.sub(" ", text)
    text = text.replace("<", "\u2039").replace(">", "\u203a")
    text = _FENCE.sub("'", text)
    # Replacement functions, not templates (`r"\1-\3"`): a template makes `re` parse it, importing `re`.
    text = _HOOK_BANNER.sub(lambda match: f"{match.group(1)}-{match.group(3)}", text)
    text = _ROLE_PREFIX.sub(lambda match: f"{match.group(1)} -", text)
    text = _INSTRUCTION.sub(lambda match: f"(quoted: \u201c{match.group(0).lower()}\u201d)", text)
    text = _SPACES.sub(" ", text).strip()
    if len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + "\u2026"
    return text


def estimate_tokens(text: str) -> int:
    """The budget's unit: characters / 4, rounded up."""
    return (len(text) + 3) // 4
