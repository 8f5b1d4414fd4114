"""What never leaves the hook: `<private>…</private>` spans and secrets.

`strip_private` removes private spans (an unclosed tag hides everything after it: fail closed).
`redact` replaces credentials of the known families with `[REDACTED:<family>]`: AWS, GitHub,
GitLab, Anthropic, OpenAI, Slack, Stripe and Google keys and tokens, JWTs, private-key blocks,
passwords in URLs, and `NAME=value` assignments whose name says secret (env files, shell, YAML,
JSON). Formats are matched by their documented prefixes and shapes, so hashes, UUIDs, git SHAs
and base64 blobs pass untouched. Stdlib only: this runs inside every hook.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:  # `re` is imported lazily (it costs the hook milliseconds); mypy needs the name
    import re

# (family, literals that must occur for the pattern to match, pattern). Patterns are compiled
# lazily and only run when one of their literals is present: most text contains none, and a
# substring test is a hundred times cheaper than a regex scan (the hook budget is milliseconds).
_TOKEN_PATTERNS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("private-key", ("PRIVATE KEY",),
     r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    # The tail of a key block whose BEGIN line was cut off (head + tail truncation).
    ("private-key", ("PRIVATE KEY",), r"\A[A-Za-z0-9+/=\s\\]{16,}?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"),
    ("aws", ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"),
     r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"),
    ("github", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b"),
    ("github", ("github_pat_",), r"\bgithub_pat_[A-Za-z0-9_]{50,255}\b"),
    ("gitlab", ("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glft-", "glimt-", "glagent-", "gloas-"),
     r"\b(?:glpat|gldt|glrt|glptt|glsoat|glft|glimt|glagent|gloas)-[A-Za-z0-9_\-]{20,}"),
    ("gitlab", ("GR1348941",), r"\bGR1348941[A-Za-z0-9_\-]{20,}"),
    ("anthropic", ("sk-ant-",), r"\bsk-ant-(?:api|admin|oat|ort)\d{2}-[A-Za-z0-9_\-]{20,}"),
    ("openai", ("sk-",),
     r"\bsk-(?:proj-|svcacct-|admin-|None-)?(?=[A-Za-z0-9_\-]*[0-9])(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{32,}"),
    ("slack", ("xox",), r"\bxox[abposre]-(?:[0-9]+-)?[A-Za-z0-9\-]{10,}"),
    ("slack", ("xapp-",), r"\bxapp-\d-[A-Z0-9]+-\d+-[A-Za-z0-9]+"),
    ("slack", ("hooks.slack.com",), r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,}"),
    ("stripe", ("_live_", "_test_"), r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{20,}"),
    ("stripe", ("whsec_",), r"\bwhsec_[A-Za-z0-9]{24,}"),
    ("google", ("AIza",), r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"),
    ("google", ("GOCSPX-",), r"\bGOCSPX-[A-Za-z0-9_\-]{24,}"),
    ("google", ("ya29.",), r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    ("google", ("1//0",), r"(?<![0-9A-Za-z])1//0[0-9A-Za-z_\-]{40,}"),
    ("jwt", ("eyJ",), r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
)

# scheme://user:PASSWORD@host — only the password goes.
_URL_PASSWORD = r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'\"]+:)([^\s@/'\"]+)(@)"

# NAME=value, NAME: value, "name": "value", export NAME=value; the name decides (see secret_name).
_ASSIGNMENT = (
    r"""(?<![A-Za-z0-9_.\-])(["']?)([A-Za-z_][A-Za-z0-9_.\-]*)\1([ \t]*[=:][ \t]*)"""
    r"""(\\?"[^"\n]*"|\\?'[^'\n]*'|[^\s"'`,;&|)}\]\\]+)"""
)
# Upper-cased fragments one of which a secret name must contain (prefilter for _ASSIGNMENT).
_NAME_HINTS = ("SECRET", "PASSW", "PASSPHRASE", "TOKEN", "KEY", "CREDENTIAL")
_SECRET_WORDS = frozenset(
    ("SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASSPHRASE", "TOKEN", "APIKEY", "CREDENTIAL",
     "CREDENTIALS", "PRIVATEKEY", "SECRETKEY", "ACCESSKEY")
)
_KEY_QUALIFIERS = frozenset(("API", "ACCESS", "PRIVATE", "SECRET", "SIGNING", "ENCRYPTION", "MASTER", "AUTH", "CLIENT"))
_NOT_SECRET_VALUES = frozenset(("true", "false", "none", "null", "nil", "yes", "no", "changeme", "redacted"))
_PRIVATE_SPAN = r"<private\s*>.*?(?:</private\s*>|\Z)|</private\s*>"
_NAME_SPLIT = r"[_.\-]+|(?<=[a-z0-9])(?=[A-Z])"

_compiled: "dict[str, re.Pattern[str]]" = {}


def _regex(pattern: str) -> "re.Pattern[str]":
    """Compile on first use (importing `re` and compiling ~20 patterns costs milliseconds)."""
    found = _compiled.get(pattern)
    if found is None:
        import re

        found = _compiled[pattern] = re.compile(pattern, re.S | (re.I if pattern is _PRIVATE_SPAN else 0))
    return found


REDACTED = "[REDACTED:{}]"


def strip_private(text: str) -> str:
    """Remove every `<private>…</private>` span; an unclosed tag hides the rest of the text."""
    if "<" not in text or "private" not in text.lower():
        return text
    return _regex(_PRIVATE_SPAN).sub("", text)


def has_private(text: str) -> bool:
    return strip_private(text) != text


def secret_name(name: str) -> bool:
    """Does an identifier name a secret? `DB_PASSWORD`, `apiKey`, `AWS_SECRET_ACCESS_KEY` yes; `MAX_TOKENS` no."""
    upper = name.upper()
    if not any(hint in upper for hint in _NAME_HINTS):
        return False
    parts = [part.upper() for part in _regex(_NAME_SPLIT).split(name) if part]
    for index, part in enumerate(parts):
        if part in _SECRET_WORDS:
            return True
        if part == "KEY" and index > 0 and parts[index - 1] in _KEY_QUALIFIERS:
            return True
    return False


def secret_value(value: str) -> bool:
    """Is an assigned value worth hiding (not empty, a number, a flag or a `${VAR}` reference)?"""
    bare = value.strip().strip("\"'")
    if len(bare) < 6 or bare.isdigit() or bare.lower() in _NOT_SECRET_VALUES:
        return False
    if bare.startswith(("$", "%", "<", "[REDACTED", "{{")):
        return False
    return not set(bare) <= {"*", "x", "X", ".", "-", "_"}


def _assignment(match: "re.Match[str]") -> str:  # noqa: F821
    quote, name, separator, value = match.group(1, 2, 3, 4)
    if not secret_name(name) or not secret_value(value):
        return match.group(0)
    return f"{quote}{name}{quote}{separator}{REDACTED.format('secret')}"


def redact(text: str) -> str:
    """Replace every recognised secret in `text`."""
    for family, literals, pattern in _TOKEN_PATTERNS:
        if any(literal in text for literal in literals):
            text = _regex(pattern).sub(REDACTED.format(family), text)
    if "://" in text and "@" in text:
        text = _regex(_URL_PASSWORD).sub(lambda m: m.group(1) + REDACTED.format("url-password") + m.group(3), text)
    if ("=" in text or ":" in text) and any(hint in text.upper() for hint in _NAME_HINTS):
        text = _regex(_ASSIGNMENT).sub(_assignment, text)
    return text


def clean(text: str) -> str:
    """Private spans stripped, then secrets redacted: what may be stored."""
    return redact(strip_private(text))
