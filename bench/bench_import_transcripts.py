"""`python -m bench import-transcripts [--quick]`: `claude-mem import transcripts` on a generated corpus
of Claude Code transcripts (100 sessions, 10k hook events; quick: 20 sessions, 2k).

The transcripts are written in the format the real CLI writes (tests/fixtures/transcripts/): per turn
a prompt, tool calls with their results (Bash, Edit, Read, Write, now and then a failure), the
final answer, and the bookkeeping lines that make up most of a real file (attachments, API request
records); text drawn from the Zipf vocabulary of `bench_recall`.

Figures: hook events per second for the import into a fresh data dir (read, clean through the hooks'
gate, one transaction per session), beside a bare baseline measured in the same run (every line
parsed with `json.loads` and the same events inserted raw, one `executemany`, no cleaning or
checks); a second import of the same files (everything found stored: the idempotence pass); the
dry run with its observer-token estimate. Memory: the peak of Python allocations (tracemalloc) of
an import of the full corpus and of one a fifth of its size — streamed code keeps the same peak.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import time
from collections.abc import Callable

from bench.bench_export import peak_mb, timed
from bench.bench_recall import zipf_sampler
from claude_mem import importers, settings
from claude_mem.importers import transcript_reader as transcripts
from claude_mem.importers.transcripts import TranscriptReport, TranscriptSource
from claude_mem.store import db

SESSIONS = 100
EVENTS_PER_SESSION = 100
TURNS = 5  # per session: 5 prompts, 5 turn ends, 1 session end and 89 tool calls
ATTACHMENT_CHARS = 6_000  # a system-prompt snapshot and the like, once per turn


def _line(kind: str, session: str, at: str, cwd: str, **fields: object) -> str:
    return json.dumps({"parentUuid": None, "isSidechain": False, "type": kind, "timestamp": at, "cwd": cwd,
                       "sessionId": session, "version": "2.1.330", **fields}, separators=(",", ":")) + "\n"


def _tool(rng: random.Random, draw: Callable[[int], list[str]], cwd: str, n: int) -> tuple[str, dict, object, bool]:
    """(name, input, result, failed) of one generated tool call."""
    path = f"{cwd}/src/{'_'.join(draw(2))}.py"
    choice = n % 4
    if choice == 0:
        failed = rng.random() < 0.1
        stdout = "\n".join(" ".join(draw(rng.randint(5, 14))) for _ in range(rng.randint(1, 30)))
        result = "Exit code 1\n" + stdout if failed else {"stdout": stdout, "stderr": "", "interrupted": False}
        return "Bash", {"command": f"pytest -q tests/test_{draw(1)[0]}.py", "description": " ".join(draw(4))}, result, failed
    if choice == 1:
        old, new = " ".join(draw(8)), " ".join(draw(9))
        patch = [{"oldStart": 10, "oldLines": 1, "newStart": 10, "newLines": 1, "lines": [f"-{old}", f"+{new}"]}]
        return "Edit", {"file_path": path, "old_string": old, "new_string": new}, \
            {"filePath": path, "oldString": old, "newString": new, "structuredPatch": patch}, False
    if choice == 2:
        content = "\n".join(" ".join(draw(rng.randint(4, 12))) for _ in range(rng.randint(20, 120)))
        return "Read", {"file_path": path}, {"type": "text", "file": {"filePath": path, "content": content}}, False
    content = "\n".join(" ".join(draw(rng.randint(4, 12))) for _ in range(rng.randint(5, 40)))
    return "Write", {"file_path": path, "content": content}, {"type": "create", "filePath": path, "content": content}, False


def generate(folder: str, sessions: int, seed: int = 5) -> int:
    """`sessions` transcripts under `folder` (five projects); returns the number of hook events they hold."""
    rng = random.Random(seed)
    draw = zipf_sampler(rng)
    clock = 1_790_000_000.0
    events = 0
    tools_per_turn = (EVENTS_PER_SESSION - 2 * TURNS - 1) // TURNS
    for number in range(sessions):
        session, cwd = f"bench-{number:04d}", f"/home/dev/p{number % 5}"
        directory = os.path.join(folder, cwd.replace("/", "-"))
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, f"{session}.jsonl"), "w", encoding="utf-8") as handle:
            tool_count = 0
            for turn in range(TURNS):
                calls = tools_per_turn + (1 if turn < (EVENTS_PER_SESSION - 2 * TURNS - 1) % TURNS else 0)

                def at() -> str:
                    nonlocal clock
                    clock += 7
                    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(clock))

                prompt_id = f"{session}-p{turn}"
                handle.write(_line("user", session, at(), cwd, promptId=prompt_id,
                                   message={"role": "user", "content": " ".join(draw(rng.randint(8, 40)))}))
                handle.write(_line("attachment", session, at(), cwd, attachment={
                    "type": "prompt_snapshot", "content": " ".join(draw(ATTACHMENT_CHARS // 6))}))
                for _ in range(calls):
                    tool_count += 1
                    name, tool_input, result, failed = _tool(rng, draw, cwd, tool_count)
                    tool_id = f"toolu_{session}_{tool_count}"
                    handle.write(json.dumps({"type": "api-request", "sessionId": session, "params": {
                        "model": "claude-opus-5-5", "tools": draw(12)}}, separators=(",", ":")) + "\n")
                    handle.write(_line("assistant", session, at(), cwd, message={
                        "id": f"msg_{tool_id}", "role": "assistant", "stop_reason": "tool_use",
                        "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}]}))
                    block: dict = {"tool_use_id": tool_id, "type": "tool_result",
                                   "content": result if failed else json.dumps(result)[:2000]}
                    if failed:
                        block["is_error"] = True
                    handle.write(_line("user", session, at(), cwd, promptId=prompt_id,
                                       message={"role": "user", "content": [block]},
                                       toolUseResult=f"Error: {result}" if failed else result))
                handle.write(_line("assistant", session, at(), cwd, message={
                    "id": f"msg_{session}_{turn}", "role": "assistant", "stop_reason": "end_turn",
                    "content": [{"type": "text", "text": " ".join(draw(rng.randint(10, 40)))}]}))
                events += 2 + calls
            handle.write(json.dumps({"type": "cost-state", "sessionId": session, "totalCostUSD": 0.5}) + "\n")
            events += 1
    return events


def run_import(data_dir: str, folder: str, dry_run: bool = False) -> TranscriptReport:
    sessions, _ = transcripts.find_sessions([folder])
    report = importers.run(TranscriptSource(sessions, settings.load(data_dir)), data_dir, dry_run=dry_run)
    assert isinstance(report, TranscriptReport)
    return report


def bare_insert(data_dir: str, folder: str) -> int:
    """Baseline: every line parsed, the events' raw payloads inserted with one executemany, no cleaning."""
    found: list[tuple] = []
    sessions, _ = transcripts.find_sessions([folder])
    for files in sessions:
        with open(str(files.main), encoding="utf-8") as handle:
            for line in handle:
                entry = json.loads(line)
                if entry.get("type") in ("user", "assistant"):
                    found.append((f"{len(found)}", json.dumps(entry["message"]["content"])))
    conn = db.connect(db.db_path(data_dir))
    with db.transaction(conn):
        session = conn.execute("INSERT INTO sessions (content_session_id, project) VALUES ('bare', '/bare')").lastrowid
        conn.executemany("INSERT INTO pending_events (event_key, session_id, kind, payload) VALUES (?, ?, 'tool', ?)",
                         [(key, session, payload) for key, payload in found])
    conn.close()
    return len(found)


def measure(tmp: str, sessions: int) -> dict:
    folder = os.path.join(tmp, f"projects-{sessions}")
    events = generate(folder, sessions)
    corpus_mb = sum(os.path.getsize(os.path.join(d, n)) for d, _, names in os.walk(folder) for n in names) / 2**20
    fresh = os.path.join(tmp, f"data-{sessions}")
    import_s, outcome = timed(lambda: run_import(fresh, folder))
    assert isinstance(outcome, TranscriptReport)
    assert outcome.events_added == events and not outcome.incomplete, (outcome.events_added, events)
    again_s, again = timed(lambda: run_import(fresh, folder))
    assert isinstance(again, TranscriptReport) and again.events_added == 0
    dry_s, dry = timed(lambda: run_import(os.path.join(tmp, f"dry-{sessions}"), folder, dry_run=True))
    assert isinstance(dry, TranscriptReport)
    bare_s, _ = timed(lambda: bare_insert(os.path.join(tmp, f"bare-{sessions}"), folder))
    peak = peak_mb(lambda: run_import(os.path.join(tmp, f"peak-{sessions}"), folder))
    return {
        "sessions": sessions, "events": events, "corpus_mb": round(corpus_mb, 1),
        "import": {"seconds": round(import_s, 3), "events_per_s": round(events / import_s),
                   "bare_events_per_s": round(events / bare_s), "ratio_to_bare": round(import_s / bare_s, 2),
                   "peak_python_mb": peak},
        "reimport": {"seconds": round(again_s, 3), "events_per_s": round(events / again_s), "added": again.events_added},
        "dry_run": {"seconds": round(dry_s, 3), "events_per_s": round(events / dry_s),
                    "observer_tokens_estimate": dry.tokens, "tokens_per_event": round(dry.tokens / events, 1)},
    }


def main(argv: list[str]) -> dict:
    size = 20 if "--quick" in argv else SESSIONS
    with tempfile.TemporaryDirectory(prefix="bench-import-transcripts-") as tmp:
        full = measure(tmp, size)
        small = measure(tmp, max(1, size // 5))
    return {
        **full,
        "memory_flat": {
            "small_sessions": small["sessions"],
            "import_peak_mb": [small["import"]["peak_python_mb"], full["import"]["peak_python_mb"]],
            "growth": round(full["import"]["peak_python_mb"] / max(small["import"]["peak_python_mb"], 0.01), 2),
        },
    }


if __name__ == "__main__":
    print(json.dumps(main(os.sys.argv[1:]), indent=2))
