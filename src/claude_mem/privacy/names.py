"""Names that say secret, and values worth hiding.

A name says secret when one of its words does: `password`, `passwd`, `pwd`, `pass`, `secret`,
`token`, `credential`, `dsn`, `pat`, a qualified `key` (`api_key`, `StorageAccountKey`) — inside any
identifier or path (`DB_PASSWORD`, `dbPass`, `/prod/db/master_password`, `spring.datasource.password`).
Weaker words (`auth`, `session`, `cookie`, `signature`, `private`, a bare `key`) hide a value only
when it looks random. A last word that makes the name *about* a secret (`PASSWORD_FILE`,
`TOKEN_URL`, `MAX_TOKENS`) says nothing.
"""

from .shapes import DOTTED, entropy, is_hex, is_uuid, password_like, random_run, regex, wordy

# Fragments one of which a secret name must contain, upper-cased (prefilter for names).
NAME_HINTS = ("SECRET", "PASS", "PWD", "TOKEN", "KEY", "CREDENTIAL", "AUTH", "SIG", "COOKIE", "SESSION", "SALT",
              "HMAC", "DSN", "CREDS", "PRIVATE", "PSK", "PAT")
LOWER_HINTS = tuple(hint.lower() for hint in NAME_HINTS)
_SECRET_WORDS = frozenset(
    ("SECRET", "SECRETS", "PASSWORD", "PASSWORDS", "PASSWD", "PASS", "PASSPHRASE", "PASSCODE", "TOKEN", "TOKENS",
     "APIKEY", "CREDENTIAL", "CREDENTIALS", "CREDS", "PRIVATEKEY", "SECRETKEY", "ACCESSKEY", "AUTHTOKEN",
     "ACCESSTOKEN", "DSN", "PWD", "PSK", "STOREPASS", "KEYPASS", "SRCSTOREPASS", "DESTSTOREPASS", "SRCKEYPASS",
     "DESTKEYPASS", "DBPASS", "PAT", "PW", "PASSWRD", "MNEMONIC", "SEEDPHRASE", "AUTHTOK", "REQUIREPASS", "MASTERAUTH")
)
# One-word names ending so (`PGPASSWORD`, `authtoken`, `clientsecret`) say secret too.
_SECRET_SUFFIXES = ("PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN", "APIKEY", "SECRETKEY", "PRIVATEKEY",
                    "ACCESSKEY", "CREDENTIALS", "ACCOUNTKEY", "SHAREDKEY", "MASTERKEY", "SIGNINGKEY", "PASS")
# Words ending in PASS that are no password.
_NOT_PASSWORDS = frozenset(("BYPASS", "COMPASS", "SURPASS", "TRESPASS", "OVERPASS", "UNDERPASS", "ENCOMPASS", "MULTIPASS",
                            "ONEPASS", "TWOPASS", "FIRSTPASS", "SECONDPASS", "RENDERPASS", "SUBPASS"))
# `KEY` after these words names something that is not a secret (`sort_key`, `primary_key`, `cache_key`).
_PUBLIC_KEY_QUALIFIERS = frozenset(
    ("SORT", "PRIMARY", "FOREIGN", "CACHE", "PARTITION", "ROW", "HASH", "RANGE", "UNIQUE", "COMPOSITE", "LOOKUP",
     "DICT", "MAP", "OBJECT", "I18N", "TRANSLATION", "IDEMPOTENCY", "ROUTING", "SHARD", "GROUP", "PUBLIC", "PUB",
     "SHORTCUT", "HOT", "MODIFIER", "ENTRY", "INDEX", "SEARCH", "CONFIG", "SETTING", "SETTINGS", "DEDUP", "DEDUPE",
     "REACT", "LIST", "ITEM", "STATE", "STORAGE_KEY", "QUERY", "RECORD", "NATURAL", "SURROGATE", "CANDIDATE",
     "COMPOUND", "CLUSTERING", "S3", "BUCKET", "FILE", "TABLE", "COLUMN", "JSON", "YAML", "DATA", "MESSAGE",
     "EVENT", "METRIC", "LABEL", "TAG", "ATTRIBUTE", "PROPERTY", "FIELD", "VALUE", "ENUM", "CSV", "ROUTE"))
# Names that mark a secret only when the value also looks random.
_WEAK_WORDS = frozenset(("AUTH", "SIG", "COOKIE", "SESSION", "SESSIONID", "SID", "SALT", "HMAC",
                         "PRIVATE", "NONCE", "KEY", "KEYS", "PWD", "CONN", "CONNECTION", "CREDENTIAL", "CODE", "OTP",
                         "TICKET", "JWT", "BEARER", "REFRESH", "CSRF", "XSRF", "LICENSE", "SERIAL", "APPID"))
_NOT_SECRET_VALUES = frozenset(("true", "false", "none", "null", "nil", "yes", "no", "changeme", "redacted",
                                "undefined", "required", "optional", "string", "password", "secret", "token", "bearer",
                                "basic", "digest", "example", "placeholder", "dummy", "sample", "default", "hidden",
                                "masked", "unset", "empty", "notset", "todo", "fixme", "insecure", "mysecret",
                                "passwd", "mypassword", "yourpassword", "boolean", "bool", "str", "string", "int",
                                "integer", "float", "number", "bytes", "object", "dict", "list", "array", "any",
                                "optional", "nullable", "secretstr", "secretbytes"))
# Words that make a value a placeholder: `your-api-key-here`, `<replace-me>`, `change_me_please`.
_PLACEHOLDER_WORDS = frozenset(("your", "here", "change", "changeme", "replace", "example", "placeholder", "dummy",
                                "sample", "insert", "enter", "put", "goes", "todo", "fixme", "fake", "redacted", "xxx",
                                "my", "foo", "bar", "test", "demo", "dev", "local", "secret", "token", "password",
                                "key", "value", "api", "me", "with", "the", "real", "actual", "generate", "generated"))
# A last name part that makes the name about a secret, not the secret itself (`PASSWORD_FILE`, `TOKEN_URL`).
_ABOUT_WORDS = frozenset(("FILE", "PATH", "DIR", "ENV", "VAR", "NAME", "ID", "IDS", "LENGTH", "LEN", "MIN", "MAX",
                          "COUNT", "TYPE", "URL", "URI", "ENDPOINT", "HEADER", "FIELD", "PARAM", "PROMPT", "EXPIRY",
                          "EXPIRES", "TTL", "TIMEOUT", "LIMIT", "POLICY", "REF", "STDIN", "COMMAND", "CMD", "REGEX",
                          "PATTERN", "LABEL", "HINT", "RESET", "CHANGE", "VISIBLE", "ENABLED", "REQUIRED", "LOCATION",
                          "SOURCE", "PROVIDER", "STORE", "HASH", "HASHED", "DIGEST", "ALGORITHM", "ALG", "FORMAT",
                          "VERSION", "ROTATION", "USAGE", "SIZE", "BYTES", "BITS", "MODE", "METHOD", "SCOPE", "SCOPES",
                          "HELPER", "MANAGER", "SERVICE", "STRENGTH", "VALIDATOR", "INPUT", "FORM", "ERROR", "STATUS",
                          "EXPIRATION", "EXPIRE", "LIFETIME", "AGE", "PREFIX", "SUFFIX", "INDEX", "KIND", "TYPES",
                          "COMPLEXITY", "RULES", "CHECK", "VERIFY", "VALIDATION", "ISSUER", "AUDIENCE", "CLAIMS",
                          "STORAGE", "BACKEND", "CONFIRMATION", "ACCESSOR", "EMPTY", "SET", "MISSING", "INVALID", "EXPIRED"))
# Words that make the whole name describe a secret wherever they stand (`kPasswordAutofillHint…`).
_DESCRIBING_WORDS = frozenset(("HINT", "PLACEHOLDER", "AUTOFILL", "LABEL", "TITLE", "DESCRIPTION", "MESSAGE", "TEXT",
                               "CAPTION", "TOOLTIP", "HELP", "DOC", "DOCS"))
# The last word of a public identifier's name: its random-looking value is an id, not a credential.
PUBLIC_WORDS = frozenset(("ID", "IDS", "UUID", "GUID", "SHA", "SHA1", "SHA256", "SHA512", "HASH", "DIGEST",
                          "CHECKSUM", "ETAG", "INTEGRITY", "COMMIT", "REV", "REVISION", "VERSION", "OID", "CID", "TRACE",
                          "TRACEPARENT", "SPAN", "REQUEST", "CORRELATION", "ULID", "NAME", "TAG", "IMAGE", "REF",
                          "HEAD", "BASE", "PARENT", "TREE", "BLOB", "FINGERPRINT", "KID", "THUMBPRINT", "MD5", "CRC",
                          "NUMBER", "NO", "NUM", "HANDLE", "SLUG", "URL", "URI", "PATH", "FILE", "DIR", "HOST", "EMAIL",
                          "USER", "USERNAME", "LOGIN", "REGION", "ZONE", "BUCKET", "KEYID",
                          "ADDRESS", "ADDR", "WALLET", "PUBKEY", "PUBLICKEY", "CLIENTID", "APPID_PUBLIC", "STATE",
                          "BUILD", "RUN", "JOB", "SESSIONNAME", "CURSOR", "PAGE", "NEXT", "PREV", "AFTER", "BEFORE",
                          "MARKER", "OFFSET", "FILTER", "QUERY", "Q", "SEARCH", "SORT", "ORDER", "UTM", "LANG",
                          "LOCALE", "FORMAT", "CALLBACK", "REDIRECT", "RETURN", "SOURCE", "TARGET", "DEST", "HREF",
                          "SRC", "ALT", "TITLE", "ANCHOR", "STYLE", "CLASS", "COLOR", "FONT", "SIZE", "WIDTH", "HEIGHT",
                          "THREAD", "MESSAGE", "EVENT", "ITEM", "KSUID",
                          "CLID", "FBCLID", "GCLID", "MSCLKID", "DCLID", "YCLID", "IGSHID", "MATCH", "NONE", "SIGNATURE"))
_NAME_SPLIT = r"[_.\-/:\s\[\]]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])"


def name_parts(name: str) -> list[str]:
    """The words of an identifier or path, upper-cased: `/prod/db/masterPassword` → PROD DB MASTER PASSWORD."""
    return [part.upper() for part in regex(_NAME_SPLIT).split(name.strip("-\"'")) if part]


def _hinted(name: str) -> "list[str] | None":
    upper = name.upper()
    if not any(hint in upper for hint in NAME_HINTS):
        return None
    return name_parts(name)


def secret_name(name: str) -> bool:
    """Does an identifier name a secret? `DB_PASSWORD`, `apiKey`, `PGPASSWORD`, `dbPass` yes; `MAX_TOKENS` no."""
    return _strength(name) > 0


def _strength(name: str) -> int:
    """2: a secret word names it (`password`, `token`); 1: a qualified `key` (`api_key`, `LicenseKey`),
    whose value must also look like a credential (a `redis_key` holds `user:42:profile`); 0: neither."""
    parts = _hinted(name.rsplit(".", 1)[-1] if "." in name.strip(".") else name)  # `token.markup` is about a token
    if parts and parts[-2:] == ["SECRET", "ID"]:
        return 2  # Vault's `secret_id`, Consul's `SecretID`: the id is the credential
    if not parts or parts[-1] in _ABOUT_WORDS or _DESCRIBING_WORDS.intersection(parts):
        return 0
    for index, part in enumerate(parts):
        if part in _SECRET_WORDS or (len(part) > 6 and part.endswith(_SECRET_SUFFIXES) and part not in _NOT_PASSWORDS):
            return 0 if part in ("TOKENS", "PAT", "PASS", "PW") and _counted(parts, index) else 2
    if parts[-1] in ("KEY", "KEYS") and len(parts) > 1 and parts[-2] not in _PUBLIC_KEY_QUALIFIERS \
            and not parts[-2].isdigit():
        return 1
    return 0


def _counted(parts: list[str], index: int) -> bool:
    """`max_tokens`, `input_tokens`, `pat_count`, `pass_rate`: a word used as a measure or a verb, not a secret."""
    before = parts[index - 1] if index else ""
    after = parts[index + 1] if index + 1 < len(parts) else ""
    return before in ("MAX", "MIN", "INPUT", "OUTPUT", "TOTAL", "NUM", "PROMPT", "COMPLETION", "CACHED", "CONTEXT",
                      "REASONING", "USED", "REMAINING", "FIRST", "SECOND", "DRY", "BY", "ALL", "NO", "HIGH", "LOW") \
        or after in ("RATE", "COUNT", "THROUGH", "FAIL", "FAILED", "LIMIT", "USED", "ONLY", "TEST", "TESTS", "NUMBER")


def weak_secret_name(name: str) -> bool:
    """A name that hides a secret only when its value looks random (`auth`, `session_id`, `sig`, `key`)."""
    parts = _hinted(name) or name_parts(name)
    if not parts or parts[-1] in PUBLIC_WORDS - {"ID"} or "PUBLIC" in parts or "PUB" in parts:
        return False
    return any(part in _WEAK_WORDS or part.rstrip("0123456789") in _WEAK_WORDS  # key1, key2
               or part.endswith(("AUTH", "SECRET", "SIG", "KEY", "TOKEN")) for part in parts)


def public_name(name: str) -> bool:
    """A name whose value is an identifier others may see (`commit_sha`, `request_id`, `image`)."""
    parts = name_parts(name)
    return bool(parts) and (parts[-1] in PUBLIC_WORDS or "PUBLIC" in parts or "PUB" in parts or "PUBLISHABLE" in parts)


def placeholder(value: str) -> bool:
    """`your-api-key-here`, `<secret>`, `${TOKEN}`, `xxxx`, `changeme`: stands for a secret, is none."""
    bare = value.strip().strip("\"'")
    if bare.startswith(("$", "%", "<", "[REDACTED", "{{", "${", "#{", "process.env", "os.environ", "env(", "ENV[")):
        return True
    if bare[:1] == "#" and 3 <= len(bare) - 1 <= 8 and is_hex(bare[1:]):
        return True  # a colour
    if "[REDACT" in bare or set(bare) <= {"*", "x", "X", ".", "-", "_", "•", "?", "#", "0"} or "..." in bare or "…" in bare:
        return True
    words = [word for word in regex(r"[_\-\s.]+").split(bare.lower()) if word]
    return bool(words) and all(word.isalpha() for word in words) and len(words) >= 2 \
        and sum(word in _PLACEHOLDER_WORDS for word in words) >= max(1, len(words) - 1)


def secret_value(value: str, min_length: int = 6) -> bool:
    """Is an assigned value worth hiding (not empty, a number, a flag, a placeholder or a reference)?"""
    bare = value.strip().strip("\"'")
    if len(bare) < min_length or bare.isdigit() or bare.lower().rstrip(":") in _NOT_SECRET_VALUES:
        return False
    return not placeholder(bare)


def random_looking(value: str) -> bool:
    """The high-entropy test: long, mixed characters, no structure (not a UUID, path, word or dotted name)."""
    bare = value.strip().strip("\"'")
    if len(bare) < 16 or not secret_value(bare) or any(c.isspace() for c in bare):
        return False
    if bare[0] in "/~." or "://" in bare or is_uuid(bare) or regex(DOTTED).match(bare):
        return False
    if wordy(bare) or regex(r"[A-Za-z]{3,}\.[A-Za-z]{3,}\.[A-Za-z]").search(bare):
        return False  # words, or a dotted name (`com.acme.auth.RedisBackend@4fd4d13b`)
    if random_run(bare, 16, hex_ok=True, hex_min=16):
        return True
    if sum(c.isalnum() for c in bare) >= 0.8 * len(bare):
        return False  # random_run judged it (a digest with a label, a word with a number)
    classes = sum((any(c.islower() for c in bare), any(c.isupper() for c in bare), any(c.isdigit() for c in bare)))
    if classes < 2:
        return False
    return entropy(bare) >= 3.3


def _path(value: str) -> bool:
    """`prod/db/password`, `secret/data/app`: words joined by slashes."""
    segments = value.split("/")
    return len(segments) >= 3 and all(regex(r"[\w.\-]+").fullmatch(part) and not random_run(part, 12)
                                      for part in segments if part)


def hidden(name: str, value: str) -> bool:
    """Is `value`, held by `name`, a secret?"""
    strength = _strength(name)
    bare = value.strip().strip("\"'")
    if bare.startswith(("./", "../", "~/")) or bare.startswith("/") and bare.count("/") > 1 or _path(bare):
        return False  # a file or a secret manager's path the secret is read from
    if "." in name and bare.count(" ") >= 2 and not any(c.isdigit() for c in bare):
        return False  # an i18n key and its sentence: "settings.tokens.empty" = "You have no tokens."
    if strength == 2:
        return secret_value(value) and not (name.upper().endswith("PWD") and value.lstrip("\"'")[:1] in "/~.")
    if strength == 1:  # a `key` holds dict keys, cache keys and paths as often as credentials
        chosen = password_like(bare) and any(c.isdigit() for c in bare) and not wordy(bare)
        return secret_value(bare, 8) and (random_looking(bare) or chosen and not any(c in bare for c in " /:"))
    return weak_secret_name(name) and random_looking(value)
