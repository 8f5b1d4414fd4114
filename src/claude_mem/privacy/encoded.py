"""Decode once: a base64 or URL-encoded run long enough to hide a secret is decoded and scanned; when
the decoded text holds one, the whole encoded run is redacted (`echo <base64 of .env> | base64 -d`,
`password%3D…`, a base64 OpenSSH key). Binary data (images, hashes) decodes to bytes that are not
text and is left alone at once."""

from .keys import key_lines
from .shapes import Span, regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MARKER = "[REDACTED:encoded-secret]"
# A base64 run (a patch line's leading `+` is not part of it).
_BASE64_RUN = r"(?:(?<![A-Za-z0-9+/=_\-])|(?<=\n\+))[A-Za-z0-9/_\-][A-Za-z0-9+/_\-]{11,}={0,2}"
_RUN_STOP = frozenset(" \t\r\n\"'<>`")  # what ends a URL-encoded run
_LONGEST = 65_536  # a run longer than this is data (an image, an archive), not a hidden .env
_TEXT_BYTES = bytes(range(32, 127)) + b"\t\n\r"
# The first character of every 4-character group of base64 that encodes ASCII text: a byte under
# 0x80 has its top six bits under 32 (`A`–`Z`, `a`–`f`). Anything else is binary: rejected unread.
_TEXT_LEAD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef")
_HEX_DIGITS = frozenset(b"0123456789ABCDEFabcdef")


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
    if len(raw) < 8 or len(raw.translate(None, _TEXT_BYTES)) > len(raw) // 20:
        return None
    return raw.decode("ascii", "replace")


def unquote(text: str) -> str:
    """`urllib.parse.unquote(text)` without importing `urllib` (and `re` with it, milliseconds a hook
    would pay): `%XX` escapes decoded as UTF-8 (errors replaced) in each run of ASCII characters,
    other characters kept as they are."""
    if "%" not in text:
        return text
    parts: list[str] = []
    position = 0
    for run in regex(r"[\x00-\x7f]+").finditer(text):
        parts.append(text[position:run.start()])
        pieces = run.group(0).encode("ascii").split(b"%")
        decoded = bytearray(pieces[0])
        for piece in pieces[1:]:
            if len(piece) >= 2 and piece[0] in _HEX_DIGITS and piece[1] in _HEX_DIGITS:
                decoded += bytes.fromhex(piece[:2].decode("ascii"))
                decoded += piece[2:]
            else:
                decoded += b"%"
                decoded += piece
        parts.append(decoded.decode("utf-8", "replace"))
        position = run.end()
    parts.append(text[position:])
    return "".join(parts)


def _excerpt(doc: str, regions: list[tuple[int, int, str]]) -> tuple[str, list[tuple[int, int, int, int]]]:
    """The lines that hold decoded runs, each with the line before it, the runs replaced by what they
    decode to (`334 UGFzc3dvcmQ6` / `RFU5…` reads `334 Password:` / the password); and where each run's
    text lies in it: (excerpt start, excerpt end, document start, document end)."""
    lines: list[tuple[int, int]] = []
    for start, _end, _text in regions:
        line_start = doc.rfind("\n", 0, start) + 1
        first = doc.rfind("\n", 0, max(0, line_start - 1)) + 1 if line_start else 0
        line_end = doc.find("\n", start)
        last = len(doc) if line_end == -1 else line_end
        if lines and first <= lines[-1][1]:
            lines[-1] = (lines[-1][0], max(lines[-1][1], last))
        else:
            lines.append((first, last))
    parts: list[str] = []
    where: list[tuple[int, int, int, int]] = []
    length, index = 0, 0
    for first, last in lines:
        position = first
        while index < len(regions) and regions[index][0] < last:
            start, end, text = regions[index]
            parts.append(doc[position:start])
            length += start - position
            parts.append(text)
            where.append((length, length + len(text), start, end))
            length += len(text)
            position, index = end, index + 1
        parts.append(doc[position:last] + "\n\n")
        length += last - position + 2
    return "".join(parts), where


def encoded_spans(doc: str, find: "Callable[[str], list[Span]]") -> list[Span]:
    """Encoded runs of `doc` whose decoded text (read in its line, beside the line before) `find`
    finds a secret in."""
    spans: list[Span] = []
    regions = []
    for match in regex(_BASE64_RUN).finditer(doc):
        if not set(match.group(0)[0::4]) <= _TEXT_LEAD:  # most runs (identifiers, binary data) end here
            continue
        text = _decoded(match.group(0))
        if text is not None:
            regions.append((match.start(), match.end(), text))
    if regions:
        excerpt, where = _excerpt(doc, regions)
        for low, high, _marker in find(excerpt):
            for start, end, original, original_end in where:
                if low < end and start < high:
                    spans.append((original, key_lines(doc, original_end, forward=True)[0], MARKER))
    if "%" in doc:
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
