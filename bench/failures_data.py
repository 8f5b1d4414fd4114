# ruff: noqa: E501 - the error texts are the tools' own lines, kept whole
"""Recurring failures and their fixes (issue 31's `bench/failures`), from the real output of common tools.

`SCENARIOS`: failures a project meets again and again — each a failing command (templates: the same
command as typed on different days, through `cd X &&`, `timeout`, `uv run`, `| tail`), an error text
whose paths, line numbers, timings, temp names, addresses, pids and timestamps change between
occurrences, and the fix: the files edited (with a one-line description and the lines changed), the
commands that helped, and the command that then succeeds.

`UNRELATED`: other failures of the same tools (another missing module, another TS error code, another
port, another psql error…) that must not be taken for any scenario.

`occurrence(scenario, k)` renders the k-th occurrence (k = 0 is the first, the one that gets fixed);
`unrelated(item, k)` renders an unrelated failure. The output texts are the tools' own (pytest 8,
npm 10, node 20, tsc 5, pip 24, cargo 1.7x, go 1.22, docker 24/BuildKit, git 2.4x, GNU make, psql 16),
with the Bash tool's `Exit code N` header Claude Code puts in front of a failed command's output.
"""

from __future__ import annotations

import random

ROOTS = ("/home/dev/proj", "/home/dev/proj", "/Users/ana/code/proj", "/workspace/proj", "/tmp/wt-{sha}/proj")
TESTS = ("test_api", "test_users", "test_orders", "test_auth", "test_billing", "test_search")


def variables(seed: int) -> dict[str, str]:
    """What changes between two occurrences of one failure: paths, lines, timings, temp names, ids."""
    rng = random.Random(seed)
    sha = "".join(rng.choice("0123456789abcdef") for _ in range(7))
    return {
        "root": rng.choice(ROOTS).format(sha=sha),
        "test": rng.choice(TESTS),
        "line": str(rng.randint(3, 420)),
        "line2": str(rng.randint(3, 420)),
        "col": str(rng.randint(1, 60)),
        "secs": f"{rng.uniform(0.05, 40):.2f}",
        "ms": str(rng.randint(3, 9000)),
        "tmp": "tmp" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789_") for _ in range(8)),
        "addr": "0x7f" + "".join(rng.choice("0123456789abcdef") for _ in range(10)),
        "pid": str(rng.randint(1000, 99999)),
        "ts": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
              f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z",
        "sha": sha,
        "sha40": "".join(rng.choice("0123456789abcdef") for _ in range(40)),
        "count": str(rng.randint(2, 60)),
        "step": str(rng.randint(4, 14)),
        "uuid": "-".join("".join(rng.choice("0123456789abcdef") for _ in range(size)) for size in (8, 4, 4, 4, 12)),
        "hexbyte": f"{rng.randint(0x80, 0xff):02x}",
        "pos": str(rng.randint(10, 90000)),
        "day": f"{rng.randint(1, 28)}",
    }


def render(template: str, values: dict[str, str]) -> str:
    return template.format(**values)


def occurrence(scenario: dict, k: int) -> tuple[str, str]:
    """The k-th occurrence of a scenario: (command, error text)."""
    values = variables(hash_seed(scenario["name"], k))
    commands = scenario["commands"]
    return render(commands[k % len(commands)], values), render(scenario["error"], values)


def unrelated(item: dict, k: int = 0) -> tuple[str, str]:
    values = variables(hash_seed(item["name"], 1000 + k))
    return render(item["command"], values), render(item["error"], values)


def hash_seed(name: str, k: int) -> int:
    """A seed stable across runs (`hash()` of a str is salted per process)."""
    total = k * 1_000_003
    for ch in name:
        total = (total * 31 + ord(ch)) % (1 << 61)
    return total


PYTEST_HEAD = """Exit code {exit}
============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-8.2.0, pluggy-1.5.0
rootdir: {{root}}
configfile: pyproject.toml
plugins: anyio-4.3.0, cov-5.0.0
collected {collected}
"""

SCENARIOS: list[dict] = [
    {
        "name": "pytest-missing-requests",
        "commands": ["pytest tests/{test}.py -x", "cd {root} && pytest tests/ -x 2>&1 | tail -40",
                     "timeout 600 pytest tests/{test}.py -x"],
        "error": PYTEST_HEAD.format(exit=2, collected="0 items / 1 error") + """
==================================== ERRORS ====================================
___________________ ERROR collecting tests/{test}.py ___________________
ImportError while importing test module '{root}/tests/{test}.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
tests/{test}.py:{line}: in <module>
    from app.client import fetch_prices
app/client.py:3: in <module>
    import requests
E   ModuleNotFoundError: No module named 'requests'
=========================== short test summary info ============================
ERROR tests/{test}.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in {secs}s ===============================
""",
        "fix": {"edits": [("requirements.txt", "Added requests to the runtime requirements", "flask==3.0.3\n",
                           "flask==3.0.3\nrequests==2.32.3\n")],
                "commands": ["pip install -r requirements.txt"], "success": "pytest tests/ -x"},
    },
    {
        "name": "pytest-fixture-not-found",
        "commands": ["pytest tests/{test}.py", "python -m pytest tests/{test}.py", "uv run pytest tests/"],
        "error": PYTEST_HEAD.format(exit=1, collected="{count} items") + """
tests/{test}.py ..E                                                     [100%]

==================================== ERRORS ====================================
_________________ ERROR at setup of test_create_invoice _________________
file {root}/tests/{test}.py, line {line}
  def test_create_invoice(db_session, customer):
E       fixture 'db_session' not found
>       available fixtures: anyio_backend, cache, capfd, capsys, caplog, customer, doctest_namespace, monkeypatch, pytestconfig, record_property, tmp_path, tmp_path_factory, tmpdir
>       use 'pytest --fixtures [testpath]' for help on them.

{root}/tests/{test}.py:{line}
=========================== short test summary info ============================
ERROR tests/{test}.py::test_create_invoice
========================= 2 passed, 1 error in {secs}s =========================
""",
        "fix": {"edits": [("tests/conftest.py", "Added the db_session fixture (a rolled-back transaction per test)",
                           "import pytest\n", "import pytest\n\n\n@pytest.fixture\ndef db_session(engine):\n"
                           "    with engine.begin() as conn:\n        yield conn\n        conn.rollback()\n")],
                "commands": [], "success": "pytest tests/"},
    },
    {
        "name": "pytest-no-such-table",
        "commands": ["pytest tests/{test}.py -q", "cd {root} && pytest tests/{test}.py -q",
                     "pytest tests/{test}.py -q 2>&1 | tail -25"],
        "error": """Exit code 1
..F                                                                      [100%]
=================================== FAILURES ===================================
______________________________ test_list_users _______________________________

    def test_list_users(client):
>       response = client.get("/users")

tests/{test}.py:{line}:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
.venv/lib/python3.11/site-packages/sqlalchemy/engine/default.py:{line2}: in do_execute
    cursor.execute(statement, parameters)
E   sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) no such table: users
E   [SQL: SELECT users.id, users.email, users.name FROM users]
E   (Background on this error at: https://sqlalche.me/e/20/e3q8)
=========================== short test summary info ============================
FAILED tests/{test}.py::test_list_users - sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) no such table: users
1 failed, 2 passed in {secs}s
""",
        "fix": {"edits": [("migrations/versions/0002_users.py", "Added the users table migration",
                           "", "def upgrade():\n    op.create_table('users', sa.Column('id', sa.Integer, primary_key=True))\n")],
                "commands": ["alembic upgrade head"], "success": "pytest tests/ -q"},
    },
    {
        "name": "django-settings-not-configured",
        "commands": ["pytest tests/{test}.py", "cd {root} && pytest tests/{test}.py",
                     "timeout 300 pytest tests/ 2>&1 | tail -50"],
        "error": PYTEST_HEAD.format(exit=2, collected="0 items / 1 error") + """
==================================== ERRORS ====================================
___________________ ERROR collecting tests/{test}.py ___________________
tests/{test}.py:{line}: in <module>
    from shop.models import Order
shop/models.py:1: in <module>
    from django.db import models
.venv/lib/python3.11/site-packages/django/apps/registry.py:{line2}: in check_apps_ready
    settings.INSTALLED_APPS
.venv/lib/python3.11/site-packages/django/conf/__init__.py:71: in _setup
    raise ImproperlyConfigured(
E   django.core.exceptions.ImproperlyConfigured: Requested setting INSTALLED_APPS, but settings are not configured. You must either define the environment variable DJANGO_SETTINGS_MODULE or call settings.configure() before accessing settings.
=========================== short test summary info ============================
ERROR tests/{test}.py - django.core.exceptions.ImproperlyConfigured: Requested setting INSTALLED_APPS, but se...
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in {secs}s ===============================
""",
        "fix": {"edits": [("pytest.ini", "Set DJANGO_SETTINGS_MODULE for pytest-django", "[pytest]\n",
                           "[pytest]\nDJANGO_SETTINGS_MODULE = shop.settings\n")],
                "commands": ["pip install pytest-django"], "success": "pytest"},
    },
    {
        "name": "pytest-report-date-utc",
        "commands": ["pytest tests/test_reports.py", "cd {root} && pytest tests/test_reports.py",
                     "pytest tests/test_reports.py::test_daily_report_date 2>&1 | tail -30"],
        "error": """Exit code 1
F                                                                        [100%]
=================================== FAILURES ===================================
____________________________ test_daily_report_date ____________________________

    def test_daily_report_date(frozen_now):
        report = build_daily_report(frozen_now)
>       assert report.day == "2026-{day:0>2}-01"
E       AssertionError: assert '2026-02-28' == '2026-03-01'
E         - 2026-03-01
E         + 2026-02-28

tests/test_reports.py:{line}: AssertionError
=========================== short test summary info ============================
FAILED tests/test_reports.py::test_daily_report_date - AssertionError: assert '2026-02-28' == '2026-03-01'
1 failed in {secs}s
""",
        "fix": {"edits": [("app/reports.py", "Computed the report day in UTC, not local time",
                           "day = now.date()", "day = now.astimezone(timezone.utc).date()")],
                "commands": [], "success": "pytest tests/test_reports.py"},
    },
    {
        "name": "python-unicode-decode",
        "commands": ["python scripts/import_csv.py data/customers-{day}.csv", "uv run python scripts/import_csv.py data/x.csv",
                     "python3 scripts/import_csv.py {root}/data/export.csv"],
        "error": """Exit code 1
Traceback (most recent call last):
  File "{root}/scripts/import_csv.py", line {line}, in <module>
    main(sys.argv[1])
  File "{root}/scripts/import_csv.py", line {line2}, in main
    for row in csv.DictReader(handle):
  File "/usr/lib/python3.11/csv.py", line 110, in __next__
    self.fieldnames
  File "<frozen codecs>", line 322, in decode
UnicodeDecodeError: 'utf-8' codec can't decode byte 0x{hexbyte} in position {pos}: invalid start byte
""",
        "fix": {"edits": [("scripts/import_csv.py", "Opened the CSV as cp1252 (the export is not UTF-8)",
                           "open(path, newline='')", "open(path, newline='', encoding='cp1252')")],
                "commands": [], "success": "python scripts/import_csv.py data/customers.csv"},
    },
    {
        "name": "npm-eresolve",
        "commands": ["npm install", "cd {root}/web && npm install", "npm install 2>&1 | tail -30"],
        "error": """Exit code 1
npm error code ERESOLVE
npm error ERESOLVE unable to resolve dependency tree
npm error
npm error While resolving: web@0.1.0
npm error Found: react@18.3.1
npm error node_modules/react
npm error   react@"^18.2.0" from the root project
npm error
npm error Could not resolve dependency:
npm error peer react@"^17.0.0" from react-beautiful-dnd@13.1.1
npm error node_modules/react-beautiful-dnd
npm error   react-beautiful-dnd@"^13.1.1" from the root project
npm error
npm error Fix the upstream dependency conflict, or retry
npm error this command with --force or --legacy-peer-deps
npm error to accept an incorrect (and potentially broken) dependency resolution.
npm error
npm error
npm error For a full report see:
npm error /home/dev/.npm/_logs/{ts}-eresolve-report.txt
npm error A complete log of this run can be found in: /home/dev/.npm/_logs/{ts}-debug-0.log
""",
        "fix": {"edits": [("web/.npmrc", "Set legacy-peer-deps (react-beautiful-dnd still declares react 17)", "",
                           "legacy-peer-deps=true\n")],
                "commands": [], "success": "npm install"},
    },
    {
        "name": "node-eaddrinuse-3000",
        "commands": ["npm run dev", "cd {root} && npm run dev", "timeout 20 npm run dev"],
        "error": """Exit code 1

> web@0.1.0 dev
> node server.js

node:events:497
      throw er; // Unhandled 'error' event
      ^

Error: listen EADDRINUSE: address already in use :::3000
    at Server.setupListenHandle [as _listen2] (node:net:1872:16)
    at listenInCluster (node:net:1920:12)
    at Server.listen (node:net:2008:7)
    at Function.listen ({root}/node_modules/express/lib/application.js:635:24)
    at Object.<anonymous> ({root}/server.js:{line}:5)
Emitted 'error' event on Server instance at:
    at emitErrorNT (node:net:1899:8)
    at process.processTicksAndRejections (node:internal/process/task_queues:82:21) {{
  code: 'EADDRINUSE',
  errno: -98,
  syscall: 'listen',
  address: '::',
  port: 3000
}}

Node.js v20.12.2
""",
        "fix": {"edits": [("server.js", "The server reads PORT from the environment (3000 stays the default)",
                           "app.listen(3000", "app.listen(process.env.PORT || 3000")],
                "commands": ["lsof -ti tcp:3000 | xargs kill"], "success": "npm run dev"},
    },
    {
        "name": "node-cannot-find-module-dotenv-config",
        "commands": ["node scripts/seed.js", "cd {root} && node scripts/seed.js 2>&1"],
        "error": """Exit code 1
node:internal/modules/cjs/loader:1148
  throw err;
  ^

Error: Cannot find module 'pg'
Require stack:
- {root}/scripts/seed.js
    at Module._resolveFilename (node:internal/modules/cjs/loader:1145:15)
    at Module._load (node:internal/modules/cjs/loader:986:27)
    at Module.require (node:internal/modules/cjs/loader:1233:19)
    at require (node:internal/modules/helpers:179:18)
    at Object.<anonymous> ({root}/scripts/seed.js:{line}:20)
    at Module._compile (node:internal/modules/cjs/loader:1358:14) {{
  code: 'MODULE_NOT_FOUND',
  requireStack: [ '{root}/scripts/seed.js' ]
}}

Node.js v20.12.2
""",
        "fix": {"edits": [("package.json", "Added pg to the dependencies", '"dependencies": {',
                           '"dependencies": {\n    "pg": "^8.11.5",')],
                "commands": ["npm install pg"], "success": "node scripts/seed.js"},
    },
    {
        "name": "jest-cart-discount",
        "commands": ["npm test", "cd {root} && npm test", "npm run test 2>&1 | tail -40"],
        "error": """Exit code 1

> shop@1.0.0 test
> jest

 FAIL  src/cart.test.js
  Cart
    ✓ adds items ({ms} ms)
    ✕ applies the percentage discount ({ms} ms)

  ● Cart › applies the percentage discount

    expect(received).toBe(expected) // Object.is equality

    Expected: 90
    Received: 0.9

      {line} |     const cart = new Cart([{{ price: 100 }}]);
      {line2} |     cart.applyDiscount(10);
    > 14 |     expect(cart.total()).toBe(90);
         |                          ^

      at Object.toBe (src/cart.test.js:14:26)

Test Suites: 1 failed, 1 total
Tests:       1 failed, 1 passed, 2 total
Snapshots:   0 total
Time:        {secs} s
Ran all test suites.
""",
        "fix": {"edits": [("src/cart.js", "applyDiscount takes a percentage (10 means 10 %), not a factor",
                           "this.discount = value", "this.discount = value / 100")],
                "commands": [], "success": "npm test"},
    },
    {
        "name": "tsc-ts2322",
        "commands": ["npx tsc --noEmit", "tsc --noEmit", "cd {root} && npx tsc --noEmit 2>&1 | head -30"],
        "error": """Exit code 2
src/api/user.ts({line},{col}): error TS2322: Type 'string' is not assignable to type 'number'.

{line}     age: form.get("age"),
           ~~~

  src/types.ts:{line2}:3
    {line2}   age: number;
          ~~~
    The expected type comes from property 'age' which is declared here on type 'User'


Found 1 error in src/api/user.ts:{line}
""",
        "fix": {"edits": [("src/api/user.ts", "Parsed the age form field to a number", 'age: form.get("age"),',
                           'age: Number(form.get("age")),')],
                "commands": [], "success": "npx tsc --noEmit"},
    },
    {
        "name": "tsc-ts2307-alias",
        "commands": ["npx tsc -p tsconfig.json", "cd {root}/web && tsc -p tsconfig.app.json"],
        "error": """Exit code 2
src/pages/home.tsx({line},{col}): error TS2307: Cannot find module '@/lib/format' or its corresponding type declarations.

{line} import {{ formatPrice }} from "@/lib/format";
                                   ~~~~~~~~~~~~~~


Found 1 error in src/pages/home.tsx:{line}
""",
        "fix": {"edits": [("tsconfig.json", "Mapped the @/* path alias to src/*", '"compilerOptions": {',
                           '"compilerOptions": {\n    "baseUrl": ".",\n    "paths": {"@/*": ["src/*"]},')],
                "commands": [], "success": "npx tsc -p tsconfig.json"},
    },
    {
        "name": "pip-no-version-torch",
        "commands": ["pip install -r requirements.txt", "cd {root} && pip install -r requirements.txt",
                     ".venv/bin/python -m pip install -r requirements/base.txt"],
        "error": """Exit code 1
Collecting numpy==1.26.4 (from -r requirements.txt (line 1))
  Using cached numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl.metadata ({count} kB)
ERROR: Could not find a version that satisfies the requirement torch==2.9.9 (from versions: 2.0.0, 2.0.1, 2.1.0, 2.1.1, 2.1.2, 2.2.0, 2.2.1, 2.2.2, 2.3.0, 2.3.1)
ERROR: No matching distribution found for torch==2.9.9
""",
        "fix": {"edits": [("requirements.txt", "Pinned torch to 2.3.1 (2.9.9 does not exist)", "torch==2.9.9",
                           "torch==2.3.1")],
                "commands": [], "success": "pip install -r requirements.txt"},
    },
    {
        "name": "pip-externally-managed",
        "commands": ["pip install httpx", "pip3 install httpx"],
        "error": """Exit code 1
error: externally-managed-environment

× This environment is externally managed
╰─> To install Python packages system-wide, try apt install
    python3-xyz, where xyz is the package you are trying to
    install.

    If you wish to install a non-Debian-packaged Python package,
    create a virtual environment using python3 -m venv path/to/venv.
    Then use path/to/venv/bin/python and path/to/venv/bin/pip. Make
    sure you have python3-full installed.

note: If you believe this is a mistake, please contact your Python installation or OS distribution provider. You can override this, at the risk of breaking your Python installation or OS, by passing --break-system-packages.
hint: See PEP 668 for the detailed specification.
""",
        "fix": {"edits": [("Makefile", "Added a venv target: the system Python is externally managed", "",
                           "venv:\n\tpython3 -m venv .venv && .venv/bin/pip install -r requirements.txt\n")],
                "commands": ["python3 -m venv .venv"], "success": ".venv/bin/pip install httpx"},
    },
    {
        "name": "cargo-e0432-serde-json",
        "commands": ["cargo build", "cd {root} && cargo build", "cargo build 2>&1 | tail -30"],
        "error": """Exit code 101
   Compiling proj v0.1.0 ({root})
error[E0432]: unresolved import `serde_json`
 --> src/main.rs:{line}:5
  |
{line} | use serde_json::Value;
  |     ^^^^^^^^^^ use of undeclared crate or module `serde_json`

For more information about this error, try `rustc --explain E0432`.
error: could not compile `proj` (bin "proj") due to 1 previous error
""",
        "fix": {"edits": [("Cargo.toml", "Added serde_json to the dependencies", "[dependencies]\n",
                           "[dependencies]\nserde_json = \"1\"\n")],
                "commands": ["cargo add serde_json"], "success": "cargo build"},
    },
    {
        "name": "cargo-e0308-mismatched",
        "commands": ["cargo test", "cd {root} && cargo test", "cargo test 2>&1 | head -60"],
        "error": """Exit code 101
   Compiling proj v0.1.0 ({root})
error[E0308]: mismatched types
  --> src/config.rs:{line}:20
   |
{line} |     let port: u16 = env::var("PORT").unwrap_or("8080".into());
   |               ---   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ expected `u16`, found `String`
   |               |
   |               expected due to this

For more information about this error, try `rustc --explain E0308`.
error: could not compile `proj` (lib test) due to 1 previous error
""",
        "fix": {"edits": [("src/config.rs", "Parsed PORT into a u16", 'unwrap_or("8080".into());',
                           'unwrap_or("8080".into()).parse()?;')],
                "commands": [], "success": "cargo test"},
    },
    {
        "name": "go-missing-module",
        "commands": ["go build ./...", "go build ./cmd/server", "cd {root} && go build ./..."],
        "error": """Exit code 1
cmd/server/main.go:{line}:2: no required module provides package github.com/gorilla/mux; to add it:
	go get github.com/gorilla/mux
""",
        "fix": {"edits": [("go.mod", "Required github.com/gorilla/mux v1.8.1", "require (\n",
                           "require (\n\tgithub.com/gorilla/mux v1.8.1\n")],
                "commands": ["go get github.com/gorilla/mux"], "success": "go build ./..."},
    },
    {
        "name": "go-test-config-port",
        "commands": ["go test ./...", "go test ./internal/config/", "cd {root} && go test ./... 2>&1 | tail -20"],
        "error": """Exit code 1
--- FAIL: TestLoadDefaults ({secs}s)
    config_test.go:{line}: Port = 0, want 8080
FAIL
FAIL	example.com/proj/internal/config	{secs}s
ok  	example.com/proj/internal/server	(cached)
FAIL
""",
        "fix": {"edits": [("internal/config/config.go", "Defaulted Port to 8080 when PORT is unset",
                           "Port: port,", "Port: cmp.Or(port, 8080),")],
                "commands": [], "success": "go test ./..."},
    },
    {
        "name": "docker-port-allocated",
        "commands": ["docker compose up -d", "sudo docker compose up -d", "cd {root} && docker compose up -d"],
        "error": """Exit code 1
 Network proj_default  Creating
 Network proj_default  Created
 Container proj-db-1  Creating
 Container proj-db-1  Created
 Container proj-db-1  Starting
Error response from daemon: driver failed programming external connectivity on endpoint proj-db-1 ({sha40}): Bind for 0.0.0.0:5432 failed: port is already allocated
""",
        "fix": {"edits": [("docker-compose.yml", "Published the database on 5433 (a local postgres holds 5432)",
                           '- "5432:5432"', '- "5433:5432"')],
                "commands": [], "success": "docker compose up -d"},
    },
    {
        "name": "docker-build-npm-ci-lock",
        "commands": ["docker build -t shop-web .", "cd {root} && docker build -t shop-web .",
                     "docker build -t shop-web . 2>&1 | tail -30"],
        "error": """Exit code 1
#0 building with "default" instance using docker driver

#{step} [deps 4/5] RUN npm ci
#{step} {secs} npm error code EUSAGE
#{step} {secs} npm error
#{step} {secs} npm error `npm ci` can only install packages when your package.json and package-lock.json or npm-shrinkwrap.json are in sync. Please update your lock file with `npm install` before continuing.
#{step} {secs} npm error
#{step} {secs} npm error Missing: zod@3.23.8 from lock file
#{step} ERROR: process "/bin/sh -c npm ci" did not complete successfully: exit code: 1
------
 > [deps 4/5] RUN npm ci:
------
Dockerfile:{line}
--------------------
ERROR: failed to solve: process "/bin/sh -c npm ci" did not complete successfully: exit code: 1
""",
        "fix": {"edits": [("package-lock.json", "Regenerated the lock file with zod in it", '"packages": {',
                           '"packages": {\n    "node_modules/zod": {"version": "3.23.8"},')],
                "commands": ["npm install"], "success": "docker build -t shop-web ."},
    },
    {
        "name": "git-push-rejected",
        "commands": ["git push origin main", "cd {root} && git push origin main", "git -C {root} push origin main"],
        "error": """Exit code 1
To github.com:acme/proj.git
 ! [rejected]        main -> main (fetch first)
error: failed to push some refs to 'github.com:acme/proj.git'
hint: Updates were rejected because the remote contains work that you do not
hint: have locally. This is usually caused by another repository pushing to
hint: the same ref. If you want to integrate the remote changes, use
hint: 'git pull' before pushing again.
hint: See the 'Note about fast-forwards' in 'git push --help' for details.
""",
        "fix": {"edits": [], "commands": ["git pull --rebase origin main"], "success": "git push origin main"},
    },
    {
        "name": "git-checkout-overwritten",
        "commands": ["git checkout release", "cd {root} && git checkout release"],
        "error": """Exit code 1
error: Your local changes to the following files would be overwritten by checkout:
	src/settings.py
Please commit your changes or stash them before you switch branches.
Aborting
""",
        "fix": {"edits": [], "commands": ["git stash push -m wip"], "success": "git checkout release"},
    },
    {
        "name": "make-openssl-header",
        "commands": ["make", "cd {root} && make", "make 2>&1 | tail -20"],
        "error": """Exit code 2
cc -O2 -Wall -c src/tls.c -o build/tls.o
src/tls.c:{line}:10: fatal error: openssl/ssl.h: No such file or directory
    {line} | #include <openssl/ssl.h>
      |          ^~~~~~~~~~~~~~~
compilation terminated.
make: *** [Makefile:{line2}: build/tls.o] Error 1
""",
        "fix": {"edits": [("README.md", "Documented the libssl-dev build dependency", "## Build\n",
                           "## Build\n\nNeeds `libssl-dev` (apt) for openssl/ssl.h.\n")],
                "commands": ["sudo apt-get install -y libssl-dev"], "success": "make"},
    },
    {
        "name": "psql-relation-missing",
        "commands": ["psql -d app -c 'SELECT total FROM invoices WHERE id = {count}'",
                     "cd {root} && psql -d app -c 'SELECT total FROM invoices WHERE id = {count}'",
                     "PGPASSWORD=secret psql -d app -c \"SELECT total FROM invoices WHERE id = {count}\""],
        "error": """Exit code 1
ERROR:  relation "invoices" does not exist
LINE 1: SELECT total FROM invoices WHERE id = {count}
                          ^
""",
        "fix": {"edits": [("db/migrations/003_invoices.sql", "Created the invoices table", "",
                           "CREATE TABLE invoices (id serial PRIMARY KEY, total numeric NOT NULL);\n")],
                "commands": ["psql -d app -f db/migrations/003_invoices.sql"],
                "success": "psql -d app -c 'SELECT count(*) FROM invoices'"},
    },
    {
        "name": "psql-connection-refused",
        "commands": ["psql -h localhost -U app -d app -c '\\dt'", "psql -h localhost -U app -d app -c 'select 1'",
                     "cd {root} && psql -h localhost -U app -d app -c '\\d users'"],
        "error": """Exit code 2
psql: error: connection to server at "localhost" (127.0.0.1), port 5432 failed: Connection refused
	Is the server running on that host and accepting TCP/IP connections?
""",
        "fix": {"edits": [], "commands": ["docker compose up -d db"], "success": "psql -h localhost -U app -d app -c 'select 1'"},
    },
    {
        "name": "alembic-multiple-heads",
        "commands": ["alembic upgrade head", "cd {root} && alembic upgrade head", "uv run alembic upgrade head"],
        "error": """Exit code 1
INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.
INFO  [alembic.runtime.migration] Will assume transactional DDL.
ERROR [alembic.util.messaging] Multiple head revisions are present for given argument 'head'; please specify a specific target revision, '<branchname>@head' to narrow to a specific head, or 'heads' for all heads
  FAILED: Multiple head revisions are present for given argument 'head'; please specify a specific target
  revision, '<branchname>@head' to narrow to a specific head, or 'heads' for all heads
""",
        "fix": {"edits": [("migrations/versions/0009_merge_heads.py", "Merged the two migration heads",
                           "", "revision = 'merge'\ndown_revision = ('a1b2', 'c3d4')\n")],
                "commands": ["alembic merge heads -m merge"], "success": "alembic upgrade head"},
    },
]

UNRELATED: list[dict] = [
    {"name": "pytest-missing-yaml", "command": "pytest tests/{test}.py -x", "error": PYTEST_HEAD.format(
        exit=2, collected="0 items / 1 error") + """
==================================== ERRORS ====================================
___________________ ERROR collecting tests/{test}.py ___________________
tests/{test}.py:{line}: in <module>
    import yaml
E   ModuleNotFoundError: No module named 'yaml'
=========================== short test summary info ============================
ERROR tests/{test}.py
=============================== 1 error in {secs}s ===============================
"""},
    {"name": "pytest-fixture-client", "command": "pytest tests/{test}.py", "error": PYTEST_HEAD.format(
        exit=1, collected="{count} items") + """
==================================== ERRORS ====================================
_________________ ERROR at setup of test_homepage _________________
file {root}/tests/{test}.py, line {line}
  def test_homepage(client):
E       fixture 'client' not found
>       available fixtures: cache, capfd, capsys, caplog, monkeypatch, pytestconfig, tmp_path
=========================== short test summary info ============================
ERROR tests/{test}.py::test_homepage
=============================== 1 error in {secs}s ===============================
"""},
    {"name": "pytest-assert-status", "command": "pytest tests/{test}.py -x", "error": """Exit code 1
F
=================================== FAILURES ===================================
________________________________ test_login _________________________________

    def test_login(client):
        response = client.post("/login", json={{"user": "ana"}})
>       assert response.status_code == 200
E       assert 422 == 200
E        +  where 422 = <Response [422 UNPROCESSABLE ENTITY]>.status_code

tests/{test}.py:{line}: AssertionError
=========================== short test summary info ============================
FAILED tests/{test}.py::test_login - assert 422 == 200
1 failed in {secs}s
"""},
    {"name": "pytest-other-date-assert", "command": "pytest tests/test_billing.py", "error": """Exit code 1
F                                                                        [100%]
=================================== FAILURES ===================================
___________________________ test_invoice_due_date ____________________________
>       assert invoice.due == "2026-04-30"
E       AssertionError: assert '2026-05-01' == '2026-04-30'
E         - 2026-04-30
E         + 2026-05-01

tests/test_billing.py:{line}: AssertionError
=========================== short test summary info ============================
FAILED tests/test_billing.py::test_invoice_due_date - AssertionError: assert '2026-05-01' == '2026-04-30'
1 failed in {secs}s
"""},
    {"name": "pytest-keyerror", "command": "pytest tests/{test}.py -q", "error": """Exit code 1
F                                                                        [100%]
=================================== FAILURES ===================================
______________________________ test_profile _______________________________
tests/{test}.py:{line}: in test_profile
    assert data["email"] == "ana@example.com"
E   KeyError: 'email'
=========================== short test summary info ============================
FAILED tests/{test}.py::test_profile - KeyError: 'email'
1 failed in {secs}s
"""},
    {"name": "python-typeerror", "command": "python scripts/import_csv.py data/x.csv", "error": """Exit code 1
Traceback (most recent call last):
  File "{root}/scripts/import_csv.py", line {line}, in <module>
    main()
TypeError: main() missing 1 required positional argument: 'path'
"""},
    {"name": "npm-e404", "command": "npm install left-padd", "error": """Exit code 1
npm error code E404
npm error 404 Not Found - GET https://registry.npmjs.org/left-padd - Not found
npm error 404
npm error 404  'left-padd@*' is not in this registry.
npm error 404
npm error 404 Note that you can also install from a
npm error 404 tarball, folder, http url, or git url.
npm error A complete log of this run can be found in: /home/dev/.npm/_logs/{ts}-debug-0.log
"""},
    {"name": "npm-missing-script", "command": "npm run lint", "error": """Exit code 1
npm error Missing script: "lint"
npm error
npm error To see a list of scripts, run:
npm error   npm run
npm error A complete log of this run can be found in: /home/dev/.npm/_logs/{ts}-debug-0.log
"""},
    {"name": "node-eaddrinuse-8080", "command": "node api/server.js", "error": """Exit code 1
node:events:497
      throw er; // Unhandled 'error' event
      ^

Error: listen EADDRINUSE: address already in use :::8080
    at Server.setupListenHandle [as _listen2] (node:net:1872:16)
    at Object.<anonymous> ({root}/api/server.js:{line}:5)

Node.js v20.12.2
"""},
    {"name": "node-cannot-find-dotenv", "command": "node scripts/seed.js", "error": """Exit code 1
node:internal/modules/cjs/loader:1148
  throw err;
  ^

Error: Cannot find module 'dotenv'
Require stack:
- {root}/scripts/seed.js
    at Module._resolveFilename (node:internal/modules/cjs/loader:1145:15)

Node.js v20.12.2
"""},
    {"name": "jest-other-test", "command": "npm test", "error": """Exit code 1

> shop@1.0.0 test
> jest

 FAIL  src/price.test.js
  ● formatPrice › rounds to cents

    expect(received).toBe(expected) // Object.is equality

    Expected: "10.99"
    Received: "10.989999"

      at Object.toBe (src/price.test.js:{line}:30)

Tests:       1 failed, {count} passed, {count} total
Time:        {secs} s
"""},
    {"name": "tsc-ts2345", "command": "npx tsc --noEmit", "error": """Exit code 2
src/api/order.ts({line},{col}): error TS2345: Argument of type 'string | undefined' is not assignable to parameter of type 'string'.
  Type 'undefined' is not assignable to type 'string'.

Found 1 error in src/api/order.ts:{line}
"""},
    {"name": "tsc-ts2307-relative", "command": "npx tsc --noEmit", "error": """Exit code 2
src/index.ts({line},{col}): error TS2307: Cannot find module './config' or its corresponding type declarations.

Found 1 error in src/index.ts:{line}
"""},
    {"name": "pip-no-version-tensorflow", "command": "pip install tensorflow==1.0", "error": """Exit code 1
ERROR: Could not find a version that satisfies the requirement tensorflow==1.0 (from versions: 2.16.1, 2.16.2, 2.17.0)
ERROR: No matching distribution found for tensorflow==1.0
"""},
    {"name": "pip-psycopg2-pg-config", "command": "pip install psycopg2==2.9.9", "error": """Exit code 1
Collecting psycopg2==2.9.9
  Downloading psycopg2-2.9.9.tar.gz (384 kB)
  Preparing metadata (setup.py) ... error
  error: subprocess-exited-with-error

  × python setup.py egg_info did not run successfully.
  │ exit code: 1
  ╰─> [23 lines of output]
      running egg_info
      Error: pg_config executable not found.

      pg_config is required to build psycopg2 from source.
      [end of output]

  note: This error originates from a subprocess, and is likely not a problem with pip.
error: metadata-generation-failed
"""},
    {"name": "cargo-e0432-tokio", "command": "cargo build", "error": """Exit code 101
   Compiling proj v0.1.0 ({root})
error[E0432]: unresolved import `tokio`
 --> src/main.rs:{line}:5
  |
{line} | use tokio::net::TcpListener;
  |     ^^^^^ use of undeclared crate or module `tokio`

error: could not compile `proj` (bin "proj") due to 1 previous error
"""},
    {"name": "cargo-e0425", "command": "cargo test", "error": """Exit code 101
   Compiling proj v0.1.0 ({root})
error[E0425]: cannot find value `config` in this scope
  --> src/server.rs:{line}:17
   |
{line} |     let addr = config.addr();
   |                ^^^^^^ not found in this scope

error: could not compile `proj` (lib test) due to 1 previous error
"""},
    {"name": "cargo-e0308-elsewhere", "command": "cargo test", "error": """Exit code 101
   Compiling proj v0.1.0 ({root})
error[E0308]: mismatched types
  --> src/server.rs:{line}:24
   |
{line} |     let timeout: u64 = settings.timeout;
   |                  ---   ^^^^^^^^^^^^^^^^ expected `u64`, found `Duration`
   |                  |
   |                  expected due to this

error: could not compile `proj` (lib test) due to 1 previous error
"""},
    {"name": "go-undefined", "command": "go build ./...", "error": """Exit code 1
# example.com/proj/internal/server
internal/server/routes.go:{line}:9: undefined: NewRouter
"""},
    {"name": "go-test-other", "command": "go test ./...", "error": """Exit code 1
--- FAIL: TestParseDuration ({secs}s)
    duration_test.go:{line}: ParseDuration("1h") = 0s, want 1h0m0s
FAIL
FAIL	example.com/proj/internal/timeutil	{secs}s
FAIL
"""},
    {"name": "docker-daemon-down", "command": "docker compose up -d", "error": """Exit code 1
Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?
"""},
    {"name": "docker-pull-denied", "command": "docker run --rm acme/worker:latest", "error": """Exit code 125
Unable to find image 'acme/worker:latest' locally
docker: Error response from daemon: pull access denied for acme/worker, repository does not exist or may require 'docker login': denied: requested access to the resource is denied.
See 'docker run --help'.
"""},
    {"name": "git-unrelated-histories", "command": "git pull origin main", "error": """Exit code 128
From github.com:acme/proj
 * branch            main       -> FETCH_HEAD
fatal: refusing to merge unrelated histories
"""},
    {"name": "git-pathspec", "command": "git checkout feature/login-{day}", "error": """Exit code 1
error: pathspec 'feature/login-{day}' did not match any file(s) known to git
"""},
    {"name": "git-merge-conflict", "command": "git merge feature/search", "error": """Exit code 1
Auto-merging src/search.py
CONFLICT (content): Merge conflict in src/search.py
Automatic merge failed; fix conflicts and then commit the result.
"""},
    {"name": "make-no-rule", "command": "make deploy", "error": """Exit code 2
make: *** No rule to make target 'deploy'.  Stop.
"""},
    {"name": "make-missing-zlib", "command": "make", "error": """Exit code 2
cc -O2 -Wall -c src/compress.c -o build/compress.o
src/compress.c:{line}:10: fatal error: zlib.h: No such file or directory
compilation terminated.
make: *** [Makefile:{line2}: build/compress.o] Error 1
"""},
    {"name": "psql-column-missing", "command": "psql -d app -c 'SELECT emial FROM users'", "error": """Exit code 1
ERROR:  column "emial" does not exist
LINE 1: SELECT emial FROM users
               ^
HINT:  Perhaps you meant to reference the column "users.email".
"""},
    {"name": "psql-duplicate-key", "command": "psql -d app -f scripts/seed.sql", "error": """Exit code 3
psql:scripts/seed.sql:{line}: ERROR:  duplicate key value violates unique constraint "users_email_key"
DETAIL:  Key (email)=(ana@example.com) already exists.
"""},
    {"name": "psql-password", "command": "psql -h localhost -U app -d app", "error": """Exit code 2
psql: error: connection to server at "localhost" (127.0.0.1), port 5432 failed: FATAL:  password authentication failed for user "app"
"""},
    {"name": "alembic-cant-locate", "command": "alembic upgrade head", "error": """Exit code 1
INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.
ERROR [alembic.util.messaging] Can't locate revision identified by '{sha}'
  FAILED: Can't locate revision identified by '{sha}'
"""},
    {"name": "shell-command-not-found", "command": "poetry install", "error": """Exit code 127
/bin/bash: line 1: poetry: command not found
"""},
]
