"""What a secret looks like, and what only looks like one.

A credential is a run of characters drawn at random: mixed letters and digits with no words in
it, so its characters change class (lower, upper, digit) at almost every step. Its look-alikes have
a structure of their own: hex digests and git SHAs (one alphabet of 16), UUIDs, base64 data (with
`+`, `/` and `=` padding), hashes named by their algorithm (`sha512-…`, `sha256:…`, `h1:…`),
base58 addresses, and identifiers made of words (`handleUserLogin2`, `MAX_RETRY_COUNT`).

Thresholds were chosen on the corpora of `bench/privacy` (secrets and look-alikes measured apart).
"""

from claude_mem.fastpath import patterns

TYPE_CHECKING = False
if TYPE_CHECKING:  # `re` is imported lazily (it costs the hook milliseconds); mypy needs the name
    import re

Span = tuple[int, int, str]  # start, end, what replaces it
REDACTED = "[REDACTED:{}]"
# The groups a rule's pattern names its value by: glued to a flag, single-, double- or plain-quoted, bare.
VALUE_GROUPS = ("g", "sq", "dq", "q", "s")

# Compiled on first use, from the machine's cache of compiled patterns when it has them (importing `re`
# and compiling ~150 patterns would cost every hook milliseconds).
regex = patterns.regex


_HEX = frozenset("0123456789abcdefABCDEF")
_BASE58 = frozenset("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz")
UUID = r"\A[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z"
DOTTED = r"\A[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+\Z"  # settings.DB_PASSWORD, process.env.TOKEN
# Words that name a hash right before its value: `sha512-…` (npm integrity), `sha256:…` (image digests),
# `h1:…` (go.sum), `md5=…`.
HASH_PREFIX = r"(?i)(?:sha-?(?:1|224|256|384|512)|md5|blake2[bs]?|blake3|h1|crc32|xxh(?:32|64|3)|murmur3?|keccak256)[-:=_/]\Z"


def value_group(match: "re.Match[str]") -> str | None:
    """The name of the value group `match` matched (a pattern's alternatives set one at most)."""
    return next((group for group in VALUE_GROUPS
                 if group in match.re.groupindex and match.group(group) is not None), None)


def value_span(match: "re.Match[str]") -> tuple[int, int] | None:
    """Where the value `match` found stands, or None when it found none."""
    group = value_group(match)
    return None if group is None else match.span(group)


def word_start(doc: str, index: int) -> bool:
    """Does a word begin at `index` (no letter, digit or `_` before it)?"""
    return index == 0 or not (doc[index - 1].isalnum() or doc[index - 1] == "_")


def line_before(doc: str, index: int, limit: int = 400) -> str:
    """The text of `index`'s line before it, at most `limit` characters (so a document without
    newlines costs no more than a short one: searching back to its start for every match was quadratic)."""
    start = doc.rfind("\n", max(0, index - limit), index)
    return doc[start + 1 if start != -1 else max(0, index - limit):index]


def is_hex(text: str) -> bool:
    return bool(text) and set(text) <= _HEX


def is_uuid(text: str) -> bool:
    return len(text) == 36 and regex(UUID).match(text) is not None


def _kind(char: str) -> int:
    if char.islower():
        return 0
    if char.isupper():
        return 1
    if char.isdigit():
        return 2
    return 3


def entropy(text: str) -> float:
    """Shannon entropy per character."""
    import math

    counts: dict[str, int] = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _switches(text: str) -> float:
    """How often the character class changes from one character to the next (0–1). About 0.6 in a
    random alphanumeric string, under 0.2 in identifiers made of words."""
    kinds = [_kind(char) for char in text if char.isalnum()]
    if len(kinds) < 2:
        return 0.0
    return sum(1 for a, b in zip(kinds, kinds[1:]) if a != b) / (len(kinds) - 1)


def wordy(text: str) -> bool:
    """Made of words: camelCase, snake_case, kebab-case, or prose glued together (long letter runs)."""
    runs = [run for run in regex(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+").findall(text) if run]
    if not runs:
        return False
    letters = [run for run in runs if run.isalpha()]
    if not letters or sum(len(run) for run in letters) / len(letters) < 3.5:
        return False
    # Words have vowels and short consonant clusters; random letters (base32, base58) have neither.
    joined = "".join(letters).lower()
    if sum(joined.count(vowel) for vowel in "aeiou") < 0.25 * len(joined):
        return False
    return max((len(cluster) for run in letters for cluster in regex(r"[^aeiouy]+").findall(run.lower())), default=0) <= 4


def random_run(text: str, min_length: int = 20, hex_ok: bool = False, hex_min: int = 32) -> bool:
    """Does `text` (one run, no spaces) look drawn at random, like a key or token? Hex counts only when
    `hex_ok` (where a credential stands) and has `hex_min` digits; a digest with a label never does."""
    core = text.strip("-_.~=+/")
    if len(core) < min_length or any(c.isspace() for c in core):
        return False
    if is_uuid(core):
        return False
    body = core  # `Linux-node-<sha256>`, `v1-deps-<sha1>`: a digest with a label
    while prefix_length(body):
        body = body[prefix_length(body):]
    if body != core and is_hex(body.replace("-", "")):
        return False
    if is_hex(core.replace("-", "")):
        return hex_ok and len(core) >= hex_min and _switches(core) >= 0.3
    alnum = [c for c in core if c.isalnum()]
    if len(alnum) < len(core) * 0.8:
        return False
    digits = sum(1 for c in alnum if c.isdigit())
    classes = sum((any(c.islower() for c in alnum), any(c.isupper() for c in alnum), digits > 0))
    if classes < 2 or digits == len(alnum):
        return False
    if wordy(core):
        return False
    return _switches(core) >= 0.3 and entropy(core) >= (3.2 if len(core) < 24 else 3.6)


def prefix_length(run: str) -> int:
    """The length of a token-like prefix: up to three short word-like segments, each followed by `_`
    or `-` (`sbp_`, `shippo_live_`, `tskey-auth-`, `lsv2_pt_`, `fm2_`); 0 when none."""
    length, segments = 0, 0
    for piece in regex(r"[A-Za-z][A-Za-z0-9]{0,11}[_\-]").finditer(run):
        if piece.start() != length or segments == 3:
            break
        word = piece.group(0)[:-1]
        if not (word.isalpha() or (len(word) <= 5 and word[0].isalpha())):
            break
        length, segments = piece.end(), segments + 1
    return length


def strong_run(text: str) -> bool:
    """Random enough to be a secret wherever it stands: 30+ characters of three classes that no
    public encoding explains (base58 addresses and content ids lack `0`, `O`, `I` and `l`)."""
    if len(text) < 30 or not random_run(text, 30):
        return False
    if not (any(c.islower() for c in text) and any(c.isupper() for c in text) and any(c.isdigit() for c in text)):
        return False
    return len(text) >= 48 or not set(text) <= _BASE58


def password_like(value: str) -> bool:
    """A value a person chose as a password: 8+ characters, no spaces, not a plain word —
    digits or symbols mixed with letters (`Summer2024!x`, `correct-horse-battery-9`)."""
    if len(value) < 8 or any(c.isspace() for c in value) or value.isalpha() or value.isdigit():
        return False
    kinds = {_kind(char) for char in value if char not in "_-."}  # separators of identifiers are no symbols
    return len(kinds) >= 2 and any(c.isalpha() for c in value) and not value.startswith(("/", "http", "$", "<", "{"))


def hash_before(doc: str, start: int) -> bool:
    """Does a hash algorithm's name stand right before `start` (`sha512-`, `sha256:`, `h1:`)?"""
    return regex(HASH_PREFIX).search(doc, max(0, start - 12), start) is not None
