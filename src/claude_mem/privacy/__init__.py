"""What never leaves the hook: `<private>…</private>` spans and secrets.

Two passes, each over a whole *document*: a string, or every string of a JSON value joined in order
(`clean_tree`), so a span split across fields, list items or patch lines is seen whole — a private
tag opened in a tool's input and closed in its output, a key block written one line per item.

- `<private>` spans nest, match in any letter case, and an unclosed tag hides the rest of the
  document (fail closed).
- Secrets are recognised by their *shape* and their *place*, not by a list of names:
  - `tokens`: a random run after a token-like prefix (`sbp_…`, `tskey-auth-…`), a long random run
    anywhere, a shorter one where a credential stands (after `token`, `PAT`, `key` …), and the
    documented formats of common services;
  - `contexts`: a value whose name says secret, in any syntax (assignment, flag, table row, repr,
    sibling `name`/`value` fields), credentials in URLs, query strings, headers, `.netrc`, `.pgpass`
    and prose;
  - `commands`: the flags and positions where programs take passwords (`mysql -pPW`, `ldapsearch
    -w PW`, `7z -pPW`, `sqlplus user/PW@db`, `echo PW | sudo -S`);
  - `statements`: the statement that holds a credential where no name stands before it (`IDENTIFIED
    BY '…'`, `login("user", "PW")`, `<property name="….password">`, the line after `Password:`);
  - `keys`: private key material in every wrapping (PEM, OpenSSH, PGP, RFC 4716, PuTTY, JWK,
    base64 DER without armour);
  - `encoded`: base64 and URL-encoded runs are decoded once and scanned.
  Which names say secret is `names`. Hex digests and git SHAs, UUIDs, named hashes, base64 data,
  base58 ids and words made of words have none of these shapes and places, so they pass untouched
  (`shapes`).

Stdlib only, and fast: this runs inside every hook. Rules run only when a literal they need occurs in
the document; regexes are compiled on first use.
"""

from .commands import command_spans
from .contexts import context_spans, named_spans, prose_spans, query_spans
from .encoded import encoded_spans
from .keys import KEY_WINDOW, key_spans
from .names import hidden, random_looking, secret_name, secret_value, weak_secret_name
from .shapes import REDACTED, Span, regex
from .statements import statement_spans
from .tokens import listed_spans, shape_spans

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["KEY_WINDOW", "REDACTED", "SEPARATOR", "Span", "clean", "clean_tree", "private_spans", "random_looking",
           "redact", "redact_tree", "secret_name", "secret_spans", "secret_value", "strip_private",
           "strip_private_tree", "weak_secret_name"]

_PRIVATE_TAG = r"(?i)<\s*(/?)\s*private\s*>"
# A marker, or what a cut left of one at the end of a text or before a space (`[REDACT`, `[RED`).
_MARKER = r"\[REDACTED:[a-z0-9\-]*\]|\[R(?:E(?:D(?:A(?:C(?:T(?:E(?:D(?::[a-z0-9\-]*)?)?)?)?)?)?)?)?(?=\Z|[\s'\"…])"

# -- spans ----------------------------------------------------------------------------------------------



def private_spans(doc: str) -> list[Span]:
    """Every `<private>` span of `doc` (nesting counted), stray closing tags, and an unclosed tail."""
    if "<" not in doc or "rivate" not in doc.lower():
        return []
    spans: list[Span] = []
    depth, start = 0, 0
    for match in regex(_PRIVATE_TAG).finditer(doc):
        if not match.group(1):
            if depth == 0:
                start = match.start()
            depth += 1
        elif depth == 0:
            spans.append((match.start(), match.end(), ""))
        else:
            depth -= 1
            if depth == 0:
                spans.append((start, match.end(), ""))
    if depth:
        spans.append((start, len(doc), ""))
    return spans



def _plain_spans(doc: str) -> list[Span]:
    lower = doc.lower()
    return (listed_spans(doc) + shape_spans(doc) + key_spans(doc, lower) + context_spans(doc, lower)
            + named_spans(doc, lower) + prose_spans(doc, lower)
            + query_spans(doc) + command_spans(doc, lower) + statement_spans(doc, lower))


def secret_spans(doc: str) -> list[Span]:
    """Where the secrets of `doc` are, each with its `[REDACTED:family]` marker.

    A span that touches a marker already in the text is dropped, so redacting twice changes nothing:
    `https://[REDACTED:github]@host` is not a URL with a password, nor is a marker a cut cut in half."""
    spans = _plain_spans(doc)
    spans += encoded_spans(doc, _plain_spans)
    if "[R" not in doc:
        return spans
    markers = [match.span() for match in regex(_MARKER).finditer(doc)]
    return [span for span in spans if not any(start < span[1] and span[0] < end for start, end in markers)]


def _merged(spans: list[Span]) -> list[Span]:
    """Overlapping spans joined (the first one's marker kept), in order."""
    result: list[Span] = []
    for start, end, marker in sorted(spans, key=lambda span: (span[0], -span[1])):
        if result and start < result[-1][1]:
            if end > result[-1][1]:
                result[-1] = (result[-1][0], end, result[-1][2])
            continue
        result.append((start, end, marker))
    return result


def _apply(doc: str, spans: list[Span]) -> str:
    if not spans:
        return doc
    parts, position = [], 0
    for start, end, marker in _merged(spans):
        parts.append(doc[position:start])
        parts.append(marker)
        position = end
    parts.append(doc[position:])
    return "".join(parts)


# -- strings --------------------------------------------------------------------------------------------

def strip_private(text: str) -> str:
    """Remove every `<private>…</private>` span; an unclosed tag hides the rest of the text."""
    return _apply(text, private_spans(text))


def redact(text: str) -> str:
    """Replace every recognised secret in `text`."""
    return _apply(text, secret_spans(text))


def clean(text: str) -> str:
    """Private spans stripped, then secrets redacted: what may be stored."""
    return redact(strip_private(text))


# -- JSON values as one document ------------------------------------------------------------------------

SEPARATOR = "\n"


def _strings(value: object) -> "Iterator[str]":
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _rebuild(value: object, leaves: "Iterator[str]", key_text: "Callable[[str], str]", hide_named: bool) -> object:
    if isinstance(value, str):
        return next(leaves)
    if isinstance(value, dict):
        result: dict[str, object] = {}
        for raw_key, item in value.items():
            key = key_text(str(raw_key))
            rebuilt = _rebuild(item, leaves, key_text, hide_named)
            if hide_named and isinstance(rebuilt, str) and hidden(key, rebuilt):
                rebuilt = REDACTED.format("secret")
            result[key] = rebuilt
        return result
    if isinstance(value, list):
        return [_rebuild(item, leaves, key_text, hide_named) for item in value]
    return value


def _edit_leaves(leaves: list[str], find: "Callable[[str], list[Span]]") -> list[str]:
    """Apply the spans found in the joined document to the strings it was joined from: each string
    loses what a span covers, and the string where a span starts carries its marker."""
    if not leaves:
        return leaves
    doc = SEPARATOR.join(leaves)
    spans = _merged(find(doc))
    if not spans:
        return leaves
    bounds, position = [], 0
    for leaf in leaves:
        bounds.append((position, position + len(leaf)))
        position += len(leaf) + len(SEPARATOR)
    owners, index = [], 0
    for start, _end, _marker in spans:  # the first string ending after the start (or starting at it)
        while index < len(leaves) - 1 and bounds[index][1] <= start and bounds[index][0] < start:
            index += 1
        owners.append(index)
    result, first = [], 0
    for index, (low, high) in enumerate(bounds):
        while first < len(spans) and spans[first][1] <= low and owners[first] < index:
            first += 1
        pieces, position = [], low
        span = first
        while span < len(spans) and (spans[span][0] < high or owners[span] == index):
            start, end, marker = spans[span]
            if end > low or owners[span] == index:
                cut_from = max(start, low)
                if cut_from > position:
                    pieces.append(doc[position:cut_from])
                if owners[span] == index:
                    pieces.append(marker)
                position = max(position, min(end, high))
            span += 1
        pieces.append(doc[position:high])
        result.append("".join(pieces))
    return result


MAX_DEPTH = 64  # deeper values are kept as their JSON text (walking them would exhaust Python's stack)


def _deep(value: object) -> bool:
    """Is `value` nested deeper than MAX_DEPTH? (An explicit stack: recursion is what must be avoided.)"""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= MAX_DEPTH:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def _bounded(value: object, depth: int = 0) -> object:
    """`value` with everything below MAX_DEPTH replaced by its JSON text, so it is still redacted as text."""
    if isinstance(value, dict | list) and depth >= MAX_DEPTH:
        import json

        try:
            return json.dumps(value, ensure_ascii=False)
        except (RecursionError, ValueError):
            return "[claude-mem: a value nested too deep to keep]"
    if isinstance(value, dict):
        return {key: _bounded(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_bounded(item, depth + 1) for item in value]
    return value


def _plain_key(key: str) -> bool:
    """A short identifier (`tool_name`, `filePath`): no secret and no private span can hide in it."""
    return len(key) < 20 and key.replace("_", "").replace("-", "").isalnum()


def _tree(value: object, find: "Callable[[str], list[Span]]", hide_named: bool) -> object:
    """`value` with the spans `find` sees in its string values (joined in order) removed; each key
    is cleaned on its own (a span straddling fields must not erase the names between)."""
    if _deep(value):
        value = _bounded(value)
    leaves = _edit_leaves(list(_strings(value)), find)
    return _rebuild(value, iter(leaves), lambda key: key if _plain_key(key) else _apply(key, find(key)), hide_named)


def strip_private_tree(value: object) -> object:
    """A JSON value without the `<private>` spans of its strings, read as one document (keys on their own)."""
    return _tree(value, private_spans, hide_named=False)


def redact_tree(value: object) -> object:
    """A JSON value with the secrets of its strings redacted, read as one document; a value under a
    secret-named key is hidden whole."""
    return _tree(value, secret_spans, hide_named=True)


def clean_tree(value: object) -> object:
    """`clean` for a JSON value: private spans, then secrets."""
    return redact_tree(strip_private_tree(value))
