"""Credentials by the statement that holds them, where no name stands right before the value:

- SQL and server commands that set a password (`IDENTIFIED BY '…'`, `SET PASSWORD … = '…'`,
  `WITH PASSWORD '…'`, `CONFIG SET requirepass …`);
- calls whose name says they take a credential (`login("user", "PW")`, `NetworkCredential(…)`,
  `ConvertTo-SecureString "PW"`, `Wallet.fromPhrase("…")`), and a string argument there that looks
  like a password or key;
- elements named by an attribute (`<property name="….password">PW</property>`, `<entry key=…>`);
- the line a command prints after a line that names a secret (`terraform output -raw db_password`,
  `Please use the following password:`, `334 Password:` of an SMTP login);
- URL path segments after a segment that names a credential (`/key/…`, `/token/…`, `/t/…`, `/hooks/…`);
- key files' secret lines (minisign and signify secret keys, `SSLKEYLOGFILE` lines, .NET `RSAKeyValue`).
"""

from .names import hidden, placeholder, secret_name
from .shapes import Span, is_uuid, password_like, random_run, regex, value_span

MARKER = "[REDACTED:secret]"
_QUOTED = r"""(?:'(?P<sq>[^'\n]+)'|"(?P<dq>[^"\n]+)"|(?P<s>[^\s;'",)]+))"""
_ARG = r"""(?:'(?P<sq>[^'\n]+)'|"(?P<dq>[^"\n]+)"|(?P<s>[^\s|>'"]+))"""
# (anchor, pattern matched where the anchor stands in the lower-cased text): SQL and server commands.
_SQL = (
    ("identified", r"identified\s+(?:with\s+\w+\s+)?by\s+(?:password\s+)?" + _QUOTED),
    ("password", r"password\s+for\s+\S+\s*=\s*(?:password\s*\(\s*)?" + _QUOTED),
    ("password", r"password\s*=\s*(?:password\s*\(\s*)?(?=['\"])" + _QUOTED),
    ("with", r"with\s+(?:encrypted\s+|unencrypted\s+)?password\s+" + _QUOTED),
    ("requirepass", r"requirepass\s+" + _QUOTED),
    ("masterauth", r"masterauth\s+" + _QUOTED),
    ("user", r"user\s+\S+\s+using\s+" + _QUOTED),  # db2 connect to DB user U using PW
)
# Words in the name of a call (or command) that takes a credential.
_CALL_WORDS = ("login", "logon", "auth", "credential", "passw", "secret", "token", "apikey", "api_key", "securestring",
               "signin", "sign_in", "connect", "phrase", "mnemonic", "client", "init", "configure", "adapter", "jwt",
               "hmac", "fernet", "encrypt", "decrypt", "cipher")
_STRONG_CALL = ("login", "logon", "credential", "passw", "securestring", "signin", "sign_in", "phrase", "mnemonic",
                "connect", "jwt", "hmac", "fernet", "encrypt", "decrypt", "cipher")
_LITERAL = r"""(?<![\w$])(?:'(?P<sq>[^'\n]{6,})'|"(?P<dq>[^"\n]{6,})")"""
_ELEMENT = r"""<(?P<tag>[\w:\-]+)\s+(?:name|key|id)\s*=\s*["'](?P<name>[^"'\n]+)["'][^>\n]*>(?P<s>[^<\n]+)</(?P=tag)>"""
# A line alone after a line that names a secret (a printed password, an SMTP `334 Password:` prompt).
_NAMING_LINE = (r"(?i)(?:password|passwd|passphrase|secret|token|api[ _-]?key|credential|master\.key|private[ _-]?key"
                r"|initial-password|recovery key)")
_ALONE = r"(?m)^[ \t>+]*(?P<s>[^\s]{8,200})[ \t]*$"
_CODE_LINE = r"\A(?:if|elif|else|for|while|def|class|try|except|with|case|switch|catch|finally|async|return)\b|\w\([^)]*\):\Z"
_PATH_WORDS = ("key", "keys", "token", "tokens", "t", "secret", "secrets", "hook", "hooks", "webhook", "webhooks", "apikey",
               "api_key", "auth", "bot")
_PATH_SEGMENT = r"(?i)/(?:keys?|tokens?|t|secrets?|hooks?|webhooks?|apikey|api_key|auth|bot)/(?P<s>[A-Za-z0-9_\-.:]{16,})"
_KEY_FILE_LINES = (
    # a TOTP setup key in groups of four base32 characters
    ("key", r"key\b[^\n]{0,40}?(?P<s>(?:[a-z2-7]{4} ){5,}[a-z2-7]{2,4})\b"),
    ("secret", r"secret\b[^\n]{0,40}?(?P<s>(?:[a-z2-7]{4} ){5,}[a-z2-7]{2,4})\b"),
    # minisign / signify: the line after `untrusted comment: … secret key`
    ("untrusted comment:", r"untrusted comment:[^\n]*secret key[^\n]*\n[ \t+]*(?P<s>[a-z0-9+/=]{20,})"),
    # NSS key log (SSLKEYLOGFILE): LABEL <client random> <secret>
    ("client_", r"client_(?:random|early_traffic_secret|handshake_traffic_secret|traffic_secret_0)\s+[0-9a-f]+\s+"
                r"(?P<s>[0-9a-f]{32,})"),
    ("server_", r"server_(?:handshake_traffic_secret|traffic_secret_0)\s+[0-9a-f]+\s+(?P<s>[0-9a-f]{32,})"),
    ("exporter_secret", r"exporter_secret\s+[0-9a-f]+\s+(?P<s>[0-9a-f]{32,})"),
    # .NET RSAKeyValue private members
    ("<", r"<(?P<tag>d|p|q|dp|dq|inverseq)>(?P<s>[a-z0-9+/=]{16,})</(?P=tag)>"),
    # echo 'PW' > ~/.vault_pass.txt: a literal written into a file named for a secret
    ("echo ", r"echo\s+(?:-[a-z]+\s+)?" + _ARG + r"\s*>>?\s*\S*(?:pass|secret|token|key|cred)"),
    ("printf", r"printf\s+" + _ARG + r"\s*>>?\s*\S*(?:pass|secret|token|key|cred)"),
    # `aws configure set aws_secret_access_key VALUE`, `npm config set //host/:_authToken VALUE`
    ("set ", r"set\s+[\"']?(?:[\w./:\-]*[/:])?(?P<name>[a-z_][\w.\-]*)[\"']?\s+" + _ARG),
)


def _credential(value: str) -> bool:
    return len(value) >= 6 and not placeholder(value) and not value.isdigit() and not value.startswith(("$", ":", "@"))


def _anchored(doc: str, lower: str, rules: "tuple[tuple[str, str], ...]") -> "Iterator[re.Match[str]]":
    """Matches of each rule's pattern where its anchor word starts (a word start, in the lower-cased
    text): a literal found by `str.find` is far faster than a case-insensitive regex over the document."""
    text = lower if len(lower) == len(doc) else doc.lower()
    for anchor, pattern in rules:
        index = text.find(anchor)
        while index != -1:
            if not index or not (text[index - 1].isalnum() or text[index - 1] == "_"):
                found = regex(pattern).match(text, index)
                if found is not None:
                    yield found
            index = text.find(anchor, index + len(anchor))


def sql_spans(doc: str, lower: str) -> list[Span]:
    """Passwords set by SQL and server commands."""
    spans = []
    for match in _anchored(doc, lower, _SQL):
        span = value_span(match)
        value = doc[span[0]:span[1]] if span is not None else ""
        if span is not None and _credential(value) and (match.group("s") is None or _chosen(value) or random_run(value, 12)):
            spans.append((*span, MARKER))  # unquoted, only what looks like a password: not `identified by full_name`
    return spans


def _calls(doc: str, lower: str) -> "Iterator[tuple[str, int, int]]":
    """Each call (or command) whose name holds a credential word: (its name, where its arguments
    start, where they end — the end of the line, 400 characters at most)."""
    seen: set[int] = set()
    for word in _CALL_WORDS:
        index = lower.find(word)
        while index != -1:
            start, end = index, index + len(word)
            while start and (doc[start - 1].isalnum() or doc[start - 1] in "_.$"):
                start -= 1
            while end < len(doc) and (doc[end].isalnum() or doc[end] in "_.$-"):
                end += 1
            index = lower.find(word, end)
            if start in seen or end >= len(doc) or doc[end] not in "( \t":
                continue
            seen.add(start)
            stop = doc.find("\n", end, end + 400)
            yield lower[start:end], end, stop if stop != -1 else min(len(doc), end + 400)


def _chosen(value: str) -> bool:
    """A value a person chose as a password, not a host, a DN or an address."""
    return password_like(value) and not regex(r"[\w.\-]+(?::\d+)?|\w+=[^,]+,\w+=.*").fullmatch(value)


def call_spans(doc: str, lower: str) -> list[Span]:
    """String arguments of credential-taking calls that look like a password or a key: random (hex
    too), or, for calls that take a password or phrase, any value a person would choose."""
    spans = []
    for fn, start, end in _calls(doc, lower):
        strong = any(word in fn for word in _STRONG_CALL)
        for literal in regex(_LITERAL).finditer(doc, start, end):
            span = value_span(literal)
            value = literal.group("sq") or literal.group("dq") or ""
            if span is None or placeholder(value) or "@" in value or "://" in value or value.startswith(("/", "./", "~")):
                continue
            phrase = ("phrase" in fn or "mnemonic" in fn) and len(value.split()) >= 12
            pieces = regex(r"[/:]").split(value)  # `2/1234/5678:<hex>`: a random piece in a structured token
            if any(random_run(piece, 20, hex_ok=True, hex_min=24) for piece in pieces) or is_uuid(value) and "auth" in fn \
                    or phrase \
                    or strong and (_chosen(value) or random_run(value, 12, hex_ok=True, hex_min=16)):
                spans.append((*span, MARKER))
    return spans


def element_spans(doc: str) -> list[Span]:
    """`<property name="hibernate.connection.password">PW</property>`, `<entry key="jdbc.password">`."""
    if "</" not in doc:
        return []
    return [(*m.span("s"), MARKER) for m in regex(_ELEMENT).finditer(doc) if hidden(m.group("name"), m.group("s"))]


def output_spans(doc: str) -> list[Span]:
    """A value alone on its line right after a line that names a secret: what `terraform output -raw
    db_password`, `gcloud secrets versions access`, `argocd admin initial-password` or a setup banner
    prints. Only values that look chosen or random; a path, URL, word or hash with its name stays."""
    spans = []
    for match in regex(_ALONE).finditer(doc):
        value = match.group("s")
        if "://" in value or value.startswith(("/", "[REDACTED", "$", "#", "-", "*", "=", "<")) or value.endswith(":"):
            continue
        line_start = match.start()
        previous = doc.rfind("\n", 0, max(0, line_start - 1))
        while previous != -1 and not doc[previous + 1:line_start].strip(" \t\n+"):  # skip blank (patch) lines
            line_start = previous + 1
            previous = doc.rfind("\n", 0, max(0, previous - 1)) if previous else -1
        before = doc[previous + 1 if previous != -1 else 0:max(0, line_start - 1)].strip(" \t+")
        if not before or not regex(_NAMING_LINE).search(regex(r"\[REDACTED:[a-z0-9\-]*\]").sub("", before)) \
                or secret_name(value) or value.startswith(("./", "../", "~/")):
            continue
        # After a command or a label (`$ terraform output -raw db_password`, `Password for elastic:`) the
        # line is the secret whatever its characters; after prose, only a value that looks like one.
        if sum(c.isalnum() for c in value) < len(value) / 2:
            continue
        command = before.startswith(("$ ", "> ", "PS "))
        label = before.endswith(":") and not regex(_CODE_LINE).search(before) and not regex(r"\w\(|[\"'(\[{|]").search(value)
        if command or label or not regex(r"[()\[\]{}<>;,@/]|\A[\w.\-]+[=:]").search(value) and (
                random_run(value, 12, hex_ok=True, hex_min=16) or is_uuid(value) or _chosen(value)):
            spans.append((*match.span("s"), MARKER))
    return spans


def path_spans(doc: str, lower: str) -> list[Span]:
    """A URL path segment after one that names a credential: `…/with/key/<key>`, `conda …/t/<token>/`,
    `…/hooks/<id>`."""
    if not any(f"/{word}/" in lower for word in _PATH_WORDS):
        return []
    spans = []
    for match in regex(_PATH_SEGMENT).finditer(doc):
        value = match.group("s").rstrip(".:")
        if random_run(value, 16, hex_ok=True, hex_min=16):
            spans.append((match.start("s"), match.start("s") + len(value), MARKER))
    return spans


def key_file_spans(doc: str, lower: str) -> list[Span]:
    """Secret lines of key files, and literals written into or set as secrets by commands."""
    spans = []
    for match in _anchored(doc, lower, _KEY_FILE_LINES):
        span = value_span(match)
        if span is None:
            continue
        value = doc[span[0]:span[1]]
        if "name" in match.re.groupindex and not hidden(doc[match.start("name"):match.end("name")], value):
            continue
        if _credential(value) or "tag" in match.re.groupindex:
            spans.append((*span, MARKER))
    return spans


def statement_spans(doc: str, lower: str) -> list[Span]:
    return (sql_spans(doc, lower) + call_spans(doc, lower) + element_spans(doc) + output_spans(doc) + path_spans(doc, lower)
            + key_file_spans(doc, lower))


TYPE_CHECKING = False
if TYPE_CHECKING:  # `re` is imported lazily (see shapes.regex)
    import re
    from collections.abc import Iterator
