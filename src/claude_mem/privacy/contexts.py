"""Credentials by their place: a value is secret when what holds it says so.

- *named places*: a name that says secret (`names.secret_name`) and its value, in one assignment
  (`=`, `:`, `=>`, `:=`, HCL `default =`, INI, TOML, XML), as a flag (`--token X`), in a table row
  (`password    PW` of `vault kv get`), in a repr (`b'…'`, `:sym => "…"`), or in sibling fields of
  one object (`name`/`value`, `Name`/`Value`, `key`/`value`, `variable "x" { default = … }`);
- *contexts*: URLs and connection strings with credentials, URL query values that look random or are
  named so, `Authorization` and `Cookie` headers, `.netrc`, `.pgpass`, and prose (`the password is …`).
"""

from .names import LOWER_HINTS, hidden, public_name, random_looking, secret_name, secret_value, weak_secret_name
from .shapes import DOTTED, REDACTED, Span, line_before, password_like, random_run, regex, value_span, word_start, wordy

TYPE_CHECKING = False
if TYPE_CHECKING:  # `re` is imported lazily (see shapes.regex)
    pass


# Values are bounded (1,000 characters): an unbounded run after every repeated name made redaction quadratic.
_VALUE = r"""(?:"(?P<dq>[^"\n]{0,1000})"|'(?P<sq>[^'\n]{0,1000})'|(?P<s>[^\s"'`,;&|)}\]\\<>]{1,1000}))"""
_CONTEXT_RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    # scheme://[user]:PASSWORD@host (an empty user too: `redis://:pw@host`), or scheme://TOKEN@host
    ("url", ("://",), r"://(?P<user>[^\s:/@'\"<>]*(?:@[^\s:/@'\"<>]+)?)(?::(?P<s>[^\s@/'\"<>]+))?@"),
    ("authorization", ("authorization",),
     r"(?i)authorization[\"']?\s*[:=]\s*[\"']?"
     r"(?:[a-z][a-z0-9_-]{1,24}\s+)?"  # a scheme: basic, bearer, ssws, digest, aws4-hmac-sha256, …
     r"(?P<s>[^\s\"',;]{6,1000}(?:[^\n\"']{0,500})?)"),
    ("authorization", ("bearer",), r"(?i)bearer\s+(?P<s>(?=[a-z0-9_\-.~+/]*[0-9])[a-z0-9_\-.~+/]{16,}=*)"),
    ("cookie", ("cookie",), r"(?i)cookie[ \t]*:[ \t]*(?P<s>[^\r\n\"']{1,2000})"),
    ("netrc", ("password",), r"(?i)login\s+\S+\s+(?:[+\-]\s*)?password\s+(?P<s>\S+)"),
    # .netrc's `password` on a line of its own (other tokens, or patch lines, between it and `login`)
    ("netrc-line", ("machine",), r"(?i)password[ \t]+(?P<s>\S{1,1000})"),
    ("docker-auth", ('"auth"',), r"\"auth\"\s*:\s*\"(?P<s>[A-Za-z0-9+/=]{8,})\""),
    ("npm-auth", ("_auth",), r"(?i)_auth\s*=\s*(?P<s>\S{8,})"),
    ("password-flag", ("login",), r"login\b[^\n|;&]*?\s-p\s+" + _VALUE),
    # .pgpass: host:port:database:user:password, at the start of a line (a patch's `+` allowed)
    ("pgpass", (":",), r"(?m)^[+ \t]*[\w.\-*]+:(?:\d{1,5}|\*):[\w.\-*]+:[\w.\-*@]+:(?P<s>\S+)$"),
    ("vault", ("vault", "token "), r"(?<![\w.])s\.[A-Za-z0-9]{24}\b"),
    ("twilio", ("client(",), r"Client\(\s*['\"](?:AC|SK)[0-9a-fA-F]{32}['\"]\s*,\s*['\"](?P<s>[A-Za-z0-9]{32})['\"]"),
    # define('DB_PASSWORD', 'x'), setenv("API_KEY", "x"), <password>x</password>: the name decides
    ("secret", ("('", '("', "( '", '( "', ", '", ', "'),
     r"[(,]\s*['\"](?P<name>[A-Za-z_][\w.\-]*)['\"]\s*,\s*['\"](?P<s>[^'\"\n]{1,1000})['\"]\s*\)"),
    ("secret", ("</",), r"<(?P<name>[A-Za-z_][\w.\-]*)>(?P<s>[^<\n]{6,})</(?P=name)>"),
    # requests' auth=("user", "pw"), HTTPBasicAuth("user", "pw")
    ("basic-auth", ("auth",), r"(?i)auth\w*\s*(?:=\s*|\()\(?\s*[\"'][^\"'\n]+[\"']\s*,\s*[\"'](?P<s>[^\"'\n]{6,})[\"']"),
)

_WORD_START = frozenset(("authorization", "cookie", "netrc", "npm-auth", "password-flag"))
# After a secret-looking name: `= value`, `: value`, `=> value`, `:= value` (a call is code, not a value).
_ASSIGNED = (
    r"""[ \t]*(?:=>|:=|[=:])[ \t]*(?:\n[+ \t]*string\(\d+\)[ \t]*|[|>][-+]?[ \t]*\n[+ \t]*)?"""
    r"""(?:[bBuUrR]{1,2}(?=["']))?(?:\\?"(?P<dq>[^"\n]{0,1000})\\?"|\\?'(?P<sq>[^'\n]{0,1000})\\?'"""
    r"""|(?P<s>[^\s"'`,;&|()}\]\\<>]{1,1000})(?P<call>\()?)"""
)
# After a secret-looking command-line flag: `--password=X`, `--token X`, `-storepass X`.
_FLAG_VALUE = r"(?:=|[ \t]+|[\"'],[ \t]*(?=[\"']))" + _VALUE  # `--password X`, `["--password", "X"]`
_IDENTIFIER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def context_spans(doc: str, lower: str) -> list[Span]:
    spans: list[Span] = []
    same_offsets = len(lower) == len(doc)
    for family, keywords, pattern in _CONTEXT_RULES:
        if not any(keyword in lower for keyword in keywords):
            continue
        marker = REDACTED.format(family.removesuffix("-line"))
        text = lower if pattern.startswith("(?i)") and same_offsets else doc
        for match in regex(pattern).finditer(text):
            if family in _WORD_START and not word_start(doc, match.start()):
                continue
            if family == "netrc-line" and line_before(doc, match.start()).strip(" \t+-"):
                continue  # not alone at the start of its line
            span = value_span(match) or match.span()
            value = doc[span[0]:span[1]]
            if family in ("authorization", "npm-auth", "netrc") and regex(r"[(\[]|\A\w+_\w").search(value):
                continue  # code: `authorization: Optional[str]`, `_auth = Auth(config)`, `password\n  login_i = 0`
            if family == "url":
                if match.group("s") is None:  # no password: a random-looking user alone is a token
                    span, value = match.span("user"), match.group("user")
                    if not random_looking(value):
                        continue
                if secret_value(value):
                    spans.append((span[0], span[1], REDACTED.format("url-password" if match.group("s") else "url-token")))
            elif "name" in match.re.groupindex:
                if hidden(match.group("name"), value):
                    spans.append((span[0], span[1], marker))
            elif secret_value(value):
                spans.append((span[0], span[1], marker))
    return spans


def _code(doc: str, name: str, value: str, end: int, colon: bool) -> bool:
    """Is an unquoted value an expression rather than a literal? A call, subscript or attribute
    (`Optional[str]`, `self.opts["password"]`), a list or dict, the variable passed on
    (`token=token`, `aws_session_token=aws_session_token or …`), or an identifier made of words used
    elsewhere in the text too (`token: TokenOpt = None`, `password = origStr`)."""
    if doc[end:end + 1] in ("[", "(", ".") or "[" in value or value[:1] == "{":
        return True
    if regex(r"[ \t]+(?:[-+*/%|&^]|or|and|if|else|for|in)[ \t]").match(doc, end):
        return True  # an operator: `userpass = username + b":"`
    if colon and value.isalpha() and regex(r"[ \t]+[a-z]+[ \t]+[a-z]+\b").match(doc, end):
        return True  # the words of a sentence: `add_special_tokens: Whether to add them`
    bare = name.lstrip("-").lower()
    if value.lower() == bare or value.lower().endswith(bare) or bare.endswith(value.lower()):
        return True
    return wordy(value) and not any(c.isdigit() for c in value) and (
        "_" in value or any(a.islower() and b.isupper() for a, b in zip(value, value[1:]))) and doc.count(value) >= 2


def _prose(doc: str, start: int) -> bool:
    """Does a word and a space stand right before the name (`Second pass: assemble`, `the token:`)?"""
    return regex(r"[A-Za-z]{2,} \Z").search(line_before(doc, start, 40)) is not None


def _chosen_or_random(value: str) -> bool:
    return password_like(value) or random_looking(value)


def named_spans(doc: str, lower: str) -> list[Span]:
    """Values after a secret-looking name: assignments (env, YAML, JSON, TOML, code) and flags.

    Names are found by the hints they contain (`str.find` is far faster than a regex tried at every
    identifier), then the text after each name is matched where it stands."""
    starts: set[int] = set()
    for hint in LOWER_HINTS:
        index = lower.find(hint)
        while index != -1:
            start = index
            while start and doc[start - 1] in _IDENTIFIER:
                start -= 1
            starts.add(start)
            index = lower.find(hint, index + len(hint))
    spans: list[Span] = []
    marker = REDACTED.format("secret")
    for start in sorted(starts):
        end = start
        while end < len(doc) and doc[end] in _IDENTIFIER:
            end += 1
        name = doc[start:end]
        dashes = len(name) - len(name.lstrip("-"))
        if dashes:  # --password X, -storepass X
            if dashes > 2 or not word_start(doc, start):
                continue
            match = regex(_FLAG_VALUE).match(doc, end)
            name = name[dashes:]
        else:
            quote = doc[start - 1] if start and doc[start - 1] in "\"'" else ""
            if start - len(quote) > 0 and doc[start - len(quote) - 1] == "@":
                continue
            after = end + (doc[end:end + 1] == "\\")  # a JSON-escaped quote: \"password\":\"…\"
            if doc[after:after + 1] == "]" or doc[after:after + 2] in ('"]', "']"):  # PHP: [pass] => …, ["pass"]=>
                after += 1 if doc[after] == "]" else 2
                quote, end = "", after
            match = regex(_ASSIGNED).match(doc, after + 1 if quote and doc[after:after + 1] == quote else end)
            if match is not None and match.group("call") is not None:  # `password = get_password()`
                continue
        if match is None and not dashes:  # the value may sit in a sibling field or the next column
            apart = _sibling(doc, start, end) or _row(doc, start, end)
            if apart is not None:
                spans.append(apart)
            continue
        if match is None or not (name[:1].isalpha() or name[:1] == "_"):
            continue
        found = value_span(match)
        if found is None:
            continue
        value = doc[found[0]:found[1]]
        if match.group("s") and regex(DOTTED).match(value):  # process.env.X ?? "fallback": the fallback
            fallback = regex(r"\s*(?:\?\?|\|\||\bor\b)\s*[\"']([^\"'\n]+)[\"']").match(doc, found[1])
            if fallback is None:
                continue
            found, value = fallback.span(1), fallback.group(1)
        if value.strip().startswith("-") or doc[max(0, start - 7):start].lower().endswith("public "):
            continue
        colon = ":" in doc[match.start():found[0]] and "=" not in doc[match.start():found[0]]
        if match.group("s") and _code(doc, name, value, found[1], colon) or _prose(doc, start) and not _chosen_or_random(value):
            continue
        if hidden(name, value):
            spans.append((found[0], found[1], marker))
    return spans


# -- a name and its value apart -------------------------------------------------------------------------

# The label before a name that names a value kept in a sibling field: `name: X`, `"Name": "X"`,
# `key="X"`, `variable "X"`, `ParameterKey: X`.
_LABEL = (r"(?i)(?<![\w\-])(?:name|key|parametername|parameterkey|secretname|variable|env|envvar|field|setting)"
          r"[\"']?(?:\s*(?:=>|[:=])\s*|\s+)[\"']?\Z")
# The sibling that holds the value: `value: X`, `"Value": "X"`, `value="X"`, `default = "X"`.
_SIBLING = (r"(?i)(?<![\w\-])[\"']?(?:value|default|parametervalue|secretstring|secretvalue|val)[\"']?"
            r"\s*(?:=>|[:=])\s*[bu]?" + _VALUE)
_NEXT_LABEL = r"(?i)(?<![\w\-])[\"']?(?:name|key|variable)[\"']?\s*(?:=>|[:=])"
_WINDOW = 300
_PATH_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-/:")


def _sibling(doc: str, start: int, end: int) -> "Span | None":
    """The value beside the name at `start:end` when a label introduces the name."""
    lead = start
    while lead and doc[lead - 1] in _PATH_CHARS:  # /prod/db/master_password
        lead -= 1
    label = regex(_LABEL).search(doc, max(0, lead - 40), lead)
    name = doc[lead:end]
    if label is None or not (secret_name(name) or weak_secret_name(name)):
        return None
    stop = min(end + _WINDOW, len(doc))
    following = regex(_NEXT_LABEL).search(doc, end, stop)
    after = regex(_SIBLING).search(doc, end, following.start() if following else stop)
    if after is None:  # the value may come first: {"value": "…", "name": "DB_PASSWORD"}
        opening = doc.rfind("{", max(0, label.start() - _WINDOW), label.start())
        if opening != -1:
            candidates = list(regex(_SIBLING).finditer(doc, opening + 1, label.start()))
            after = candidates[-1] if candidates else None
    span = value_span(after) if after is not None else None
    if span is None or not hidden(name, doc[span[0]:span[1]]):
        return None
    return (*span, REDACTED.format("secret"))


# -- tables, prose, URL queries -------------------------------------------------------------------------

# What may stand before a table row's name on its line (indent, pipes, a patch's `+`, up to two words),
# and what follows it: two or more spaces, a tab or a pipe, then the value alone in its column.
_ROW_LEAD = r"[ \t+\-|>*]*(?:[A-Za-z][\w.\-/]{0,30} ){0,2}"
_ROW_LAST = r"(?:[ \t]{2,}[^\s|]{1,40}){1,3}[ \t]{2,}(?P<s>[^\s|]{3,1000})[ \t]*(?=\r?\n|\Z)"
_ROW_VALUE = r"(?:[ \t]*\|[ \t]*|\t+[ \t]*|[ \t]{2,})(?P<s>[^\s|]{3,1000})[ \t]*(?:\|[^\n]{0,2000})?(?=\r?\n|\Z)"
_PROSE_WORDS = ("pass", "secret", "token", "api", "pat", "pin")
_PROSE = (r"(?i)(?:password|passphrase|passwd|passcode|secret|token|api[ _-]?key|pat|pin)\b"
          r"(?:[ \t]+(?:for|of|on)[ \t]+(?:the[ \t]+)?(?:[\w.\-]+[ \t]+){0,2}?[\w.\-]+[ \t]+(?:is|was|becomes|now)"
          r"|(?:[ \t]+(?:is|was|to|set to|becomes|became|now|of))?)"
          r"[ \t]+[\"'`]?(?P<s>[^\s\"'`,;<>()\[\]{}=]{1,200})(?=[\s\"'`,;<>)]|$)")
_QUERY = r"[?&;](?P<name>[A-Za-z0-9_.\-\[\]]{1,40})=(?P<s>[^&#\s\"'<>]{6,})"


def _row(doc: str, start: int, end: int) -> "Span | None":
    """The value in the next column when the name at `start:end` begins a table row (`vault kv get`,
    `heroku config`, a Markdown table: up to two words before it, then two spaces, a tab or a pipe)."""
    if not regex(_ROW_LEAD).fullmatch(line_before(doc, start, 80)):
        return None
    name = doc[start:end]
    found = regex(_ROW_VALUE).match(doc, end)
    last = regex(_ROW_LAST).match(doc, end) if found is None else None  # `key1  FULL  <key>`: the last column
    for column in (found, last):
        if column is not None:
            value = column.group("s")
            if hidden(name, value) and (secret_name(name) and password_like(value) or random_looking(value)):
                return (*column.span("s"), REDACTED.format("secret"))
    return None


def prose_spans(doc: str, lower: str) -> list[Span]:
    """A password or token given in a sentence: only a value that looks chosen or random, not a word."""
    spans: list[Span] = []
    text = lower if len(lower) == len(doc) else doc
    for word in _PROSE_WORDS:
        index = text.find(word)
        while index != -1:
            word_end = index + len(word)
            while word_end < len(text) and text[word_end].isalpha():
                word_end += 1
            found = regex(_PROSE).match(text, index) if word_start(text, index) and text[word_end:word_end + 1] in (
                " ", "\t") else None
            index = text.find(word, index + len(word))
            if found is None:
                continue
            start, end = found.span("s")
            value = doc[start:end]
            trimmed = value.rstrip(".),:!?")
            if len(trimmed) < len(value) and (end == len(doc) or doc[end].isspace()):
                end, value = start + len(trimmed), trimmed
            if value.startswith(("[REDACTED", "$", "%", "<", "{")) or not secret_value(value, 8) \
                    or regex(DOTTED).match(value):
                continue
            if password_like(value) or random_run(value, 16):
                spans.append((start, end, REDACTED.format("secret")))
    return spans


def query_spans(doc: str) -> list[Span]:
    """URL query values named so (`?token=`, `&sig=`, `?appid=`, `?code=`) or random under any name
    that is not a public identifier's (`?page=`, `&sha=`, `?utm_source=` stay)."""
    if "=" not in doc or ("?" not in doc and "&" not in doc):
        return []
    spans: list[Span] = []
    for match in regex(_QUERY).finditer(doc):
        name, value = match.group("name"), match.group("s")
        if hidden(name, value) or (not public_name(name) and random_run(value, 16)):
            spans.append((*match.span("s"), REDACTED.format("url-query")))
    return spans
