"""What leaves this machine for the team server, field by field (DESIGN §12, issue 32).

`SHARED` is the allow-list: for each kind of row, the payload fields that travel and how each is
treated; a field it does not name is never sent, whatever the local row holds. Every text that travels
goes through the secret redactor again (and loses any `<private>` span), so a secret the observer
wrote into an observation stays on this machine. With `team_share_prompts` off no text that came from
a prompt leaves:

- a `prompt` field (a summary's `request`, a session's `title`, made from the request) is replaced by
  `STAND_IN` as a whole;
- a `text` field (an observation's title, narrative, facts …, a summary's other fields) loses every
  part that quotes one of its session's prompts: the whole prompt, or any run of `QUOTE_WORDS`
  consecutive words of it (case, spacing and punctuation aside), each replaced by `STAND_IN`.

With sharing on, prompts travel (redacted) and nothing is replaced.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from claude_mem import privacy
from claude_mem.store import Store
from claude_mem.store import team as local
from claude_mem.store.rows import OBSERVATION_CONTENT, SUMMARY_CONTENT

STAND_IN = "(prompt not shared)"
# A quote this long (in words) of a prompt is the prompt's text; a shorter prompt counts only whole,
# and only when it has at least SHORT_PROMPT_CHARS characters (a two-word prompt is everyday words).
QUOTE_WORDS = 8
SHORT_PROMPT_CHARS = 24

KEEP, TEXT, PROMPT = "keep", "text", "prompt"


def _columns(kind: str, written: tuple[str, ...]) -> dict[str, str]:
    return {name: TEXT if name in written and name != "type" else KEEP
            for name in local.TRAVELS[kind] if name not in ("uid", "project")}


_SESSION_OF = {"session_uid": KEEP, "content_session_id": KEEP, "session_started_at": KEEP}
SHARED: dict[str, dict[str, str]] = {
    "session": {"content_session_id": KEEP, "title": PROMPT, "status": KEEP, "started_at": KEEP,
                "ended_at": KEEP, "last_activity_at": KEEP},
    "prompt": {**_SESSION_OF, "prompt_number": KEEP, "text": PROMPT, "created_at": KEEP},
    # An observation's and a summary's columns as store/rows.py types them (the ones that travel at
    # all: store/team.py's TRAVELS): what the observer wrote is text, the rest kept as it is.
    "observation": {**_SESSION_OF, **_columns("observation", OBSERVATION_CONTENT)},
    "summary": {**_SESSION_OF, **_columns("summary", SUMMARY_CONTENT), "request": PROMPT},
}
_WORD = re.compile(r"\w+(?:['’.-]\w+)*")  # a word, with its inner apostrophes, dots and hyphens


def payloads(conn: Store, kind: str, rows: Sequence[dict[str, Any]], share_prompts: bool) -> list[dict[str, Any]]:
    """The payload that may leave this machine for each of `rows` (local rows of `kind`, as
    `store.team.unpushed` reads them), in order."""
    quotes: dict[str, list[str]] = {}
    if not share_prompts and kind in ("session", "observation", "summary"):
        sessions = [str(row["uid"] if kind == "session" else row.get("session_uid") or "") for row in rows]
        quotes = local.session_prompts(conn, [uid for uid in set(sessions) if uid])
    return [payload(kind, row, share_prompts, quotes.get(
        str(row["uid"] if kind == "session" else row.get("session_uid") or ""), [])) for row in rows]


def payload(kind: str, row: dict[str, Any], share_prompts: bool, prompts: Sequence[str] = ()) -> dict[str, Any]:
    """One row's payload: the fields `SHARED` names for `kind`, texts redacted, prompt text replaced
    unless `share_prompts` (`prompts`: the texts of the prompts of the row's session)."""
    matcher = _Quotes(prompts) if not share_prompts else None
    out: dict[str, Any] = {}
    texts: dict[str, Any] = {}
    for name, how in SHARED[kind].items():
        if name not in row:
            continue
        value = row[name]
        if how == KEEP or value is None:
            out[name] = value
        elif how == PROMPT and not share_prompts:
            out[name] = STAND_IN if value else value
        else:
            texts[name] = _text(value, matcher)
    # the texts as one document (a secret split across facts is seen whole), as capture cleans a payload
    cleaned = privacy.clean_tree(texts)
    if isinstance(cleaned, dict):  # always (a dict in, a dict out); were it not, no text would leave
        out.update(cleaned)
    return {name: out[name] for name in SHARED[kind] if name in out}


def _text(value: object, matcher: _Quotes | None) -> object:
    if isinstance(value, list):
        return [_text(item, matcher) for item in value]
    if not isinstance(value, str):
        return value
    return matcher.replace(value) if matcher else value


class _Quotes:
    """Finds where a text quotes one of a session's prompts (a run of QUOTE_WORDS words of it, or a
    whole shorter prompt) by word shingles, linear in the text."""

    def __init__(self, prompts: Sequence[str]) -> None:
        self.runs: set[tuple[str, ...]] = set()
        self.short: dict[int, set[tuple[str, ...]]] = {}
        for prompt in prompts:
            words = [word.lower() for word in _WORD.findall(prompt)]
            if len(words) >= QUOTE_WORDS:
                self.runs.update(tuple(words[i:i + QUOTE_WORDS]) for i in range(len(words) - QUOTE_WORDS + 1))
            elif words and len(prompt.strip()) >= SHORT_PROMPT_CHARS:
                self.short.setdefault(len(words), set()).add(tuple(words))

    def replace(self, text: str) -> str:
        if not self.runs and not self.short:
            return text
        matches = list(_WORD.finditer(text))
        words = [match.group(0).lower() for match in matches]
        covered = [False] * len(words)
        windows = [(QUOTE_WORDS, self.runs)] if self.runs else []
        windows += sorted(self.short.items())
        for size, found in windows:
            for i in range(len(words) - size + 1):
                if tuple(words[i:i + size]) in found:
                    for j in range(i, i + size):
                        covered[j] = True
        if not any(covered):
            return text
        parts, position, i = [], 0, 0
        while i < len(matches):
            if not covered[i]:
                i += 1
                continue
            start = i
            while i < len(matches) and covered[i]:
                i += 1
            parts.append(text[position:matches[start].start()])
            parts.append(STAND_IN)
            position = matches[i - 1].end()
        parts.append(text[position:])
        return "".join(parts)
