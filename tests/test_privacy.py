"""Secret redaction and `<private>` stripping (DESIGN §9).

Every secret here is made up, in the real format of its family, and assembled at run time from
pieces so the repository itself never trips a secret scanner.
"""

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claude_mem import privacy
from secret_corpus import B64, HEX, LOOKALIKES, UPPER_DIGITS, URLSAFE, mixed, pem, rnd


def _secrets() -> list[tuple[str, str, str]]:
    """(family, text containing the secret, the part that must disappear)."""
    items: list[tuple[str, str, str]] = []

    def token(family: str, value: str, template: str = "value: {} end") -> None:
        items.append((family, template.format(value), value))

    token("aws", "AK" + "IA" + rnd(UPPER_DIGITS, 16), "aws_access_key_id = {}")
    token("aws", "AS" + "IA" + rnd(UPPER_DIGITS, 16), "export AWS_ACCESS_KEY_ID={}")
    aws_secret = rnd(B64, 40)
    items.append(("aws", f"AWS_SECRET_ACCESS_KEY={aws_secret}\n", aws_secret))
    aws_secret2 = rnd(B64, 40)
    items.append(("aws", f"[default]\naws_secret_access_key = {aws_secret2}\n", aws_secret2))
    for prefix in ("ghp", "gho", "ghs", "ghu", "ghr"):
        token("github", f"{prefix}_" + mixed(36), "git clone https://{}@github.com/o/r")
    token("github", "github" + "_pat_" + mixed(22) + "_" + mixed(59))
    token("gitlab", "gl" + "pat-" + rnd(URLSAFE, 20), "PRIVATE-TOKEN: {}")
    token("gitlab", "GR1348941" + rnd(URLSAFE, 20), "runner token {}")
    token("anthropic", "sk-" + "ant-api03-" + rnd(URLSAFE, 93) + "AA", "ANTHROPIC_API_KEY={}")
    token("anthropic", "sk-" + "ant-admin01-" + rnd(URLSAFE, 93) + "AA", "key {} here")
    token("openai", "sk-" + "proj-" + mixed(48) + "T3Blbk" + "FJ" + mixed(48), "client = OpenAI(api_key='{}')")
    token("openai", "sk-" + mixed(48), "OPENAI_API_KEY: {}")
    token("openai", "sk-" + "svcacct-" + mixed(60), "{}")
    token("slack", "xo" + "xb-" + rnd(string.digits, 12) + "-" + rnd(string.digits, 13) + "-" + mixed(24))
    token("slack", "xo" + "xp-" + rnd(string.digits, 12) + "-" + rnd(string.digits, 12) + "-" + rnd(string.digits, 13) + "-" + rnd(HEX, 32))
    token("slack", "https://hooks." + "slack.com/services/T" + rnd(UPPER_DIGITS, 8) + "/B" + rnd(UPPER_DIGITS, 10) + "/" + mixed(24), "curl -X POST {}")
    token("slack", "xa" + "pp-1-A" + rnd(UPPER_DIGITS, 10) + "-" + rnd(string.digits, 13) + "-" + rnd(HEX, 64))
    token("stripe", "sk" + "_live_" + mixed(24), "Stripe.api_key = '{}'")
    token("stripe", "rk" + "_live_" + mixed(24))
    token("stripe", "sk" + "_test_" + mixed(24))
    token("stripe", "wh" + "sec_" + mixed(32))
    token("google", "AI" + "za" + "Sy" + rnd(URLSAFE, 33), "https://maps.googleapis.com/maps/api/js?key={}")
    token("google", "GOC" + "SPX-" + rnd(URLSAFE, 28))
    token("google", "ya" + "29." + rnd(URLSAFE, 60), "Authorization: Bearer {}")
    token("jwt", "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "ey" + "J" + rnd(URLSAFE, 40) + "." + rnd(URLSAFE, 43), "Authorization: Bearer {}")
    for kind in ("RSA ", "OPENSSH ", "EC ", ""):
        block, line = pem(kind)
        items.append(("private-key", f"key file:\n{block}\nthat was it", line))
    password = mixed(14)
    items.append(("url-password", f"DATABASE_URL=postgres://admin:{password}@db.example.com:5432/app", password))
    password2 = mixed(12)
    items.append(("url-password", f"git remote add origin https://deploy:{password2}@git.example.com/o/r.git", password2))
    for line in ("DB_PASSWORD={}", "STRIPE_SECRET={}", 'export API_KEY="{}"', "client_secret: {}",
                 '{{"password": "{}"}}', "SENTRY_AUTH_TOKEN={}", "REDIS_PASSPHRASE='{}'", "jwtSecret = {}"):
        value = mixed(20)
        items.append(("secret", "# .env\nDEBUG=true\n" + line.format(value) + "\nPORT=8080\n", value))
    return items


SECRETS = _secrets()

# The look-alikes that must survive live with the wider corpus (secret_corpus.LOOKALIKES).


def test_corpus_sizes():
    assert len(SECRETS) >= 30 and len(LOOKALIKES) >= 30
    assert {family for family, _, _ in SECRETS} >= {
        "aws", "github", "gitlab", "anthropic", "openai", "slack", "stripe", "google", "jwt",
        "private-key", "url-password", "secret",
    }


@pytest.mark.parametrize("family,text,secret", SECRETS, ids=[f"{i}-{s[0]}" for i, s in enumerate(SECRETS)])
def test_every_secret_is_redacted(family, text, secret):
    cleaned = privacy.redact(text)
    assert secret not in cleaned
    assert "[REDACTED:" in cleaned


@pytest.mark.parametrize("text", LOOKALIKES, ids=[f"lookalike-{i}" for i in range(len(LOOKALIKES))])
def test_no_lookalike_is_redacted(text):
    assert privacy.redact(text) == text


def test_redaction_keeps_the_surroundings():
    text = f"before {SECRETS[0][2]} after\nDEBUG=true\nDB_PASSWORD=abcdef123456\nPORT=8080"
    assert privacy.redact(text) == "before [REDACTED:aws] after\nDEBUG=true\nDB_PASSWORD=[REDACTED:secret]\nPORT=8080"


def test_private_spans():
    assert privacy.strip_private("a <private>x</private> b <PRIVATE >y\nz</private> c") == "a  b  c"
    assert privacy.strip_private("keep <private>everything after an unclosed tag") == "keep "
    assert privacy.strip_private("stray </private> closer") == "stray  closer"
    assert privacy.strip_private("no tags <b>at all</b>") == "no tags <b>at all</b>"


def test_secret_names():
    for name in ("DB_PASSWORD", "apiKey", "AWS_SECRET_ACCESS_KEY", "github_token", "client-secret", "PASSPHRASE"):
        assert privacy.secret_name(name), name
    for name in ("MAX_TOKENS", "tokenizer", "sort_key", "primary_key", "input_tokens", "KEYBOARD", "PASSWORD_FILE"):
        assert not privacy.secret_name(name), name


@given(st.text())
def test_clean_never_fails_and_is_idempotent(text):
    once = privacy.clean(text)
    assert privacy.clean(once) == once


@given(st.text(alphabet=st.characters(blacklist_characters="<>"), max_size=200), st.text(max_size=50), st.text(max_size=50))
def test_private_content_never_survives(secret, before, after):
    cleaned = privacy.strip_private(f"{before}<private>{secret}</private>{after}")
    assert "<private>" not in cleaned.lower()
    if secret and secret not in before + after:
        assert secret not in cleaned


@given(st.sampled_from(SECRETS), st.sampled_from(["", "x ", "\n", "(", "'", '"', "= "]),
       st.sampled_from(["", " y", "\n", ")", "'", '"', ",", ";"]))
def test_secrets_are_found_whatever_surrounds_them(item, before, after):
    _family, text, secret = item
    assert secret not in privacy.redact(before + text + after)


@given(st.sampled_from([40, 64, 32]).flatmap(lambda n: st.text(alphabet=HEX, min_size=n, max_size=n)))
def test_hex_digests_pass(digest):
    assert privacy.redact(f"sha {digest} ok") == f"sha {digest} ok"


@given(st.uuids())
def test_uuids_pass(value):
    text = f"id={value} and {str(value).upper()}"
    assert privacy.redact(text) == text


# Code a session reads, from real packages: names say token or password, values are expressions.
CODE = [
    "    token: Optional[str] = None",
    "    input_audio_tokens: Optional[int] = None",
    "    password: NotRequired[Optional[str]]",
    "        token = tokens[idx]",
    "            proxy_password=self._socks_options[\"password\"],",
    "    token: TokenOpt = None,\nfrom x import TokenOpt",
    "        aws_session_token=aws_session_token or self.aws_session_token,",
    "            userpass = username + b\":\" + password",
    "            self._auth = BedrockAwsAuth(self._config)",
    "    authorization: Optional[str]",
    "        Args:\n            add_special_tokens: Whether to add the special tokens",
    "    # Second pass: assemble each group",
    "        token.markup = origStr",
    '__all__ = ["BetaResponseBrowserMiddleClickToolUseBlock"]',
    "MLKEM768X25519PrivateKey = rust_openssl.hpke.MLKEM768X25519PrivateKey",
    'GET_STREAM_KEY = "_GET_stream"',
    "    A class, for the type identified by full_name.",
    "Cache restored from key: Linux-node-" + "d5cec956a4223c7392a4411a70b0fd0d2001fe5bc5de4af387adcf9a1bfff8cb",
    "diff --git a/tests/test_tokens.py b/tests/test_tokens.py\n--- a/tests/test_tokens.py\n+++ b/tests/test_tokens.py",
]


@pytest.mark.parametrize("text", CODE, ids=[f"code-{i}" for i in range(len(CODE))])
def test_code_that_names_a_secret_is_no_secret(text):
    assert privacy.redact(text) == text


@pytest.mark.parametrize("text", ["https://[REDACTED:github]@github.com/o/r", "smbclient -U 'x%[REDACTED:password-flag]'",
                                  "VAULT_TOKEN=[REDACT", "curl -u deploy:[REDACTED:password-flag] https://x"])
def test_redacting_twice_changes_nothing(text):
    assert privacy.redact(text) == text


def test_a_value_nested_deeper_than_python_can_walk_is_kept_as_text_and_redacted():
    value: object = "password=" + "Qm9" * 6 + "x1"
    for _ in range(900):
        value = [value]
    cleaned = privacy.clean_tree({"deep": value, "stdout": "ok"})
    assert "Qm9Qm9" not in str(cleaned) and cleaned["stdout"] == "ok"


# Formats written after the held-out corpus passed, to check that its rules generalise (each caught by
# a rule about a place or a shape, none by a name added for it).
def _fresh() -> list[tuple[str, str]]:
    pw, key = mixed(12) + "#x", mixed(24)
    return [
        (f'dotnet user-secrets set "Stripe:WebhookSecret" "{key}"', key),
        (f"az keyvault secret set --vault-name v --name dbpw --value '{pw}'", pw),
        (f"gcloud secrets create db-pass --data-file=- <<< '{pw}'", pw),
        (f"The new root password for the staging box is {pw}, please rotate it.", pw),
        (f"echo '{pw}' | docker secret create db_pw -", pw),
        (f"jwt.encode(payload, '{pw}', algorithm='HS256')", pw),
        (f'os.environ["DB_PASSWORD"] = "{pw}"', pw),
        (f"[Interface]\nPrivateKey = {rnd(B64, 43)}=\nAddress = 10.0.0.1/24", None),
        (f"security add-generic-password -a me -s svc -w '{pw}'", pw),
        (f"heroku config:set SESSION_SECRET={rnd(HEX, 32)}", None),
        (f"Use passphrase: correct-horse-battery-{pw}", pw),
        (f"mosquitto_pub -h broker -u dev -P '{pw}' -t t -m hi", pw),
    ]


@pytest.mark.parametrize("text,secret", _fresh(), ids=[f"fresh-{i}" for i in range(len(_fresh()))])
def test_formats_written_after_the_corpus_are_caught(text, secret):
    cleaned = privacy.redact(text)
    assert "[REDACTED:" in cleaned
    if secret:
        assert secret not in cleaned


def test_a_plain_word_piped_to_a_command_is_kept():
    assert privacy.redact("echo hello | grep token") == "echo hello | grep token"
