"""Inputs built to make a redactor slow, timed in process and through the real post-tool hook.

Kept apart from the harness so the child that times one input imports little more than `privacy`:
a regex stuck in C code cannot be interrupted in process, so each in-process timing runs in a fresh
interpreter that is killed past its limit.
"""

from __future__ import annotations

import base64
import json
import os
import random
import sqlite3
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from bench.plugin_hooks import REPO, plugin_command, run_measured
from claude_mem import privacy
from claude_mem.store import db

PROJECT = "/home/dev/proj"

DEPTH = 2_000
DEEP = "__DEEP_PLACEHOLDER__"
NO_SPACE = string.ascii_letters + string.digits + "=:/._-+%"


def _blob(rng: random.Random, size: int, alphabet: str) -> str:
    table = bytes(ord(alphabet[i % len(alphabet)]) for i in range(256))
    return rng.randbytes(size).translate(table).decode()


def _deep(depth: int) -> object:
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


class Pathological(NamedTuple):
    text: str | None  # for `privacy.clean`
    tree: object  # for `privacy.clean_tree` when `text` is None
    stdin: bytes  # what the post-tool hook is fed


def _bash_output(stdout: object) -> dict:
    return {"hook_event_name": "PostToolUse", "session_id": "patho", "cwd": PROJECT, "tool_name": "Bash",
            "tool_input": {"command": "cat blob"}, "tool_response": {"stdout": stdout, "stderr": ""}}


def _text_case(make: Callable[[random.Random], str]) -> Callable[[], Pathological]:
    def build() -> Pathological:
        text = make(random.Random(20261125))
        return Pathological(text, None, json.dumps(_bash_output(text)).encode())
    return build


def _deep_case() -> Pathological:
    stdin = json.dumps(_bash_output(DEEP)).replace(json.dumps(DEEP), "[" * DEPTH + '"x"' + "]" * DEPTH)
    return Pathological(None, _bash_output(_deep(DEPTH)), stdin.encode())


def _raw_case(raw: bytes) -> Pathological:
    """Bytes that are not valid JSON text inside the payload's stdout: what the hook's bad-input path gets."""
    return Pathological(raw.decode("utf-8", "replace"), None, json.dumps(_bash_output(DEEP)).encode().replace(DEEP.encode(), raw))


def _invalid_utf8() -> Pathological:
    rng = random.Random(20261125)
    return _raw_case(b"password=" + bytes(rng.randrange(0x80, 0x100) for _ in range(100_000)))


# name → its input, built on demand (several are megabytes)
PATHOLOGICAL: dict[str, Callable[[], Pathological]] = {
    "1 MB without spaces": _text_case(lambda rng: _blob(rng, 1_000_000, NO_SPACE)),
    "100k '='": _text_case(lambda rng: "=" * 100_000),
    "'a=' × 50k": _text_case(lambda rng: "a=" * 50_000),
    f"JSON nested {DEPTH:,} deep": _deep_case,
    "'[' × 200k (nesting as text)": _text_case(lambda rng: "[" * 200_000),
    "invalid UTF-8 on stdin (100 KB)": _invalid_utf8,
    "NUL bytes (500 KB, escaped in JSON)": _text_case(lambda rng: ("\x00" * 1_000 + "password=hunter2\x00") * 490),
    "raw NUL bytes on stdin (350 KB)": lambda: _raw_case(b"token=\x00" * 50_000),
    "1 MB of base64": _text_case(lambda rng: base64.b64encode(rng.randbytes(750_000)).decode()),
    "200k '-----BEGIN'": _text_case(lambda rng: "-----BEGIN" * 200_000),
    "20k private-key headers without END": _text_case(lambda rng: "-----BEGIN PRIVATE KEY-----\n" * 20_000),
    "100k 'password='": _text_case(lambda rng: "password=" * 100_000),
    "'%41' × 300k": _text_case(lambda rng: "%41" * 300_000),
}


def time_in_process(name: str) -> dict[str, Any]:
    """CPU seconds of `privacy.clean` (or `clean_tree`) on one pathological input, in this process."""
    text, tree, _stdin = PATHOLOGICAL[name]()
    result: dict[str, Any] = {"error": None}
    started = time.process_time()
    try:
        if text is not None:
            privacy.clean(text)
        else:
            privacy.clean_tree(tree)
    except Exception as exc:  # noqa: BLE001 - reported, not raised: a fast failure is still bounded
        result["error"] = type(exc).__name__
    result["cpu_s"] = round(time.process_time() - started, 3)
    return result


def time_in_child(name: str, limit: float) -> dict[str, Any]:
    """`time_in_process` in a fresh interpreter, killed after `limit` seconds (a regex stuck in C code
    cannot be interrupted in process)."""
    code = ("import json, sys; from bench.privacy.pathological import time_in_process;"
            " print(json.dumps(time_in_process(sys.argv[1])))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([REPO, os.path.join(REPO, "src"), os.environ.get("PYTHONPATH", "")])}
    try:
        done = subprocess.run([sys.executable, "-c", code, name], capture_output=True, env=env, cwd=REPO, timeout=limit)
    except subprocess.TimeoutExpired:
        return {"error": None, "cpu_s": None, "timed_out_after_s": limit}
    if done.returncode != 0:
        return {"error": f"exit {done.returncode}: {done.stderr.decode('utf-8', 'replace')[-300:]}", "cpu_s": None}
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


def _kept(data_dir: str) -> tuple[int, int]:
    """(events stored, quarantined inputs) in `data_dir`."""
    quarantine = os.path.join(data_dir, "quarantine")
    files = len(os.listdir(quarantine)) if os.path.isdir(quarantine) else 0
    path = db.db_path(data_dir)
    if not os.path.exists(path):
        return 0, files
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT COUNT(*) FROM pending_events").fetchone()[0], files
    finally:
        conn.close()


def through_hook(stdin: bytes, data_dir: str, limit: float) -> dict[str, Any]:
    """The real post-tool hook on one pathological payload: exit code, CPU and wall seconds, and what
    became of the input (`stored`, `quarantined`, or `lost` — a hook that cannot even load exits 0 too)."""
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false"}
    events, quarantined = _kept(data_dir)
    done = run_measured(plugin_command("post-tool"), stdin, env, timeout=limit)
    events_after, quarantined_after = _kept(data_dir)
    outcome = "stored" if events_after > events else "quarantined" if quarantined_after > quarantined else "lost"
    return {"exit": done.returncode, "outcome": outcome, "cpu_s": round(done.cpu_s, 3), "wall_s": round(done.wall_s, 3),
            "stderr": done.stderr.decode("utf-8", "replace").strip()[-200:]}


def measure(limit: float = 60, hook_limit: float = 60) -> dict[str, dict[str, Any]]:
    """Every pathological input: in process (a child, killed after `limit` s) and through the hook
    (killed after `hook_limit` s)."""
    report = {}
    with tempfile.TemporaryDirectory(prefix="bench-privacy-patho-") as data_dir:
        for name, build in PATHOLOGICAL.items():
            stdin = build().stdin
            report[name] = {"bytes": len(stdin), "in_process": time_in_child(name, limit),
                            "hook": through_hook(stdin, data_dir, hook_limit)}
    return report
