"""Decode once: a base64 or URL-encoded run long enough to hide a secret is decoded and scanned; when
the decoded text holds one, the whole encoded run is redacted (`echo <base64 of .env> | base64 -d`,
`password%3D…`, a base64 OpenSSH key). Binary data (images, hashes) decodes to bytes that are not
text and is left alone at once."""

from collections.abc import Callable

from .keys import _key_lines
from .shapes import regex

Span = tuple[int, int, str]
MARKER = "[REDACTED:encoded-secret]"
_BASE64_RUN = r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/_\-]{24,}={0,2}"
_RUN_STOP = frozenset(" \t\r\n\"'<>`")  # what ends a URL-encoded run
_LONGEST = 65_536  # a run longer than this is data (an image, an archive), not a hidden .env
_TEXT_BYTES = bytes(range(32, 127)) + b"\t\n\r"
# The first character of every 4-character group of base64 that encodes ASCII text: a byte under
# 0x80 has its top six bits under 32 (`A`–`Z`, `a`–`f`). Anything else is binary: rejected unread.
_TEXT_LEAD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef")


def _decoded(run: str) -> str | None:
    """The text `run` encodes in base64 (standard or URL-safe), or None when it is not text."""
    import binascii

    core = run.rstrip("=").replace("-", "+").replace("_", "/")
    if len(core) % 4 == 1 or len(core) > _LONGEST or not set(core[0::4]) <= _TEXT_LEAD:
        return None
    try:
        raw = binascii.a2b_base64(core + "=" * (-len(core) % 4))
    except (binascii.Error, ValueError):
        return None
    if len(raw) < 12 or len(raw.translate(None, _TEXT_BYTES)) > len(raw) // 20:
        return None
    return raw.decode("ascii", "replace")


def encoded_spans(doc: str, find: Callable[[str], list[Span]]) -> list[Span]:
    """Encoded runs of `doc` whose decoded text `find` finds a secret in."""
    spans: list[Span] = []
    for match in regex(_BASE64_RUN).finditer(doc):
        text = _decoded(match.group(0))
        if text is not None and find(text):
            spans.append((match.start(), _key_lines(doc, match.end(), forward=True)[0], MARKER))
    if "%" in doc:
        from urllib.parse import unquote

        seen = -1
        for escape in regex(r"%[0-9A-Fa-f]{2}").finditer(doc):
            if escape.start() < seen:
                continue
            start, end = escape.start(), escape.end()
            while start and doc[start - 1] not in _RUN_STOP:
                start -= 1
            while end < len(doc) and doc[end] not in _RUN_STOP:
                end += 1
            seen, run = end, doc[start:end]
            if run.count("%") >= 2 and len(run) <= _LONGEST:
                text = unquote(run.replace("+", " "))
                if text != run and find(text):
                    spans.append((start, end, MARKER))
    return spans
