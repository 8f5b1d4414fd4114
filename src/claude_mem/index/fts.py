"""User text → a safe FTS5 MATCH expression. Stdlib only (used by the user-prompt hook).

Multi-word input is an OR of its terms (BM25 ranks documents matching more and rarer terms
first); `"quoted words"` stay a phrase; a trailing `*` makes a prefix. Every term is emitted as a
double-quoted FTS5 string, so no input can reach the query syntax: no string raises.
"""

import re

MAX_TERMS = 32
_TOKEN = re.compile(r'"([^"]*)"?|(\S+)')
_WORDY = re.compile(r"\w", re.UNICODE)
_UNSAFE = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")

# For prompt context only: a prompt is prose, and "how do I" must not match every memory.
STOPWORDS = frozenset(
    """a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing done down during each either else ever
    few for from further get got had has have having he her here hers him his how i if in into is
    it its itself just let like make me more most my myself need no nor not now of off on once
    only or other our ours out over own please same she should so some such than that the their
    them then there these they this those through to too under until up us use used using very
    want was we were what when where which while who whom why will with would you your yours
    yourself hi hello thanks thank ok okay yes sure can't don't i'm it's let's what's""".split()
)


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def terms(query: str, drop_stopwords: bool = False) -> list[str]:
    """The FTS5 terms of `query`, each already quoted (phrases and prefixes kept)."""
    query = _UNSAFE.sub(" ", query or "")
    result = []
    for match in _TOKEN.finditer(query):
        phrase, word = match.group(1), match.group(2)
        if phrase is not None:
            if _WORDY.search(phrase):
                result.append(_quote(" ".join(phrase.split())))
            continue
        prefix = word.endswith("*")
        word = word.rstrip("*").strip('"')
        if not _WORDY.search(word):
            continue
        if drop_stopwords and (word.lower() in STOPWORDS or len(word) < 2):
            continue
        result.append(_quote(word) + ("*" if prefix else ""))
        if len(result) >= MAX_TERMS:
            break
    return result[:MAX_TERMS]


def match_expression(query: str, drop_stopwords: bool = False) -> str:
    """An FTS5 MATCH string ORing the terms of `query`; "" when nothing in it is searchable."""
    return " OR ".join(terms(query, drop_stopwords))
