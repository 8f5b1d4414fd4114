"""Facts of the domain, defined once: the timestamp format, status and kind names, observation
types, record references (`#12`, `S3`, `P7`) and the observer providers.

Stdlib only and import-light (no typing, dataclasses or datetime at import): the hooks use it.
"""

import time

# -- timestamps -----------------------------------------------------------------------------------
# Every timestamp in the store is UTC with milliseconds: 2026-11-20T14:30:05.123Z (it sorts as text).


def iso(ts: "float | None" = None) -> str:
    """`ts` (seconds since the epoch; default now) in the store's timestamp format."""
    ts = time.time() if ts is None else ts
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + ".%03dZ" % (int(ts * 1000) % 1000)


def utc_now() -> str:
    """Now, in the store's timestamp format."""
    return iso()


def iso_from(moment: object) -> str:
    """A `datetime` (aware, or naive meaning local time) in the store's timestamp format."""
    from datetime import datetime

    assert isinstance(moment, datetime)
    return iso(moment.timestamp())


# -- names ------------------------------------------------------------------------------------------

EVENT_STATUSES = ("pending", "claimed", "done", "failed")
SESSION_STATUSES = ("active", "completed", "failed", "interrupted")
EVENT_KINDS = ("prompt", "tool", "tool_failure", "summarize", "session_end")
# Kinds that belong to a user's turn (dropped when the turn's prompt was fully private).
TURN_KINDS = ("tool", "tool_failure", "summarize")
OBSERVATION_TYPES = ("bugfix", "feature", "refactor", "change", "discovery", "decision")

# -- record references --------------------------------------------------------------------------

RECORD_KINDS = ("observation", "summary", "prompt")
REF_PREFIX = {"observation": "#", "summary": "S", "prompt": "P"}
_REF_PATTERN = r"(#|[SsPp])?(\d+)"


class RecallError(ValueError):
    """Bad input to a recall function (unknown id, bad date, empty text): one clear line."""


class UnknownRecord(RecallError):
    """The input is well-formed but names nothing stored (an id, a session, a search with no match)."""


def ref(kind: str, row_id: int) -> str:
    """`#12`, `S3` or `P7`."""
    return REF_PREFIX[kind] + str(row_id)


def is_ref(text: str) -> bool:
    import re  # not at import time: the hooks load this module and never need `re`

    return re.fullmatch(_REF_PATTERN, str(text).strip()) is not None


def parse_ref(text: object) -> "tuple[str, int]":
    """`12`/`#12` → observation, `S3` → summary, `P7` → prompt."""
    import re

    match = re.fullmatch(_REF_PATTERN, str(text).strip())
    if not match:
        raise RecallError(f"not an id: {text!r} (use 12 or #12 for an observation, S3 for a summary, P7 for a prompt)")
    kind = {"s": "summary", "p": "prompt"}.get((match.group(1) or "").lower(), "observation")
    return kind, int(match.group(2))


# -- observer providers ---------------------------------------------------------------------------
# The one list of provider names: the `provider` setting is validated against it, its README row
# and `--help` text are written from it, and the observer's registry must give each a factory.

PROVIDERS = {
    "auto": "claude when Claude Code is logged in, else anthropic when a key is set, else offline",
    "claude": "Claude Code through the Agent SDK (your Claude Code login)",
    "anthropic": "the Anthropic API (anthropic_api_key or ANTHROPIC_API_KEY)",
    "openai": "an OpenAI-compatible server (openai_base_url, e.g. a local Ollama)",
    "offline": "no LLM: observations extracted mechanically from the events",
    "fake": "scripted replies, for tests",
}
