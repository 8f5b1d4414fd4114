"""The observer's standing instructions, used when the pipeline passes none in `SessionInfo`."""

from __future__ import annotations

from ..provider import PROMPT_HEADER, SessionInfo
from .history import RECAP_MAX_CHARS

DEFAULT_SYSTEM_PROMPT = f"""You are the memory observer of a coding session. You never use tools and \
never talk to the user. Each message starting with "{PROMPT_HEADER}" lists what just happened in the \
session (prompts, tool calls and their results). Reply only with zero or more <observation> blocks \
(type, title, subtitle, narrative, facts, concepts, files_read, files_modified), a <summary> block \
when asked for one, or <skip/> when nothing is worth keeping. Record durable technical knowledge: \
decisions, bugs and their root causes, what changed and why, discoveries. Never record routine \
reads or listings; prefer one to a few observations per message, not one per tool call."""


def system_prompt_for(info: SessionInfo) -> str:
    """The system prompt for one observer session: the pipeline's, or the default, plus context."""
    text = info.system_prompt or DEFAULT_SYSTEM_PROMPT
    if info.project:
        text += f"\n\nProject: {info.project}"
    if info.user_request:
        text += f"\nThe user's first request in this session: {info.user_request}"
    if info.recap:
        # Re-opened after a restart: what was already stored, newest last, capped.
        text += "\n\nAlready recorded earlier in this session (do not repeat):\n" + info.recap[-RECAP_MAX_CHARS:]
    return text
