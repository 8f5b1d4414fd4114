"""Every observer prompt, defined once. Each user prompt starts with the line `claude-mem observer v1`
(fakes route on it, DESIGN §5).

The standing instructions (role, what to record, the reply contract) and the session's context
(project, date, the user's request, and what was already recorded when a conversation restarts)
make up `system_prompt`. They are sent once per conversation: as the system prompt to providers
that take one, otherwise as the opening of the first user turn. Each turn then carries only the
batch of events and — when the user's turn ended — the request for its summary.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

from claude_mem.domain import OBSERVATION_TYPES
from claude_mem.observer.events import PendingEvent, RenderedEvent, rendered_event
from claude_mem.observer.parser import LIST_ITEM, OBSERVATION_FIELDS, SUMMARY_FIELDS
from claude_mem.observer.provider import PROMPT_HEADER, ObserverRequest, SessionInfo, TurnEnd
from claude_mem.store.models import Related

__all__ = [
    "CONTRACT", "OBSERVED_KINDS", "SUMMARY_FORMAT", "WHAT_TO_RECORD", "TurnEnd", "compose", "instructions",
    "render_batch", "session_context", "summary_follow_up", "system_prompt", "system_prompt_for",
    "turn_prompt", "turn_request", "with_system_prompt",
]

OBSERVED_KINDS = ("prompt", "tool", "tool_failure")
NOT_CAPTURED = "(not captured)"

ROLE = f"""\
You are the memory observer of a Claude Code session. You never use tools and never talk to the
user: you watch the events of the session and write down what is worth remembering. Every message
starts with "{PROMPT_HEADER}" and lists what just happened."""

WHAT_TO_RECORD = """\
Record durable technical knowledge that will help in a later session: decisions and their reasons,
bugs with their root cause and fix, what changed in which file and why, discoveries about how the
code, tools or environment behave. Fold related events into one observation; write one to a few
observations per turn, never one per tool call.

Do NOT record: routine reads, searches or directory listings on their own; that a command ran
without telling what it showed; restatements of the user's request; your own plans or guesses;
anything about this observer conversation; secrets, tokens or credentials (write [redacted]).
Use paths relative to the project root. Never invent events that are not listed."""

# What each tag of a reply asks for. The tags are the parser's (an observation's and a summary's
# content columns); a list field holds item tags (`LIST_ITEM`), each asking for one value.
FIELD_ASKS = {
    "type": "|".join(OBSERVATION_TYPES),
    "title": "one line naming the thing and the outcome",
    "subtitle": "optional one line of context",
    "narrative": "1-5 sentences: what and why, specific enough to act on later",
    "request": "what the user asked for, in one sentence",
    "investigated": "what was looked at",
    "learned": "what was learned about the code or the problem",
    "completed": "what was done, with its outcome",
    "next_steps": 'what is left, or "none"',
    "notes": "anything else worth remembering",
}
ITEM_ASKS = {
    "fact": "a concrete, checkable fact",
    "concept": "how-it-works|why-it-exists|what-changed|problem-solution|gotcha|pattern|trade-off",
    "file": "path",
}


def block_format(kind: str, fields: Sequence[str]) -> str:
    """The format of one `<observation>` or `<summary>` block: each field's tag with what it asks for."""
    lines = [f"<{kind}>"]
    for name in fields:
        item = LIST_ITEM.get(name)
        ask = f"<{item}>{ITEM_ASKS[item]}</{item}>..." if item else FIELD_ASKS[name]
        lines.append(f"  <{name}>{ask}</{name}>")
    return "\n".join([*lines, f"</{kind}>"])


CONTRACT = f"""\
Answer ONLY with blocks in this format (no other markup; prose around the blocks is ignored):

{block_format("observation", OBSERVATION_FIELDS)}

When a new observation supersedes or contradicts an earlier one listed as "Recorded before", add
<supersedes>its id</supersedes> inside the new block (one id; only ids from that list).
If nothing in a batch is worth keeping, answer exactly <skip/>."""

SUMMARY_FORMAT = block_format("summary", SUMMARY_FIELDS)

LANGUAGE_CHARS = 40
LANGUAGE_RULE = ("Write the title, subtitle, narrative, facts and every summary field in {language}. Keep the tags,"
                 " the type and concept values, file paths, code and identifiers exactly as they are.")

# Both leads name the end of the turn: the loopback API fakes answer with a summary when they see it.
SUMMARY_LEAD = "The user's turn has ended. Besides any observations for the events above, write one summary:"
FOLLOW_UP_LEAD = ("Your last reply had no <summary>. The user's turn has ended: answer now with its summary"
                  " alone, in this format:")


# -- once per conversation ----------------------------------------------------------------------------


def instructions() -> str:
    """The standing instructions: role, what to record and what not, the reply contract."""
    return f"{ROLE}\n\n{WHAT_TO_RECORD}\n\n{CONTRACT}"


def session_context(info: SessionInfo, date: str) -> str:
    """What is specific to the watched session; with a recap when the conversation was restarted."""
    request = info.user_request.strip() or NOT_CAPTURED
    context = f"Project: {info.project}\nDate: {date}\nThe user's request: {request}"
    language = " ".join(info.language.split())[:LANGUAGE_CHARS]
    if language and language.lower() not in ("english", "en"):
        context += f"\n{LANGUAGE_RULE.format(language=language)}"
    if info.recap.strip():
        context = ("This conversation was restarted while the session was under way. What has been recorded"
                   f" so far (do not record it again):\n\n{info.recap.strip()}\n\n{context}")
    return context


def system_prompt(info: SessionInfo, date: str | None = None) -> str:
    """Standing instructions, then the session's context (`date`: the day its events happened; default
    today, UTC)."""
    date = date or time.strftime("%Y-%m-%d", time.gmtime())
    return f"{instructions()}\n\n{session_context(info, date)}"


def system_prompt_for(info: SessionInfo) -> str:
    """The system prompt of a provider's session: the one the pipeline set, else built here."""
    return info.system_prompt or system_prompt(info)


# -- every turn ---------------------------------------------------------------------------------------


def compose(*sections: str) -> str:
    """One prompt: the header line, then the non-empty sections."""
    return "\n\n".join([PROMPT_HEADER, *(s for s in sections if s)])


def render_batch(events: Sequence[RenderedEvent]) -> str:
    """The events of one observer turn, one compact `<event>` block each."""
    return "\n".join(event.text for event in events)


def _batch_section(events: Sequence[RenderedEvent], date: str = "") -> str:
    when = f", from {date}" if date else ""
    return (
        f"New events in the session (oldest first{when}):\n\n"
        f"{render_batch(events)}\n\n"
        "Write observations for what is worth keeping in these events, or <skip/>."
    )


def related_section(related: Sequence[Related]) -> str:
    """The existing observations a new one may supersede, one line each with its id."""
    if not related:
        return ""
    lines = [f"#{r.id} [{r.type}] {' '.join(r.title.split())[:120]}"
             + (f" ({', '.join(' '.join(f.split())[:120] for f in r.files[:3])})" if r.files else "") for r in related]
    return "Recorded before (newer facts may supersede these):\n" + "\n".join(lines)


def _turn_facts(turn: TurnEnd) -> str:
    request = turn.request.strip() or NOT_CAPTURED
    last = turn.last_assistant_message.strip() or NOT_CAPTURED
    return f"The user's request this turn: {request}\nClaude's last message: {last}"


def observed_events(events: Sequence[PendingEvent], root: str = "") -> tuple[RenderedEvent, ...]:
    """The batch's events the observer is shown, rendered (cleaned and cut) once."""
    return tuple(rendered_event(e, root) for e in events if e.kind in OBSERVED_KINDS)


def turn_request(
    events: Sequence[PendingEvent], *, root: str = "", opening: str = "", turn_end: TurnEnd | None = None,
    date: str = "",
    related: Sequence[Related] = (),
    rendered: Sequence[RenderedEvent] | None = None,
) -> ObserverRequest:
    """What the pipeline sends for one batch: opening (if any) + events + the observations they may
    supersede (if any) + summary request (if any); `date` is the day the events happened (an import of
    old work is not today's). `rendered`: the events as `observed_events` already rendered them."""
    shown = tuple(rendered) if rendered is not None else observed_events(events, root)
    related = tuple(related) if shown else ()
    text = compose(
        opening,
        _batch_section(shown, date) if shown else "",
        related_section(related),
        f"{_turn_facts(turn_end)}\n\n{SUMMARY_LEAD}\n\n{SUMMARY_FORMAT}" if turn_end is not None else "",
    )
    return ObserverRequest(text=text, events=shown, turn_end=turn_end, related=related)


def turn_prompt(
    events: Sequence[PendingEvent], *, root: str = "", opening: str = "", turn_end: TurnEnd | None = None,
) -> str:
    """The text of `turn_request`."""
    return turn_request(events, root=root, opening=opening, turn_end=turn_end).text


def summary_follow_up(turn: TurnEnd) -> ObserverRequest:
    """Asks, in the same conversation, for the summary a reply left out."""
    text = compose(f"{FOLLOW_UP_LEAD}\n\n{SUMMARY_FORMAT}\n\n{_turn_facts(turn)}")
    return ObserverRequest(text=text, turn_end=turn, summary_only=True)


def with_system_prompt(info: SessionInfo, date: str) -> SessionInfo:
    """`info` with its system prompt filled in (kept when the caller already set one)."""
    return dataclasses.replace(info, system_prompt=info.system_prompt or system_prompt(info, date))
