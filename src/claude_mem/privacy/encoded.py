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
_URL_ENCODED = r"[^\s\"'<>`]*%[0-9A-Fa-f]{2}[^\s\"'<>`]*"
_LONGEST = 65_536  # a run longer than this is data (an image, an archive), not a hidden .env
_TEXT_BYTES = bytes(range(32, 127)) + b"\t\n\r"


def _decoded(run: str) -> str | None:
    """The text `run` encodes in base64 (standard or URL-safe), or None when it is not text."""
    import binascii

    core = run.rstrip("=").replace("-", "+").replace("_", "/")
    if len(core) % 4 == 1 or len(core) > _LONGEST:
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

        for match in regex(_URL_ENCODED).finditer(doc):
            run = match.group(0)
            if run.count("%") >= 2 and len(run) <= _LONGEST:
                text = unquote(run.replace("+", " "))
                if text != run and find(text):
                    spans.append((match.start(), match.end(), MARKER))
    return spans
