"""What never leaves the hook: `<private>…</private>` spans and secrets.

Two passes, each over a whole *document*: a string, or every string of a JSON value joined in order
(`clean_tree`), so a span split across fields, list items or patch lines is seen whole — a private
tag opened in a tool's input and closed in its output, a key block written one line per item.

- `<private>` spans nest, match in any letter case, and an unclosed tag hides the rest of the
  document (fail closed).
- Secrets are found three ways: *tokens* by the documented prefix and shape of each service's
  credentials (cloud, code hosting, package registries, CI, chat, mail, payment, monitoring, AI,
  secret managers); *contexts* — URLs and connection strings with credentials, `Authorization`
  headers, `.netrc`, command-line password flags, and `name = value` assignments whose name says
  secret (env, YAML, JSON, TOML, code); and a *high-entropy fallback* for random-looking values
  under weaker names (`auth`, `session`, `sig`, `cookie` …). Hashes, UUIDs, git SHAs, base64 data
  and ordinary code have no such prefix or context, so they pass untouched.

Stdlib only, and fast: this runs inside every hook. A rule's regex runs only when one of its
literals occurs in the document (token literals are looked for in the document's long words only);
most text holds none.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:  # `re` is imported lazily (it costs the hook milliseconds); mypy needs the name
    import re
    from collections.abc import Callable, Iterator

REDACTED = "[REDACTED:{}]"

# -- tokens: (family, literals one of which must occur, pattern; the whole match is the secret) --------
_B64 = r"A-Za-z0-9+/"
_TOKEN_RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("aws", ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA", "APKA"),
     r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|APKA)[0-9A-Z]{16}\b"),
    ("github", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b"),
    ("github", ("github_pat_",), r"\bgithub_pat_[A-Za-z0-9_]{50,255}\b"),
    ("gitlab", ("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glft-", "glimt-", "glagent-", "gloas-", "glcbt-"),
     r"\b(?:glpat|gldt|glrt|glptt|glsoat|glft|glimt|glagent|gloas|glcbt)-[A-Za-z0-9_\-]{20,}"),
    ("gitlab", ("GR1348941",), r"\bGR1348941[A-Za-z0-9_\-]{20,}"),
    ("atlassian", ("ATATT", "ATBB", "ATCTT"), r"\b(?:ATATT|ATBB|ATCTT)[A-Za-z0-9_\-=+/]{24,}"),
    ("anthropic", ("sk-ant-",), r"\bsk-ant-(?:api|admin|oat|ort|sid)\d{2}-[A-Za-z0-9_\-]{20,}"),
    ("openai", ("sk-",),
     r"\bsk-(?:proj-|svcacct-|admin-|None-)?(?=[A-Za-z0-9_\-]*[0-9])(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{32,}"),
    ("huggingface", ("hf_", "api_org_"), r"\b(?:hf_|api_org_)[A-Za-z0-9]{30,}\b"),
    ("replicate", ("r8_",), r"\br8_[A-Za-z0-9]{30,}\b"),
    ("groq", ("gsk_",), r"\bgsk_[A-Za-z0-9]{40,}\b"),
    ("perplexity", ("pplx-",), r"\bpplx-[A-Za-z0-9]{32,}\b"),
    ("xai", ("xai-",), r"\bxai-[A-Za-z0-9]{40,}\b"),
    ("npm", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("pypi", ("pypi-AgE",), r"\bpypi-AgE[A-Za-z0-9_\-]{40,}"),
    ("rubygems", ("rubygems_",), r"\brubygems_[a-f0-9]{48}\b"),
    ("nuget", ("oy2",), r"\boy2[a-z0-9]{43}\b"),
    ("docker", ("dckr_pat_", "dckr_oat_"), r"\bdckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}"),
    ("jfrog", ("AKCp", "cmVmdGtu"), r"\b(?:AKCp[A-Za-z0-9]{60,}|cmVmdGtuOjAxOj[A-Za-z0-9]{40,})"),
    ("circleci", ("CCIPAT_", "CCIPRJ_"), r"\bCCIP(?:AT|RJ)_[A-Za-z0-9]{20,}_[a-f0-9]{40}\b"),
    ("buildkite", ("bkua_", "bkct_"), r"\bbk(?:ua|ct)_[a-z0-9]{40}\b"),
    ("slack", ("xox",), r"\bxox[abposre]-(?:[0-9]+-)?[A-Za-z0-9\-]{10,}"),
    ("slack", ("xapp-",), r"\bxapp-\d-[A-Z0-9]+-\d+-[A-Za-z0-9]+"),
    ("slack", ("hooks.slack.com",), r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,}"),
    ("discord", ("discord",), r"https://(?:[a-z]+\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{30,}"),
    ("teams", ("webhook.office.com",), r"https://[A-Za-z0-9.\-]*webhook\.office\.com/[^\s\"'<>]+"),
    ("telegram", (":AA",), r"(?<![0-9])\d{8,10}:AA[A-Za-z0-9_\-]{33}\b"),
    ("sendgrid", ("SG.",), r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,64}\b"),
    ("mailgun", ("key-",), r"\bkey-[0-9a-f]{32}\b"),
    ("mailchimp", ("-us",), r"\b[0-9a-f]{32}-us\d{1,2}\b"),
    ("twilio", ("SK",), r"\bSK[0-9a-fA-F]{32}\b"),
    ("stripe", ("_live_", "_test_"), r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}"),
    ("stripe", ("whsec_",), r"\bwhsec_[A-Za-z0-9+/=]{24,}"),
    ("square", ("sq0atp-", "sq0csp-", "EAAA"),
     r"\b(?:sq0atp-[A-Za-z0-9_\-]{22,}|sq0csp-[A-Za-z0-9_\-]{40,}|EAAA[A-Za-z0-9_\-+=]{56,})"),
    ("facebook", ("EAA",), r"\bEAA[BCDGI][A-Za-z0-9]{80,}"),
    ("paypal", ("access_token$",), r"\baccess_token\$(?:production|sandbox)\$[0-9a-z]{12,}\$[0-9a-f]{32}"),
    ("shopify", ("shpat_", "shpss_", "shpca_", "shppa_"), r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"),
    ("newrelic", ("NRAK-", "NRII-", "NRJS-", "NRAL"),
     r"\b(?:NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9_\-]{32}|NRJS-[a-f0-9]{19}|[a-f0-9]{36}NRAL)\b"),
    ("sentry", ("sntrys_", "sntryu_", "sntrya_"), r"\bsntry[sua]_[A-Za-z0-9_=+/\-]{40,}"),
    ("grafana", ("glc_", "glsa_"), r"\b(?:glc_[A-Za-z0-9+/=_\-]{32,}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})"),
    ("vault", ("hvs.", "hvb.", "hvr."), r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    ("terraform", ("atlasv1",), r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{40,}"),
    ("doppler", ("dp.",), r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_]{1,20}\.)?[A-Za-z0-9]{40,}\b"),
    ("1password", ("ops_eyJ",), r"\bops_eyJ[A-Za-z0-9_\-+/=]{40,}"),
    ("pulumi", ("pul-",), r"\bpul-[a-f0-9]{40}\b"),
    ("age", ("AGE-SECRET-KEY-1",), r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}"),
    ("digitalocean", ("_v1_",), r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    ("heroku", ("HRKU-",), r"\bHRKU-[A-Za-z0-9_\-]{20,}"),
    ("cloudflare", ("v1.0-",), r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{100,}"),
    ("linear", ("lin_api_", "lin_oauth_"), r"\blin_(?:api|oauth)_[A-Za-z0-9]{32,}\b"),
    ("notion", ("secret_", "ntn_"), r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})\b"),
    ("figma", ("figd_", "figu_"), r"\bfig[du]_[A-Za-z0-9_\-]{30,}"),
    ("postman", ("PMAK-",), r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    ("airtable", ("pat",), r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b"),
    ("dropbox", ("sl.",), r"\bsl\.[A-Za-z0-9_\-]{120,}"),
    ("mapbox", ("sk.eyJ",), r"\bsk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{16,}"),
    ("databricks", ("dapi",), r"\bdapi[a-f0-9]{32}(?:-\d)?\b"),
    ("azure", ("Q~",), r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}"),
    ("google", ("AIza",), r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"),
    ("google", ("GOCSPX-",), r"\bGOCSPX-[A-Za-z0-9_\-]{24,}"),
    ("google", ("ya29.",), r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    ("google", ("1//0",), r"(?<![0-9A-Za-z])1//0[0-9A-Za-z_\-]{40,}"),
    ("jwt", ("eyJ",), r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ("sonarqube", ("squ_", "sqp_", "sqa_"), r"\bsq[upa]_[a-f0-9]{40}\b"),
    ("salesforce", ("00D",), r"\b00D[A-Za-z0-9]{12,15}![A-Za-z0-9._]{60,}"),
    ("launchdarkly", ("sdk-", "mob-"), r"\b(?:sdk|mob)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
    # password hashes (bcrypt, argon2, sha-crypt): offline-crackable, so as good as the password
    ("password-hash", ("$2", "$argon2", "$6$", "$5$"),
     r"\$(?:2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}|argon2(?:id|i|d)\$[^\s\"']{20,}|[56]\$(?:rounds=\d+\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43,86})"),
    ("discord", (), r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}\b"),
)

# -- contexts: (family, lower-case keywords one of which must occur, pattern) ---------------------------
# The secret is the group named `s`, `dq` or `sq` (else the whole match). Patterns start with a literal
# where they can (the regex engine then skips to it fast), and `(?i)` ones run on the lower-cased
# document, whose offsets are the document's.
# Private-key blocks are found by a linear scan (`_key_spans`), not one regex: a block written as
# patch lines (`+MIIE…`) whose END is missing made nested quantifiers backtrack for minutes.
_KEY_BEGIN = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_KEY_END = r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
# Where a key's lines break: a newline, an escaped one, or the seam between two JSON list items.
_KEY_SEPARATOR = r"\\n|\r?\n|\",\s*\""
# One line of a key's body: base64, a PEM or PGP header (`Proc-Type: …`), a checksum, or nothing,
# with a patch prefix or quotes around it.
_KEY_LINE = r"[\s+\-\"',]*(?:[A-Za-z0-9+/=]{4,}|[A-Za-z][A-Za-z-]*: ?[^\n]*)?[\s\"',\\]*"
KEY_WINDOW = 20_000
_VALUE = r"""(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<s>[^\s"'`,;&|)}\]\\<>]+))"""
_CONTEXT_RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    # scheme://[user]:PASSWORD@host (an empty user too: `redis://:pw@host`), or scheme://TOKEN@host
    ("url", ("://",), r"://(?P<user>[^\s:/@'\"<>]*)(?::(?P<s>[^\s@/'\"<>]+))?@"),
    ("authorization", ("authorization",),
     r"(?i)authorization[\"']?\s*[:=]\s*[\"']?"
     r"(?:[a-z][a-z0-9_-]{1,24}\s+)?"  # a scheme: basic, bearer, ssws, digest, aws4-hmac-sha256, …
     r"(?P<s>[^\s\"',;]{6,}(?:[^\n\"']*)?)"),
    ("authorization", ("bearer",), r"(?i)bearer\s+(?P<s>(?=[a-z0-9_\-.~+/]*[0-9])[a-z0-9_\-.~+/]{16,}=*)"),
    ("cookie", ("cookie",), r"(?i)cookie\s*:\s*(?P<s>[^\r\n\"']+)"),
    ("netrc", ("password",), r"(?i)login\s+\S+\s+(?:[+\-]\s*)?password\s+(?P<s>\S+)"),
    # .netrc's `password` on a line of its own (other tokens, or patch lines, between it and `login`)
    ("netrc-line", ("machine",), r"(?i)password[ \t]+(?P<s>\S+)"),
    ("docker-auth", ('"auth"',), r"\"auth\"\s*:\s*\"(?P<s>[A-Za-z0-9+/=]{8,})\""),
    ("npm-auth", ("_auth",), r"(?i)_auth\s*=\s*(?P<s>\S{8,})"),
    ("password-flag", ("mysql", "mariadb"),
     r"(?:mysql|mariadb)[a-z\-]*\b[^\n|;&]*?\s-p(?:'(?P<sq>[^'\n]+)'|\"(?P<dq>[^\"\n]+)\"|(?P<s>[^\s'\"]+))"),
    ("password-flag", ("sshpass",), r"sshpass\s+(?:-[a-oq-zA-Z]\S*\s+)*-p\s*" + _VALUE),
    ("password-flag", ("redis-cli",), r"redis-cli\b[^\n|;&]*?\s-a\s+" + _VALUE),
    ("password-flag", ("login",), r"login\b[^\n|;&]*?\s-p\s+" + _VALUE),
    ("password-flag", ("pass:",), r"pass:(?P<s>[^\s\"']+)"),
    # .pgpass: host:port:database:user:password
    ("pgpass", (":5432:", ":6432:", ":*:", "pgpass"), r"(?m)^[^\s:#]+:(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:(?P<s>\S+)$"),
    ("password-flag", ("htpasswd",), r"htpasswd\b[^\n|;&]*?\s-[a-zA-Z]*b[a-zA-Z]*\s+(?:-\S+\s+)*\S+\s+\S+\s+" + _VALUE),
    ("password-flag", ("smbclient", "rpcclient", "cifs"), r"-U\s*['\"]?[^\s'\"%]+%(?P<s>[^\s'\"]+)"),
    ("vault", ("vault", "token "), r"(?<![\w.])s\.[A-Za-z0-9]{24}\b"),
    ("twilio", ("client(",), r"Client\(\s*['\"](?:AC|SK)[0-9a-fA-F]{32}['\"]\s*,\s*['\"](?P<s>[A-Za-z0-9]{32})['\"]"),
    # define('DB_PASSWORD', 'x'), setenv("API_KEY", "x"), <password>x</password>: the name decides
    ("secret", ("('", '("', "( '", '( "'), r"\(\s*['\"](?P<name>[A-Za-z_][\w.\-]*)['\"]\s*,\s*['\"](?P<s>[^'\"\n]+)['\"]"),
    ("secret", ("</",), r"<(?P<name>[A-Za-z_][\w.\-]*)>(?P<s>[^<\n]{6,})</(?P=name)>"),
    # requests' auth=("user", "pw"), HTTPBasicAuth("user", "pw")
    ("basic-auth", ("auth",), r"(?i)auth\w*\s*(?:=\s*|\()\(?\s*[\"'][^\"'\n]+[\"']\s*,\s*[\"'](?P<s>[^\"'\n]{6,})[\"']"),
    ("password-flag", ("-u", "--user"), r"-(?:u|-user|-proxy-user)[\s=]*[\"']?[^\s:\"'/]+:(?P<s>[^\s\"'@]+)"),
)
# Rules whose match must begin a word (checked in code: a leading `\b` would cost the literal fast path).
_WORD_START = frozenset(("authorization", "cookie", "netrc", "npm-auth", "password-flag"))
# After a secret-looking name: `= value`, `: value`, `=> value`, `:= value` (a call is code, not a value).
_ASSIGNED = (
    r"""[ \t]*(?:=>|:=|[=:])[ \t]*"""
    r"""(?:\\?"(?P<dq>[^"\n]*)\\?"|\\?'(?P<sq>[^'\n]*)\\?'|(?P<s>[^\s"'`,;&|()}\]\\<>]+)(?P<call>\()?)"""
)
# After a secret-looking command-line flag: `--password=X`, `--token X`, `-storepass X`.
_FLAG_VALUE = r"(?:=|[ \t]+)" + _VALUE
_IDENTIFIER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
# Fragments one of which a secret name must contain, upper-cased (prefilter for names).
_NAME_HINTS = ("SECRET", "PASS", "PWD", "TOKEN", "KEY", "CREDENTIAL", "AUTH", "SIG", "COOKIE", "SESSION", "SALT",
               "HMAC", "DSN", "CREDS", "PRIVATE", "PSK")
_LOWER_HINTS = tuple(hint.lower() for hint in _NAME_HINTS)
_SECRET_WORDS = frozenset(
    ("SECRET", "SECRETS", "PASSWORD", "PASSWORDS", "PASSWD", "PASS", "PASSPHRASE", "TOKEN", "APIKEY", "CREDENTIAL",
     "CREDENTIALS", "CREDS", "PRIVATEKEY", "SECRETKEY", "ACCESSKEY", "AUTHTOKEN", "ACCESSTOKEN", "DSN", "PWD", "PSK", "STOREPASS",
     "KEYPASS", "SRCSTOREPASS", "DESTSTOREPASS", "SRCKEYPASS", "DESTKEYPASS", "DBPASS")
)
# One-word names ending so (`PGPASSWORD`, `authtoken`, `clientsecret`) say secret too.
_SECRET_SUFFIXES = ("PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN", "APIKEY", "SECRETKEY", "PRIVATEKEY",
                    "ACCESSKEY", "CREDENTIALS")
_KEY_QUALIFIERS = frozenset(
    ("API", "ACCESS", "PRIVATE", "SECRET", "SIGNING", "ENCRYPTION", "MASTER", "AUTH", "CLIENT", "APP", "APPLICATION",
     "SERVICE", "SERVER", "ADMIN", "INGEST", "WRITE", "LICENSE", "ACCOUNT", "STORAGE", "SHARED", "HMAC", "JWT",
     "WEBHOOK", "BOT", "ROOT", "DEPLOY", "CONSUMER", "INTEGRATION", "SECURITY", "CRYPTO", "DECRYPTION", "SSH",
     "SUBSCRIPTION", "PUSH", "RELAY", "MANAGEMENT", "PERSONAL", "ORG", "SDK", "PROD", "LIVE", "STRIPE", "OPENAI",
     "ANTHROPIC", "GOOGLE", "AZURE", "AWS", "GCP", "MAILGUN", "SENDGRID",
     "DATADOG", "DD", "TWILIO", "PUBLISHABLE", "RECAPTCHA", "FIREBASE", "ALGOLIA", "MASTERKEY", "WORKSPACE"))
# Names that mark a secret only when the value also looks random (the high-entropy fallback).
_WEAK_WORDS = frozenset(("AUTH", "SIG", "SIGNATURE", "COOKIE", "SESSION", "SESSIONID", "SALT", "HMAC", "PRIVATE",
                         "NONCE", "KEY", "PWD", "CONN", "CONNECTION", "CREDENTIAL"))
_NOT_SECRET_VALUES = frozenset(("true", "false", "none", "null", "nil", "yes", "no", "changeme", "redacted",
                                "undefined", "required", "optional", "string", "password", "secret", "token", "bearer",
                                "basic", "digest"))
# A last name part that makes the name about a secret, not the secret itself (`PASSWORD_FILE`, `TOKEN_URL`).
_ABOUT_WORDS = frozenset(("FILE", "PATH", "DIR", "ENV", "VAR", "NAME", "ID", "IDS", "LENGTH", "LEN", "MIN", "MAX",
                          "COUNT", "TYPE", "URL", "URI", "ENDPOINT", "HEADER", "FIELD", "PARAM", "PROMPT", "EXPIRY",
                          "EXPIRES", "TTL", "TIMEOUT", "LIMIT", "POLICY", "REF", "STDIN", "COMMAND", "CMD", "REGEX",
                          "PATTERN", "LABEL", "HINT", "RESET", "CHANGE", "VISIBLE", "ENABLED", "REQUIRED"))
_NAME_SPLIT = r"[_.\-]+|(?<=[a-z0-9])(?=[A-Z])"
_UUID = r"\A[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z"
_DOTTED = r"\A[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+\Z"  # settings.DB_PASSWORD, process.env.TOKEN
_LONG_WORD = r"[^\s\"'`<>()\[\]{},;]{8,}"  # where token literals are looked for
_PRIVATE_TAG = r"(?i)<\s*(/?)\s*private\s*>"

_compiled: "dict[str, re.Pattern[str]]" = {}


def _regex(pattern: str) -> "re.Pattern[str]":
    """Compile on first use (importing `re` and compiling ~100 patterns costs milliseconds)."""
    found = _compiled.get(pattern)
    if found is None:
        import re

        found = _compiled[pattern] = re.compile(pattern)
    return found


# -- names and values -----------------------------------------------------------------------------------

def _name_parts(name: str) -> "list[str] | None":
    upper = name.upper()
    if not any(hint in upper for hint in _NAME_HINTS):
        return None
    return [part.upper() for part in _regex(_NAME_SPLIT).split(name.lstrip("-")) if part]


def secret_name(name: str) -> bool:
    """Does an identifier name a secret? `DB_PASSWORD`, `apiKey`, `PGPASSWORD`, `dbPass` yes; `MAX_TOKENS` no."""
    parts = _name_parts(name)
    if not parts:
        return False
    if parts[-1] in _ABOUT_WORDS:
        return False
    for index, part in enumerate(parts):
        if part in _SECRET_WORDS or (len(part) > 6 and part.endswith(_SECRET_SUFFIXES)):
            return True
        if part == "KEY" and index > 0 and parts[index - 1] in _KEY_QUALIFIERS:
            return True
    return False


def weak_secret_name(name: str) -> bool:
    """A name that hides a secret only when its value looks random (`auth`, `session_id`, `sig`)."""
    parts = _name_parts(name)
    return bool(parts) and any(part in _WEAK_WORDS or part.endswith(("AUTH", "SECRET", "SIG")) for part in parts or ())


def secret_value(value: str) -> bool:
    """Is an assigned value worth hiding (not empty, a number, a flag, a placeholder or a reference)?"""
    bare = value.strip().strip("\"'")
    if len(bare) < 6 or bare.isdigit() or bare.lower() in _NOT_SECRET_VALUES:
        return False
    if bare.startswith(("$", "%", "<", "[REDACTED", "{{", "${", "#{", "process.env", "os.environ", "env(", "ENV[")):
        return False
    if "[REDACTED:" in bare:
        return False
    return not set(bare) <= {"*", "x", "X", ".", "-", "_", "•"}


def random_looking(value: str) -> bool:
    """The high-entropy test: long, mixed characters, no structure (not a UUID, path, word or dotted name)."""
    bare = value.strip().strip("\"'")
    if len(bare) < 16 or not secret_value(bare) or any(c.isspace() for c in bare):
        return False
    if bare[0] in "/~." or "://" in bare or _regex(_UUID).match(bare) or _regex(_DOTTED).match(bare):
        return False
    classes = sum((any(c.islower() for c in bare), any(c.isupper() for c in bare), any(c.isdigit() for c in bare)))
    if classes < 2:
        return False
    counts: dict[str, int] = {}
    for char in bare:
        counts[char] = counts.get(char, 0) + 1
    import math

    entropy = -sum(n / len(bare) * math.log2(n / len(bare)) for n in counts.values())
    return entropy >= 3.3


def _hidden(name: str, value: str) -> bool:
    if secret_name(name):
        return secret_value(value) and not (name.upper().endswith("PWD") and value.lstrip("\"'")[:1] in "/~.")
    return weak_secret_name(name) and random_looking(value)


# -- spans ----------------------------------------------------------------------------------------------

Span = tuple[int, int, str]  # start, end, what replaces it


def private_spans(doc: str) -> list[Span]:
    """Every `<private>` span of `doc` (nesting counted), stray closing tags, and an unclosed tail."""
    if "<" not in doc or "rivate" not in doc.lower():
        return []
    spans: list[Span] = []
    depth, start = 0, 0
    for match in _regex(_PRIVATE_TAG).finditer(doc):
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


def _group_span(match: "re.Match[str]") -> tuple[int, int] | None:
    for group in ("s", "dq", "sq"):
        if group in match.re.groupindex and match.group(group) is not None:
            return match.span(group)
    return None


def _token_spans(doc: str) -> list[Span]:
    """Tokens, looked for in the document's long words (a fraction of the text), then found wherever
    they occur in it."""
    words = doc if len(doc) < 4096 else " ".join(_regex(_LONG_WORD).findall(doc))
    spans: list[Span] = []
    for family, literals, pattern in _TOKEN_RULES:
        # A leading `\b` costs the regex engine its fast scan for the literal; check it here instead.
        bounded = pattern.startswith("\\b")
        compiled = _regex(pattern[2:] if bounded else pattern)
        if not (any(literal in words for literal in literals) if literals else compiled.search(words)):
            continue
        marker = REDACTED.format(family)
        for found in {match.group(0) for match in compiled.finditer(words)
                      if not bounded or _word_start(words, match.start())}:
            start = doc.find(found)
            while start != -1:
                spans.append((start, start + len(found), marker))
                start = doc.find(found, start + len(found))
    return spans


def _word_start(doc: str, index: int) -> bool:
    return index == 0 or not (doc[index - 1].isalnum() or doc[index - 1] == "_")


def _key_lines(doc: str, position: int, forward: bool) -> tuple[int, int]:
    """From `position`, the extent of the key-body lines next to it (forward or backward): (edge, how
    many of them hold 16+ base64 characters)."""
    separator, line = _regex(_KEY_SEPARATOR), _regex(_KEY_LINE)
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
        if end - start > 400 or not line.fullmatch(piece) or "-----" in piece:
            return edge, solid
        solid += sum(1 for run in _regex(r"[A-Za-z0-9+/=]{16,}").finditer(piece))
        edge = end if forward else start


def _key_spans(doc: str) -> list[Span]:
    """Private-key blocks: BEGIN to END; a block cut before its END, from BEGIN over its body lines;
    a block whose BEGIN was cut off, from its body lines to END. Linear in the document."""
    spans: list[Span] = []
    marker = REDACTED.format("private-key")
    ends = list(_regex(_KEY_END).finditer(doc))
    covered_to = -1
    for begin in _regex(_KEY_BEGIN).finditer(doc):
        if begin.start() < covered_to:
            continue
        end = next((m for m in ends if begin.end() <= m.start() <= begin.end() + KEY_WINDOW), None)
        stop = end.end() if end else _key_lines(doc, begin.end(), forward=True)[0]
        spans.append((begin.start(), stop, marker))
        covered_to = stop
    for end in ends:
        if any(start <= end.start() < stop for start, stop, _ in spans):
            continue
        line_start = end.start()
        while line_start and doc[line_start - 1] in "+- \t\"'":  # a patch prefix or quote before END
            line_start -= 1
        start, solid = _key_lines(doc, line_start, forward=False)
        if solid:
            spans.append((start, end.end(), marker))
    return spans


def _context_spans(doc: str, lower: str) -> list[Span]:
    spans: list[Span] = _key_spans(doc) if "private key" in lower else []
    same_offsets = len(lower) == len(doc)
    for family, keywords, pattern in _CONTEXT_RULES:
        if not any(keyword in lower for keyword in keywords):
            continue
        marker = REDACTED.format(family.removesuffix("-line"))
        text = lower if pattern.startswith("(?i)") and same_offsets else doc
        for match in _regex(pattern).finditer(text):
            if family in _WORD_START and not _word_start(doc, match.start()):
                continue
            if family == "netrc-line" and doc[doc.rfind("\n", 0, match.start()) + 1:match.start()].strip(" \t+-"):
                continue  # not alone at the start of its line
            span = _group_span(match) or match.span()
            value = doc[span[0]:span[1]]
            if family == "url":
                if match.group("s") is None:  # no password: a random-looking user alone is a token
                    span, value = match.span("user"), match.group("user")
                    if not random_looking(value):
                        continue
                if secret_value(value):
                    spans.append((span[0], span[1], REDACTED.format("url-password" if match.group("s") else "url-token")))
            elif "name" in match.re.groupindex:
                if _hidden(match.group("name"), value):
                    spans.append((span[0], span[1], marker))
            elif secret_value(value):
                spans.append((span[0], span[1], marker))
    return spans


def _named_spans(doc: str, lower: str) -> list[Span]:
    """Values after a secret-looking name: assignments (env, YAML, JSON, TOML, code) and flags.

    Names are found by the hints they contain (`str.find` is far faster than a regex tried at every
    identifier), then the text after each name is matched where it stands."""
    starts: set[int] = set()
    for hint in _LOWER_HINTS:
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
            if dashes > 2 or not _word_start(doc, start):
                continue
            match = _regex(_FLAG_VALUE).match(doc, end)
            name = name[dashes:]
        else:
            quote = doc[start - 1] if start and doc[start - 1] in "\"'" else ""
            if start - len(quote) > 0 and doc[start - len(quote) - 1] == "@":
                continue
            match = _regex(_ASSIGNED).match(doc, end + 1 if quote and doc[end:end + 1] == quote else end)
            if match is not None and match.group("call") is not None:  # `password = get_password()`
                continue
        if match is None or not (name[:1].isalpha() or name[:1] == "_"):
            continue
        found = _group_span(match)
        if found is None:
            continue
        value = doc[found[0]:found[1]]
        if match.group("s") and _regex(_DOTTED).match(value):  # process.env.X ?? "fallback": the fallback
            fallback = _regex(r"\s*(?:\?\?|\|\||\bor\b)\s*[\"']([^\"'\n]+)[\"']").match(doc, found[1])
            if fallback is None:
                continue
            found, value = fallback.span(1), fallback.group(1)
        if value.startswith("-") or doc[max(0, start - 7):start].lower().endswith("public "):
            continue
        if _hidden(name, value):
            spans.append((found[0], found[1], marker))
    return spans


def secret_spans(doc: str) -> list[Span]:
    """Where the secrets of `doc` are, each with its `[REDACTED:family]` marker."""
    lower = doc.lower()
    return _token_spans(doc) + _context_spans(doc, lower) + _named_spans(doc, lower)


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
            if hide_named and isinstance(rebuilt, str) and _hidden(key, rebuilt):
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


def _tree(value: object, find: "Callable[[str], list[Span]]", hide_named: bool) -> object:
    """`value` with the spans `find` sees in its string values (joined in order) removed; each key
    is cleaned on its own (a span straddling fields must not erase the names between)."""
    leaves = _edit_leaves(list(_strings(value)), find)
    return _rebuild(value, iter(leaves), lambda key: _apply(key, find(key)), hide_named)


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
