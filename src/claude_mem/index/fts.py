"""User text → a safe FTS5 MATCH expression. Stdlib only (used by the user-prompt hook).

Multi-word input is an OR of its terms (BM25 ranks documents matching more and rarer terms
first), searched first as an AND of them (`all_terms_expression`: when rows holding every word fill
the page, rows holding only some are never ranked); `"quoted words"` stay a phrase; a trailing `*`
makes a prefix. Every term is emitted as a double-quoted FTS5 string, so no input can reach the
query syntax: no string raises. Words match a row's own text and, weighted low, its neighbours' (the
`context` column); a quoted phrase matches the row's own text only. Its patterns come from
`fastpath.patterns`: the user-prompt hook that runs them does not import `re`.
"""

from claude_mem.fastpath.patterns import regex

MAX_TERMS = 32
_TOKEN = regex(r'"([^"]*)"?|(\S+)')
_WORDY = regex(r"\w")
_UNSAFE = regex(r"[\x00-\x1f\x7f\ud800-\udfff]")
# Sentence punctuation around a word ("choose," "it?"), not part of it.
_EDGE_PUNCTUATION = ".,;:!?()[]{}<>'"

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


# Words a question is made of rather than what it is about (LoCoMo dev: dropping them with the
# stop-words is worth +0.05 R@5, because rare question words outrank the content words).
QUESTION_WORDS = frozenset(
    """kind likely mention mentioned mentions say said says tell told ever usually probably might
    think thinks thought much many often maybe perhaps happen happened describe described whats
    would could""".split()
)


# A quoted phrase asks for these words in this memory: it is matched in a row's own text, never in the
# `context` column every index has (m017: the neighbours' text, which plain words also match, weighted low).
OWN_TEXT = "- {context} : "


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def terms(query: str, drop_stopwords: bool = False) -> list[str]:
    """The distinct FTS5 terms of `query`, each already quoted (phrases and prefixes kept)."""
    query = _UNSAFE.sub(" ", query or "")
    result: list[str] = []
    for match in _TOKEN.finditer(query):
        phrase, word = match.group(1), match.group(2)
        if phrase is not None:
            if _WORDY.search(phrase):
                result.append(OWN_TEXT + _quote(" ".join(phrase.split())))
            continue
        word = word.strip(_EDGE_PUNCTUATION)
        prefix = word.endswith("*")
        word = word.rstrip("*").strip('"').strip(_EDGE_PUNCTUATION)
        if not _WORDY.search(word):
            continue
        if drop_stopwords and (word.lower() in STOPWORDS or word.lower() in QUESTION_WORDS or len(word) < 2):
            continue
        term = _quote(word) + ("*" if prefix else "")
        if term.lower() not in (seen.lower() for seen in result):
            result.append(term)
        if len(result) >= MAX_TERMS:
            break
    return result[:MAX_TERMS]


def match_expression(query: str, drop_stopwords: bool = False) -> str:
    """An FTS5 MATCH string ORing the terms of `query`; "" when nothing in it is searchable."""
    return " OR ".join(terms(query, drop_stopwords))


def keyword_terms(query: str) -> list[str]:
    """The terms a search for `query` matches (DESIGN §6): its content words — stop-words and question
    words dropped — or, when it has nothing else (`"who is it"`), all of its terms."""
    return terms(query, drop_stopwords=True) or terms(query)


def keyword_expression(query: str) -> str:
    """What a search for `query` matches: any of its `keyword_terms`, "" when it has none."""
    return " OR ".join(keyword_terms(query))


def all_terms_expression(query: str) -> str:
    """Every one of `query`'s `keyword_terms` (an AND); "" unless it has more than one. Its matches
    are a subset of `keyword_expression`'s, scored alike by BM25: the rows a search ranks first."""
    found = keyword_terms(query)
    return " AND ".join(found) if len(found) > 1 else ""
