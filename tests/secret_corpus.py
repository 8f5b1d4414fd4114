"""Real-format fake credentials, the places a session puts them, and look-alikes that must survive.

Every value is made up in the documented format of its service and assembled at run time from
pieces, so the repository itself never trips a secret scanner. `SECRETS` holds
(format, text as a session shows it, the part that must disappear).
"""

import base64
import json
import string
import uuid

from bench.privacy.draw import ALNUM, B64, HEX, LOWER_DIGITS, UPPER_DIGITS, URLSAFE, Draw  # noqa: F401 - B64, HEX: for tests
from bench.privacy.placements import PLACEMENTS  # noqa: F401 - one definition, shared with the bench

_draw = Draw(20261123)
_rng = _draw.rng
rnd = _draw.rnd


def mixed(length: int, alphabet: str = ALNUM) -> str:
    """Random characters with at least one digit and one letter (like every real key)."""
    return rnd(string.digits, 1) + rnd(string.ascii_letters, 1) + rnd(alphabet, length - 2)


def pem(kind: str) -> tuple[str, str]:
    body = "\n".join(rnd(B64, 64) for _ in range(8))
    block = f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"
    return block, body.splitlines()[3]


def _build() -> list[tuple[str, str, str]]:
    items: list[tuple[str, str, str]] = []

    def add(name: str, value: str, template: str = "value: {} end") -> None:
        items.append((name, template.format(value), value))

    # cloud
    add("aws-access-key-id", "AK" + "IA" + rnd(UPPER_DIGITS, 16), "aws_access_key_id = {}")
    add("aws-secret-key", rnd(B64, 40), "[default]\naws_access_key_id = x\naws_secret_access_key = {}\n")
    add("aws-session-token", rnd(B64, 300), "export AWS_SESSION_TOKEN={}")
    gcp_key, gcp_line = pem("")
    gcp = json.dumps({"type": "service_account", "project_id": "demo-123", "private_key_id": rnd(HEX, 40),
                      "private_key": gcp_key + "\n", "client_email": "ci@demo-123.iam.gserviceaccount.com"}, indent=2)
    items.append(("gcp-service-account", gcp, gcp_line))
    add("gcp-api-key", "AI" + "za" + "Sy" + rnd(URLSAFE, 33), "https://maps.googleapis.com/maps/api/js?key={}")
    add("gcp-oauth-secret", "GOC" + "SPX-" + rnd(URLSAFE, 28), "client_secret: {}")
    account_key = rnd(B64, 86) + "=="
    add("azure-storage", account_key,
        "DefaultEndpointsProtocol=https;AccountName=demo;AccountKey={};EndpointSuffix=core.windows.net")
    add("azure-sas", rnd(URLSAFE, 43) + "%3D", "https://demo.blob.core.windows.net/c/f.txt?sv=2022-11-02&se=2026-12-01&sp=r&sig={}")
    add("azure-ad-secret", rnd(ALNUM, 3) + "8Q~" + rnd(URLSAFE + "~.", 34), "AZURE_CLIENT_SECRET={}")
    add("digitalocean", "dop" + "_v1_" + rnd(HEX, 64), "doctl auth init -t {}")
    add("heroku", "HRKU-" + rnd(URLSAFE, 60), "heroku config --token {}")
    add("cloudflare-token", mixed(40, URLSAFE), "export CLOUDFLARE_API_TOKEN={}")
    add("alibaba", mixed(30), "ALIBABA_CLOUD_ACCESS_KEY_SECRET={}")
    # code hosting
    for prefix in ("ghp", "gho", "ghs", "ghu", "ghr"):
        add(f"github-{prefix}", f"{prefix}_" + mixed(36), "git clone https://{}@github.com/o/r")
    add("github-fine-grained", "github" + "_pat_" + mixed(22) + "_" + mixed(59))
    add("gitlab-pat", "gl" + "pat-" + rnd(URLSAFE, 20), "PRIVATE-TOKEN: {}")
    add("gitlab-runner", "GR1348941" + rnd(URLSAFE, 20), "runner token {}")
    add("bitbucket-app-password", "ATBB" + rnd(ALNUM, 32), "git clone https://me:{}@bitbucket.org/team/repo.git")
    # package registries
    add("npm-token", "npm" + "_" + mixed(36), "//registry.npmjs.org/:_authToken={}")
    add("npm-legacy-auth", base64.b64encode(b"me:" + mixed(16).encode()).decode(), "_auth={}\nalways-auth=true")
    add("pypi-token", "pypi-AgEIcHlwaS5vcmc" + rnd(URLSAFE, 120), "[pypi]\n  username = __token__\n  password = {}")
    add("rubygems", "rubygems" + "_" + rnd(HEX, 48), "GEM_HOST_API_KEY={}")
    add("nuget", "oy2" + rnd(LOWER_DIGITS, 43), "dotnet nuget push pkg.nupkg --api-key {}")
    add("dockerhub", "dckr" + "_pat_" + rnd(URLSAFE, 27), "echo {} | docker login -u me --password-stdin")
    docker_auth = base64.b64encode(b"me:" + mixed(18).encode()).decode()
    add("docker-config-auth", docker_auth, '{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{}"}}}}}}')
    add("jfrog", "AKCp" + mixed(69), "curl -H 'X-JFrog-Art-Api: {}' https://demo.jfrog.io")
    # CI
    add("circleci", "CCIPAT_" + rnd(ALNUM, 22) + "_" + rnd(HEX, 40), "CIRCLE_TOKEN={}")
    add("buildkite", "bkua_" + rnd(LOWER_DIGITS, 40), "BUILDKITE_API_TOKEN={}")
    add("travis", mixed(22, URLSAFE), "travis login --github-token {}")
    add("gha-secret-yaml", mixed(24), "env:\n  DEPLOY_KEY: {}\n  NODE_ENV: production")
    # chat
    add("slack-bot", "xo" + "xb-" + rnd(string.digits, 12) + "-" + rnd(string.digits, 13) + "-" + mixed(24))
    add("slack-webhook", "https://hooks." + "slack.com/services/T" + rnd(UPPER_DIGITS, 8) + "/B" + rnd(UPPER_DIGITS, 10)
        + "/" + mixed(24), "curl -X POST {}")
    add("slack-app", "xa" + "pp-1-A" + rnd(UPPER_DIGITS, 10) + "-" + rnd(string.digits, 13) + "-" + rnd(HEX, 64))
    add("discord-bot", "M" + rnd(ALNUM, 25) + "." + rnd(URLSAFE, 6) + "." + rnd(URLSAFE, 38), "client.run('{}')")
    add("discord-webhook", "https://discord.com/api/webhooks/" + rnd(string.digits, 18) + "/" + rnd(URLSAFE, 68))
    add("telegram", rnd(string.digits, 10) + ":AA" + rnd(URLSAFE, 33), "https://api.telegram.org/bot{}/getMe")
    add("teams-webhook", "https://contoso.webhook.office.com/webhookb2/" + str(uuid.UUID(int=_rng.getrandbits(128)))
        + "/IncomingWebhook/" + rnd(HEX, 32))
    # mail
    add("sendgrid", "SG." + rnd(URLSAFE, 22) + "." + rnd(URLSAFE, 43), "SENDGRID_API_KEY='{}'")
    add("mailgun", "key-" + rnd(HEX, 32), "api_key: {}")
    add("mailchimp", rnd(HEX, 32) + "-us" + str(_rng.randint(1, 20)), "mc = Client(); mc.set_config({{'api_key': '{}'}})")
    add("postmark", str(uuid.UUID(int=_rng.getrandbits(128))), "POSTMARK_SERVER_TOKEN={}")
    add("twilio", "SK" + rnd(HEX, 32), "client = Client('{}', auth)")
    # payment
    add("stripe-secret", "sk" + "_live_" + mixed(24), "Stripe.api_key = '{}'")
    add("stripe-restricted", "rk" + "_live_" + mixed(24))
    add("stripe-webhook", "wh" + "sec_" + mixed(32))
    add("square", "EAAA" + rnd(URLSAFE, 60), "SQUARE_ACCESS_TOKEN={}")
    add("paypal-braintree", "access_token$production$" + rnd(LOWER_DIGITS, 16) + "$" + rnd(HEX, 32))
    add("shopify", "shp" + "at_" + rnd(HEX, 32), "X-Shopify-Access-Token: {}")
    # monitoring
    add("datadog", rnd(HEX, 32), "DD_API_KEY={}")
    add("datadog-app", rnd(HEX, 40), "DATADOG_APP_KEY={}")
    add("newrelic", "NRAK-" + rnd(UPPER_DIGITS, 27), "NEW_RELIC_API_KEY={}")
    add("sentry-auth", "sntrys_" + rnd(URLSAFE, 80), "SENTRY_AUTH_TOKEN={}")
    add("sentry-dsn", rnd(HEX, 32), "sentry_sdk.init(dsn='https://{}@o123456.ingest.sentry.io/4504')")
    add("grafana", "glsa_" + rnd(ALNUM, 32) + "_" + rnd(HEX, 8), "GRAFANA_TOKEN={}")
    # AI
    add("anthropic", "sk-" + "ant-api03-" + rnd(URLSAFE, 93) + "AA", "ANTHROPIC_API_KEY={}")
    add("openai", "sk-" + "proj-" + mixed(48) + "T3Blbk" + "FJ" + mixed(48), "client = OpenAI(api_key='{}')")
    add("huggingface", "hf_" + rnd(string.ascii_letters, 34), "huggingface-cli login --token {}")
    add("replicate", "r8_" + mixed(37), "REPLICATE_API_TOKEN={}")
    add("groq", "gsk_" + mixed(52), "GROQ_API_KEY={}")
    add("cohere", mixed(40), "co = cohere.Client(api_key=\"{}\")")
    # secret managers and infrastructure
    add("vault", "hvs." + rnd(URLSAFE, 90), "export VAULT_TOKEN={}")
    add("terraform-cloud", rnd(ALNUM, 14) + ".atlasv1." + rnd(URLSAFE, 67), 'credentials "app.terraform.io" {{ token = "{}" }}')
    add("doppler", "dp.pt." + rnd(ALNUM, 43), "doppler configure set token {}")
    add("1password", "ops_eyJ" + rnd(URLSAFE, 200), "OP_SERVICE_ACCOUNT_TOKEN={}")
    add("pulumi", "pul-" + rnd(HEX, 40), "PULUMI_ACCESS_TOKEN={}")
    add("age", "AGE-SECRET-KEY-1" + rnd("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58).upper(), "# created: 2026\n{}")
    # connection strings and URLs
    for scheme, template in (("postgres", "DATABASE_URL=postgres://admin:{}@db.example.com:5432/app"),
                             ("mysql", "mysql://root:{}@127.0.0.1:3306/shop"),
                             ("mongodb", "client = MongoClient('mongodb+srv://app:{}@cluster0.ab1cd.mongodb.net/db')"),
                             ("redis-empty-user", "REDIS_URL=redis://:{}@cache.internal:6379/0"),
                             ("amqp", "amqps://guest:{}@mq.example.com/vhost"),
                             ("git-https", "git remote add origin https://deploy:{}@git.example.com/o/r.git")):
        add(f"url-{scheme}", mixed(16), template)
    add("jdbc", mixed(14), "jdbc:mysql://db:3306/app?user=app&password={}&useSSL=true")
    add("odbc", mixed(12) + "!", "Server=tcp:db.example.com,1433;Database=app;User ID=sa;Password={};Encrypt=true")
    # headers
    add("authorization-basic", base64.b64encode(b"admin:" + mixed(14).encode()).decode(),
        "curl -H 'Authorization: Basic {}' https://api.example.com/v1")
    add("authorization-bearer", mixed(40, URLSAFE), "GET /v1/me HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer {}\r\n")
    add("x-api-key", mixed(32), "curl -H \"X-API-Key: {}\" https://api.example.com")
    add("cookie", mixed(32), "Cookie: sessionid={}; csrftoken=abc")
    # files
    add("netrc", mixed(20), "machine api.example.com\n  login me@example.com\n  password {}\n")
    # command-line flags
    add("mysql-p", mixed(14), "mysql -h db -u root -p{} shop")
    add("mysql-p-quoted", mixed(12) + "#!", "mysql -u root -p'{}' -e 'select 1'")
    add("pgpassword", mixed(16), "PGPASSWORD={} psql -h db -U app")
    add("sshpass", mixed(14), "sshpass -p '{}' ssh deploy@host")
    add("curl-u", mixed(16), "curl -u admin:{} https://jenkins.example.com/api/json")
    add("password-eq-flag", mixed(15), "./manage.py createsuperuser --password={}")
    add("password-space-flag", mixed(15), "vault login -method=userpass username=me --password {}")
    add("redis-cli-a", mixed(18), "redis-cli -h cache -a {} ping")
    add("docker-login-p", mixed(18), "docker login -u me -p {} registry.example.com")
    add("openssl-pass", mixed(14), "openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:{}")
    add("keytool", mixed(14), "keytool -importkeystore -srckeystore a.p12 -storepass {} -noprompt")
    # assignments in files and code
    for template in ("DB_PASSWORD={}", "STRIPE_SECRET={}", 'export API_KEY="{}"', "client_secret: {}",
                     '{{"password": "{}"}}', "REDIS_PASSPHRASE='{}'", "jwtSecret = {}", 'dbPass := "{}"',
                     "db.password={}", 'password = "{}"  # toml', "const webhookSecret = '{}';",
                     "signing_key: {}", "'password' => '{}',", 'Password: "{}",', "passwd={}"):
        add("assignment " + template, mixed(20), "# config\nDEBUG=true\n" + template + "\nPORT=8080\n")
    add("high-entropy-auth", mixed(32), "auth: {}")
    add("high-entropy-session", mixed(40), "SESSION_COOKIE={}")
    # private keys and tokens
    for kind in ("RSA ", "OPENSSH ", "EC ", "", "ENCRYPTED ", "DSA "):
        block, line = pem(kind)
        items.append((f"private-key {kind.strip() or 'PKCS8'}", f"key file:\n{block}\nthat was it", line))
    pgp_line = rnd(B64, 64)
    items.append(("pgp-private-key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + rnd(B64, 64) + "\n" + pgp_line
                  + "\n=" + rnd(B64, 4) + "\n-----END PGP PRIVATE KEY BLOCK-----", pgp_line))
    add("doppler-service-token", "dp.st.prd." + rnd(ALNUM, 43), "doppler run --token {} -- npm start")
    add("vault-legacy-token", "s." + mixed(24), "Key   Value\n---   -----\ntoken   {}\ntoken_accessor x")
    add("pgpass-line", mixed(18), "db.internal.example.io:5432:app_prod:app_user:{}\n")
    add("htpasswd-b", mixed(16), "htpasswd -b -c /etc/nginx/.htpasswd admin {}")
    add("smbclient-user-pct", mixed(12), "smbclient //fs01/share -U 'ACME\\backup%{}' -c 'ls'")
    add("xml-password", mixed(14), "<server>\n  <id>nexus</id>\n  <password>{}</password>\n</server>")
    add("php-define", mixed(22), "define('DB_NAME', 'wordpress');\ndefine('DB_PASSWORD', '{}');")
    add("env-fallback-literal", mixed(24), 'export const config = {{ stripeWebhookSecret: process.env.WHSEC ?? "{}" }};')
    add("wpa-psk", mixed(16), 'network={{\n    ssid="Office"\n    psk="{}"\n}}')
    add("okta-ssws", "00" + rnd(URLSAFE, 40), 'curl -H "Authorization: SSWS {}" https://acme.okta.com/api/v1/users')
    add("salesforce-session", "00D" + rnd(ALNUM, 12) + "!" + rnd(ALNUM + "._", 96), "accessToken: {}")
    add("twilio-client-secret", mixed(32), "client = Client('SK" + rnd(HEX, 32) + "', '{}')")
    add("sonarqube", "sq" + "u_" + rnd(HEX, 40), "sonar.login={}")
    add("launchdarkly", "sdk-" + str(uuid.UUID(int=_rng.getrandbits(128))), "ldclient.set_config(Config('{}'))")
    add("bcrypt-hash", "$2y$10$" + rnd(ALNUM + "./", 53), "admin:{}")
    add("requests-auth-tuple", mixed(18), "requests.get(url, auth=('deploy', '{}'))")
    add("jwt", "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "ey" + "J" + rnd(URLSAFE, 40) + "." + rnd(URLSAFE, 43),
        "token = '{}'")
    return items


SECRETS = _build()

LOOKALIKES = [
    rnd(HEX, 40),  # git SHA-1
    "commit " + rnd(HEX, 40) + " fixes the parser",
    rnd(HEX, 64),  # sha256
    rnd(HEX, 32),  # md5
    str(uuid.UUID(int=_rng.getrandbits(128), version=4)),
    str(uuid.UUID(int=_rng.getrandbits(128), version=4)).upper(),
    "session 2ffa905a-a2e0-44a2-9eda-18920feea975 started",
    "session_id=2ffa905a-a2e0-44a2-9eda-18920feea975",
    rnd(B64, 43) + "=",  # base64 blob
    rnd(B64, 40),  # the shape of an AWS secret, without any context
    "integrity sha512-" + rnd(B64, 86) + "==",
    '"integrity": "sha512-' + rnd(B64, 86) + '=="',
    "image@sha256:" + rnd(HEX, 64),
    "data:image/png;base64," + base64.b64encode(bytes(_rng.getrandbits(8) for _ in range(300))).decode(),
    "AKIA1234",
    "ghp_short",
    "sk-learn and risk-management",
    "xoxb is a Slack bot token prefix",
    "https://example.com:8443/path?q=1&page=2",
    "git@github.com:org/repo.git",
    "ssh://git@github.com/org/repo.git",
    "MAX_TOKENS=4096",
    "TOKEN_COUNT=12",
    "PASSWORD_MIN_LENGTH=12",
    "password: ${DB_PASSWORD}",
    "API_KEY=",
    "SECRET_ENABLED=false",
    "eyJhbGciOiJIUzI1NiJ9 is only a JWT header",
    "The password is stored in the vault.",
    "sort_key=created_at_desc",
    "tokenizer=porter unicode61",
    "input_tokens: 123456",
    "AIzaSy is the start of a Google key",
    "channel C024BE91L",
    "request req_" + rnd(HEX, 24),
    "ssh-rsa AAAAB3NzaC1yc2E" + rnd(B64, 200) + " dev@host",
    "-----BEGIN CERTIFICATE-----\n" + rnd(B64, 64) + "\n-----END CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----\n" + rnd(B64, 64) + "\n-----END PUBLIC KEY-----",
    "PWD=/home/dev/proj",
    "OLDPWD=/tmp",
    "primary_key: id_" + rnd(HEX, 12),
    "version: 2.1.330",
    "Bearer token expired at 12:00",
    "if not password:\n    raise ValueError('password required')",
    "password = getpass.getpass()",
    "api_key = os.environ['API_KEY']",
    "token = settings.GITHUB_TOKEN",
    "const apiKey = process.env.API_KEY;",
    "PASSWORD_FILE=/run/secrets/db",
    "headers = {'Authorization': f'Bearer {token}'}",
    "color: #1a2b3c; background: #ffffff",
    "ssh -p 2222 deploy@host",
    "docker run -u 1000:1000 app",
    "git push -u origin main",
    "pip install --upgrade pip",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
    "2026-11-23T10:15:30.123Z INFO request_id=" + rnd(HEX, 32) + " done",
    "/usr/lib/python3.11/site-packages/claude_mem/privacy.py",
    "KEYCLOAK_URL=https://auth.example.com/realms/dev",
    "the plan costs $25.00 a month, $2 per seat",
    "# public key: age1" + rnd("qpzry9x8gf2tvdw0s3jn54khce6mua7l", 58),
    "requests.get(url, auth=(user, password))",
    "tokens = tokenizer.encode(text)",
    "const passwordInput = document.getElementById('password');",
    "AUTH_PROVIDER=github",
    "session_timeout: 3600",
    "def test_login(client):\n    response = client.post('/login', data={'username': 'a', 'password': 'pw'})",
]
