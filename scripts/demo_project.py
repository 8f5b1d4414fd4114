"""The project of `make demo`'s story: `invoice-sync`, a nightly job that copies invoices from a billing
API into a ledger, as its files stand before session 1, and the outputs its commands print in the story.

Only text: nothing here runs. The tests in it pass against the code session 1 leaves behind.
"""

PROJECT_NAME = "invoice-sync"

FILES: dict[str, str] = {
    "pyproject.toml": """\
[project]
name = "invoice-sync"
version = "0.3.0"
requires-python = ">=3.11"
dependencies = ["requests>=2.31"]

[project.scripts]
invoice-sync = "invoice_sync.__main__:main"
""",
    "README.md": """\
# invoice-sync

Copies new invoices from the billing API into the ledger, every night at 02:00.

    invoice-sync --since 2024-11-17 [--dry-run]

Settings come from the environment: `BILLING_API_URL`, `BILLING_API_TOKEN`, `LEDGER_DSN`.
""",
    "CHANGELOG.md": """\
# Changelog

## 0.3.0 (2024-10-02)
- `--dry-run` prints what would be written to the ledger instead of writing it.
""",
    "logs/nightly-sync.log": """\
2024-11-18 02:00:01 INFO  sync started (since 2024-11-17)
2024-11-18 02:00:03 INFO  pages 1-6: 600 invoices
2024-11-18 02:00:04 ERROR sync aborted on page 7
2024-11-18 02:00:04 ERROR invoice_sync.http.BillingAPIError: 503 from https://billing.example.com/v2/invoices
""",
    "src/invoice_sync/__init__.py": '"""Nightly copy of invoices from the billing API into the ledger."""\n',
    "src/invoice_sync/http.py": '''\
"""The billing API's HTTP client."""

from __future__ import annotations

from typing import Any

import requests

DEFAULT_TIMEOUT = 10.0


class BillingAPIError(Exception):
    """The billing API answered with an error status."""

    def __init__(self, status: int, url: str) -> None:
        super().__init__(f"{status} from {url}")
        self.status = status
        self.url = url


class HttpClient:
    def __init__(self, base_url: str, session: requests.Session | None = None,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = session or requests.Session()
        self.timeout = timeout

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        url = f"{self.base_url}/{path.lstrip('/')}"
        response = self.session.request(method, url, timeout=self.timeout, **kwargs)
        if response.status_code >= 400:
            raise BillingAPIError(response.status_code, url)
        return response.json()

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self.request("POST", path, json=body)
''',
    "src/invoice_sync/sync.py": '''\
"""The nightly sync: copy every invoice issued since a date into the ledger."""

from __future__ import annotations

from invoice_sync.http import HttpClient
from invoice_sync.ledger import Ledger


def sync(client: HttpClient, ledger: Ledger, since: str) -> int:
    """Copy the invoices issued since `since`, page by page; returns how many were new."""
    added = 0
    page = 1
    while True:
        batch = client.get("/v2/invoices", since=since, page=page)
        for invoice in batch["items"]:
            added += ledger.upsert(invoice)
        if not batch["has_more"]:
            return added
        page += 1
''',
    "src/invoice_sync/ledger.py": '''\
"""The ledger the invoices are copied into."""

from __future__ import annotations

from typing import Any


class Ledger:
    def __init__(self, dsn: str) -> None:
        self.dsn = dsn

    def upsert(self, invoice: dict[str, Any]) -> int:
        """Store one invoice; 1 if it was new, 0 if it was already there."""
        raise NotImplementedError("talks to the ledger database")
''',
    "src/invoice_sync/__main__.py": '''\
"""`invoice-sync --since DATE [--dry-run]`."""

from __future__ import annotations

import argparse
import os

from invoice_sync.http import HttpClient
from invoice_sync.ledger import Ledger
from invoice_sync.sync import sync


def main() -> None:
    parser = argparse.ArgumentParser(prog="invoice-sync")
    parser.add_argument("--since", required=True)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    client = HttpClient(os.environ["BILLING_API_URL"])
    ledger = Ledger(os.environ.get("LEDGER_DSN", "") if not args.dry_run else "")
    print(f"sync started (since {args.since}{', dry run' if args.dry_run else ''})")
    added = sync(client, ledger, since=args.since)
    print(f"{added} new invoices")


if __name__ == "__main__":
    main()
''',
    "tests/__init__.py": "",
    "tests/stubs.py": '''\
"""A requests.Session stand-in that answers from a script, and an in-memory ledger."""

from __future__ import annotations

from typing import Any


class StubResponse:
    def __init__(self, status_code: int, headers: dict[str, str] | None = None, body: Any = None) -> None:
        self.status_code = status_code
        self.headers = headers or {}
        self._body = {} if body is None else body

    def json(self) -> Any:
        return self._body


class StubSession:
    """Answers each request with the next scripted status, (status, headers) or (status, headers, body)."""

    def __init__(self, script: list[Any]) -> None:
        self.script = list(script)
        self.calls: list[tuple[str, str]] = []

    def request(self, method: str, url: str, **kwargs: Any) -> StubResponse:
        self.calls.append((method, url))
        answer = self.script.pop(0)
        return StubResponse(*answer) if isinstance(answer, tuple) else StubResponse(answer)


def page(ids: range, more: bool) -> tuple[int, dict[str, str], dict[str, Any]]:
    return 200, {}, {"items": [{"id": f"inv_{n}"} for n in ids], "has_more": more}


class MemoryLedger:
    def __init__(self) -> None:
        self.invoices: dict[str, dict[str, Any]] = {}

    def upsert(self, invoice: dict[str, Any]) -> int:
        new = invoice["id"] not in self.invoices
        self.invoices[invoice["id"]] = invoice
        return int(new)
''',
    "tests/test_sync.py": '''\
from invoice_sync.http import HttpClient
from invoice_sync.sync import sync

from .stubs import MemoryLedger, StubSession, page


def make_client(stub: StubSession) -> HttpClient:
    return HttpClient("https://billing.test", session=stub)


def test_sync_copies_every_page():
    stub = StubSession([page(range(3), more=True), page(range(3, 5), more=False)])
    assert sync(make_client(stub), MemoryLedger(), since="2024-11-17") == 5


def test_sync_survives_a_503_page():
    stub = StubSession([page(range(3), more=True), (503, {"Retry-After": "7"}), page(range(3, 5), more=False)])
    assert sync(make_client(stub), MemoryLedger(), since="2024-11-17") == 5
''',
}

NEW_TEST = '''\
import pytest

from invoice_sync.http import BillingAPIError, HttpClient

from .stubs import StubSession


@pytest.fixture(autouse=True)
def slept(monkeypatch):
    delays = []
    monkeypatch.setattr("invoice_sync.http.time.sleep", delays.append)
    return delays


def test_retries_a_503_then_succeeds(slept):
    stub = StubSession([503, 503, 200])
    assert HttpClient("https://billing.test", session=stub).get("/v2/invoices") == {}
    assert len(stub.calls) == 3 and len(slept) == 2


def test_gives_up_after_four_attempts():
    stub = StubSession([503] * 6)
    with pytest.raises(BillingAPIError):
        HttpClient("https://billing.test", session=stub).get("/v2/invoices")
    assert len(stub.calls) == 4


def test_honours_retry_after(slept):
    stub = StubSession([(503, {"Retry-After": "3"}), 200])
    HttpClient("https://billing.test", session=stub).get("/v2/invoices")
    assert slept == [3.0]


def test_backoff_doubles_and_is_capped(slept):
    stub = StubSession([503] * 4)
    with pytest.raises(BillingAPIError):
        HttpClient("https://billing.test", session=stub).get("/v2/invoices")
    assert all(0 <= delay <= cap for delay, cap in zip(slept, [0.5, 1.0, 2.0]))


def test_post_is_never_retried():
    stub = StubSession([503, 201])
    with pytest.raises(BillingAPIError):
        HttpClient("https://billing.test", session=stub).post("/v2/invoices", {"customer": "c_1042", "amount": 1200})
    assert len(stub.calls) == 1
'''

FAILED_RUN = """\
Exit code 1
.F.FF                                                                    [100%]
=================================== FAILURES ===================================
______________________ test_gives_up_after_four_attempts _______________________
tests/test_http_retry.py:25: in test_gives_up_after_four_attempts
    assert len(stub.calls) == 4
E   AssertionError: assert 5 == 4
______________________ test_backoff_doubles_and_is_capped ______________________
tests/test_http_retry.py:37: in test_backoff_doubles_and_is_capped
    HttpClient("https://billing.test", session=stub).get("/v2/invoices")
src/invoice_sync/http.py:65: in get
    return self.request("GET", path, params=params)
src/invoice_sync/http.py:50: in request
    response = self.session.request(method, url, timeout=self.timeout, **kwargs)
tests/stubs.py:27: in request
    answer = self.script.pop(0)
E   IndexError: pop from empty list
__________________________ test_post_is_never_retried __________________________
tests/test_http_retry.py:43: in test_post_is_never_retried
    with pytest.raises(BillingAPIError):
E   Failed: DID NOT RAISE BillingAPIError
=========================== short test summary info ============================
FAILED tests/test_http_retry.py::test_gives_up_after_four_attempts - Assertio...
FAILED tests/test_http_retry.py::test_backoff_doubles_and_is_capped - IndexEr...
FAILED tests/test_http_retry.py::test_post_is_never_retried - Failed: DID NOT...
3 failed, 2 passed in 0.54s"""

REPRO_RUN = """\
Exit code 1
sync started (since 2024-11-17, dry run)
pages 1-2: 200 invoices
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "{project}/src/invoice_sync/__main__.py", line 21, in main
    added = sync(client, ledger, since=args.since)
  File "{project}/src/invoice_sync/sync.py", line 14, in sync
    batch = client.get("/v2/invoices", since=since, page=page)
  File "{project}/src/invoice_sync/http.py", line 32, in request
    raise BillingAPIError(response.status_code, url)
invoice_sync.http.BillingAPIError: 503 from https://billing-staging.example.com/v2/invoices"""
