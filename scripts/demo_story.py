"""The story `make demo` replays: two Claude Code sessions on a small project, as hook payloads.

Session 1 adds retry with exponential backoff to the HTTP client of `invoice-sync` (a nightly job
that copies invoices from a billing API): Claude reads the code, reproduces the crash, is told the
design (and that POST must never be retried), implements it, a new test fails, Claude fixes the
bug, the tests pass, the linter catches a `!= None`, and the work is documented and committed.
Session 2 starts the next day with a task on the retry loop that session 1 wrote.

Every payload has exactly the shape Claude Code 2.1.330 sends (see tests/fixtures/hook-payloads/):
the same keys, Edit's `structuredPatch` computed from the file's real content, Bash failures as
PostToolUseFailure with Claude Code's "Exit code N" error text. The project's files exist on disk
in their state after session 1, so every path in the story is real.
"""

from __future__ import annotations

import difflib
import os
import random
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from demo_project import FAILED_RUN, FILES, NEW_TEST, PROJECT_NAME, REPRO_RUN

__all__ = ["PROJECT_NAME", "PROMPTS", "SESSION_2_PROMPT", "Session", "build"]

# What the user asks in each turn of session 1; the second prompt states the design decision.
PROMPTS = (
    "The nightly invoice sync died again: logs/nightly-sync.log ends with a 503 from the billing API. Find out how we "
    "call the API and why a single 503 kills the whole run.",
    "Retry inside HttpClient, no new dependency: 502/503/504 and connection errors, at most 4 attempts, exponential "
    "backoff from 0.5 s with full jitter (capped at 8 s), honour Retry-After. Never retry POST: creating an invoice "
    "is not idempotent, a retried POST could bill a customer twice.",
    "The full test suite takes 7 s now: tests/test_sync.py goes through the retry path and really sleeps. Make the "
    "sleep injectable so the tests never wait.",
    "Run ruff and mypy before we commit.",
    "Document the retry behaviour in the README and the changelog, then commit.",
)
SESSION_2_PROMPT = ("Billing support cannot tell from the logs how often we retry. Add a log line in http.py for each "
                    "retry attempt, with the attempt number and the delay before the next one.")


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def structured_patch(before: str, after: str) -> list[dict[str, Any]]:
    """Claude Code's `structuredPatch` of an edit: unified-diff hunks with 3 lines of context."""
    old, new = before.splitlines(), after.splitlines()
    hunks = []
    for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(3):
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in old[i1:i2]]
                continue
            lines += ["-" + line for line in old[i1:i2]]
            lines += ["+" + line for line in new[j1:j2]]
        first, last = group[0], group[-1]
        hunks.append({"oldStart": first[1] + 1, "oldLines": last[2] - first[1],
                      "newStart": first[3] + 1, "newLines": last[4] - first[3], "lines": lines})
    return hunks


@dataclass
class Session:
    """One Claude Code session: builds its hook payloads in order, keeping the project's files current."""

    project: str  # the project's directory (the sessions' cwd)
    home: str  # where Claude Code keeps transcripts (a throwaway dir)
    files: dict[str, str]
    rng: random.Random
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    session_id: str = ""
    prompt_id: str = ""

    def __post_init__(self) -> None:
        self.session_id = _uuid(self.rng)

    def _base(self, event: str) -> dict[str, Any]:
        transcripts = os.path.join(self.home, ".claude", "projects", self.project.replace("/", "-"))
        return {"session_id": self.session_id, "transcript_path": os.path.join(transcripts, self.session_id + ".jsonl"),
                "cwd": self.project, "hook_event_name": event}

    def _turn(self, event: str) -> dict[str, Any]:
        return {**self._base(event), "prompt_id": self.prompt_id, "permission_mode": "acceptEdits",
                "effort": {"level": "medium"}}

    def _path(self, relative: str) -> str:
        return os.path.join(self.project, relative)

    def _tool(self, name: str, tool_input: dict[str, Any], response: dict[str, Any], ms: int) -> None:
        self.events.append(("post-tool", {**self._turn("PostToolUse"), "tool_name": name, "tool_input": tool_input,
                                          "tool_response": response, "tool_use_id": self._tool_use_id(),
                                          "duration_ms": ms}))

    def _tool_use_id(self) -> str:
        return "toolu_" + "%024x" % self.rng.getrandbits(96)

    def start(self, source: str = "startup") -> None:
        self.events.append(("session-start", {**self._base("SessionStart"), "source": source}))

    def prompt(self, text: str) -> None:
        self.prompt_id = _uuid(self.rng)
        self.events.append(("user-prompt", {**self._base("UserPromptSubmit"), "prompt_id": self.prompt_id,
                                            "permission_mode": "acceptEdits", "prompt": text}))

    def read(self, relative: str, offset: int | None = None, limit: int | None = None) -> None:
        lines = self.files[relative].split("\n")
        start = (offset or 1) - 1
        shown = lines[start:start + limit] if limit else lines[start:]
        tool_input: dict[str, Any] = {"file_path": self._path(relative)}
        if offset is not None:
            tool_input["offset"] = offset
        if limit is not None:
            tool_input["limit"] = limit
        self._tool("Read", tool_input, {"type": "text", "file": {
            "filePath": self._path(relative), "content": "\n".join(shown), "numLines": len(shown),
            "startLine": start + 1, "totalLines": len(lines)}}, ms=3)

    def grep(self, pattern: str, relative: str) -> None:
        """Grep in content mode with line numbers, over the files below `relative`."""
        found = [f"{path}:{number}:{line}" for path, text in sorted(self.files.items())
                 if path.startswith(relative.rstrip("/") + "/")
                 for number, line in enumerate(text.splitlines(), 1) if re.search(pattern, line)]
        self._tool("Grep", {"pattern": pattern, "path": self._path(relative), "output_mode": "content", "-n": True},
                   {"mode": "content", "numFiles": 0, "filenames": [], "content": "\n".join(found),
                    "numLines": len(found)}, ms=41)

    def edit(self, relative: str, old: str, new: str, replace_all: bool = False) -> None:
        before = self.files[relative]
        assert before.count(old) == 1 or (replace_all and old in before), (relative, old)
        after = before.replace(old, new) if replace_all else before.replace(old, new, 1)
        self.files[relative] = after
        self._tool("Edit", {"file_path": self._path(relative), "old_string": old, "new_string": new,
                            "replace_all": replace_all},
                   {"filePath": self._path(relative), "oldString": old, "newString": new, "originalFile": before,
                    "structuredPatch": structured_patch(before, after), "userModified": False,
                    "replaceAll": replace_all}, ms=6)

    def write(self, relative: str, content: str) -> None:
        assert relative not in self.files, relative
        self.files[relative] = content
        self._tool("Write", {"file_path": self._path(relative), "content": content},
                   {"type": "create", "filePath": self._path(relative), "content": content, "structuredPatch": [],
                    "originalFile": None, "userModified": False}, ms=9)

    def bash(self, command: str, description: str, stdout: str, ms: int = 180) -> None:
        self._tool("Bash", {"command": command, "description": description},
                   {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False},
                   ms=ms)

    def bash_fails(self, command: str, description: str, error: str, ms: int = 640) -> None:
        """A command that exits non-zero: Claude Code sends PostToolUseFailure, its output in `error`."""
        self.events.append(("post-tool", {**self._turn("PostToolUseFailure"), "tool_name": "Bash",
                                          "tool_input": {"command": command, "description": description},
                                          "tool_use_id": self._tool_use_id(), "error": error, "is_interrupt": False,
                                          "duration_ms": ms}))

    def stop(self, message: str) -> None:
        self.events.append(("stop", {**self._turn("Stop"), "stop_hook_active": False, "last_assistant_message": message,
                                     "background_tasks": [], "session_crons": []}))

    def end(self, reason: str = "prompt_input_exit") -> None:
        self.events.append(("session-end", {**self._base("SessionEnd"), "prompt_id": self.prompt_id, "reason": reason}))


def session_one(project: str, home: str, files: dict[str, str], rng: random.Random) -> Session:
    """Adding retry with backoff: five turns, from the crash to the commit."""
    s = Session(project, home, files, rng)
    s.start()

    s.prompt(PROMPTS[0])
    s.bash("tail -n 4 logs/nightly-sync.log", "Show the end of the nightly log", files["logs/nightly-sync.log"].rstrip())
    s.grep(r"session\.request|requests\.", "src")
    s.read("src/invoice_sync/http.py")
    s.read("src/invoice_sync/sync.py")
    s.bash_fails("python -m invoice_sync --since 2024-11-17 --dry-run",
                 "Reproduce the crash (BILLING_API_URL points at staging)", REPRO_RUN.format(project=project), ms=2310)
    s.stop("Found it. `HttpClient.request()` in src/invoice_sync/http.py makes exactly one attempt and raises "
           "`BillingAPIError` on any status >= 400, and `sync()` does not catch it, so one 503 on page 7 aborts the "
           "whole run (staging failed the same way on page 3). The billing API sheds load with 503 and a `Retry-After` "
           "header. Two options: retry inside `HttpClient` (small, no dependency) or wrap the calls with tenacity.")

    s.prompt(PROMPTS[1])
    s.read("src/invoice_sync/http.py")
    s.edit("src/invoice_sync/http.py", "from typing import Any\n\nimport requests\n\nDEFAULT_TIMEOUT = 10.0\n",
           "import random\nimport time\nfrom typing import Any\n\nimport requests\n\nDEFAULT_TIMEOUT = 10.0\n"
           "MAX_ATTEMPTS = 4\nBASE_DELAY = 0.5  # seconds, doubled after every failed attempt\nMAX_DELAY = 8.0\n"
           "RETRY_STATUSES = frozenset({502, 503, 504})\n"
           "# Not POST: it creates an invoice, and a retried POST could bill a customer twice.\n"
           'IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE"})\n')
    s.edit("src/invoice_sync/http.py", "        self.url = url\n\n\nclass HttpClient:\n",
           "        self.url = url\n\n\n"
           "def backoff_delay(attempt: int, retry_after: str | None = None) -> float:\n"
           '    """Seconds to wait after failed attempt number `attempt`: the server\'s Retry-After when it sent\n'
           '    one, else exponential backoff with full jitter."""\n'
           "    if retry_after != None and retry_after.isdigit():\n"
           "        return min(float(retry_after), MAX_DELAY)\n"
           "    return random.uniform(0, min(MAX_DELAY, BASE_DELAY * 2 ** (attempt - 1)))\n\n\n"
           "class HttpClient:\n")
    s.edit("src/invoice_sync/http.py",
           "        response = self.session.request(method, url, timeout=self.timeout, **kwargs)\n",
           "        attempts = MAX_ATTEMPTS if method in IDEMPOTENT_METHODS else 1\n"
           "        attempt = 0\n"
           "        while True:\n"
           "            try:\n"
           "                response = self.session.request(method, url, timeout=self.timeout, **kwargs)\n"
           "            except requests.ConnectionError:\n"
           "                if attempt >= attempts:\n"
           "                    raise\n"
           "                time.sleep(backoff_delay(attempt))\n"
           "            else:\n"
           "                if response.status_code not in RETRY_STATUSES or attempt >= attempts:\n"
           "                    break\n"
           '                time.sleep(backoff_delay(attempt, response.headers.get("Retry-After")))\n'
           "            attempt += 1\n")
    s.write("tests/test_http_retry.py", NEW_TEST)
    s.bash_fails("python -m pytest tests/test_http_retry.py -q --tb=short", "Run the new retry tests", FAILED_RUN)
    s.read("src/invoice_sync/http.py", offset=44, limit=22)
    s.edit("src/invoice_sync/http.py", "        attempt = 0\n", "        attempt = 1\n")
    s.bash("python -m pytest tests/test_http_retry.py -q", "Run the retry tests again",
           ".....                                                                    [100%]\n5 passed in 0.11s", ms=890)
    s.stop("Retry is in `HttpClient.request()`: GET, HEAD, PUT and DELETE are retried on 502/503/504 and connection "
           "errors, at most 4 attempts, exponential backoff from 0.5 s with full jitter, capped at 8 s; a "
           "`Retry-After` header wins. POST is sent once, never retried. The first run of the 5 new tests caught an "
           "off-by-one: the attempt counter started at 0, so GET made 5 attempts and POST was sent twice. Fixed; "
           "all 5 pass.")

    s.prompt(PROMPTS[2])
    s.bash("python -m pytest -q --durations=2", "Run the full suite and show the slowest tests",
           ".......                                                                  [100%]\n"
           "============================= slowest 2 durations ==============================\n"
           "7.01s call     tests/test_sync.py::test_sync_survives_a_503_page\n"
           "0.02s call     tests/test_http_retry.py::test_backoff_doubles_and_is_capped\n"
           "7 passed in 7.19s", ms=7950)
    s.read("tests/test_sync.py")
    s.edit("src/invoice_sync/http.py", "import time\nfrom typing import Any\n",
           "import time\nfrom collections.abc import Callable\nfrom typing import Any\n")
    s.edit("src/invoice_sync/http.py",
           "                 timeout: float = DEFAULT_TIMEOUT) -> None:\n"
           "        self.base_url = base_url.rstrip(\"/\")\n"
           "        self.session = session or requests.Session()\n"
           "        self.timeout = timeout\n",
           "                 timeout: float = DEFAULT_TIMEOUT, sleep: Callable[[float], None] | None = None) -> None:\n"
           "        self.base_url = base_url.rstrip(\"/\")\n"
           "        self.session = session or requests.Session()\n"
           "        self.timeout = timeout\n"
           "        self.sleep = sleep or time.sleep  # tests pass a no-op\n")
    s.edit("src/invoice_sync/http.py", "time.sleep(backoff_delay", "self.sleep(backoff_delay", replace_all=True)
    s.edit("tests/test_sync.py", '    return HttpClient("https://billing.test", session=stub)\n',
           '    return HttpClient("https://billing.test", session=stub, sleep=lambda seconds: None)\n')
    s.bash("python -m pytest -q", "Run the full suite",
           ".......                                                                  [100%]\n7 passed in 0.17s", ms=910)
    s.stop("`HttpClient` takes an optional `sleep` callable (default `time.sleep`) and the retry loop calls it; "
           "tests/test_sync.py passes a no-op. The suite went from 7.2 s to 0.2 s: `test_sync_survives_a_503_page` was "
           "honouring a 7 s Retry-After for real.")

    s.prompt(PROMPTS[3])
    s.bash_fails("ruff check src tests", "Lint", "Exit code 1\nsrc/invoice_sync/http.py:33:23: E711 Comparison to "
                 "`None` should be `cond is not None`\nFound 1 error.\n1 unsafe fix available with `--fix "
                 "--unsafe-fixes`.", ms=120)
    s.edit("src/invoice_sync/http.py", "    if retry_after != None and retry_after.isdigit():\n",
           "    if retry_after is not None and retry_after.isdigit():\n")
    s.bash("ruff check src tests", "Lint again", "All checks passed!", ms=95)
    s.bash("mypy src", "Type-check", "Success: no issues found in 5 source files", ms=2400)
    s.stop("ruff found one problem: `backoff_delay()` compared `retry_after != None`; it is `is not None` now. "
           "ruff and mypy are both clean.")

    s.prompt(PROMPTS[4])
    s.read("README.md")
    s.edit("README.md", "`LEDGER_DSN`.\n",
           "`LEDGER_DSN`.\n\n## Retries\n\n"
           "GET, HEAD, PUT and DELETE are retried on 502, 503, 504 and connection errors: at most 4 attempts,\n"
           "exponential backoff from 0.5 s with full jitter, capped at 8 s; a `Retry-After` header wins.\n"
           "POST (creating an invoice) is never retried: it is not idempotent.\n")
    s.edit("CHANGELOG.md", "# Changelog\n\n",
           "# Changelog\n\n## 0.4.0 (unreleased)\n"
           "- The HTTP client retries idempotent requests on 502/503/504 and connection errors, with exponential\n"
           "  backoff and jitter; POST is never retried.\n\n")
    s.bash('git add -A && git commit -m "HttpClient: retry idempotent requests with exponential backoff"',
           "Commit the retry work",
           "[main 4e1f0c2] HttpClient: retry idempotent requests with exponential backoff\n"
           " 5 files changed, 89 insertions(+), 3 deletions(-)\n create mode 100644 tests/test_http_retry.py", ms=150)
    s.stop("Documented under \"Retries\" in the README and in the changelog (0.4.0, unreleased), and committed as "
           "4e1f0c2.")
    s.end()
    return s


def session_two(project: str, home: str, files: dict[str, str], rng: random.Random) -> Session:
    """The next day: a new session starts, and its first prompt asks about what session 1 did."""
    s = Session(project, home, files, rng)
    s.start()
    s.prompt(SESSION_2_PROMPT)
    return s


def write_project(project: str, files: dict[str, str]) -> None:
    """The project's files on disk."""
    for relative, content in files.items():
        path = os.path.join(project, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(content)


def build(project: str, home: str) -> tuple[Session, Session]:
    """Both sessions for a project in `project` (which must exist); writes the files session 1 leaves behind."""
    rng = random.Random(20241118)  # the same ids on every run
    files = dict(FILES)
    first = session_one(project, home, files, rng)
    write_project(project, files)
    return first, session_two(project, home, files, rng)
