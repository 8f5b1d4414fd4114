"""Simulated sessions for the capture benchmark and the soak: realistic hook payloads (from the
recorded fixtures), fired through the real hook launcher exactly as Claude Code runs it, with every
acknowledged event remembered so that losses can be counted afterwards."""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "hook-payloads", "session-edit")
LAUNCHER = [sys.executable, "-I", "-S", os.path.join(REPO, "scripts", "hook.py")]


def fixture(name: str) -> dict:
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return json.load(handle)


def fake_secrets(rng: random.Random) -> dict[str, str]:
    """Real-format fake credentials, made at run time (name -> the text that must never be stored)."""
    def pick(alphabet: str, n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    upper, alnum = string.ascii_uppercase + string.digits, string.ascii_letters + string.digits
    return {
        "aws-key-id": "AK" + "IA" + pick(upper, 16),
        "aws-secret": pick(alnum + "+/", 40),
        "github": "gh" + "p_" + pick(alnum, 36),
        "stripe": "sk" + "_live_" + pick(alnum, 24),
        "pem-line": pick(alnum + "+/", 64),
        "postgres-password": "pw" + pick(alnum, 14),
        "bearer": pick(alnum, 40),
    }


def secret_payloads(secrets: dict[str, str]) -> list[tuple[str, dict]]:
    """Where the secrets go: an .env Read, a Bash command, an Edit's structured patch (a key block
    written one line per item), an HTTP dump."""
    key_lines = ["-----BEGIN RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA" + "x" * 48, secrets["pem-line"],
                 "-----END RSA PRIVATE KEY-----"]
    return [
        ("Read", {"tool_input": {"file_path": "/home/dev/proj/.env"},
                  "tool_response": {"type": "text", "file": {"filePath": "/home/dev/proj/.env", "content":
                                    f"AWS_ACCESS_KEY_ID={secrets['aws-key-id']}\nAWS_SECRET_ACCESS_KEY={secrets['aws-secret']}\n"
                                    f"DATABASE_URL=postgres://app:{secrets['postgres-password']}@db:5432/app\n"}}}),
        ("Bash", {"tool_input": {"command": f"GITHUB_TOKEN={secrets['github']} gh release list"},
                  "tool_response": {"stdout": f"stripe key {secrets['stripe']} rotated", "stderr": ""}}),
        ("Edit", {"tool_input": {"file_path": "/home/dev/proj/deploy/key.pem", "old_string": "", "new_string": "y"},
                  "tool_response": {"filePath": "/home/dev/proj/deploy/key.pem", "structuredPatch": [
                      {"oldStart": 1, "oldLines": 0, "newStart": 1, "newLines": 4, "lines": ["+" + x for x in key_lines]}]}}),
        ("Bash", {"tool_input": {"command": "curl -v https://api.example.com/me"},
                  "tool_response": {"stdout": f"> GET /me HTTP/1.1\n> Authorization: Bearer {secrets['bearer']}\n",
                                    "stderr": ""}}),
    ]


@dataclass
class Day:
    """A simulated day of sessions: the hook calls in order, each session's calls kept together."""

    calls: list[tuple[str, dict]] = field(default_factory=list)
    tool_ids: set[str] = field(default_factory=set)  # every tool event's id, to find losses


def simulated_day(total_calls: int, rng: random.Random, secrets: dict[str, str] | None = None,
                  cwd: str = "/home/dev/proj") -> Day:
    """Sessions of session-start, 1–4 prompts with 2–8 tool uses and a stop each, and a session-end,
    until `total_calls` hook calls; some tool uses carry planted secrets."""
    day = Day()
    start, prompt, stop, end = (fixture("01-SessionStart.json"), fixture("02-UserPromptSubmit.json"),
                                fixture("07-Stop.json"), fixture("08-SessionEnd.json"))
    tools = [fixture(name) for name in sorted(os.listdir(FIXTURES)) if "PostToolUse" in name]
    planted = secret_payloads(secrets) if secrets else []
    session_number = 0
    while len(day.calls) < total_calls:
        session_number += 1
        session = f"soak-{session_number:05d}-{rng.randrange(10**9):09d}"
        common = {"session_id": session, "cwd": cwd}
        day.calls.append(("session-start", {**start, **common}))
        for turn in range(rng.randint(1, 4)):
            turn_id = f"{session}-turn-{turn}"
            day.calls.append(("user-prompt", {**prompt, **common, "prompt_id": turn_id,
                                              "prompt": f"step {turn} of task {session_number}: fix the parser"}))
            for use in range(rng.randint(2, 8)):
                tool_id = f"toolu_{session}_{turn}_{use}"
                base = dict(rng.choice(tools))
                if planted and rng.random() < 0.1:
                    name, fields = rng.choice(planted)
                    base = {**base, "tool_name": name, "hook_event_name": "PostToolUse", **fields}
                day.calls.append(("post-tool", {**base, **common, "prompt_id": turn_id, "tool_use_id": tool_id}))
                day.tool_ids.add(tool_id)
            day.calls.append(("stop", {**stop, **common, "prompt_id": turn_id}))
        day.calls.append(("session-end", {**end, **common}))
    return day


def run_hook(hook: str, payload: dict, env: dict) -> tuple[int, str]:
    result = subprocess.run([*LAUNCHER, hook], input=json.dumps(payload).encode(), capture_output=True, env=env,
                            timeout=60)
    return result.returncode, result.stderr.decode("utf-8", "replace")


def fire(calls: list[tuple[str, dict]], env: dict, parallel: int = 16, progress=None) -> dict[str, int]:
    """Run the calls `parallel` at a time, each session's calls in order; counts of exit codes and
    of stderr lines mentioning a locked database."""
    by_session: dict[str, list[tuple[str, dict]]] = {}
    for hook, payload in calls:
        by_session.setdefault(str(payload.get("session_id")), []).append((hook, payload))
    counts = {"calls": 0, "nonzero_exit": 0, "locked_messages": 0}
    lock = threading.Lock()

    def session_calls(items: list[tuple[str, dict]]) -> None:
        for hook, payload in items:
            code, stderr = run_hook(hook, payload, env)
            with lock:
                counts["calls"] += 1
                counts["nonzero_exit"] += code != 0
                counts["locked_messages"] += "database is locked" in stderr
            if progress is not None:
                progress()

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        list(pool.map(session_calls, by_session.values()))
    return counts
