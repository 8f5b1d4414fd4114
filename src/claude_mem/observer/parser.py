"""Parser for the observer reply contract (DESIGN §5).

A tolerant scan, not an XML parser: LLM replies wrap blocks in prose and code fences, forget to
close tags and use bare `&`. Each `<observation>` / `<summary>` block is cut out, then each field is
read up to its closing tag — or, when that is missing, up to the next sibling tag or the block's
end — so one unclosed tag costs at most that field. Parsing never raises.
"""

from __future__ import annotations

import html
import logging
import re
from dataclasses import dataclass, field

from claude_mem.domain import OBSERVATION_TYPES
from claude_mem.store.models import ParsedObservation, ParsedSummary
from claude_mem.store.rows import OBSERVATION_CONTENT, SUMMARY_CONTENT

__all__ = ["ParsedObservation", "ParsedReply", "ParsedSummary", "normalise_type", "parse"]

log = logging.getLogger("claude_mem.observer")

TITLE_MAX = 200
NARRATIVE_MAX = 4000
ITEM_MAX = 500
ITEMS_MAX = 30

# The contract's tags are the fields of the parsed observation and summary (their table columns).
OBSERVATION_FIELDS = OBSERVATION_CONTENT
SUMMARY_FIELDS = SUMMARY_CONTENT
# Beside the content, an observation may name an earlier one it supersedes (not a column of its own).
SUPERSEDES = "supersedes"
OBSERVATION_TAGS = (*OBSERVATION_FIELDS, SUPERSEDES)
LIST_ITEM = {"facts": "fact", "concepts": "concept", "files_read": "file", "files_modified": "file",
             "files_edited": "file"}
CONTRACT_TAGS = sorted(
    set(OBSERVATION_FIELDS + SUMMARY_FIELDS + tuple(LIST_ITEM.values()) + ("observation", "summary", "skip", SUPERSEDES)),
    key=len, reverse=True,
)
_ANY_CONTRACT_TAG = re.compile(r"</?(?:%s)\s*/?>" % "|".join(CONTRACT_TAGS), re.I)
_BLOCK_START = re.compile(r"<(observation|summary)\b[^<>]*?(/?)>", re.I)
_SKIP = re.compile(r"<skip\s*/>|<skip\s*>\s*</skip\s*>", re.I)

# Words seen in the wild for each type; anything else becomes `change`.
TYPE_HINTS: tuple[tuple[str, str], ...] = (
    ("bug", "bugfix"), ("fix", "bugfix"), ("feat", "feature"), ("add", "feature"),
    ("refactor", "refactor"), ("cleanup", "refactor"), ("clean-up", "refactor"), ("restructur", "refactor"),
    ("decision", "decision"), ("decide", "decision"), ("choice", "decision"),
    ("discover", "discovery"), ("learn", "discovery"), ("finding", "discovery"), ("insight", "discovery"),
    ("investigat", "discovery"), ("gotcha", "discovery"),
)


@dataclass
class ParsedReply:
    observations: list[ParsedObservation] = field(default_factory=list)
    summary: ParsedSummary | None = None
    skipped: bool = False
    problems: list[str] = field(default_factory=list)  # what was normalised or dropped, for the log

    @property
    def ok(self) -> bool:
        """A usable reply: at least one valid block, or an explicit `<skip/>`."""
        return self.skipped or bool(self.observations) or self.summary is not None


def normalise_type(raw: str) -> str | None:
    """The contract type for `raw`; None when it was empty."""
    value = " ".join(raw.split()).lower()
    if not value:
        return None
    if value in OBSERVATION_TYPES:
        return value
    for hint, kind in TYPE_HINTS:
        if hint in value:
            return kind
    return "change"


def _clean(text: str, limit: int, one_line: bool) -> str:
    text = html.unescape(_ANY_CONTRACT_TAG.sub(" ", text))
    if one_line:
        text = " ".join(text.split())
    else:
        text = "\n".join(" ".join(line.split()) for line in text.strip().splitlines()).strip()
        text = re.sub(r"\n{3,}", "\n\n", text)
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def _raw_field(block: str, name: str, siblings: tuple[str, ...]) -> str | None:
    """The raw text inside `<name>` in `block`; tolerant of a missing close tag."""
    opening = re.search(r"<%s\s*(/?)>" % name, block, re.I)
    if opening is None:
        return None
    if opening.group(1):
        return ""
    start = opening.end()
    closing = re.compile(r"</%s\s*>" % name, re.I).search(block, start)
    others = [s for s in siblings if s != name]
    sibling = re.compile(r"</?(?:%s)\s*/?>" % "|".join(others), re.I).search(block, start) if others else None
    end = len(block)
    if closing is not None:
        end = closing.start()
    if sibling is not None and sibling.start() < end and (closing is None or name not in LIST_ITEM):
        # An unclosed field ends where the next field begins. List containers hold item tags only,
        # so a sibling inside them means the container itself was left open.
        end = sibling.start()
    return block[start:end]


def _items(raw: str | None, item: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    found = re.findall(r"<%s\s*>(.*?)(?:</%s\s*>|(?=<%s\s*>)|$)" % (item, item, item), raw, re.I | re.S)
    if not found and not re.search(r"<%s\b" % item, raw, re.I):
        found = [line for line in raw.splitlines()]
    values: list[str] = []
    for value in found:
        cleaned = _clean(value, ITEM_MAX, one_line=True)
        if cleaned and cleaned not in values:
            values.append(cleaned)
        if len(values) >= ITEMS_MAX:
            break
    return tuple(values)


def _blocks(text: str) -> list[tuple[str, str]]:
    """(kind, body) for every observation/summary block, in order."""
    starts = list(_BLOCK_START.finditer(text))
    blocks: list[tuple[str, str]] = []
    for index, match in enumerate(starts):
        kind = match.group(1).lower()
        if match.group(2):
            blocks.append((kind, ""))
            continue
        limit = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        closing = re.compile(r"</%s\s*>" % kind, re.I).search(text, match.end(), limit)
        blocks.append((kind, text[match.end(): closing.start() if closing else limit]))
    return blocks


def _observation(body: str, problems: list[str]) -> ParsedObservation | None:
    raw = {name: _raw_field(body, name, OBSERVATION_TAGS) for name in OBSERVATION_TAGS}
    title = _clean(raw["title"] or "", TITLE_MAX, one_line=True)
    narrative = _clean(raw["narrative"] or "", NARRATIVE_MAX, one_line=False)
    if not title or not narrative:
        problems.append(f"dropped an observation without {'title' if not title else 'narrative'}")
        return None
    raw_type = _clean(raw["type"] or "", 100, one_line=True)
    kind = normalise_type(raw_type) or "change"
    if raw_type.lower() != kind:
        problems.append(f"observation type {raw_type!r} normalised to {kind!r}")
    lists = {name: _items(raw[name], LIST_ITEM[name]) for name in OBSERVATION_FIELDS if name in LIST_ITEM}
    lists["concepts"] = tuple(concept.lower() for concept in lists["concepts"])
    return ParsedObservation(type=kind, title=title, narrative=narrative,
                             subtitle=_clean(raw["subtitle"] or "", TITLE_MAX, one_line=True), **lists,
                             supersedes=_supersedes(raw[SUPERSEDES]))


def _supersedes(raw: str | None) -> int | None:
    """The id in `<supersedes>` (`12`, `#12`); None when absent, not a positive id, or absurd."""
    match = re.fullmatch(r"\s*#?\s*(\d{1,12})\s*", _clean(raw or "", 40, one_line=True))
    value = int(match.group(1)) if match else 0
    return value if 0 < value < 2**63 else None


def _summary(body: str) -> ParsedSummary | None:
    def get(name: str) -> str | None:
        return _raw_field(body, name, SUMMARY_FIELDS)

    text = {name: _clean(get(name) or "", NARRATIVE_MAX, one_line=False)
            for name in SUMMARY_FIELDS if name not in LIST_ITEM}
    summary = ParsedSummary(files_read=_items(get("files_read"), "file"),
                            files_edited=_items(get("files_edited"), "file"), **text)
    if not any(text.values()) and not summary.files_read and not summary.files_edited:
        return None
    return summary


def parse(text: str) -> ParsedReply:
    """Everything valid in an observer reply. Never raises."""
    reply = ParsedReply()
    if not isinstance(text, str):
        reply.problems.append(f"reply is {type(text).__name__}, not text")
        return reply
    for kind, body in _blocks(text):
        if kind == "observation":
            observation = _observation(body, reply.problems)
            if observation is not None and observation not in reply.observations:
                reply.observations.append(observation)
        elif reply.summary is None:
            reply.summary = _summary(body)
            if reply.summary is None:
                reply.problems.append("dropped an empty summary")
    reply.skipped = bool(_SKIP.search(text))
    for problem in reply.problems:
        log.info("observer reply: %s", problem)
    return reply
