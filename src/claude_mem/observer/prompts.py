"""Observer prompts. Every one starts with the line `claude-mem observer v1` (fakes route on it).

A turn's prompt is built from sections: an opening (`init` for a new conversation, `recap` when a
session is re-opened after a restart), the batch of events, and — when the user's turn ended — a
request for the turn summary. `render_batch` is the part that grows with the events; providers use
it to measure tokens per event.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from claude_mem.observer.events import PendingEvent, render_event
from claude_mem.observer.provider import PROMPT_HEADER, SessionInfo

CONTRACT = """\
Answer ONLY with blocks in this format (no other markup; prose around the blocks is ignored):

<observation>
  <type>bugfix|feature|refactor|change|discovery|decision</type>
  <title>one line naming the thing and the outcome</title>
  <subtitle>optional one line of context</subtitle>
  <narrative>1-5 sentences: what and why, specific enough to act on later</narrative>
  <facts><fact>a concrete, checkable fact</fact>...</facts>
  <concepts><concept>how-it-works|why-it-exists|what-changed|problem-solution|gotcha|pattern|trade-off</concept>...</concepts>
  <files_read><file>path</file>...</files_read>
  <files_modified><file>path</file>...</files_modified>
</observation>

If nothing in a batch is worth keeping, answer exactly <skip/>."""

WHAT_TO_RECORD = """\
Record durable technical knowledge that will help in a later session: decisions and their reasons,
bugs with their root cause and fix, what changed in which file and why, discoveries about how the
code, tools or environment behave. Fold related events into one observation; write one to a few
observations per turn, never one per tool call.

Do NOT record: routine reads, searches or directory listings on their own; that a command ran
without telling what it showed; restatements of the user's request; your own plans or guesses;
anything about this observer conversation; secrets, tokens or credentials (write [redacted]).
Use paths relative to the project root. Never invent events that are not listed."""

SUMMARY_CONTRACT = """\
The user's turn has ended. Besides any observations for the events above, write one summary:

<summary>
  <request>what the user asked for, in one sentence</request>
  <investigated>what was looked at</investigated>
  <learned>what was learned about the code or the problem</learned>
  <completed>what was done, with its outcome</completed>
  <next_steps>what is left, or "none"</next_steps>
  <files_read><file>path</file>...</files_read>
  <files_edited><file>path</file>...</files_edited>
  <notes>anything else worth remembering</notes>
</summary>"""


@dataclass(frozen=True)
class TurnEnd:
    """What the summary section needs: the user's request and Claude's last message."""

    request: str = ""
    last_assistant_message: str = ""


def init_section(info: SessionInfo, date: str) -> str:
    request = info.user_request.strip() or "(not captured)"
    return (
        "You are the memory observer for a Claude Code session. You never act; you watch the events\n"
        "of the session and write down what is worth remembering.\n\n"
        f"Project: {info.project}\nDate: {date}\nThe user's request: {request}\n\n"
        f"{WHAT_TO_RECORD}\n\n{CONTRACT}"
    )


def recap_section(info: SessionInfo, date: str) -> str:
    recap = info.recap.strip() or "(nothing stored yet)"
    return (
        "You are the memory observer for a Claude Code session that is already under way; this\n"
        "conversation was restarted. What has been recorded so far (do not record it again):\n\n"
        f"{recap}\n\nProject: {info.project}\nDate: {date}\n"
        f"The user's request: {info.user_request.strip() or '(not captured)'}\n\n"
        f"{WHAT_TO_RECORD}\n\n{CONTRACT}"
    )


def render_batch(events: Sequence[PendingEvent], root: str = "") -> str:
    """The events of one observer turn, one compact `<event>` block each."""
    return "\n".join(render_event(event, root) for event in events)


def batch_section(events: Sequence[PendingEvent], root: str = "") -> str:
    return (
        "New events in the session (oldest first):\n\n"
        f"{render_batch(events, root)}\n\n"
        "Write observations for what is worth keeping in these events, or <skip/>."
    )


def summary_section(turn: TurnEnd) -> str:
    request = turn.request.strip() or "(not captured)"
    last = turn.last_assistant_message.strip() or "(not captured)"
    return f"The user's request this turn: {request}\nClaude's last message: {last}\n\n{SUMMARY_CONTRACT}"


def compose(*sections: str) -> str:
    """One prompt: the header line, then the non-empty sections."""
    return "\n\n".join([PROMPT_HEADER, *(s for s in sections if s)])


def init_prompt(info: SessionInfo, date: str) -> str:
    return compose(init_section(info, date))


def recap_prompt(info: SessionInfo, date: str) -> str:
    return compose(recap_section(info, date))


def batch_prompt(events: Sequence[PendingEvent], root: str = "") -> str:
    return compose(batch_section(events, root))


def summary_prompt(turn: TurnEnd) -> str:
    return compose(summary_section(turn))


def turn_prompt(
    events: Sequence[PendingEvent], *, root: str = "", opening: str = "", turn_end: TurnEnd | None = None,
) -> str:
    """What the pipeline sends for one batch: opening (if any) + events + summary request (if any)."""
    shown = [e for e in events if e.kind in ("prompt", "tool", "tool_failure")]
    return compose(
        opening,
        batch_section(shown, root) if shown else "",
        summary_section(turn_end) if turn_end is not None else "",
    )


_TURN_END = re.compile(
    r"The user's request this turn: (.*?)\nClaude's last message: (.*?)\n\nThe user's turn has ended\.", re.S,
)
_REQUEST = re.compile(r"The user's request: (.*?)\n\nRecord durable", re.S)


def read_turn_end(prompt: str) -> TurnEnd | None:
    """The summary request in a prompt, if it has one (used by the offline and fake providers)."""
    match = _TURN_END.search(prompt)
    if match is None:
        return None
    clean = lambda text: "" if text.strip() == "(not captured)" else text.strip()  # noqa: E731
    return TurnEnd(request=clean(match.group(1)), last_assistant_message=clean(match.group(2)))


def read_session_request(prompt: str) -> str:
    """The user's request from an init or recap section; empty when absent."""
    match = _REQUEST.search(prompt)
    if match is None or match.group(1).strip() == "(not captured)":
        return ""
    return match.group(1).strip()


def system_prompt() -> str:
    """Standing instructions for providers that take a system prompt (SessionInfo.system_prompt)."""
    return (
        "You are the memory observer of a Claude Code session. You never use tools and never talk to\n"
        f'the user. Every message starts with "{PROMPT_HEADER}" and lists what just happened.\n\n'
        f"{WHAT_TO_RECORD}\n\n{CONTRACT}"
    )
