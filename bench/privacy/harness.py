"""Redaction measured as an attacker would: what of a corpus of secrets ends up on disk, in a request
to the LLM, or in the next session's context — after the real hooks, the real observer pipeline and
a backup — and what it costs.

- `through_hooks`: every secret in every placement through the hook processes (as hooks.json runs
  them), the worker's pipeline with the `openai` provider against a loopback fake that records every
  request, a backup, and the session-start hook of a new session; then every byte of every file of
  the data dir, every request body and the injected context are searched for each secret (as is and
  JSON-escaped).
- `lookalikes_kept`: text that holds no secret, kept verbatim by `privacy.redact` and by capture.
- `capture_leaks`: the fast in-process check, `build_record` in every placement.
- `cost`: CPU of redacting a 100 KB Read in process, of the whole post-tool hook, of bare python.
(Inputs built to make a redactor slow: `pathological.py`.)

A corpus is a list of `Secret(family, name, text, secret)` (bench/privacy/secrets.py) or of plain
`(name, text, secret)` tuples (tests/secret_corpus.py); look-alikes are `Lookalike(kind, text)` or
plain strings.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from tests.fakes.openai_api import FakeOpenAI

from bench.bench_hooks import payload as read_payload
from bench.plugin_hooks import REPO, plugin_command, run_hook, run_measured
from bench.privacy.placements import PLACEMENTS
from claude_mem import privacy
from claude_mem import settings as settings_module
from claude_mem.capture import payload as capture_payload
from claude_mem.observer.pipeline import Pipeline
from claude_mem.observer.providers.openai import OpenAIProvider
from claude_mem.store import backup, capture, db
from claude_mem.worker import daemon

PROJECT = "/home/dev/proj"
KEY = "sk-test-privacy-harness"
CHUNK = 12  # secrets per payload: a real .env or log holds several, and it keeps the hook count low
LIMIT = int(settings_module.DEFAULTS["max_field_chars"])
BUDGET_RATIO = 2.0  # DESIGN §11: the post-tool hook ≤ 2.0 × the CPU of bare `python -c pass`
MARKER = "[REDACTED:"


class Entry(NamedTuple):
    family: str
    name: str
    text: str
    secret: str


def entries(secrets: Iterable[Sequence[str]]) -> list[Entry]:
    """Either corpus as (family, name, text, secret); the old one has no families."""
    found = []
    for item in secrets:
        if len(item) == 4:
            family, name, text, secret = item
        else:
            name, text, secret = item
            family = ""
        found.append(Entry(family, name, text, secret))
    return found


def needles(secret: str) -> list[bytes]:
    """The forms a secret takes in a file: as is, JSON-escaped, JSON-escaped to ASCII."""
    forms = [secret, json.dumps(secret, ensure_ascii=False)[1:-1], json.dumps(secret)[1:-1]]
    return [form.encode("utf-8", "surrogatepass") for form in dict.fromkeys(forms)]


def found_in(secret: str, haystack: bytes) -> bool:
    return any(needle in haystack for needle in needles(secret))


def strings_of(value: object) -> Iterable[str]:
    """Every string (keys too) of a JSON value: the text as the server read it, unescaped."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_of(item)


def readable(body: object) -> bytes:
    """A recorded request body as bytes to search: its JSON and its strings unescaped."""
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False) + "\n" + "\n".join(strings_of(body))
    return text.encode("utf-8", "surrogatepass")


def data_dir_files(data_dir: str) -> dict[str, bytes]:
    """Every file of the data dir (database, -wal, -shm, backups, logs, quarantine, spool), by relative path."""
    blobs = {}
    for root, _dirs, names in os.walk(data_dir):
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as handle:
                blobs[os.path.relpath(path, data_dir)] = handle.read()
    return blobs


def _session(session_id: str) -> dict:
    return {"hook_event_name": "SessionStart", "session_id": session_id, "cwd": PROJECT, "source": "startup",
            "transcript_path": f"/home/dev/.claude/projects/-home-dev-proj/{session_id}.jsonl"}


def _caught_late(conn: sqlite3.Connection) -> int | None:
    """What the worker's second redaction pass changed (None on a store without the counter)."""
    try:
        row = conn.execute("SELECT value FROM counters WHERE name = 'secrets_caught_late'").fetchone()
    except sqlite3.OperationalError:
        return None
    return int(row[0]) if row else 0


async def _drain(pipeline: Pipeline) -> None:
    """Step the observer until nothing is due (what the worker's lanes do, without waiting)."""
    while await pipeline.step():
        pass


def _context_text(stdout: bytes) -> bytes:
    """The session-start output and, decoded, the context it injects."""
    texts = [stdout.decode("utf-8", "replace")]
    try:
        output = json.loads(stdout)
    except ValueError:
        output = None
    if isinstance(output, dict):
        texts += strings_of(output)
    return "\n".join(texts).encode("utf-8", "surrogatepass")


@contextlib.contextmanager
def worker_log(data_dir: str, level: str) -> Iterator[None]:
    """The worker's own log file (logs/worker.log) while the pipeline runs in this process, so it is
    searched too; the process's logging is restored after."""
    root = logging.getLogger()
    handlers, previous = root.handlers[:], root.level
    daemon.setup_logging(data_dir, level)
    try:
        yield
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers[:] = handlers
        root.setLevel(previous)


def through_hooks(data_dir: str, secrets: Iterable[Sequence[str]], placements: Iterable[str] | None = None,
                  chunk: int = CHUNK) -> dict[str, Any]:
    """Every secret in every placement through the real hooks, the observer, a backup and the next
    session's context; where each format was found. `data_dir` should be new and empty."""
    items = entries(secrets)
    names = list(placements or PLACEMENTS)
    env = {"CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false"}
    session = _session(f"privacy-{uuid.uuid4()}")
    failures: list[str] = []

    def hook(name: str, stdin: dict, label: str) -> subprocess.CompletedProcess:
        result = run_hook(name, stdin, env)
        if result.returncode != 0 or result.stderr:
            failures.append(f"{label}: exit {result.returncode}: {result.stderr.decode('utf-8', 'replace')[-300:]}")
        return result

    hook("session-start", session, "session-start")
    calls = 0
    for placement in names:
        hook_name, build = PLACEMENTS[placement]
        for start in range(0, len(items), chunk):
            body = build("\n\n".join(item.text for item in items[start:start + chunk]))
            hook(hook_name, {**body, "session_id": session["session_id"], "cwd": PROJECT,
                             "transcript_path": session["transcript_path"],
                             "tool_use_id": f"toolu_{placement}_{start}", "prompt_id": f"{placement}-{start}"},
                 f"{placement} [{start}:{start + chunk}]")
            calls += 1
    conn = db.connect(db.db_path(data_dir))  # held open while searching: the -wal and -shm files stay
    try:
        capture.ingest_spool(conn, data_dir)
        with FakeOpenAI(api_key=KEY) as fake:
            values = settings_module.load(data_dir)
            values.update(data_dir=data_dir, provider="openai", openai_api_key=KEY, openai_base_url=fake.url + "/v1",
                          retry_backoff_seconds=0.0, observer_timeout_seconds=30)
            pipeline = Pipeline(conn, values, OpenAIProvider(values))
            with worker_log(data_dir, str(values["log_level"])):
                try:
                    asyncio.run(_drain(pipeline))
                finally:
                    pipeline.close()
            bodies = [request.body for request in fake.posts("/chat/completions")]
        events = dict(conn.execute("SELECT status, COUNT(*) FROM pending_events GROUP BY status").fetchall())
        observations = conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0]
        summaries = conn.execute("SELECT COUNT(*) FROM summaries").fetchone()[0]
        caught = _caught_late(conn)
        backup.snapshot(data_dir, keep=3)
        following = hook("session-start", _session(f"privacy-next-{uuid.uuid4()}"), "next session-start")
        shown = _context_text(following.stdout)
        sent = b"\n".join(readable(body) for body in bodies)
        blobs = data_dir_files(data_dir)
    finally:
        conn.close()
    formats: dict[str, dict[str, Any]] = {}
    for item in items:
        result = formats.setdefault(item.name, {"family": item.family, "stored_in": [], "sent": False, "shown": False})
        result["stored_in"] = sorted(set(result["stored_in"]) | {path for path, blob in blobs.items()
                                                                 if found_in(item.secret, blob)})
        result["sent"] = result["sent"] or found_in(item.secret, sent)
        result["shown"] = result["shown"] or found_in(item.secret, shown)
    leaked = {name: result for name, result in formats.items() if result["stored_in"] or result["sent"] or result["shown"]}
    return {
        "formats": formats,
        "leaked": leaked,
        "counts": {
            "secrets": len(items),
            "formats": len(formats),
            "stored": sum(1 for result in formats.values() if result["stored_in"]),
            "sent": sum(1 for result in formats.values() if result["sent"]),
            "shown": sum(1 for result in formats.values() if result["shown"]),
        },
        "placements": names,
        "hook_calls": calls,
        "hook_failures": failures,
        "events": events,
        "events_done": events.get("done", 0),
        "observations": observations,
        "summaries": summaries,
        "requests": len(bodies),
        "redacted_in_requests": MARKER.encode() in sent,
        "caught_late": caught,
        "context_chars": len(shown),
        "files": sorted(blobs),
    }


# -- look-alikes and the in-process capture check ------------------------------------------------------

def record_for(placement: str, text: str) -> dict:
    """The capture record `text` makes in `placement`, built in process as the hook builds it."""
    hook, build = PLACEMENTS[placement]
    return capture_payload.build_record(hook, {**build(text), "session_id": "s-1", "cwd": PROJECT}, PROJECT, LIMIT)


def _short(text: str, width: int = 160) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def changed(before: str, after: str, margin: int = 24) -> tuple[str, str]:
    """The part of `before` that differs in `after`, with a little context on each side."""
    start = 0
    while start < min(len(before), len(after)) and before[start] == after[start]:
        start += 1
    end = 0
    while end < min(len(before), len(after)) - start and before[-1 - end] == after[-1 - end]:
        end += 1
    left = max(0, start - margin)
    return _short(before[left:len(before) - end + margin]), _short(after[left:len(after) - end + margin])


def lookalikes_kept(lookalikes: Iterable[str | Sequence[str]]) -> dict[str, Any]:
    """How many look-alikes `privacy.redact` and capture (a Read) keep verbatim; what was masked in the others."""
    masked = []
    total = 0
    for item in lookalikes:
        kind, text = ("", item) if isinstance(item, str) else item
        total += 1
        redacted = privacy.redact(text)
        stored = record_for("read", text)["payload"]["tool_response"]["file"]["content"]
        for where, after in (("redact", redacted), ("capture", stored)):
            if after != text:
                before_part, after_part = changed(text, after)
                masked.append({"kind": kind, "where": where, "before": before_part, "after": after_part})
                break
    kept = total - len(masked)
    return {"total": total, "kept": kept, "ratio": round(kept / total, 4) if total else 1.0, "masked": masked}


# Packages whose installed files stand in for what a session reads: real code, docs and data that
# hold no credentials (written by others, for other purposes: the look-alikes nobody chose).
REAL_PACKAGES = ("anthropic", "openai", "mcp", "starlette", "uvicorn", "rich", "click", "httpx", "pydantic",
                 "psutil", "hypothesis", "pytest", "mypy", "playwright", "psycopg", "numpy", "tokenizers", "pip")
REAL_SUFFIXES = (".py", ".pyi", ".json", ".md", ".txt", ".toml", ".yaml", ".yml", ".cfg", ".ini", ".js", ".ts",
                 ".html", ".rst", ".sh")


def real_files(limit: int = 1500, max_chars: int = 50_000) -> dict[str, Any]:
    """Redact up to `limit` text files of the installed packages (sorted by path, each cut to
    `max_chars`): every span found there is a false alarm. Returns how many files and characters were
    read, the spans found, and examples."""
    from importlib import metadata

    paths: list[str] = []
    for package in REAL_PACKAGES:
        try:
            files = metadata.files(package) or []
        except metadata.PackageNotFoundError:
            continue
        paths += [str(file.locate()) for file in files if str(file).endswith(REAL_SUFFIXES)]
    paths = sorted(set(paths))
    step = max(1, len(paths) // limit)
    read, chars, spans, examples = 0, 0, 0, []
    for path in paths[::step][:limit]:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read(max_chars)
        except (OSError, UnicodeDecodeError):
            continue
        read, chars = read + 1, chars + len(text)
        for start, end, marker in privacy.secret_spans(text):
            spans += 1
            if len(examples) < 20:
                examples.append({"file": path.rsplit("site-packages/", 1)[-1], "marker": marker,
                                 "text": _short(text[max(0, start - 40):end + 10])})
    return {"files": read, "chars": chars, "spans": spans,
            "spans_per_mb": round(spans / max(chars, 1) * 1_000_000, 2), "examples": examples}


def capture_leaks(secrets: Iterable[Sequence[str]], placements: Iterable[str] | None = None) -> list[tuple[str, str]]:
    """(format, placement) for every secret whose capture record still holds it."""
    names = list(placements or PLACEMENTS)
    leaks = []
    for item in entries(secrets):
        for placement in names:
            stored = json.dumps(record_for(placement, item.text), ensure_ascii=False).encode("utf-8", "surrogatepass")
            if found_in(item.secret, stored):
                leaks.append((item.name, placement))
    return leaks


def second_pass(secrets: Iterable[Sequence[str]], placements: Iterable[str] | None = None) -> list[dict[str, str]]:
    """Capture records that `privacy.clean_tree` changes once more, as the worker's second pass does
    (`store.caught_late`): a redactor that is not idempotent marks its own markers as secrets."""
    names = list(placements or PLACEMENTS)
    found = []
    for item in entries(secrets):
        for placement in names:
            stored = record_for(placement, item.text)["payload"]
            again = privacy.clean_tree(stored)
            if again != stored:
                before, after = changed(json.dumps(stored, ensure_ascii=False), json.dumps(again, ensure_ascii=False))
                found.append({"name": item.name, "placement": placement, "before": before, "after": after})
    return found


# -- cost ------------------------------------------------------------------------------------------------

def _cpu_ms(fn: Any, repeats: int) -> float:
    """Median CPU milliseconds of `fn()` in this process."""
    fn()  # warm: compiled patterns, caches
    samples = []
    for _ in range(repeats):
        started = time.process_time()
        fn()
        samples.append((time.process_time() - started) * 1000)
    return statistics.median(samples)


def small_bash(index: int) -> bytes:
    """The recorded PostToolUse of a small Bash command, a new `tool_use_id` each run."""
    with open(os.path.join(REPO, "tests", "fixtures", "hook-payloads", "session-edit", "06-PostToolUse.Bash.json"),
              encoding="utf-8") as handle:
        data = json.load(handle)
    data["tool_use_id"] = f"toolu_bench_small_{index:06d}"
    return json.dumps(data).encode()


def cost(runs: int = 20) -> dict[str, Any]:
    """The post-tool hook with a ~100 KB Read of source code (and a small Bash): redaction in process
    beside the whole hook's CPU and bare `python -c pass` of the same interpreter (interleaved; the
    children's own rusage, so machine load counts less than in wall time)."""
    tree = json.loads(read_payload(0))
    clean_tree_ms = _cpu_ms(lambda: privacy.clean_tree(tree), runs)
    capture_ms = _cpu_ms(lambda: capture_payload.build_record("post-tool", tree, PROJECT, LIMIT), runs)
    samples: dict[str, list[float]] = {"hook": [], "small": [], "bare": [], "hook_wall": [], "bare_wall": []}
    with tempfile.TemporaryDirectory(prefix="bench-privacy-cost-") as data_dir:
        env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false"}
        for index in range(runs + 3):
            hook = run_measured(plugin_command("post-tool"), read_payload(50_000 + index), env)
            small = run_measured(plugin_command("post-tool"), small_bash(index), env)
            bare = run_measured([sys.executable, "-c", "pass"], b"", env)
            for done in (hook, small):
                if done.returncode != 0 or done.stderr:
                    raise RuntimeError(f"post-tool hook exited {done.returncode}: {done.stderr[-300:]!r}")
            if index >= 3:  # warm-up: page cache, the database's creation
                for name, value in (("hook", hook.cpu_s), ("small", small.cpu_s), ("bare", bare.cpu_s),
                                    ("hook_wall", hook.wall_s), ("bare_wall", bare.wall_s)):
                    samples[name].append(value * 1000)
    median = {name: statistics.median(values) for name, values in samples.items()}
    return {
        "payload_bytes": len(read_payload(0)),
        "clean_tree_cpu_ms": round(clean_tree_ms, 2),  # the whole payload, uncut
        "capture_record_cpu_ms": round(capture_ms, 2),  # what the hook's code does: strip, cut to max_field_chars, redact
        "hook_cpu_ms": round(median["hook"], 2),
        "hook_small_bash_cpu_ms": round(median["small"], 2),
        "bare_python_cpu_ms": round(median["bare"], 2),
        "ratio": round(median["hook"] / median["bare"], 3),
        "small_bash_ratio": round(median["small"] / median["bare"], 3),
        "capture_share_of_hook": round(capture_ms / median["hook"], 3),
        "hook_wall_ms": round(median["hook_wall"], 2),
        "bare_python_wall_ms": round(median["bare_wall"], 2),
        "budget_ratio": BUDGET_RATIO,
        "runs": runs,
    }
