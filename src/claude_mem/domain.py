"""Facts of the domain, defined once: the error family, the timestamp format, status and kind names,
observation types, record references (`#12`, `S3`, `P7`) and the observer providers.

Stdlib only and import-light (no typing, dataclasses or datetime at import): the hooks use it.
"""

import time

if False:  # for the type checker only: `datetime` stays off the hook path
    from datetime import datetime

# -- errors -----------------------------------------------------------------------------------------


class ClaudeMemError(Exception):
    """A failure the user can act on, with a one-line message that says what and where (never a
    secret). Each surface translates it once: the CLI group prints `Error: <message>` and exits with
    `exit_code`; HTTP answers 4xx/5xx; MCP returns a tool error; hooks log it and exit 0."""

    exit_code = 1


# -- timestamps -----------------------------------------------------------------------------------
# Every timestamp in the store is UTC with milliseconds: 2026-11-20T14:30:05.123Z (it sorts as text).


def iso(ts: "float | None" = None) -> str:
    """`ts` (seconds since the epoch; default now) in the store's timestamp format."""
    ts = time.time() if ts is None else ts
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + ".%03dZ" % (int(ts * 1000) % 1000)


def utc_stamp(ts: "float | None" = None) -> str:
    """`ts` (default now) to the second, `2026-11-20T14:30:05Z`: log lines, worker.json, recovery.json."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if ts is None else ts))


def utc_now() -> str:
    """Now, in the store's timestamp format."""
    return iso()


def iso_from(moment: object) -> str:
    """A `datetime` (aware, or naive meaning local time) in the store's timestamp format."""
    from datetime import datetime

    assert isinstance(moment, datetime)
    return iso(moment.timestamp())


def stored_time(stamp: object) -> "datetime | None":
    """A stored timestamp (`2026-11-20T08:00:00.000Z`) as an aware UTC datetime; None when it does not parse."""
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def parse_time(text: str, end_of_day: bool = False, now: "object | None" = None) -> str:
    """What a user typed for a time, in the store's format: `2026-11-20`, an ISO date-time (local
    unless it has an offset or `Z`) or `7d`/`12h`/`2w`/`30m` ago.

    A bare date is local midnight; with `end_of_day` it is the next midnight, so `--until 2026-11-20`
    includes that whole day. `now` (a datetime) is for tests. RecallError when it does not parse.
    """
    import re
    from datetime import datetime, timedelta, timezone

    raw = (text or "").strip()
    problem = RecallError(f"not a date or time: {raw[:40]!r} (use 2026-11-20, 2026-11-20T14:30, or 7d / 12h / 2w)")
    relative = re.match(r"^(\d{1,9})\s*([mhdw])$", raw, re.IGNORECASE)
    if relative:
        unit = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[relative.group(2).lower()]
        base = now if isinstance(now, datetime) else datetime.now(timezone.utc)
        try:
            return iso_from(base - timedelta(**{unit: int(relative.group(1))}))
        except OverflowError:
            raise RecallError(f"{raw!r} reaches back before year 1") from None
    if len(raw) > 40:
        raise problem
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00") if raw.endswith("Z") else raw)
    except ValueError:
        raise problem from None
    try:
        if moment.tzinfo is None:
            moment = moment.astimezone()  # naive input means the user's local time
        if end_of_day and len(raw) == 10:
            moment += timedelta(days=1)
        return iso_from(moment)
    except (OverflowError, ValueError):  # 9999-12-31 plus a day, 0001-01-01 minus an offset
        raise RecallError(f"{raw!r} is out of range") from None


# -- names ------------------------------------------------------------------------------------------

MAX_ROW_ID = 2**63 - 1  # SQLite's largest rowid: an id past it names nothing
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


class RecallError(ClaudeMemError, ValueError):
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

    match = re.fullmatch(_REF_PATTERN, str(text).strip()[:40])
    if not match:
        raise RecallError(f"not an id: {str(text)[:40]!r} (use 12 or #12 for an observation, S3 for a summary, "
                          "P7 for a prompt)")
    kind = {"s": "summary", "p": "prompt"}.get((match.group(1) or "").lower(), "observation")
    number = int(match.group(2))
    if number > MAX_ID:
        raise RecallError(f"id {number} is out of range (ids are at most {MAX_ID})")
    return kind, number


# SQLite's largest integer: an id beyond it cannot exist (and would not even bind).
MAX_ID = 2**63 - 1


# -- observer providers ---------------------------------------------------------------------------
# The one list of built-in provider names: the `provider` setting is validated against it (and the
# names installed plugins add, `plugins.PROVIDERS`), its README row and `--help` text are written
# from it, and the observer's registry must give each a factory.

PROVIDERS = {
    "auto": "claude when Claude Code is logged in, else anthropic when a key is set, else offline",
    "claude": "Claude Code through the Agent SDK (your Claude Code login)",
    "anthropic": "the Anthropic API (anthropic_api_key or ANTHROPIC_API_KEY)",
    "openai": "an OpenAI-compatible server (openai_base_url, e.g. a local Ollama)",
    "offline": "no LLM: observations extracted mechanically from the events",
}
