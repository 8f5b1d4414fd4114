"""Held-out look-alikes: realistic text a coding session shows that holds no secret.

Each `Lookalike` is (kind, text). A good redactor keeps every one verbatim: commit SHAs, digests,
lockfile integrity hashes, UUIDs and trace ids, base64 images, minified code, public keys, code and
config that talk about passwords and tokens without holding one, placeholders in `.env.example`,
masked output. Nothing here is a credential value, not even a fake one under a secret-named key
(by policy that would be a secret).

Random parts (hashes, ids) come from a seeded RNG. Run `python -m bench.privacy.lookalikes` for
counts per kind and a self-check.
"""

import json
from typing import NamedTuple

from bench.privacy.draw import ALNUM, B64, BASE32_LOWER, BASE58, BECH32, CROCKFORD, DIGITS, HEX, URLSAFE, Draw, b64, begin, end


class Lookalike(NamedTuple):
    kind: str
    text: str


_draw = Draw(20261208)
_rng = _draw.rng
rnd, uid, raw = _draw.rnd, _draw.uid, _draw.raw



def sha(n: int = 40) -> str:
    return rnd(HEX, n)





def sri(algo: str = "sha512") -> str:
    size = {"sha512": 64, "sha384": 48, "sha256": 32, "sha1": 20}[algo]
    return f"{algo}-" + b64(raw(size))




def wrap(text: str, width: int = 64) -> str:
    return "\n".join(text[i:i + width] for i in range(0, len(text), width))


AUTHORS = [("Dana Whitfield", "dana@acme.dev"), ("Kenji Watanabe", "kenji.w@acme.dev"),
           ("Priya Raman", "priya@acme.dev"), ("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com"),
           ("Lukas Brandt", "lukas.brandt@acme.dev"), ("Amara Okafor", "amara@acme.dev")]
MESSAGES = ["fix(auth): refresh the session before it expires", "chore(deps): bump axios from 1.7.2 to 1.7.7",
            "feat(api): paginate /v2/orders with cursors", "refactor: extract TokenBucket into its own module",
            "docs: explain how to rotate the signing key", "test: cover password reset expiry",
            "fix: handle empty Authorization header", "perf(db): add index on sessions(user_id, expires_at)",
            "ci: cache pnpm store between jobs", "Merge pull request #1482 from acme/feature/sso",
            "revert: \"feat: passwordless login\"", "build: pin node to 20.17.0", "fix(ui): keep theme in sessionStorage",
            "feat(cli): add --dry-run to deploy", "chore: release v1.4.2"]
DATES = ["Tue Nov 5 10:22:13 2024 +0100", "Mon Nov 4 18:03:51 2024 +0000", "Fri Nov 1 09:14:02 2024 -0700",
         "Thu Oct 31 16:45:27 2024 +0530", "Wed Oct 30 11:08:44 2024 +0200"]
NPM_PACKAGES = [("react", "18.3.1"), ("react-dom", "18.3.1"), ("axios", "1.7.7"), ("lodash", "4.17.21"),
                ("zod", "3.23.8"), ("@types/node", "20.17.6"), ("typescript", "5.6.3"), ("vite", "5.4.10"),
                ("esbuild", "0.21.5"), ("@babel/core", "7.26.0"), ("semver", "7.6.3"), ("chalk", "5.3.0")]
PY_PACKAGES = [("requests", "2.32.3"), ("urllib3", "2.2.3"), ("certifi", "2024.8.30"), ("idna", "3.10"),
               ("charset-normalizer", "3.4.0"), ("pydantic", "2.9.2"), ("httpx", "0.27.2"), ("anyio", "4.6.2")]
GO_MODULES = [("github.com/google/uuid", "v1.6.0"), ("golang.org/x/crypto", "v0.28.0"), ("github.com/spf13/cobra", "v1.8.1"),
              ("github.com/jackc/pgx/v5", "v5.7.1"), ("go.uber.org/zap", "v1.27.0"), ("golang.org/x/oauth2", "v0.23.0")]
CRATES = [("serde", "1.0.214"), ("tokio", "1.41.0"), ("ring", "0.17.8"), ("base64", "0.22.1"), ("rand", "0.8.5"),
          ("sha2", "0.10.8")]


def _git(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("git-log", text))

    for i in range(3):
        name, mail = AUTHORS[i]
        add(f"commit {sha()}\nAuthor: {name} <{mail}>\nDate:   {DATES[i]}\n\n    {MESSAGES[i]}\n")
    add("commit " + sha() + " (HEAD -> main, origin/main, origin/HEAD)\nMerge: " + sha(7) + " " + sha(7)
        + f"\nAuthor: {AUTHORS[4][0]} <{AUTHORS[4][1]}>\nDate:   {DATES[3]}\n\n    {MESSAGES[9]}\n\n    SSO via OIDC")
    add("\n".join(f"{sha(7)} {m}" for m in MESSAGES[:10]))
    add("\n".join(f"{sha(9)} (tag: v1.4.{i}) {m}" if i % 3 == 0 else f"{sha(9)} {m}" for i, m in enumerate(MESSAGES[5:12])))
    add("*   " + sha(7) + " Merge branch 'release/1.4'\n|\\  \n| * " + sha(7) + " fix: handle empty Authorization header\n"
        "| * " + sha(7) + " test: cover password reset expiry\n|/  \n* " + sha(7) + " chore: release v1.4.1")
    add("\n".join(f"{sha(7)} HEAD@{{{i}}}: {op}" for i, op in enumerate(
        ["commit: fix(auth): refresh the session before it expires", "rebase (finish): returning to refs/heads/main",
         "checkout: moving from feature/sso to main", "pull: Fast-forward", "reset: moving to HEAD~1"])))
    add("$ git rev-parse HEAD\n" + sha())
    add("\n".join(f"{sha(8)} (Priya Raman 2024-10-2{i} 14:0{i}:11 +0200 {40 + i}) {line}" for i, line in enumerate(
        ["def verify_password(plain: str, hashed: str) -> bool:", "    return bcrypt.checkpw(plain.encode(), hashed.encode())",
         "", "def rotate_token(user_id: int) -> None:"])))
    add("commit " + sha() + "\nAuthor: Kenji Watanabe <kenji.w@acme.dev>\nDate:   " + DATES[1]
        + "\n\n    perf(db): add index on sessions(user_id, expires_at)\n\n"
          " migrations/0042_session_index.py | 18 ++++++++++++++++++\n"
        " 1 file changed, 18 insertions(+)")
    add("[main " + sha(7) + "] fix(ui): keep theme in sessionStorage\n 2 files changed, 9 insertions(+), 3 deletions(-)")
    add("pick " + sha(7) + " feat(api): paginate /v2/orders with cursors\nsquash " + sha(7) + " fixup tests\npick " + sha(7)
        + " docs: explain how to rotate the signing key\n\n# Rebase " + sha(7) + ".." + sha(7) + " onto " + sha(7) + " (3 command"
                "s)")
    add("$ git describe --tags\nv1.4.2-14-g" + sha(7))
    add("\n".join(f"{sha()}\t{ref}" for ref in ["HEAD", "refs/heads/main", "refs/heads/release/1.4", "refs/tags/v1.4.2",
                                                 "refs/tags/v1.4.2^{}"]))
    add("\n".join(f" {sha()} {path} (v{v})" for path, v in [("vendor/protobuf", "27.3"), ("third_party/googletest", "1.15.2")]))
    add("To github.com:acme/api.git\n   " + sha(7) + ".." + sha(7) + "  main -> main")
    add(sha() + " is the first bad commit\ncommit " + sha() + "\nAuthor: Lukas Brandt <lukas.brandt@acme.dev>\n"
        "Date:   " + DATES[4] + "\n\n    refactor: extract TokenBucket into its own module")
    add("100644 blob " + sha() + "\t.gitignore\n100644 blob " + sha() + "\tREADME.md\n040000 tree " + sha() + "\tsrc\n"
        "100755 blob " + sha() + "\tscripts/bootstrap.sh")


def _diffs(items: list[Lookalike]) -> None:
    def add(path: str, hunk: str) -> None:
        header = f"diff --git a/{path} b/{path}\nindex {sha(7)}..{sha(7)} 100644\n--- a/{path}\n+++ b/{path}\n"
        items.append(Lookalike("diff", header + hunk))

    add("app/auth.py", "@@ -18,9 +18,11 @@ def login(request):\n     user = User.get_by_email(form.email)\n"
        "-    if not check_password(user, form.password):\n"
        "+    if user is None or not verify_password(form.password, user.password_hash):\n"
        "         raise AuthError(\"invalid credentials\")\n+    session.rotate()\n     return redirect(\"/\")")
    add("src/api/client.ts", "@@ -4,7 +4,8 @@ import axios from 'axios';\n export const api = axios.create({\n"
        "   baseURL: import.meta.env.VITE_API_URL,\n-  timeout: 5000,\n+  timeout: 10_000,\n+  withCredentials: true,\n });")
    add("internal/server/middleware.go", "@@ -31,6 +31,10 @@ func Auth(next http.Handler) http.Handler {\n"
        " \treturn http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {\n"
        " \t\ttoken := strings.TrimPrefix(r.Header.Get(\"Authorization\"), \"Bearer \")\n+\t\tif token == \"\" {\n"
        "+\t\t\thttp.Error(w, \"missing token\", http.StatusUnauthorized)\n+\t\t\treturn\n+\t\t}")
    add("src/lib.rs", "@@ -1,5 +1,6 @@\n use std::collections::HashMap;\n+use std::time::Duration;\n\n pub struct Cache {\n"
        "     entries: HashMap<String, Vec<u8>>,\n+    ttl: Duration,\n }")
    add(".github/workflows/ci.yml", "@@ -12,7 +12,7 @@ jobs:\n     steps:\n-      - uses: actions/checkout@v3\n"
        "+      - uses: actions/checkout@v4\n       - uses: actions/setup-node@v4\n         with:\n           node-version: 20")
    add("migrations/0042_session_index.sql", "@@ -0,0 +1,4 @@\n+CREATE INDEX CONCURRENTLY IF NOT EXISTS sessions_user_expires\n"
        "+    ON sessions (user_id, expires_at);\n+\n+ALTER TABLE users ADD COLUMN password_changed_at timestamptz;")
    add("README.md", "@@ -40,6 +40,9 @@ ## Configuration\n Set `DATABASE_URL` before starting the server.\n+\n"
        "+To rotate the signing key, run `make rotate-key` and redeploy; old tokens stay valid for 24 hours.\n+")
    add("styles/theme.css", "@@ -1,6 +1,6 @@\n :root {\n-  --brand: #3b82f6;\n+  --brand: #2563eb;\n   --surface: #0f172a;\n"
        "   --radius: 0.5rem;\n }")
    add("Dockerfile", "@@ -1,4 +1,4 @@\n-FROM python:3.11-slim@sha256:" + sha(64) + "\n+FROM python:3.12-slim@sha256:" + sha(64)
        + "\n WORKDIR /app\n COPY requirements.txt .\n RUN pip install --no-cache-dir -r requirements.txt")
    add("package.json", "@@ -18,7 +18,7 @@\n   \"dependencies\": {\n-    \"axios\": \"^1.7.2\",\n+    \"axios\": \"^1.7.7\",\n"
        "     \"react\": \"^18.3.1\",\n     \"zod\": \"^3.23.8\"\n   },")
    add("tests/test_tokens.py", "@@ -9,6 +9,12 @@ from app.tokens import TokenBucket\n"
        "+def test_bucket_refills_after_interval(clock):\n+    bucket = TokenBucket(capacity=10, refill_per_second=2)\n"
        "+    bucket.take(10)\n+    clock.advance(5)\n+    assert bucket.available == 10\n+")
    add("config/settings.py", "@@ -88,7 +88,7 @@ AUTH_PASSWORD_VALIDATORS = [\n"
        "     {\"NAME\": \"django.contrib.auth.password_validation.MinimumLengthValidator\",\n"
        "-     \"OPTIONS\": {\"min_length\": 8}},\n+     \"OPTIONS\": {\"min_length\": 12}},\n ]")


def _lockfiles(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("lockfile", text))

    for name, version in NPM_PACKAGES[:3]:
        add(f'    "node_modules/{name}": {{\n      "version": "{version}",\n'
            f'      "resolved": "https://registry.npmjs.org/{name}/-/{name.split("/")[-1]}-{version}.tgz",\n'
            f'      "integrity": "{sri()}",\n      "license": "MIT"\n    }},')
    add('    "semver": {\n      "version": "5.7.1",\n      "resolved": "https://registry.npmjs.org/semver/-/semver-5.7.1.tgz",\n'
        '      "integrity": "' + sri("sha1") + '",\n      "dev": true\n    },')
    for name, version in NPM_PACKAGES[3:5]:
        add(f'{name}@^{version}:\n  version "{version}"\n'
            f'  resolved "https://registry.yarnpkg.com/{name}/-/{name}-{version}.tgz#{sha()}"\n'
            f'  integrity {sri()}')
    add('"typescript@npm:^5.6.3":\n  version: 5.6.3\n  resolution: "typescript@npm:5.6.3"\n  bin:\n    tsc: bin/tsc\n'
        '  checksum: 10c0/' + sha(128) + '\n  languageName: node\n  linkType: hard')
    add("  /vite@5.4.10:\n    resolution: {integrity: " + sri() + "}\n    engines: {node: ^18.0.0 || >=20.0.0}\n    hasBin: true")
    add('[[package]]\nname = "requests"\nversion = "2.32.3"\ndescription = "Python HTTP for Humans."\noptional = false\n'
        'python-versions = ">=3.8"\nfiles = [\n'
        '    {file = "requests-2.32.3-py3-none-any.whl", hash = "sha256:' + sha(64) + '"},\n'
        '    {file = "requests-2.32.3.tar.gz", hash = "sha256:' + sha(64) + '"},\n]')
    for name, version in CRATES[:2]:
        add(f'[[package]]\nname = "{name}"\nversion = "{version}"\n'
            f'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
            f'checksum = "{sha(64)}"')
    add("\n".join(f"{m} {v} h1:{b64(raw(32))}\n{m} {v}/go.mod h1:{b64(raw(32))}" for m, v in GO_MODULES[:3]))
    add('        "certifi": {\n            "hashes": [\n                "sha256:' + sha(64) + '",\n'
        '                "sha256:' + sha(64)
        + '"\n            ],\n            "index": "pypi",\n            "markers": "python_version >= \'3.6\'",\n'
        '            "version": "==2024.8.30"\n        },')
    add('[[package]]\nname = "anyio"\nversion = "4.6.2"\nsource = { registry = "https://pypi.org/simple" }\n'
        'sdist = { url = "https://files.pythonhosted.org/packages/' + sha(2) + "/" + sha(2) + "/" + sha(60)
        + '/anyio-4.6.2.tar.gz", hash = "sha256:' + sha(64) + '", size = 173422 }')
    add('        {\n            "name": "guzzlehttp/guzzle",\n            "version": "7.9.2",\n            "source": {\n'
        '                "type": "git",\n                "url": "https://github.com/guzzle/guzzle.git",\n'
        '                "reference": "' + sha() + '"\n            },\n            "dist": {\n                "type": "zip",\n'
        '                "shasum": ""\n            }\n        },')
    add('    "nixpkgs": {\n      "locked": {\n        "lastModified": 1730785428,\n        "narHash": "sha256-'
        + b64(raw(32)) + '",\n        "owner": "NixOS",\n        "repo": "nixpkgs",\n        "rev": "' + sha() + '",\n'
        '        "type": "github"\n      },')
    add('      "Newtonsoft.Json": {\n        "type": "Direct",\n        "requested": "[13.0.3, )",\n'
        '        "resolved": "13.0.3",\n'
        '        "contentHash": "' + b64(raw(64)) + '"\n      },')
    add("CHECKSUMS\n  rack (3.1.8) sha256=" + sha(64) + "\n  rails (7.2.2) sha256=" + sha(64) + "\n  nokogiri "
            "(1.16.7-x86_64-linux) sha256="
        + sha(64))
    add('  "jason": {:hex, :jason, "1.4.4", "' + sha(64) + '", [:mix], [{:decimal, "~> 1.0 or ~> 2.0", '
        '[hex: :decimal, repo: "hexpm", optional: true]}], "hexpm", "' + sha(64) + '"},')
    add('provider "registry.terraform.io/hashicorp/aws" {\n  version     = "5.74.0"\n  constraints = "~> 5.0"\n  hashes = [\n'
        '    "h1:' + b64(raw(32)) + '",\n    "zh:' + sha(64) + '",\n    "zh:' + sha(64) + '",\n  ]\n}')


def _docker(items: list[Lookalike]) -> None:
    def digest(text: str) -> None:
        items.append(Lookalike("docker-digest", text))

    def table(text: str) -> None:
        items.append(Lookalike("docker-table", text))

    digest("FROM node:20.17.0-alpine3.20@sha256:" + sha(64) + " AS build")
    digest("image: ghcr.io/acme/api@sha256:" + sha(64))
    digest("20.17.0-alpine3.20: Pulling from library/node\n" + "\n".join(f"{sha(12)}: Pull complete" for _ in range(4))
           + "\nDigest: sha256:" + sha(64) + "\nStatus: Downloaded newer image for node:20.17.0-alpine3.20")
    digest("#12 exporting to image\n#12 exporting layers 2.1s done\n#12 writing image sha256:" + sha(64) + " done\n"
           "#12 naming to docker.io/acme/api:1.4.2 done")
    digest("$ docker inspect --format '{{.Id}}' acme/api:1.4.2\nsha256:" + sha(64))
    digest(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [
        {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:" + sha(64), "size": 1613,
         "platform": {"architecture": arch, "os": "linux"}} for arch in ("amd64", "arm64")]}, indent=2))
    digest("pushing manifest for ghcr.io/acme/worker:1.4.2@sha256:" + sha(64) + " 0.6s done")
    digest("    Image:          ghcr.io/acme/api:1.4.2\n    Image ID:       ghcr.io/acme/api@sha256:" + sha(64)
           + "\n    Container ID:   containerd://" + sha(64))
    digest("$ crane digest cgr.dev/chainguard/static:latest\nsha256:" + sha(64))
    digest("1.4.2: digest: sha256:" + sha(64) + " size: 2201")
    table("REPOSITORY        TAG       DIGEST                                                                    IMAGE ID       "
          "CREATED        SIZE\n" + "\n".join(f"acme/{n:<12} {t:<9} sha256:{sha(64)}   {sha(12)}   {c:<14} {s}" for n, t, c, s in
                                              [("api", "1.4.2", "2 hours ago", "187MB"),
                                               ("worker", "1.4.2", "2 hours ago", "203MB")]))
    table("REPOSITORY          TAG            IMAGE ID       CREATED        SIZE\n" + "\n".join(
        f"{r:<19} {t:<14} {sha(12)}   {c:<14} {s}" for r, t, c, s in
        [("postgres", "16", "3 weeks ago", "432MB"), ("redis", "7-alpine", "4 weeks ago", "41MB"),
         ("acme/api", "latest", "5 minutes ago", "187MB")]))
    table("CONTAINER ID   IMAGE              COMMAND                  CREATED       STATUS                 PORTS                 "
          "   "
          "NAMES\n" + "\n".join(f"{sha(12)}   {i:<18} {c:<24} {t:<13} {s:<22} {p:<24} {n}" for i, c, t, s, p, n in
                                [("postgres:16", '"docker-entrypoint.s…"', "2 hours ago", "Up 2 hours (healthy)",
                                  "0.0.0.0:5432->5432/tcp", "api-db-1"),
                                 ("redis:7-alpine", '"docker-entrypoint.s…"', "2 hours ago", "Up 2 hours", "6379/tcp",
                                  "api-cache-1")]))
    table("NAME         IMAGE                 COMMAND                  SERVICE   CREATED         STATUS         PORTS\n"
          "api-web-1    acme/api:1.4.2        \"gunicorn app:app -b…\"   web       3 minutes ago   Up 3 minutes   "
          "0.0.0.0:8000->8000/tcp")
    table("NETWORK ID     NAME             DRIVER    SCOPE\n" + "\n".join(f"{sha(12)}   {n:<15}  {d:<8}  local" for n, d in
                                                                         [("bridge", "bridge"), ("host", "host"),
                                                                          ("api_default", "bridge")]))
    table("DRIVER    VOLUME NAME\nlocal     " + sha(64) + "\nlocal     api_pgdata")
    table("TYPE            TOTAL     ACTIVE    SIZE      RECLAIMABLE\n"
          "Images          14        3         4.21GB    3.02GB (71%)\n"
          "Containers      3         3         1.2MB     0B (0%)\nLocal Volumes   5         2         1.87GB    611MB (32%)")
    table("ID                                                                        NAME      PLATFORM\n"
          "sha256:" + sha(64) + "   builder   linux/amd64,linux/arm64")


def _ids_in_logs(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("uuid-log", text))

    add(f"2024-11-05T10:22:13.481Z INFO  request_id={uid()} method=GET path=/v2/orders status=200 duration_ms=42")
    rid = uid()
    add(f"START RequestId: {rid} Version: $LATEST\nEND RequestId: {rid}\n"
        f"REPORT RequestId: {rid}\tDuration: 112.45 ms\tBilled Duration: 113 ms\tMemory Size: 512 MB\tMax Memory Used: 98 MB")
    add(f"[2024-11-05 10:22:14,002: INFO/MainProcess] Task app.tasks.send_receipt[{uid()}] received")
    add(f"[2024-11-05 10:22:15,337: INFO/ForkPoolWorker-2] Task app.tasks.send_receipt[{uid()}] succeeded in 1.21s: None")
    add(f'{{"level":"info","ts":"2024-11-05T10:22:13Z","msg":"order created","order_id":"{uid()}","user_id":"{uid()}",'
        f'"amount_cents":4200}}')
    add(f"x-ms-request-id: {uid()}\nx-ms-correlation-request-id: {uid()}\n"
        f"x-ms-routing-request-id: WESTEUROPE:20241105T102213Z:{uid()}")
    add(f"X-GitHub-Request-Id: {rnd('0123456789ABCDEF', 4)}:{rnd('0123456789ABCDEF', 6)}:{rnd('0123456789ABCDEF', 7)}:"
        f"{rnd('0123456789ABCDEF', 7)}:{rnd('0123456789ABCDEF', 8)}")
    add(f"~/.claude/projects/-home-dana-src-acme-api/{uid()}.jsonl")
    add(f"Job {uid()} moved from queued to running on worker-3")
    add(f"2024-11-05 10:22:13.5 UTC [48213] LOG:  connection authorized: user=app database=app application_name=api-{uid()[:8]}")
    add(f"HTTP/1.1 201 Created\nLocation: /v2/orders/{uid()}\nX-Request-Id: {uid()}\nContent-Type: application/json")
    add(f"Idempotency-Key: {uid()}\nContent-Type: application/json")
    add(f"upload {uid()}.png -> s3://acme-uploads/avatars/{uid()}.png (48.2 KiB)")
    add(f"W1105 10:22:13.481920       1 reflector.go:561] pod default/api-7d9f8c6b5-x2k4q uid={uid()} resourceVersion=48213377")
    add(f"session {uid()} resumed from transcript; 14 observations loaded")
    add(f"ULID 01J{rnd(CROCKFORD, 23)} assigned to event checkout.completed")
    add(f"ksuid={rnd(ALNUM, 27)} event=user.signed_in")


def _traces(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("trace", text))

    add(f"traceparent: 00-{sha(32)}-{sha(16)}-01\ntracestate: rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
    add(f"X-Amzn-Trace-Id: Root=1-{sha(8)}-{sha(24)};Parent={sha(16)};Sampled=1")
    add(f"dd.trace_id={_rng.getrandbits(63)} dd.span_id={_rng.getrandbits(63)} dd.service=api dd.env=prod dd.version=1.4.2")
    add(json.dumps({"traceId": sha(32), "spanId": sha(16), "parentSpanId": sha(16), "name": "GET /v2/orders", "kind": 2,
                    "startTimeUnixNano": "1730802133481000000", "endTimeUnixNano": "1730802133523000000"}, indent=2))
    add(f"X-B3-TraceId: {sha(32)}\nX-B3-SpanId: {sha(16)}\nX-B3-ParentSpanId: {sha(16)}\nX-B3-Sampled: 1")
    add(f"Sentry caught an exception. Event ID: {sha(32)}")
    add(f"sentry-trace: {sha(32)}-{sha(16)}-1\nbaggage: sentry-environment=production,sentry-release=api%401.4.2,"
        f"sentry-trace_id={sha(32)},sentry-sampled=true")
    add(f"uber-trace-id: {sha(16)}:{sha(16)}:0:1")
    add(f"X-Cloud-Trace-Context: {sha(32)}/{_rng.getrandbits(62)};o=1")
    add(f"X-Cache: Miss from cloudfront\nVia: 1.1 {sha(32)}.cloudfront.net (CloudFront)\nX-Amz-Cf-Pop: FRA56-P5\n"
        f"X-Amz-Cf-Id: {rnd(URLSAFE, 54)}==")
    add(f"span_id={sha(16)} trace_id={sha(32)} http.status_code=504 error=upstream timeout")


def _base64_media(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("base64-image", text))

    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00\x1f\xf3\xffa"
    add('<img alt="logo" src="data:image/png;base64,' + b64(png + raw(180)) + '">')
    add(".icon-check {\n  background-image: url(\"data:image/png;base64," + b64(png + raw(120)) + "\");\n}")
    add("![spinner](data:image/gif;base64," + b64(b"GIF89a\x10\x00\x10\x00\xf4\x00\x00" + raw(150)) + ")")
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M12 2L2 7l10 5 10-5-10-5z" '
           'fill="#2563eb"/></svg>')
    add('<link rel="icon" href="data:image/svg+xml;base64,' + b64(svg.encode()) + '">')
    add("@font-face {\n  font-family: 'Inter';\n  src: url(data:font/woff2;base64," + b64(b"wOF2\x00\x01\x00\x00" + raw(300))
        + ") format('woff2');\n  font-display: swap;\n}")
    add('{"id": 812, "name": "avatar.jpg", "thumbnail": "data:image/jpeg;base64,' + b64(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"
                                                                                      + raw(200)) + '"}')
    add("const placeholder = 'data:image/webp;base64," + b64(b"RIFF\x1a\x01\x00\x00WEBPVP8 " + raw(160)) + "';")
    pdf = b64(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + raw(140))
    add('<a download="report.pdf" href="data:application/pdf;base64,' + pdf + '">PDF</a>')
    add("blurDataURL: \"data:image/png;base64," + b64(png + raw(60)) + "\",")


def _minified(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("minified-js", text))

    add('!function(e,t){"object"==typeof exports&&"undefined"!=typeof module?module.exports=t():"function"==typeof define&&'
        'define.amd?define(t):(e="undefined"!=typeof globalThis?globalThis:e||self).dayjs=t()}(this,(function(){"use strict";'
        'var t=1e3,e=6e4,n=36e5,r="millisecond",i="second",s="minute",u="hour",a="day",o="week"')
    add('(self.webpackChunk_N_E=self.webpackChunk_N_E||[]).push([[888],{6840:function(e,t,n){(window.__NEXT_P=window.__NEXT_P||[]'
        ')'
        '.push(["/_app",function(){return n(3847)}])},3847:function(e,t,n){"use strict";n.r(t),n.d(t,{default:function(){return '
        'u}})'
        ';var r=n(5893),o=n(7294);function u(e){let{Component:t,pageProps:n}=e;return(0,r.jsx)(t,{...n})}}}]);')
    add('{"version":3,"file":"index-' + sha(8) + '.js","sources":["../../src/main.tsx","../../src/App.tsx"],"names":["createRoot"'
                                                 ','
        '"App","useState"],"mappings":"AAAA,SAASA,kBAAkB;AAC3B,OAAOC,SAAS;AAEhBD,WAAWE,SAASC,eAAe,MAAM,GAAG,OAAO,CAAC,CAAC;AACrD,'
        'MAAMC,IAAI,GAAGC,QAAQ,CAAC,CAAC,CAAC"}')
    add(".btn{display:inline-flex;align-items:center;padding:.5rem 1rem;border-radius:.375rem;background:#2563eb;color:#fff}"
        ".btn:hover{background:#1d4ed8}.btn[disabled]{opacity:.5;cursor:not-allowed}@media (prefers-color-scheme:dark)"
        "{.btn{background:#3b82f6}}")
    add("dist/index.html                   0.46 kB │ gzip:  0.30 kB\ndist/assets/index-" + rnd(URLSAFE, 8)
        + ".css   12.31 kB │ gzip:  3.12 kB\ndist/assets/index-" + rnd(URLSAFE, 8) + ".js   142.77 kB │ gzip: 46.02 kB\n"
        "✓ built in 2.41s")
    add('self.__BUILD_MANIFEST={__rewrites:{afterFiles:[],beforeFiles:[],fallback:[]},"/":["static/chunks/pages/index-'
        + sha(16) + '.js"],"/_error":["static/chunks/pages/_error-' + sha(16) + '.js"],sortedPages:["/","/_app","/_error"]};')
    add('<script src="/main.' + sha(16) + '.js" type="module"></script><script src="/polyfills.' + sha(16)
        + '.js" type="module"></script>')
    add("const a=e=>e.reduce((t,n)=>({...t,[n.id]:n}),{}),b=(e,t)=>e.filter(n=>n.tenantId===t&&!n.archivedAt).map(n=>"
        "({key:n.id,label:n.displayName,primaryKey:n.primaryKey}));export{a as indexById,b as visibleOptions};")
    add("var _0x3f2a=['getItem','theme','sessionStorage','setAttribute','data-theme'];(function(){var t=window[_0x3f2a[2]]"
        "[_0x3f2a[0]](_0x3f2a[1])||'light';document.documentElement[_0x3f2a[3]](_0x3f2a[4],t)})();")
    add("//# sourceMappingURL=data:application/json;charset=utf-8;base64," + b64(json.dumps(
        {"version": 3, "sources": ["src/util.ts"], "names": ["clamp"], "mappings": "AAAO,SAASA,MAAM"}).encode()))


def _fixtures(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("test-fixture", text))

    add(f"@pytest.fixture\ndef order():\n"
        f"    return Order(id=UUID(\"{uid()}\"), customer_id=42, total_cents=4200, currency=\"EUR\")")
    add("class UserFactory(factory.Factory):\n    class Meta:\n        model = User\n\n    id = factory.Sequence(lambda n: n)\n"
        "    email = factory.Faker(\"email\")\n    password_hash = factory.LazyFunction(lambda: make_password(None))")
    add(json.dumps([{"model": "shop.product", "pk": i, "fields": {"sku": f"SKU-{rnd(DIGITS, 6)}", "name": name,
                                                                   "price": price}}
                    for i, (name, price) in enumerate([("Mug", "12.00"), ("Tote bag", "18.50")], start=1)], indent=2))
    add("exports[`OrderSummary renders totals 1`] = `\n<div\n  className=\"summary\"\n  data-testid=\"order-" + uid() + "\"\n>\n"
        "  Total: €42.00\n</div>\n`;")
    add('@pytest.mark.parametrize("data, expected", [\n'
        '    (b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),\n'
        '    (b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),\n])\n'
        "def test_sha256(data, expected):\n    assert hashlib.sha256(data).hexdigest() == expected")
    add("var tests = []struct {\n\tname string\n\tin   string\n\twant string\n}{\n"
        "\t{\"empty\", \"\", \"d41d8cd98f00b204e9800998ecf8427e\"},\n"
        "\t{\"abc\", \"abc\", \"900150983cd24fb0d6963f7d28e17f72\"},\n}")
    add("alice:\n  id: 1\n  email: alice@example.com\n  confirmed_at: <%= 2.days.ago %>\n  uuid: " + uid()
        + "\n\nbob:\n  id: 2\n  email: bob@example.com\n  uuid: " + uid())
    add("it('rejects an expired reset link', async () => {\n  const res = await request(app).post('/password/reset')"
        ".send({ token: expiredToken(), password: newPassword() });\n  expect(res.status).toBe(410);\n});")
    add("def test_login_requires_password(client):\n    resp = client.post(\"/login\", data={\"email\": \"a@example.com\"})\n"
        "    assert resp.status_code == 422\n    assert resp.json()[\"detail\"][0][\"loc\"] == [\"body\", \"password\"]")
    add("FAKE_USER_ID = \"00000000-0000-0000-0000-000000000001\"\nFAKE_ORG_ID = \"00000000-0000-0000-0000-0000000000aa\"\n"
        "NIL_UUID = \"00000000-0000-0000-0000-000000000000\"")
    add("{\n  \"id\": \"evt_test_webhook\",\n  \"type\": \"invoice.paid\",\n"
        "  \"data\": {\"object\": {\"id\": \"in_" + rnd(ALNUM, 24)
        + "\", \"amount_paid\": 4200, \"currency\": \"eur\"}}\n}")
    add("snapshot['test_render_receipt 1'] = GenericRepr(\"Receipt(order='" + uid() + "', lines=3, total=Decimal('42.00'))\")")


def _urls(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("url-query", text))

    add("https://acme.dev/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=black_friday_2024&utm_content=hero_cta")
    add("GET /api/v2/orders?page=3&per_page=50&sort=-created_at&status=paid HTTP/1.1")
    add("https://www.youtube.com/watch?v=" + rnd(URLSAFE, 11) + "&t=42s")
    add("https://www.google.com/search?q=postgres+partial+index+on+expires_at&hl=en&sourceid=chrome&ie=UTF-8")
    add("https://github.com/acme/api/commit/" + sha())
    add("https://github.com/acme/api/compare/" + sha(7) + "..." + sha(7))
    add("https://github.com/acme/api/blob/" + sha() + "/src/auth/session.py#L42-L58")
    add("https://gitlab.acme.dev/platform/infra/-/merge_requests/812/diffs?commit_id=" + sha())
    add("https://www.amazon.com/dp/B0" + rnd("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", 8) + "/ref=sr_1_3?crid=" + rnd(
        "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", 13) + "&keywords=usb+c+hub&qid=1730802133&sr=8-3")
    add("https://www.openstreetmap.org/?mlat=48.85837&mlon=2.29448#map=17/48.85837/2.29448")
    add("https://api.github.com/graphql?after=Y3Vyc29yOnYyOpK5MjAyNC0xMS0wNVQxMDoyMjoxMyswMDowMM4" + rnd(URLSAFE, 6)
        + "&first=50")
    add("https://acme.dev/blog/zero-downtime-migrations?fbclid=IwAR" + rnd(URLSAFE, 57))
    add("https://cdn.acme.dev/app.css?v=" + sha(8))
    add("https://acme-uploads.s3.eu-west-1.amazonaws.com/reports/2024-11.pdf?versionId=" + rnd(URLSAFE, 32))
    add("https://accounts.google.com/o/oauth2/v2/auth?client_id=1234567890-" + rnd("abcdefghijklmnopqrstuvwxyz0123456789", 32)
        + ".apps.googleusercontent.com&redirect_uri=https%3A%2F%2Facme.dev%2Fauth%2Fcallback&response_type=code"
        "&scope=openid%20email%20profile&access_type=online")
    add("https://stackoverflow.com/questions/4068393/how-to-verify-a-password-hash?answertab=votes#tab-top")
    add("https://docs.acme.dev/search?q=rotate+api+key&ref=nav&lang=en")
    add("https://registry.npmjs.org/axios/-/axios-1.7.7.tgz?ref=lockfile")
    add("https://acme.atlassian.net/jira/software/projects/API/boards/12?selectedIssue=API-481&quickFilter=" + rnd(DIGITS, 3))


def _prose(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("prose", text))

    add("The internationalization work touches every component; counterintuitively the hardest part was pluralization, "
        "not right-to-left layout.")
    add("Access tokens expire after an hour; the client refreshes them with the refresh token, and a refresh token "
        "that is used twice revokes the whole session family.")
    add("I rotated the signing key in the dashboard and redeployed; tokens issued before 10:20 UTC stay valid until they expire.")
    add("Passwords are hashed with Argon2id (m=19456, t=2, p=1) and we never log them; the reset flow emails a single-use "
        "link that is valid for 30 minutes.")
    add("Donaudampfschifffahrtsgesellschaftskapitän is a fine test string for word wrapping, and so is "
        "pneumonoultramicroscopicsilicovolcanoconiosis.")
    add("Fixed in #1482: the session cookie now has SameSite=Lax, and the CSRF middleware is skipped only for the webhook "
        "endpoint (csrf_exempt).")
    add("I couldn't reproduce the 401: the request carried no Authorization header at all, so the proxy must be stripping it.")
    add("To keep secrets out of the repository, the app reads them from AWS Secrets Manager at startup; locally it falls "
        "back to the values in your .env (not committed).")
    add("Summary: renamed `getTokenCount` to `countTokens`, removed the unused `legacyApiKeyHeader` option, and added "
        "tests for `passwordStrength()`.")
    add("The migration adds a nullable `password_changed_at` column and backfills it in batches of 10 000 rows; it took "
        "4 minutes 12 seconds on staging.")
    add("Thanks for the review! I've switched from localStorage to sessionStorage for the theme, and the keyboard shortcut "
        "is now ⌘K instead of Ctrl+Shift+P.")
    add("Our SLO is 99.9% over 30 days; the error budget is 43 minutes 12 seconds, and we burned 18 minutes of it on "
        "November 4th.")
    add("Heads-up: the key ceremony for the new root CA is on Thursday at 14:00 CET in room B2; bring your hardware token.")
    add("The tokenizer splits `passwordless` into three tokens, which is why the embedding search misses it.")


def _code(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("code", text))

    add("def verify_password(password: str, hashed: bytes) -> bool:\n    return bcrypt.checkpw(password.encode(), hashed)")
    add('token = request.headers.get("Authorization", "").removeprefix("Bearer ")\nif not token:\n    abort(401)')
    add("const apiKey = process.env.API_KEY;\nif (!apiKey) throw new Error('API_KEY is not set');")
    add("if (!secretKey) {\n  throw new Error(\"Missing STRIPE_SECRET_KEY\");\n}\nconst stripe = new Stripe(secretKey, "
        "{ apiVersion: \"2024-06-20\" });")
    add("password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=12))")
    add("response = client.messages.create(\n    model=\"claude-sonnet-4-5\",\n    max_tokens=4096,\n"
        "    messages=[{\"role\": \"user\", \"content\": prompt}],\n)")
    add("type Keys<T> = keyof T;\ntype Getters<T> = { [K in keyof T as `get${Capitalize<string & K>}`]: () => T[K] };")
    add("@Entity()\nexport class Session {\n  @PrimaryGeneratedColumn('uuid')\n  id: string;\n\n"
        "  @Column({ name: 'token_hash' })\n"
        "  tokenHash: string;\n}")
    add("const theme = sessionStorage.getItem('theme') ?? 'light';\ndocument.documentElement.dataset.theme = theme;")
    add("from tokenizers import Tokenizer\n\ntokenizer = Tokenizer.from_pretrained(\"bert-base-uncased\")\n"
        "ids = tokenizer.encode(text).ids")
    add("@csrf_exempt\n@require_POST\ndef stripe_webhook(request):\n    payload = request.body\n"
        "    sig_header = request.META[\"HTTP_STRIPE_SIGNATURE\"]\n"
        "    event = stripe.Webhook.construct_event(payload, sig_header, "
        "settings.STRIPE_WEBHOOK_SECRET)")
    add("api_key = os.environ[\"OPENAI_API_KEY\"]\nclient = OpenAI(api_key=api_key)")
    add("func loadConfig() (*Config, error) {\n\tpassword := os.Getenv(\"DB_PASSWORD\")\n\tif password == \"\" {\n"
        "\t\treturn nil, errors.New(\"DB_PASSWORD must be set\")\n\t}\n\treturn &Config{Password: password}, nil\n}")
    add("let token = std::env::var(\"GITHUB_TOKEN\").context(\"GITHUB_TOKEN not set\")?;\n"
        "let client = Octocrab::builder().personal_token(token).build()?;")
    add("@Value(\"${spring.datasource.password}\")\nprivate String password;")
    add("const { data: session } = useSession();\nif (!session?.accessToken) return <SignInButton />;")
    add("class PasswordResetTokenGenerator:\n    key_salt = \"django.contrib.auth.tokens.PasswordResetTokenGenerator\"\n"
        "    algorithm = None\n    _secret = None")
    add("password = getpass.getpass(\"Database password: \")\n"
        "conn = psycopg.connect(host=args.host, user=args.user, password=password)")
    add("resource \"random_password\" \"db\" {\n  length  = 32\n  special = true\n}\n\nresource \"aws_db_instance\" \"main\" {\n"
        "  password = random_password.db.result\n}")
    add("headers = {\"Authorization\": f\"Bearer {token}\", \"Accept\": \"application/vnd.github+json\"}")
    add("var jwtKey = []byte(os.Getenv(\"JWT_SIGNING_KEY\"))\n\nfunc sign(claims jwt.Claims) (string, error) {\n"
        "\treturn jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(jwtKey)\n}")
    add("secret = secrets.token_urlsafe(32)\nstore.put(user_id, hash_token(secret))\nreturn secret")
    add("public record LoginRequest(@NotBlank String username, @NotBlank @Size(min = 12) String password) {}")
    add("const passwordInput = screen.getByLabelText(/password/i);\nawait user.type(passwordInput, faker.internet.password());")
    add("export const authOptions: NextAuthOptions = {\n  providers: [GitHub({ clientId: process.env.GITHUB_ID!, "
        "clientSecret: process.env.GITHUB_SECRET! })],\n  session: { strategy: 'jwt' },\n};")
    add("creds, err := credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, \"\").Retrieve(ctx)")
    add("kms = boto3.client(\"kms\")\nplaintext = kms.decrypt(CiphertextBlob=blob, KeyId=KEY_ARN)[\"Plaintext\"]")
    add("if user.check_password(form.cleaned_data[\"old_password\"]):\n"
        "    user.set_password(form.cleaned_data[\"new_password1\"])\n"
        "    update_session_auth_hash(request, user)")
    add("const primaryKey = table.columns.find((c) => c.isPrimary)?.name ?? 'id';")
    add("private readonly ILogger<TokenService> _logger;\n"
        "public TokenService(IOptions<JwtOptions> options, ILogger<TokenService> "
        "logger) { _options = options.Value; _logger = logger; }")
    add("keychain = Keychain(service: \"dev.acme.app\")\nlet refreshToken = try keychain.get(\"refresh_token\")")
    add("rate_limiter = TokenBucket(capacity=100, refill_rate=10)  # tokens per second")
    add("usage = response.usage\nlog.info(\"tokens in=%d out=%d\", usage.input_tokens, usage.output_tokens)")
    add("SECRET_KEY = env(\"DJANGO_SECRET_KEY\")\nDEBUG = env.bool(\"DJANGO_DEBUG\", default=False)")
    add("const hashed = await argon2.hash(password, { type: argon2.argon2id, memoryCost: 19456, timeCost: 2 });")
    add("def passwordless_login(email: str) -> None:\n    link = magic_links.create(email, ttl=timedelta(minutes=15))\n"
        "    send_mail(email, link)")
    add("interface ApiKeyRecord {\n  id: string;\n  prefix: string;      // first 8 chars, shown in the UI\n"
        "  hashedKey: string;\n  lastUsedAt: Date | null;\n}")
    add("pub fn redact(input: &str) -> Cow<'_, str> {\n    SECRET_RE.replace_all(input, \"[REDACTED]\")\n}")


def _identifiers(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("identifiers", text))

    add("getUserPreferencesByOrganizationIdAndFeatureFlag")
    add("should_invalidate_refresh_token_family_on_reuse")
    add("AbstractSingletonProxyFactoryBean, SimpleBeanFactoryAwareAspectInstanceFactory")
    add("useInfiniteScrollWithIntersectionObserverFallback(containerRef, { rootMargin: '200px' })")
    add("test_password_reset_link_expires_after_thirty_minutes_even_if_unused")
    add("kPasswordAutofillHintNewPasswordWithConfirmation = \"newPassword\"")
    add("XMLHttpRequestEventTarget.prototype.addEventListener")
    add("MAX_CONCURRENT_TOKEN_REFRESHES_PER_TENANT = 4")
    add("org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationConverter")
    add("com.acme.payments.webhooks.StripeSignatureVerificationFilter")


def _config(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("config", text))

    add("TOKEN_TTL=3600\nREFRESH_TOKEN_TTL=1209600\nSESSION_IDLE_TIMEOUT=1800")
    add("PASSWORD_MIN_LENGTH=12\nPASSWORD_REQUIRE_SYMBOL=true\nPASSWORD_HISTORY=5")
    add("auth:\n  auth_method: oauth2\n  issuer: https://auth.acme.dev/\n  audience: https://api.acme.dev\n"
        "  scopes: [openid, email]")
    add('[session]\nsession_cookie_name = "sid"\ncookie_secure = true\ncookie_samesite = "lax"')
    add("JWT_ALGORITHM=RS256\nJWT_ISSUER=https://auth.acme.dev\nJWKS_URL=https://auth.acme.dev/.well-known/jwks.json")
    add("API_KEY_HEADER=X-Api-Key\nRATE_LIMIT_PER_KEY=600\nRATE_LIMIT_WINDOW=60")
    add("AWS_REGION=eu-west-1\nS3_BUCKET=acme-uploads\nSECRETS_MANAGER_PREFIX=prod/api/\nKMS_KEY_ALIAS=alias/acme-prod")
    add("[tool.ruff]\nline-length = 130\ntarget-version = \"py311\"\n\n[tool.ruff.lint]\nselect = [\"E\", \"F\", \"W\", \"I\"]")
    add("PASSWORD_HASHERS = [\n    \"django.contrib.auth.hashers.Argon2PasswordHasher\",\n"
        "    \"django.contrib.auth.hashers.PBKDF2PasswordHasher\",\n]")
    add("max_tokens: 4096\ntemperature: 0.2\nmodel: claude-sonnet-4-5\nstop_sequences: [\"\\n\\nHuman:\"]")
    add("server:\n  port: 8080\n  servlet:\n    session:\n      timeout: 30m\n      cookie:\n        http-only: true")
    add("[mysqld]\ndefault_authentication_plugin = caching_sha2_password\nvalidate_password.length = 14")
    add("{\n  \"compilerOptions\": {\n    \"strict\": true,\n    \"noUncheckedIndexedAccess\": true,\n"
        "    \"keyofStringsOnly\": false\n  }\n}")
    add("ssl_protocols TLSv1.2 TLSv1.3;\nssl_certificate /etc/ssl/acme/fullchain.pem;\n"
        "ssl_certificate_key /etc/ssl/acme/privkey.pem;\n"
        "ssl_session_tickets off;")
    add("Host github-work\n  HostName github.com\n  User git\n  IdentityFile ~/.ssh/id_ed25519_work\n  IdentitiesOnly yes")
    add("[credential]\n\thelper = osxkeychain\n[credential \"https://github.com\"]\n\tusername = dana-acme")
    add("vault {\n  address = \"https://vault.acme.dev:8200\"\n  auth_method = \"kubernetes\"\n  role = \"api\"\n}")
    add("spring.security.oauth2.resourceserver.jwt.issuer-uri=https://auth.acme.dev/realms/acme\n"
        "spring.security.oauth2.resourceserver.jwt.jwk-set-uri=https://auth.acme.dev/realms/acme/protocol/openid-connect/certs")
    add("keyring-backend = \"os\"\ntoken-storage = \"keychain\"\npassword-manager = \"1password\"")
    add("[security]\ndisable_initial_admin_creation = false\ncookie_secure = true\nlogin_cookie_name = grafana_session")


def _env_examples(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("env-example", text))

    add("# .env.example\nAPI_KEY=your-api-key-here\nAPI_URL=https://api.acme.dev")
    add("DB_HOST=localhost\nDB_USER=app\nDB_PASSWORD=\nDB_NAME=app_dev")
    add("ADMIN_USER=admin\nADMIN_PASSWORD=changeme")
    add("SECRET=<secret>\nWEBHOOK_SECRET=<your webhook signing secret>")
    add("TOKEN=${TOKEN}\nGITHUB_TOKEN=${GITHUB_TOKEN:?set GITHUB_TOKEN}")
    add("OPENAI_API_KEY=sk-...\nANTHROPIC_API_KEY=sk-ant-...")
    add("STRIPE_SECRET_KEY=\nSTRIPE_WEBHOOK_SECRET=\nSTRIPE_PRICE_ID=price_basic_monthly")
    add("AWS_ACCESS_KEY_ID=<your-access-key-id>\nAWS_SECRET_ACCESS_KEY=<your-secret-access-key>\nAWS_REGION=us-east-1")
    add("JWT_SECRET=REPLACE_ME\nSESSION_SECRET=REPLACE_ME")
    add("DATABASE_URL=postgres://localhost:5432/app_dev\nREDIS_URL=redis://localhost:6379/0")
    add("SENDGRID_API_KEY=xxxxxxxxxxxxxxxxxxxxxxxx\nMAIL_FROM=noreply@example.com")
    add("password: ${DB_PASSWORD}\nusername: ${DB_USER:-app}")
    add("SMTP_PASSWORD=  # ask #platform for the staging value\nSMTP_USER=")
    add("# Required\nNEXTAUTH_SECRET=        # generate with: openssl rand -base64 32\nNEXTAUTH_URL=http://localhost:3000")
    add("API_TOKEN=<paste token from https://app.acme.dev/settings/tokens>")


def _public_keys(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("public-key", text))

    add("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rnd(B64, 43) + " dana@laptop")
    add("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ" + rnd(B64, 500) + "= deploy@ci")
    add("ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB" + rnd(B64, 87) + "= kenji@workstation")
    add("|1|" + b64(raw(20)) + "|" + b64(raw(20)) + " ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rnd(B64, 43))
    add('command="/usr/local/bin/backup-only",no-port-forwarding,no-pty ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI' + rnd(B64, 43)
        + " backup@nas")
    add(begin("PUBLIC KEY") + "\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" + rnd(B64, 20) + "\n" + wrap(rnd(B64, 300))
        + "\nIDAQAB\n" + end("PUBLIC KEY"))
    add(begin("CERTIFICATE") + "\nMIIDdzCCAl+gAwIBAgIUS" + rnd(B64, 43) + "\n" + wrap(rnd(B64, 640)) + "\n" + end("CERTIFICATE"))
    add(begin("CERTIFICATE REQUEST") + "\nMIICijCCAXICAQAwRTELMAkGA1UEBhMCREUx" + rnd(B64, 28) + "\n" + wrap(rnd(B64, 384)) + "\n"
        + end("CERTIFICATE REQUEST"))
    add(begin("PGP PUBLIC KEY BLOCK") + "\n\nmDMEZ" + rnd(B64, 59) + "\n" + wrap(rnd(B64, 256)) + "\n=" + rnd(B64, 4) + "\n"
        + end("PGP PUBLIC KEY BLOCK"))
    add("# public key: age1" + rnd(BECH32, 58) + "\nrecipients:\n  - age1" + rnd(BECH32, 58))
    add("untrusted comment: minisign public key " + rnd("0123456789ABCDEF", 16) + "\nRWQ" + rnd(B64, 53))
    add("[Peer]\n# laptop\nPublicKey = " + b64(raw(32)) + "\nAllowedIPs = 10.8.0.3/32")
    jwks = {"keys": [{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": sha(16), "n": rnd(URLSAFE, 342), "e": "AQAB"}]}
    add(json.dumps(jwks))
    add("256 SHA256:" + b64(raw(32)).rstrip("=") + " dana@laptop (ED25519)")
    add("pub   ed25519 2024-03-11 [SC] [expires: 2026-03-11]\n      " + rnd("0123456789ABCDEF", 40) + "\n"
        "uid           [ultimate] Dana Whitfield <dana@acme.dev>\nsub   cv25519 2024-03-11 [E] [expires: 2026-03-11]")
    add("sha256 Fingerprint=" + ":".join(rnd("0123456789ABCDEF", 2) for _ in range(32)))
    add("http://" + rnd(BASE32_LOWER, 56) + ".onion/")


def _hashes(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("hash", text))

    add("\n".join(f"{sha(64)}  {f}" for f in ["acme-cli_1.4.2_linux_amd64.tar.gz", "acme-cli_1.4.2_darwin_arm64.tar.gz",
                                              "acme-cli_1.4.2_windows_amd64.zip"]))
    add(f"{sha(32)}  ubuntu-24.04.1-live-server-amd64.iso")
    add("$ sha1sum -c SHA1SUMS\nrelease.tar.gz: OK\n" + sha() + "  release.tar.gz")
    add(f"{sha(128)}  node-v20.17.0-linux-x64.tar.xz")
    add(f'HTTP/2 200\ncontent-type: application/javascript\netag: "{sha(32)}"\n'
        f'cache-control: public, max-age=31536000, immutable')
    add(f'If-None-Match: W/"{rnd(HEX, 5)}-{rnd(URLSAFE, 27)}"')
    add(f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha(64)}\nsize 48213377")
    add(f'<script src="https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/js/bootstrap.bundle.min.js" integrity="{sri("sha384")}" '
        'crossorigin="anonymous"></script>')
    add(f"$ git hash-object README.md\n{sha()}")
    add(f"$ b3sum model.onnx\n{sha(64)}  model.onnx")
    add("Algorithm       Hash                                                                   Path\n---------       ----"
        "                                                                   ----\nSHA256          " + sha(64).upper()
        + "       C:\\Users\\dana\\Downloads\\setup.exe")
    add(f"Docker-Content-Digest: sha256:{sha(64)}")
    add(f"Content-MD5: {b64(raw(16))}\nx-goog-hash: crc32c={b64(raw(4))},md5={b64(raw(16))}")
    add(f"x-amz-checksum-sha256: {b64(raw(32))}\nx-amz-version-id: {rnd(URLSAFE, 32)}")
    add(f"checksum: sha256:{sha(64)}  # pinned by renovate")
    add(f"md5: {sha(32)}\nsha1: {sha()}\nsha256: {sha(64)}")


def _k8s(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("k8s-manifest", text))

    add("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api-config\ndata:\n  LOG_LEVEL: info\n  TOKEN_TTL: \"3600\"\n"
        "  AUTH_ISSUER: https://auth.acme.dev/")
    add("    spec:\n      containers:\n        - name: api\n          image: ghcr.io/acme/api@sha256:" + sha(64)
        + "\n          ports:\n            - containerPort: 8000")
    add("metadata:\n  name: api-7d9f8c6b5-x2k4q\n  namespace: default\n  resourceVersion: \"48213377\"\n  uid: " + uid()
        + "\n  creationTimestamp: \"2024-11-05T10:22:13Z\"")
    add("          env:\n            - name: DB_PASSWORD\n              valueFrom:\n                secretKeyRef:\n"
        "                  name: db-creds\n                  key: password")
    add("  tls:\n    - hosts:\n        - api.acme.dev\n      secretName: api-acme-dev-tls")
    add("apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata:\n  name: db-creds\nspec:\n"
        "  secretStoreRef:\n    name: aws-secrets-manager\n    kind: ClusterSecretStore\n  data:\n    - secretKey: password\n"
        "      remoteRef:\n        key: prod/db/password")
    add("NAME                  READY   STATUS    RESTARTS   AGE\n" + "\n".join(
        f"api-7d9f8c6b5-{rnd('bcdfghjklmnpqrstvwxz2456789', 5)}   1/1     Running   0          {a}" for a in ("2d", "2d", "41h")))
    add("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: api\n  annotations:\n"
        "    eks.amazonaws.com/role-arn: arn:aws:iam::123456789012:role/api-irsa")
    add("ownerReferences:\n  - apiVersion: apps/v1\n    kind: ReplicaSet\n    name: api-7d9f8c6b5\n    uid: " + uid()
        + "\n    controller: true")
    add("Events:\n  Type    Reason     Age   From               Message\n  ----    ------     ----  ----               -------\n"
        "  Normal  Pulled     12s   kubelet            Successfully pulled image \"ghcr.io/acme/api@sha256:" + sha(64)
        + "\" in 1.2s")
    add("Name:         db-creds\nNamespace:    prod\nType:  Opaque\n\nData\n====\npassword:  24 bytes\nusername:  3 bytes")


def _ci(items: list[Lookalike]) -> None:
    def log(text: str) -> None:
        items.append(Lookalike("ci-log", text))

    def conf(text: str) -> None:
        items.append(Lookalike("ci-config", text))

    log("Run actions/checkout@" + sha() + "\nSyncing repository: acme/api\nGetting Git version info")
    log("Cache restored from key: Linux-node-" + sha(64))
    log("Cache saved with key: node-cache-Linux-x64-pnpm-" + sha(64))
    log("https://github.com/acme/api/actions/runs/" + rnd(DIGITS, 11) + "/job/" + rnd(DIGITS, 11))
    log("Uploading artifacts for successful job\nUploading artifacts...\ncoverage/: found 142 matching artifact files and "
        "directories\nUploading artifacts as \"archive\" to coordinator... 201 Created  id=" + rnd(DIGITS, 10)
        + " responseStatus=201 Created")
    log("Found a cache from build 4812 at v1-deps-" + sha(40) + "\nSize: 212 MiB\nCached paths:\n  * /home/circleci/.npm")
    log("env:\n  NPM_TOKEN: ***\n  NODE_AUTH_TOKEN: ***\n  CI: true")
    log(" > Checking out Revision " + sha() + " (refs/remotes/origin/main)\n > git config core.sparsecheckout # timeout=10")
    log("##[group]Run docker/build-push-action@" + sha() + "\nwith:\n  push: true\n  tags: ghcr.io/acme/api:1.4.2\n##[endgroup]")
    log("GITHUB_SHA=" + sha() + "\nGITHUB_RUN_ID=" + rnd(DIGITS, 11) + "\nGITHUB_RUN_ATTEMPT=1\nRUNNER_OS=Linux")
    log("Running with gitlab-runner 17.5.2 (" + sha(8) + ")\n  on acme-k8s-runner " + rnd(ALNUM, 8)
        + ", system ID: r_" + rnd(ALNUM, 12))
    log("Artifact coverage-report has been successfully uploaded! Final size is 48213 bytes. Artifact ID is " + rnd(DIGITS, 10))
    conf("      - uses: actions/setup-node@" + sha() + " # v4.1.0\n        with:\n          node-version: 20\n"
         "          registry-url: https://registry.npmjs.org\n      - run: npm publish\n        env:\n"
         "          NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}")
    conf("permissions:\n  id-token: write\n  contents: read\n\njobs:\n  deploy:\n    steps:\n"
         "      - uses: aws-actions/configure-aws-credentials@v4\n        with:\n"
         "          role-to-assume: arn:aws:iam::123456789012:role/gha-deploy\n          aws-region: eu-west-1")
    conf("deploy:\n  stage: deploy\n  script:\n    - echo \"$CI_JOB_TOKEN\" | docker login -u gitlab-ci-token --password-stdin "
         "$CI_REGISTRY\n    - docker push $CI_REGISTRY_IMAGE:$CI_COMMIT_SHORT_SHA")
    conf("      - name: Log in to GHCR\n        uses: docker/login-action@v3\n        with:\n          registry: ghcr.io\n"
         "          username: ${{ github.actor }}\n          password: ${{ secrets.GITHUB_TOKEN }}")
    conf("version: 2\nupdates:\n  - package-ecosystem: npm\n    directory: /\n    schedule:\n      interval: weekly\n"
         "    open-pull-requests-limit: 10")
    conf("workflows:\n  build:\n    jobs:\n      - test\n      - deploy:\n          context: aws-prod\n"
         "          requires: [test]")
    conf("- name: Restore cache\n  uses: actions/cache@v4\n  with:\n    path: ~/.cache/pip\n"
         "    key: ${{ runner.os }}-pip-${{ hashFiles('**/requirements*.txt') }}\n    restore-keys: ${{ runner.os }}-pip-")
    conf("env:\n  SENTRY_AUTH_TOKEN: ${{ secrets.SENTRY_AUTH_TOKEN }}\n  SENTRY_ORG: acme\n  SENTRY_PROJECT: api")


def _stack_traces(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("stack-trace", text))

    add("Traceback (most recent call last):\n  File \"/app/api/views.py\", line 88, in create_order\n"
        "    order = service.create(payload)\n  File \"/app/api/service.py\", line 41, in create\n"
        "    raise ValidationError(f\"invalid cart {cart!r}\")\napi.errors.ValidationError: invalid cart "
        "<Cart object at 0x7f3a" + sha(8) + ">")
    add("panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation "
        "code=0x1 addr=0x18 pc=0x" + sha(6) + "]\n\ngoroutine 42 [running]:\nmain.(*Server).handleLogin(0xc000" + sha(6)
        + ", {0x" + sha(6) + ", 0xc000" + sha(6) + "}, 0xc000" + sha(6) + ")\n\t/src/server.go:118 +0x1a5")
    add("java.lang.IllegalStateException: Token store not initialised\n\tat com.acme.auth.TokenStore.get(TokenStore.java:57)\n"
        "\tat com.acme.auth.AuthFilter.doFilter(AuthFilter.java:33)\n\tat org.apache.catalina.core.ApplicationFilterChain"
        ".internalDoFilter(ApplicationFilterChain.java:174)\nCaused by: com.acme.auth.StoreException: "
        "com.acme.auth.RedisBackend@" + sha(8))
    add("TypeError: Cannot read properties of undefined (reading 'accessToken')\n    at getSession "
        "(/app/.next/server/chunks/8612.js:1:4821)\n    at async handler (/app/.next/server/pages/api/me.js:1:1204)")
    add("thread 'main' panicked at src/main.rs:42:10:\n"
        "called `Result::unwrap()` on an `Err` value: Os { code: 2, kind: NotFound, "
        "message: \"No such file or directory\" }\nstack backtrace:\n   0:     0x55d1" + sha(8) + " - std::backtrace_rs::backtrac"
                "e"
        "::libunwind::trace\n   1:     0x55d1" + sha(8) + " - core::panicking::panic_fmt")
    add("Segmentation fault (core dumped)\n[1105/102213.481920:FATAL:v8_initializer.cc(527)] Error loading V8 startup "
        "snapshot file\nrip 0x00007f" + sha(10) + " rsp 0x00007ffd" + sha(8))
    add("   at Acme.Auth.TokenService.Validate(String token) in /src/Acme.Auth/TokenService.cs:line 64\n"
        "   at Acme.Api.Middleware.AuthMiddleware.InvokeAsync(HttpContext context) in /src/Acme.Api/Middleware/"
        "AuthMiddleware.cs:line 29\n--- End of stack trace from previous location ---")
    add("/usr/local/bundle/gems/activerecord-7.2.2/lib/active_record/validations.rb:84:in `raise_validation_error': "
        "Validation failed: Password is too short (minimum is 12 characters) (ActiveRecord::RecordInvalid)")
    add("==48213==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020000" + sha(5) + " at pc 0x55d1" + sha(8)
        + " bp 0x7ffd" + sha(8) + " sp 0x7ffd" + sha(8) + "\nREAD of size 8 at 0x6020000" + sha(5) + " thread T0")
    add("Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space\n\tat java.base/java.util.Arrays.copyOf"
        "(Arrays.java:3537)\n# A fatal error has been detected by the Java Runtime Environment:\n#  SIGSEGV (0xb) at pc=0x00007f"
        + sha(10) + ", pid=1, tid=48")


def _package_output(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("package-output", text))

    add("# npm audit report\n\naxios  1.3.2 - 1.7.3\nSeverity: high\nServer-Side Request Forgery in axios - "
        "https://github.com/advisories/GHSA-8hc4-vh64-cxmj\nfix available via `npm audit fix`\nnode_modules/axios\n\n"
        "1 high severity vulnerability")
    add("added 1287 packages, and audited 1288 packages in 21s\n\n214 packages are looking for funding\n  run `npm fund` for "
        "details\n\nfound 0 vulnerabilities")
    add("requests==2.32.3 \\\n    --hash=sha256:" + sha(64) + " \\\n    --hash=sha256:" + sha(64) + "\n    # via -r "
            "requirements.in")
    add("$ pip hash dist/acme-1.4.2-py3-none-any.whl\ndist/acme-1.4.2-py3-none-any.whl:\n--hash=sha256:" + sha(64))
    add("Collecting httpx==0.27.2\n  Downloading httpx-0.27.2-py3-none-any.whl (76 kB)\nSuccessfully installed anyio-4.6.2 "
        "httpx-0.27.2 sniffio-1.3.1")
    add("   Compiling ring v0.17.8\n   Compiling rustls v0.23.16\n   Compiling acme-cli v1.4.2 (/home/dana/src/acme-cli)\n"
        "    Finished `release` profile [optimized] target(s) in 48.21s")
    add(json.dumps({"Path": "golang.org/x/crypto", "Version": "v0.28.0", "Info": "/root/go/pkg/mod/cache/download/golang.org/x/"
                    "crypto/@v/v0.28.0.info", "Sum": "h1:" + b64(raw(32)), "GoModSum": "h1:" + b64(raw(32))}, indent=1))
    add("$ npm view zod@3.23.8 dist.integrity dist.shasum\ndist.integrity = '" + sri() + "'\ndist.shasum = '" + sha() + "'")
    add("acme-api@1.4.2 /home/dana/src/acme-api\n├── axios@1.7.7\n├─┬ next@14.2.16\n│ └── @next/env@14.2.16\n└── zod@3.23.8")
    add("name         : pydantic\nversion      : 2.9.2\ndescription  : Data validation using Python type hints\n\n"
        "dependencies\n - annotated-types >=0.6.0\n - pydantic-core 2.23.4")
    add("Resolving dependencies... (2.3s)\n\nPackage operations: 3 installs, 1 update, 0 removals\n\n  - Updating certifi "
        "(2024.7.4 -> 2024.8.30)\n  - Installing tokenizers (0.20.1)")
    add("warning \" > @testing-library/user-event@14.5.2\" has unmet peer dependency \"@testing-library/dom@>=7.21.4\".\n"
        "[4/4] Building fresh packages...\nsuccess Saved lockfile.\nDone in 18.42s.")


def _crypto_addresses(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("crypto-address", text))

    add("Send donations to bc1q" + rnd(BECH32, 38))
    add("legacy address: 1" + rnd(BASE58, 33))
    add("const USDC = \"0x" + sha() + "\"; // token contract on mainnet")
    tx = "0x" + sha(64)
    add("Transaction hash: " + tx + "\nhttps://etherscan.io/tx/" + tx)
    add("Program Id: " + rnd(BASE58, 44) + "\nSignature: " + rnd(BASE58, 88))
    add("ipfs://Qm" + rnd(BASE58, 44) + "/metadata.json")
    add("https://bafybei" + rnd(BASE32_LOWER, 52) + ".ipfs.dweb.link/")
    add("cosmos1" + rnd(BECH32, 38) + " delegated 120.5 ATOM to cosmosvaloper1" + rnd(BECH32, 38))
    add("owner: 0x" + sha() + "\nblock: 21124813\ngasUsed: 46109")
    add("$ solana address\n" + rnd(BASE58, 44))


def _public_ids(items: list[Lookalike]) -> None:
    def add(text: str) -> None:
        items.append(Lookalike("public-id", text))

    add("https://youtu.be/" + rnd(URLSAFE, 11))
    add("https://bit.ly/" + rnd(ALNUM, 7))
    add("Customer cus_" + rnd(ALNUM, 14) + " upgraded to the Pro plan (sub_" + rnd(ALNUM, 24) + ")")
    add("Posted in #deploys (C0" + rnd("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 8) + ") by U0" + rnd("ABCDEFGHIJKLMNOPQRSTUVWXYZ01"
            "23456789", 8))
    add("Discord guild 1" + rnd(DIGITS, 18) + ", channel 1" + rnd(DIGITS, 18))
    add("https://pypi.org/project/acme-cli/1.4.2/#files")
    add("https://www.notion.so/acme/Q4-Roadmap-" + sha(32))
    add("AWS account 123456789012, project acme-prod-" + rnd(DIGITS, 6) + ", subscription " + uid())
    add("Fixes ACME-4812, relates to API-3F2 (Sentry) and LIN-912")
    add("https://acme-" + rnd(BASE32_LOWER, 9) + "-acme.vercel.app")
    add("https://open.spotify.com/track/" + rnd(ALNUM, 22))
    add("https://twitter.com/acme/status/18" + rnd(DIGITS, 17))
    add("App Store id6" + rnd(DIGITS, 9) + ", package dev.acme.app")


def _misc(items: list[Lookalike]) -> None:
    def add(kind: str, text: str) -> None:
        items.append(Lookalike(kind, text))

    # i18n
    add("i18n", json.dumps({"auth": {"password": {"label": "Password", "forgot": "Forgot your password?",
                                                  "tooShort": "Use at least {{count}} characters"},
                                     "token": {"expired": "Your session has expired. Please sign in again."}}}, indent=2))
    add("i18n", 'msgid "Password"\nmsgstr "Passwort"\n\nmsgid "Reset password"\nmsgstr "Passwort zurücksetzen"')
    add("i18n", "fr:\n  devise:\n    passwords:\n"
                "      send_instructions: \"Vous allez recevoir un e-mail pour réinitialiser votre "
        "mot de passe.\"")
    add("i18n", '<string name="password_hint">Password</string>\n<string name="api_key_title">API keys</string>')
    add("i18n", '"login.password.placeholder" = "Password";\n"settings.tokens.empty" = "You have no personal access tokens.";')
    add("i18n", '{\n  "@@locale": "de",\n  "secretKeyLabel": "Geheimer Schlüssel",\n'
                '  "tokenCount": "{count, plural, one{1 Token} '
        'other{{count} Tokens}}"\n}')
    add("i18n", "t('settings.apiKeys.revokeConfirm', { name: key.name })")
    add("i18n", "ja:\n  auth:\n    password_label: パスワード\n    sign_in: ログイン")
    # css
    add("css", "color: #1a2b3c; background: #ffffff; border-color: #e5e7eb;")
    add("css", ":root {\n  --color-primary-500: #3b82f6;\n  --color-primary-600: #2563eb;\n"
               "  --shadow-md: 0 4px 6px -1px rgb(0 0 0 / 0.1);\n}")
    add("css", '<button class="inline-flex items-center rounded-md bg-indigo-600 px-3 py-2 text-sm font-semibold text-white '
        'shadow-sm hover:bg-indigo-500 focus-visible:outline-2">Save</button>')
    add("css", '<div class="sc-bdfBwQ kKxYqP"><span class="css-1x2y3z4-Label e1k2l3m40">Token usage</span></div>')
    add("css", ".Button_primary__" + rnd(URLSAFE, 5) + " { composes: base from './base.module.css'; }")
    add("css", '{"color": {"brand": {"50": {"value": "#eff6ff"}, "900": {"value": "#1e3a8a"}}}}')
    add("css", "$breakpoints: (sm: 640px, md: 768px, lg: 1024px);\n@mixin focus-ring { outline: 2px solid #a5b4fc; }")
    add("css", "background: linear-gradient(135deg, #667eea 0%, #764ba2 100%);")
    # versions
    add("version", "$ python --version\nPython 3.12.7\n$ node -v\nv20.17.0\n$ go version\ngo version go1.23.2 linux/amd64")
    add("version", "rustc 1.82.0 (f6e511eec 2024-10-15)\ncargo 1.82.0 (8f40fc59f 2024-08-21)")
    add("version", "acme-cli 1.4.2+build.20241105." + sha(7) + " (linux/amd64)")
    add("version", "Linux api-7d9f 6.1.112-124.190.amzn2023.x86_64 #1 SMP PREEMPT_DYNAMIC Tue Oct  8 18:23:14 UTC 2024 x86_64 "
                   "GNU/Linux")
    add("version", "\n".join(f"{n}=={v}" for n, v in PY_PACKAGES))
    add("version", '"engines": {\n  "node": ">=20.11.0 <21",\n  "pnpm": "^9.12.0"\n},\n"packageManager": "pnpm@9.12.3"')
    add("version", "image: postgres:16.4-bookworm\nimage: redis:7.4.1-alpine3.20\nimage: nginx:1.27.2-alpine")
    add("version", "## [1.4.2] - 2024-11-05\n### Fixed\n- Token refresh no longer races with logout (#1490)")
    # network
    add("network", "2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP\n    link/ether 02:42:ac:11:00:02 "
        "brd ff:ff:ff:ff:ff:ff\n    inet 172.17.0.2/16 brd 172.17.255.255 scope global eth0\n    inet6 fe80::42:acff:fe11:2/64 "
        "scope link")
    add("network", "vpc_cidr = \"10.20.0.0/16\"\nprivate_subnets = [\"10.20.1.0/24\", \"10.20.2.0/24\"]")
    add("network", "State  Recv-Q Send-Q Local Address:Port Peer Address:Port Process\nLISTEN 0      4096   0.0.0.0:5432      "
        "0.0.0.0:*     users:((\"postgres\",pid=48,fd=6))")
    add("network", ";; ANSWER SECTION:\napi.acme.dev.\t\t300\tIN\tA\t203.0.113.20\napi.acme.dev.\t\t300\tIN\tAAAA\t"
        "2001:db8:85a3::8a2e:370:7334")
    add("network", " 1  _gateway (192.168.1.1)  0.412 ms\n 2  100.64.0.1 (100.64.0.1)  8.217 ms\n 3  ae-1.r21.frnkge13.de.bb."
        "gin.ntt.net (129.250.2.12)  9.001 ms")
    add("network", "? (192.168.1.64) at a4:83:e7:2b:9c:11 [ether] on wlan0\n"
                   "? (192.168.1.1) at 00:1a:2b:3c:4d:5e [ether] on wlan0")
    add("network", "allow 10.0.0.0/8;\nallow 2001:db8::/32;\ndeny all;")
    add("network", "X-Forwarded-For: 203.0.113.195, 70.41.3.18, 150.172.238.178")
    # timestamps
    add("timestamp", "2024-11-05T10:22:13.481920+01:00")
    add("timestamp", "created_at=1730802133481 updated_at=1730802199002")
    add("timestamp", "Date: Tue, 05 Nov 2024 10:22:13 GMT\nLast-Modified: Mon, 04 Nov 2024 18:03:51 GMT")
    add("timestamp", "*/15 9-17 * * 1-5 /usr/local/bin/sync-reports")
    add("timestamp", "$ date -u\nTue Nov  5 09:22:13 UTC 2024")
    add("timestamp", "I1105 10:22:13.481920   48213 server.go:118] took 1.204517s")
    add("timestamp", "expires_in: 3600\nexpires_at: 2024-11-05T11:22:13Z\nnot_before: 2024-11-05T10:22:13Z")
    add("timestamp", "[2024-11-05 10:22:13,481] {scheduler_job_runner.py:417} INFO - 3 tasks up for execution")
    # llm usage
    add("llm-usage", '"usage": {\n  "input_tokens": 12873,\n  "cache_creation_input_tokens": 2048,\n'
        '  "cache_read_input_tokens": 10240,\n  "output_tokens": 734\n}')
    add("llm-usage", '{"id": "chatcmpl-' + rnd(ALNUM, 29) + '", "object": "chat.completion", "usage": {"prompt_tokens": 812, '
        '"completion_tokens": 211, "total_tokens": 1023}}')
    add("llm-usage", '{"id": "msg_01' + rnd(ALNUM, 22) + '", "type": "message", "role": "assistant", "model": '
                                                         '"claude-sonnet-4-5", '
        '"stop_reason": "end_turn"}')
    add("llm-usage", "request-id: req_011C" + rnd(ALNUM, 20) + "\nanthropic-ratelimit-tokens-remaining: 398000\n"
        "anthropic-ratelimit-tokens-reset: 2024-11-05T10:23:00Z")
    add("llm-usage", "Total cost:            $0.4213\nTotal duration (API):  1m 12.4s\nTotal duration (wall): 6m 3.1s\n"
        "Usage:                 48.2k input, 6.1k output, 212.3k cache read")
    add("llm-usage", "enc = tiktoken.get_encoding(\"cl100k_base\")\nn_tokens = len(enc.encode(text))\n"
                     "assert n_tokens <= MAX_TOKENS")
    add("llm-usage", "2024-11-05 10:22:13 INFO observer: compressed 14 observations, tokens 48213 -> 6120 (87% saved)")
    add("llm-usage", '{"tokens": 1234, "characters": 5120, "truncated": false}')
    add("llm-usage", "context window: 200000 tokens; used 61432 (30.7%); max_output_tokens=8192")
    add("llm-usage", "rate limit: 4000 RPM, 400000 input tokens/min, 80000 output tokens/min")
    # sql
    add("sql", "CREATE TABLE users (\n  id bigserial PRIMARY KEY,\n  email citext UNIQUE NOT NULL,\n"
               "  password_hash text NOT NULL,\n"
        "  password_changed_at timestamptz\n);")
    add("sql", "SELECT user_id, expires_at FROM password_resets WHERE token_hash = $1 AND used_at IS NULL;")
    add("sql", "CREATE UNIQUE INDEX api_keys_prefix_idx ON api_keys (prefix);\n"
               "ALTER TABLE api_keys ADD COLUMN hashed_key bytea NOT NULL;")
    add("sql", "GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO app_rw;\nREVOKE ALL ON SCHEMA public FROM PUBLIC;")
    add("sql", "                 Table \"public.sessions\"\n   Column   |           Type           | Nullable\n"
               "------------+------"
        "--------------------+----------\n id         | uuid                     | not null\n"
        " token_hash | bytea                    "
        "| not null\n expires_at | timestamp with time zone | not null")
    add("sql", "queryid: -" + rnd(DIGITS, 19) + "\ncalls: 48213\nmean_exec_time: 0.42\n"
                                                "query: SELECT * FROM sessions WHERE id = $1")
    add("sql", "UPDATE users SET password_hash = :hash, password_changed_at = now() WHERE id = :id")
    add("sql", "ALTER USER app_rw WITH PASSWORD :'new_password';  -- psql variable, set with \\set")
    # shell
    add("shell", "$ mysql -u root -p\nEnter password:\nWelcome to the MySQL monitor.  Commands end with ; or \\g.")
    add("shell", 'ssh-keygen -t ed25519 -C "dana@acme.dev" -f ~/.ssh/id_ed25519_work')
    add("shell", "openssl rand -hex 32 > .secrets/session_key && chmod 600 .secrets/session_key")
    add("shell", "docker login ghcr.io -u dana --password-stdin < ~/.config/ghcr-token")
    add("shell", "$ aws configure\nAWS Access Key ID [****************7XQ2]:\nAWS Secret Access Key [****************k9Pz]:\n"
        "Default region name [eu-west-1]:\nDefault output format [json]:")
    add("shell", "$ passwd\nChanging password for dana.\nCurrent password:\nNew password:\nRetype new password:\n"
        "passwd: password updated successfully")
    add("shell", "kubectl create secret generic db-creds --from-file=password=./secrets/db_password.txt --dry-run=client -o yaml")
    add("shell", 'export GITHUB_TOKEN="$(gh auth token)"\nexport VAULT_TOKEN=$(cat ~/.vault-token)')
    add("shell", "read -rs -p 'DB password: ' DB_PASSWORD && export DB_PASSWORD")
    add("shell", 'security find-generic-password -s "acme-api" -a "$USER" -w')
    add("shell", "htpasswd -c /etc/nginx/.htpasswd admin\nNew password:\nRe-type new password:\nAdding password for user admin")
    add("shell", "$ gh secret list --repo acme/api\nNAME               UPDATED\nNPM_TOKEN          about 2 months ago\n"
        "SENTRY_AUTH_TOKEN  about 5 days ago")
    # docs
    add("docs", "## Authentication\n\nSet `ACME_API_KEY` in your environment, then:\n\n```bash\ncurl -H \"Authorization: Bearer "
        "$ACME_API_KEY\" https://api.acme.dev/v1/me\n```")
    add("docs", "| Variable | Required | Default | Description |\n|---|---|---|---|\n| `DB_PASSWORD` | yes | — | Password of the "
        "`app` role |\n| `TOKEN_TTL` | no | `3600` | Access token lifetime in seconds |")
    add("docs", "Replace `<YOUR_API_KEY>` with the key from **Settings → API keys**. Keys are shown once; store them in your "
        "password manager.")
    add("docs", "> **Warning**\n> Never commit `.env`. Use `.env.example` as a template and keep real values in 1Password.")
    add("docs", "client = acme.Client(api_key=\"YOUR_API_KEY\")  # or set ACME_API_KEY")
    add("docs", "To create a token, run `acme tokens create --name ci --scope deploy`. The CLI prints the token once.")
    add("docs", "### Rotating the JWT signing key\n1. Generate a new key pair with `make keys`.\n"
                "2. Publish the public key to the "
        "JWKS endpoint.\n3. Switch `JWT_ACTIVE_KID` after one token lifetime.")
    add("docs", "```yaml\nauth:\n  password: <your-password>\n  token: <token-from-dashboard>\n```")
    # html
    add("html", '<form method="post" action="/login">\n  <input type="email" name="email" autocomplete="username" required>\n'
        '  <input type="password" name="password" autocomplete="current-password" minlength="12" required>\n</form>')
    add("html", "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self'; script-src 'self' 'sha256-"
        + b64(raw(32)) + "'; style-src 'self' 'sha256-" + b64(raw(32)) + "'\">")
    add("html", '<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/katex@0.16.11/dist/katex.min.css" integrity="'
        + sri("sha384") + '" crossorigin="anonymous">')
    add("html", '<meta property="og:image" content="https://acme.dev/og/' + sha(16) + '.png">\n<meta name="twitter:card" '
        'content="summary_large_image">')
    add("html", '<script type="module" crossorigin src="/assets/index-' + rnd(URLSAFE, 8) + '.js"></script>\n'
        '<link rel="modulepreload" crossorigin href="/assets/vendor-' + rnd(URLSAFE, 8) + '.js">')
    add("html", '<iframe width="560" height="315" src="https://www.youtube-nocookie.com/embed/' + rnd(URLSAFE, 11)
        + '" allowfullscreen></iframe>')
    add("html", '<label for="new-password">New password</label>\n<input id="new-password" type="password" '
        'autocomplete="new-password" aria-describedby="password-rules">')
    add("html", '<link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>\n<link href="https://fonts.googleapis.com/'
        'css2?family=Inter:wght@400;600&display=swap" rel="stylesheet">')
    # terraform
    add("terraform", "  # aws_db_instance.main will be updated in-place\n  ~ resource \"aws_db_instance\" \"main\" {\n"
        "        id       = \"db-" + rnd("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 26) + "\"\n      ~ password = (sensitive "
                "value)\n"
        "        # (48 unchanged attributes hidden)\n    }")
    add("terraform", "$ terraform state list\naws_iam_role.api\naws_s3_bucket.uploads\nmodule.vpc.aws_subnet.private[0]\n"
        "random_password.db")
    add("terraform", "Outputs:\n\napi_url = \"https://api.acme.dev\"\ndb_endpoint = \"orders.c9x" + rnd(HEX, 8)
        + ".eu-west-1.rds.amazonaws.com\"\ndb_password = <sensitive>")
    add("terraform", "aws_instance.web: Creation complete after 42s [id=i-0" + sha(16) + "]")
    add("terraform", "- Installing hashicorp/aws v5.74.0...\n- Installed hashicorp/aws v5.74.0 (signed by HashiCorp)\n"
        "Terraform has created a lock file .terraform.lock.hcl to record the provider selections it made above.")
    add("terraform", 'data "aws_secretsmanager_secret_version" "db" {\n  secret_id = "prod/db/password"\n}')
    add("terraform", "Plan: 3 to add, 1 to change, 0 to destroy.\n\nChanges to Outputs:\n"
                     "  ~ api_url = \"https://staging.acme.dev\" "
        "-> \"https://api.acme.dev\"")
    add("terraform", "module.eks.aws_kms_key.this[0]: Refreshing state... [id=" + uid() + "]")
    # cloud ids
    add("cloud-ids", '{\n    "UserId": "AIDA' + rnd("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 17) + '",\n    "Account": '
            '"123456789012",\n'
        '    "Arn": "arn:aws:iam::123456789012:user/dana"\n}')
    add("cloud-ids", "arn:aws:lambda:eu-west-1:123456789012:function:thumbnailer:14")
    add("cloud-ids", "arn:aws:kms:eu-west-1:123456789012:key/" + uid())
    add("cloud-ids", "123456789012.dkr.ecr.eu-west-1.amazonaws.com/acme/api:1.4.2")
    add("cloud-ids", "/subscriptions/" + uid() + "/resourceGroups/acme-prod/providers/Microsoft.Web/sites/acme-api")
    add("cloud-ids", "projects/acme-prod-" + rnd(DIGITS, 6) + "/locations/europe-west1/services/api/revisions/api-00042-" + rnd(
        "abcdefghijklmnopqrstuvwxyz", 3))
    add("cloud-ids", "INSTANCES\ti-0" + sha(16) + "\tt3.medium\trunning\tami-0" + sha(16) + "\tsg-0" + sha(16))
    add("cloud-ids", "arn:aws:cloudformation:eu-west-1:123456789012:stack/acme-api/" + uid())
    add("cloud-ids", "gs://acme-prod-backups/pg/2024-11-05T03:00:00Z.dump (generation " + rnd(DIGITS, 16) + ")")
    add("cloud-ids", "vpc-0" + sha(16) + "  subnet-0" + sha(16) + "  igw-0" + sha(16))
    # masked output
    add("masked", "Run ./scripts/deploy.sh\n  env:\n    API_TOKEN: ***\n    DB_PASSWORD: ***\n"
                  "Deploying with token *** to production")
    add("masked", "$ aws configure list\n      Name                    Value             Type    Location\n"
                  "      ----                    "
        "-----             ----    --------\n   profile                <not set>             None    None\naccess_key     "
        "****************7XQ2 shared-credentials-file\nsecret_key     ****************k9Pz shared-credentials-file")
    add("masked", "$ vercel env ls\n  name                 value               environments        created\n  DATABASE_URL      "
        "   Encrypted           Production          12d ago\n"
        "  STRIPE_SECRET_KEY    Encrypted           Production          12d ago")
    add("masked", "OPENAI_API_KEY=sk-...Xq7d (set)")
    add("masked", "password: ********\nusername: app")
    add("masked", "Authorization: Bearer [REDACTED]\nCookie: <redacted>")
    add("masked", "$ npm token list\n┌────────┬─────────┬────────────┬──────────┬────────────────┐\n"
                  "│ id     │ token   │ created    │ "
        "readonly │ CIDR whitelist │\n├────────┼─────────┼────────────┼──────────┼────────────────┤\n│ " + sha(6) + " │ npm_ab… "
                "│ "
        "2024-10-02 │ no       │                │\n└────────┴─────────┴────────────┴──────────┴────────────────┘")
    add("masked", "DATABASE_URL=postgres://app:****@db.internal:5432/app")


def _build() -> list[Lookalike]:
    items: list[Lookalike] = []
    for part in (_git, _diffs, _lockfiles, _docker, _ids_in_logs, _traces, _base64_media, _minified, _fixtures, _urls,
                 _prose, _code, _identifiers, _config, _env_examples, _public_keys, _hashes, _k8s, _ci, _stack_traces,
                 _package_output, _crypto_addresses, _public_ids, _misc):
        part(items)
    return items


LOOKALIKES: list[Lookalike] = _build()


def _check() -> None:
    texts = [item.text for item in LOOKALIKES]
    dupes = [t[:60] for t in set(texts) if texts.count(t) > 1]
    assert not dupes, dupes
    assert len(LOOKALIKES) >= 320, len(LOOKALIKES)
    counts: dict[str, int] = {}
    for item in LOOKALIKES:
        counts[item.kind] = counts.get(item.kind, 0) + 1
    assert len(counts) >= 25, len(counts)
    for kind, count in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"{kind:16} {count:4}")
    print(f"{'total':16} {len(LOOKALIKES):4} in {len(counts)} kinds")


if __name__ == "__main__":
    _check()
