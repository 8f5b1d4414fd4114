"""Credentials by their shape.

Two ways: the documented formats of services' tokens (a prefix and a body: `ghp_…`, `AKIA…`,
`xoxb-…`), kept because they catch a token wherever it stands; and the shape every token shares,
which catches the formats nobody listed — a short word-like prefix and a random body (`sbp_…`,
`tskey-auth-…`, `lsv2_pt_…`), a long random run anywhere, and a shorter random run where a
credential stands (after `token`, `key`, `PAT`, `password` …). The look-alikes are kept: hex digests
and git SHAs, UUIDs, hashes named by their algorithm, base64 data, base58 addresses, words.
"""

from .names import public_name
from .shapes import REDACTED, Span, hash_before, is_hex, line_before, prefix_length, random_run, regex, strong_run, word_start

# -- tokens: (family, literals one of which must occur, pattern; the whole match is the secret) --------
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
    # BitLocker recovery keys: eight groups of six digits
    ("bitlocker", ("-",), r"\b\d{6}(?:-\d{6}){7}\b"),
    ("discord", (), r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}\b"),
)

_LONG_WORD = r"[^\s\"'`<>()\[\]{},;]{8,}"  # where token literals are looked for


def listed_spans(doc: str) -> list[Span]:
    """Tokens of the documented formats, looked for in the document's long words (a fraction of the
    text), then found wherever they occur in it."""
    words = doc if len(doc) < 4096 else " ".join(regex(_LONG_WORD).findall(doc))
    spans: list[Span] = []
    for family, literals, pattern in _TOKEN_RULES:
        if literals and not any(literal in words for literal in literals):
            continue
        # A leading `\b` costs the regex engine its fast scan for the literal; check it here instead.
        bounded = pattern.startswith("\\b")
        compiled = regex(pattern[2:] if bounded else pattern)
        marker = REDACTED.format(family)
        for found in {match.group(0) for match in compiled.finditer(words)
                      if not bounded or word_start(words, match.start())}:
            start = doc.find(found)
            while start != -1:
                spans.append((start, start + len(found), marker))
                start = doc.find(found, start + len(found))
    return spans


# -- the shape every token shares ------------------------------------------------------------------------

_RUN = r"(?<![A-Za-z0-9_\-])[A-Za-z0-9][A-Za-z0-9_\-]{19,}"
_KEY_TYPE = r"(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp\d+|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) \Z"
_HASH_NAMES = frozenset(("sha", "sha1", "sha224", "sha256", "sha384", "sha512", "md5", "h1", "blake2b", "blake3"))
# Words after which a random run is a credential: `the PAT abc…`, `api key: abc…`, `token=abc…`.
_CREDENTIAL_WORD = (r"(?i)(?<!public )(?<!public_)(?<!public-)(?<!pub )"
                    r"(?:token|pat|keys?|secret|password|passwd|passphrase|credentials?|apikey|bearer|auth"
                    r"|signature|license|serial)\b[^\n]{0,40}(?:\n[ \t\-+]*)?\Z")


_ASSIGNMENT = (r"""(?:(?P<name>[A-Za-z_][\w.\-]{0,60})\\?["']?[ \t]*(?:=>|:=|=|(?P<colon>:))"""
               r"""|(?<!\S)--?(?P<flag>[A-Za-z][\w\-]{1,40})[ \t=]|(?P<pair>[A-Za-z_][\w.\-]{0,60})["'][ \t]+(?=["']))"""
               r"""[ \t]*(?:[bu]|W/)?\[?\s*\\?["']?\Z""")
_PUBLIC_BLOCK = (r"-----BEGIN (?:[A-Z0-9]+ )*(?:PUBLIC KEY|CERTIFICATE|CERTIFICATE REQUEST|NEW CERTIFICATE REQUEST|X509 CRL"
                 r"|PGP PUBLIC KEY BLOCK|PGP SIGNATURE|SIGNED MESSAGE|PGP MESSAGE)-----")


class _Regions:
    """The base64 regions around runs (alphanumerics joined by `+`, `/`, `=`), each measured once per
    document: a 1 MB blob holds thousands of runs, and measuring its extent for each was quadratic."""

    def __init__(self, doc: str) -> None:
        self.doc = doc
        self.low = self.high = -1
        self.data = False

    def around(self, start: int, end: int) -> tuple[int, int, bool]:
        """(region start, region end, whether the region is base64 data rather than the run alone)."""
        if not (self.low <= start < self.high and end <= self.high):
            doc, low, high = self.doc, start, end
            while low and (doc[low - 1].isalnum() or doc[low - 1] in "+/="):
                low -= 1
            found = regex(r"[A-Za-z0-9+/=]*").match(doc, high)
            high = found.end() if found else high
            region = doc[low:high]
            data = "+" in region or region.endswith("=") and not doc[high:high + 1].isalnum()
            if not data and "/" in region:
                data = len(region) >= 40 and "//" not in region or sum(
                    1 for part in region.split("/") if random_run(part, 16)) > 1
            self.low, self.high, self.data = low, high, data
        return self.low, self.high, self.data and (self.low, self.high) != (start, end)


def _in_data(doc: str, start: int, end: int, regions: _Regions) -> bool:
    """Is the run a piece of base64 data (joined to more of it by `+`, `/` or `=` padding, or after
    `base64,`), a public key's body (after `ssh-ed25519 `), a named hash (`sha512-…`, `h1:…`), a
    version or digest after `@`, or an `0x` hex number?"""
    low, _high, data = regions.around(start, end)
    if data or doc[max(0, low - 7):low] == "base64," or regex(_KEY_TYPE).search(doc, max(0, low - 40), low):
        return True
    before = doc[start - 1] if start else " "
    if doc[start:start + 2] in ("0x", "0X") and is_hex(doc[start + 2:end]):  # an address or hash, or a key in place
        return end - start != 66 or not (assigned := _assignment(doc, start)) or assigned[1]
    return before == "@" or (before in ":-_=" and hash_before(doc, start))


def _assignment(doc: str, start: int) -> "tuple[str, bool] | None":
    """When the run at `start` stands as a value (`STRIPE_LIVE=…`, `"x-app": "…"`, `--seed …`), the
    name it is assigned to and whether that name is a public identifier's (`commit_sha`, `request_id`,
    `public_key`)."""
    found = regex(_ASSIGNMENT).search(doc, max(0, start - 80), start)
    if found is None:
        return None
    name = found.group("name") or found.group("flag") or found.group("pair")
    line = line_before(doc, found.start(), 120)
    if found.group("colon") and line.strip(" \t-{,\"'([+") and not line.rstrip().endswith((",", "{", "(", "[")):
        return None  # `rotate after: X` is prose; a key (`  name: X`, `{"name": X`) starts its line or object
    public = public_name(name) or doc[max(0, found.start() - 8):found.start()].lower().endswith(("public ", "pub "))
    return name, public


def _public_regions(doc: str) -> list[tuple[int, int]]:
    """Armoured public material (certificates, public keys, PGP public blocks and signatures) and the
    line after a `public key` comment: base64 there is public, whatever its shape."""
    regions = []
    if "-----BEGIN" in doc:
        for block in regex(_PUBLIC_BLOCK).finditer(doc):
            end = doc.find("-----END", block.end())
            regions.append((block.start(), end if end != -1 else min(len(doc), block.end() + 20_000)))
    if '"kty"' in doc:  # a JSON Web Key's public members
        regions += [m.span() for m in regex(r'"(?:n|e|x|y|x5c|x5t|x5t#S256|kid)"\s*:\s*\[?\s*"[^"]*"').finditer(doc)]
    if "public key" in doc:
        for line in regex(r"public key[^\n]*\n[^\n]*").finditer(doc):
            regions.append(line.span())
    return regions


def shape_spans(doc: str) -> list[Span]:
    """Runs that look like credentials by their shape and place."""
    spans: list[Span] = []
    public = None
    regions = _Regions(doc)
    for match in regex(_RUN).finditer(doc):
        run, start, end = match.group(0), match.start(), match.end()
        if _in_data(doc, start, end, regions):
            continue
        assigned = _assignment(doc, start)
        if assigned is not None and assigned[1]:
            continue
        if public is None:
            public = _public_regions(doc)
        if any(low <= start < high for low, high in public):
            continue
        prefix = prefix_length(run)
        head = run[:prefix].rstrip("_-")
        if prefix and (head.lower() in _HASH_NAMES or regex(r"(?i)(?:sha|md)\d").match(head)):
            continue
        # A hex body after a prefix is a token only after `_` and a lower-case prefix (`sbp_…`,
        # `shippo_live_…`); `Linux-node-<sha256>` and `v1-deps-<sha1>` are cache keys.
        hex_ok = "-" not in run[:prefix] and not any(c.isupper() for c in head)
        if prefix and random_run(run[prefix:], 28, hex_ok=hex_ok):
            spans.append((start, end, REDACTED.format("token")))
        elif strong_run(run[prefix:]):
            spans.append((start, end, REDACTED.format("token")))
        elif random_run(run[prefix:], 20) and (assigned is not None
                                                or regex(_CREDENTIAL_WORD).search(doc, max(0, start - 48), start)):
            spans.append((start, end, REDACTED.format("token")))
    return spans
