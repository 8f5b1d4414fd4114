"""Private key material in every wrapping: PEM, OpenSSH and PGP blocks, RFC 4716 (SSH2) blocks, PuTTY
PPK files (v2, v3), JWK private members, and key bodies with no armour at all (base64 of
`openssh-key-v1`, or of a DER `PrivateKeyInfo`/`RSAPrivateKey`/`ECPrivateKey`).

Blocks are found by a linear scan over their body lines, not one regex: a block written as patch
lines (`+MIIE…`) whose END is missing made nested quantifiers backtrack for minutes. A body line may
end with a newline, an escaped one (a key inside a JSON string) or the seam between two JSON list
items.
"""

from .shapes import Span, regex

MARKER = "[REDACTED:private-key]"
_KEY_BEGIN = r"-{4,5} ?BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}"
_KEY_END = r"-{4,5} ?END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}"
_KEY_SEPARATOR = r"\\n|\r?\n|\",\s*\""
# One line of a key's body: base64, a PEM or PGP header (`Proc-Type: …`), a checksum, or nothing,
# with a patch prefix or quotes around it.
_KEY_LINE = r"[\s+\-\"',]*(?:[A-Za-z0-9+/=]{4,}|[A-Za-z][A-Za-z0-9-]*: ?[^\n]*)?[\s\"',\\]*"
KEY_WINDOW = 20_000
# Bodies without armour: `openssh-key-v1\0` in base64, and DER structures that only private keys have.
_OPENSSH_BODY = r"b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=]{20,}"
_DER_CANDIDATE = r"(?<![A-Za-z0-9+/])M(?:II|IG|Hc|C4)[A-Za-z0-9+/]{40,}={0,2}"
_PPK = r"Private-Lines: ?\d+"
# A Tink cleartext keyset's key material, and a raw key as a JSON list of bytes (Solana's `id.json`).
_TINK_VALUE = r"\"value\"\s*:\s*\"(?P<s>[A-Za-z0-9+/=_\-]{16,})\""
_BYTE = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"  # one way to read each number: no backtracking blow-up
_BYTE_LIST = r"\[\s*(?P<s>(?>(?:" + _BYTE + r"\s*,\s*){31,}" + _BYTE + r"))\s*\]"
_BYTE_WORDS = ("keypair", "secret", "private", "seed", "id.json", "signer", "wallet")
_JWK_MEMBER = r"[\"'](?:d|p|q|dp|dq|qi|k)[\"']\s*:\s*[\"'](?P<s>[A-Za-z0-9_\-]{16,}={0,2})[\"']"


def key_lines(doc: str, position: int, forward: bool) -> tuple[int, int]:
    """From `position`, the extent of the key-body lines next to it (forward or backward): (edge, how
    many of them hold 16+ base64 characters)."""
    separator, line = regex(_KEY_SEPARATOR), regex(_KEY_LINE)
    edge, solid = position, 0
    while True:
        if forward:
            gap = separator.match(doc, edge)
            if gap is None:
                return edge, solid
            following = separator.search(doc, gap.end())
            start, end = gap.end(), following.start() if following else len(doc)
        else:
            previous = [m for m in separator.finditer(doc, max(0, edge - 400), edge) if m.end() == edge]
            if not previous:
                return edge, solid
            before = [m for m in separator.finditer(doc, max(0, previous[0].start() - 400), previous[0].start())]
            start, end = (before[-1].end() if before else max(0, previous[0].start() - 400)), previous[0].start()
        piece = doc[start:end]
        if end - start > 400 or not line.fullmatch(piece) or "-----" in piece or "---- " in piece:
            return edge, solid
        solid += sum(1 for run in regex(r"[A-Za-z0-9+/=]{16,}").finditer(piece))
        edge = end if forward else start


def _blocks(doc: str) -> list[Span]:
    """Armoured blocks, first line to last; a block cut before its last line, from its first over its
    body lines; a block whose first line was cut off, from its body lines to its last. Linear."""
    spans: list[Span] = []
    ends = list(regex(_KEY_END).finditer(doc))
    covered_to = -1
    for begin in regex(_KEY_BEGIN).finditer(doc):
        if begin.start() < covered_to:
            continue
        end = next((m for m in ends if begin.end() <= m.start() <= begin.end() + KEY_WINDOW), None)
        stop = end.end() if end else key_lines(doc, begin.end(), forward=True)[0]
        spans.append((begin.start(), stop, MARKER))
        covered_to = stop
    for end in ends:
        if any(start <= end.start() < stop for start, stop, _ in spans):
            continue
        line_start = end.start()
        while line_start and doc[line_start - 1] in "+- \t\"'":  # a patch prefix or quote before END
            line_start -= 1
        start, solid = key_lines(doc, line_start, forward=False)
        if solid:
            spans.append((start, end.end(), MARKER))
    return spans


def _private_der(run: str) -> bool:
    """Does this base64 start a DER private key? SEQUENCE, then INTEGER 0 (PKCS#1, PKCS#8) or 1 (SEC 1
    EC key) — certificates and public keys start SEQUENCE, SEQUENCE."""
    import binascii

    try:
        head = binascii.a2b_base64(run[:16])
    except (binascii.Error, ValueError):
        return False
    if len(head) < 8 or head[0] != 0x30:
        return False
    at = 2 + (head[1] & 0x7F if head[1] & 0x80 else 0)
    return head[at:at + 3] in (b"\x02\x01\x00", b"\x02\x01\x01")


def _bodies(doc: str) -> list[Span]:
    """Key bodies with no armour, with the base64 lines that follow them."""
    spans: list[Span] = []
    found = list(regex(_OPENSSH_BODY).finditer(doc)) if "b3BlbnNzaC1rZXktdjE" in doc else []
    if any(start in doc for start in ("MII", "MIG", "MHc", "MC4")):
        found += [m for m in regex(_DER_CANDIDATE).finditer(doc) if _private_der(m.group(0))]
    for match in found:
        spans.append((match.start(), key_lines(doc, match.end(), forward=True)[0], MARKER))
    return spans


def _putty(doc: str) -> list[Span]:
    """A PuTTY key file's private lines and MAC (`Private-Lines: N` on)."""
    return [(m.start(), key_lines(doc, m.end(), forward=True)[0], MARKER) for m in regex(_PPK).finditer(doc)]


def _jwk(doc: str) -> list[Span]:
    """The private members of a JSON Web Key (`d`, `p`, `q`, `dp`, `dq`, `qi`; `k` of a symmetric key)."""
    return [(*m.span("s"), MARKER) for m in regex(_JWK_MEMBER).finditer(doc)]


def key_spans(doc: str, lower: str) -> list[Span]:
    """Every piece of private key material in `doc`."""
    spans: list[Span] = _blocks(doc) if "private key" in lower else []
    if "private-lines" in lower:
        spans += _putty(doc)
    if "kty" in lower:
        spans += _jwk(doc)
    if "keymaterialtype" in lower:
        spans += [(*m.span("s"), MARKER) for m in regex(_TINK_VALUE).finditer(doc)]
    if "," in doc and any(word in lower for word in _BYTE_WORDS) and any(f"[{d}" in doc or f"[ {d}" in doc for d in "0123456789"):
        spans += [(*m.span("s"), MARKER) for m in regex(_BYTE_LIST).finditer(doc)]
    return spans + _bodies(doc)
