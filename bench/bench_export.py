"""`python -m bench export [--quick] [--size N]`: `claude-mem export` and `claude-mem import jsonl` on a
generated store (default 10k observations, 100 to a session, with 5 prompts and 5 summaries per
session; quick: 2k).

Figures: records per second for the export (to a file, atomically) and for the import (into a fresh
data dir: parse, check, redact, one transaction per session), each beside a bare baseline measured
in the same run; the import's `--dry-run` (into an empty data dir, and into the store that holds it
all) beside the real import (the rows dumped as JSON with no ordering or merging; the same rows inserted with one
`executemany` and no checks). Memory: the peak of Python allocations (tracemalloc) of each, on the
full store and on one a fifth of its size (sessions of the same size) — streamed code keeps the
same peak.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from bench.bench_recall import zipf_sampler
from bench.bench_search import option
from claude_mem import importers
from claude_mem.importers.jsonl import JsonlSource, export_lines, write_atomically
from claude_mem.store import db
from claude_mem.store.models import ParsedObservation
from claude_mem.store.results import content_hash

OBSERVATIONS_PER_SESSION = 100
PROMPTS_PER_SESSION = 5
SUMMARIES_PER_SESSION = 5
TYPES = ("bugfix", "feature", "refactor", "change", "discovery", "decision")


def generate(path: str, observations: int, seed: int = 3) -> int:
    """A store of `observations` observations, OBSERVATIONS_PER_SESSION to a session, with prompts and
    summaries; returns the number of rows."""
    rng = random.Random(seed)
    draw = zipf_sampler(rng)
    conn = db.connect(path)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    sessions = max(1, observations // OBSERVATIONS_PER_SESSION)
    per_session = observations // sessions

    def at(minutes: float) -> str:
        return (start + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    rows = 0
    with db.transaction(conn):
        for number in range(sessions):
            base = number * 600
            session = conn.execute(
                "INSERT INTO sessions (content_session_id, project, cwd, title, status, started_at, last_activity_at)"
                " VALUES (?, ?, ?, ?, 'completed', ?, ?)",
                (f"bench-{number:04d}", f"/home/dev/p{number % 5}", f"/home/dev/p{number % 5}",
                 " ".join(draw(8)), at(base), at(base + 500))).lastrowid
            conn.executemany(
                "INSERT INTO prompts (session_id, prompt_number, text, created_at) VALUES (?, ?, ?, ?)",
                [(session, n + 1, " ".join(draw(rng.randint(8, 40))), at(base + n * 100))
                 for n in range(PROMPTS_PER_SESSION)])
            count = per_session if number < sessions - 1 else observations - per_session * (sessions - 1)
            conn.executemany(
                "INSERT INTO observations (session_id, project, type, title, narrative, facts, content_hash, concepts,"
                " files_read, files_modified, prompt_number, input_tokens, output_tokens, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(session, f"/home/dev/p{number % 5}", *hashed(rng.choice(TYPES), " ".join(draw(rng.randint(6, 12))),
                                                               " ".join(draw(rng.randint(25, 60))) + ".", draw(3)),
                  json.dumps(draw(2)), json.dumps([f"src/{w}.py" for w in draw(2)]),
                  json.dumps([f"src/{w}.py" for w in draw(1)]), n % PROMPTS_PER_SESSION + 1, 900, 200,
                  at(base + n * 500 / max(count, 1)))
                 for n in range(count)])
            conn.executemany(
                "INSERT INTO summaries (session_id, project, prompt_number, request, investigated, learned, completed,"
                " next_steps, files_edited, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(session, f"/home/dev/p{number % 5}", n + 1, " ".join(draw(12)), " ".join(draw(20)),
                  " ".join(draw(20)), " ".join(draw(15)), " ".join(draw(12)), json.dumps(["src/app.py"]),
                  at(base + n * 100 + 90)) for n in range(SUMMARIES_PER_SESSION)])
            rows += 1 + PROMPTS_PER_SESSION + count + SUMMARIES_PER_SESSION
    conn.close()
    return rows


def hashed(kind: str, title: str, narrative: str, facts: list[str]) -> tuple[str, str, str, str, str]:
    """(type, title, narrative, facts JSON, content hash) of an observation, hashed as the observer's are
    (an import recomputes every hash, so a made-up one would not survive export → import → export)."""
    digest = content_hash(ParsedObservation(type=kind, title=title, narrative=narrative, facts=tuple(facts)))
    return kind, title, narrative, json.dumps(facts), digest


def timed(action: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def peak_mb(action: Callable[[], object]) -> float:
    """The peak of Python allocations made while `action` runs, in MB."""
    tracemalloc.start()
    try:
        action()
        return round(tracemalloc.get_traced_memory()[1] / 2**20, 2)
    finally:
        tracemalloc.stop()


def export_to(source: str, target: str) -> int:
    conn = db.connect(source)
    try:
        return write_atomically(target, export_lines(conn)) - 1
    finally:
        conn.close()


def import_into(data_dir: str, path: str) -> int:
    conn = db.connect(db.db_path(data_dir))
    try:
        report = JsonlSource(path).run(conn)
    finally:
        conn.close()
    assert not report.incomplete, report.problems[:3]
    return sum(report.added.values())


def dry_run(data_dir: str, path: str, present: bool = False) -> int:
    """`claude-mem import jsonl --dry-run`: the rows it says it would add (`present`: are stored already)."""
    report = importers.run(JsonlSource(path), data_dir, dry_run=True)
    assert not report.incomplete, report.problems[:3]
    return sum((report.present if present else report.added).values())


def bare_dump(source: str, target: str) -> int:
    """Baseline: every row of the four tables as JSON lines, in rowid order, nothing else."""
    conn = sqlite3.connect(source)
    count = 0
    with open(target, "w", encoding="utf-8") as handle:
        for table in ("sessions", "prompts", "observations", "summaries"):
            cursor = conn.execute(f"SELECT * FROM {table}")
            names = [column[0] for column in cursor.description]
            for row in cursor:
                handle.write(json.dumps(dict(zip(names, row)), ensure_ascii=False) + "\n")
                count += 1
    conn.close()
    return count


def bare_insert(source: str, target: str) -> int:
    """Baseline: the same rows copied into a fresh store with one executemany per table, no checks."""
    src = sqlite3.connect(source)
    conn = db.connect(target)
    count = 0
    with db.transaction(conn):
        for table in ("sessions", "prompts", "observations", "summaries"):
            cursor = src.execute(f"SELECT * FROM {table}")
            names = [column[0] for column in cursor.description]
            rows = cursor.fetchall()
            conn.executemany(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})", rows)
            count += len(rows)
    src.close()
    conn.close()
    return count


def measure(tmp: str, observations: int) -> dict:
    source = os.path.join(tmp, f"a-{observations}.db")
    rows = generate(source, observations)
    exported = os.path.join(tmp, f"a-{observations}.jsonl")
    export_s, records = timed(lambda: export_to(source, exported))
    fresh = os.path.join(tmp, f"b-{observations}")
    dry_s, planned = timed(lambda: dry_run(os.path.join(tmp, f"dry-{observations}"), exported))
    import_s, added = timed(lambda: import_into(fresh, exported))
    assert records == rows == added == planned, (records, rows, added, planned)
    again_s, present = timed(lambda: dry_run(fresh, exported, present=True))
    assert present == records, (present, records)
    again = os.path.join(tmp, f"b-{observations}.jsonl")
    export_to(db.db_path(fresh), again)
    with open(exported, "rb") as one, open(again, "rb") as two:
        identical = one.read() == two.read()
    dump_s, _ = timed(lambda: bare_dump(source, os.path.join(tmp, f"dump-{observations}.jsonl")))
    insert_s, _ = timed(lambda: bare_insert(source, os.path.join(tmp, f"bare-{observations}.db")))
    export_peak = peak_mb(lambda: export_to(source, os.path.join(tmp, f"peak-{observations}.jsonl")))
    import_peak = peak_mb(lambda: import_into(os.path.join(tmp, f"peak-{observations}"), exported))
    return {
        "observations": observations, "records": records, "file_mb": round(os.path.getsize(exported) / 2**20, 2),
        "export": {"seconds": round(export_s, 3), "rows_per_s": round(records / export_s),
                   "bare_dump_rows_per_s": round(records / dump_s), "ratio_to_bare": round(export_s / dump_s, 2),
                   "peak_python_mb": export_peak},
        "import": {"seconds": round(import_s, 3), "rows_per_s": round(records / import_s),
                   "bare_insert_rows_per_s": round(records / insert_s), "ratio_to_bare": round(import_s / insert_s, 2),
                   "peak_python_mb": import_peak},
        "dry_run": {"seconds": round(dry_s, 3), "rows_per_s": round(records / dry_s),
                    "ratio_to_import": round(dry_s / import_s, 2), "all_present_seconds": round(again_s, 3),
                    "all_present_ratio_to_import": round(again_s / import_s, 2)},
        "reexport_identical": identical,
    }


def main(argv: list[str]) -> dict:
    size = int(option(argv, "--size") or (2_000 if "--quick" in argv else 10_000))
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        full = measure(tmp, size)
        small = measure(tmp, max(OBSERVATIONS_PER_SESSION, size // 5))
    return {
        **full,
        "memory_flat": {
            "small_observations": small["observations"],
            "export_peak_mb": [small["export"]["peak_python_mb"], full["export"]["peak_python_mb"]],
            "import_peak_mb": [small["import"]["peak_python_mb"], full["import"]["peak_python_mb"]],
            "export_growth": round(full["export"]["peak_python_mb"] / max(small["export"]["peak_python_mb"], 0.01), 2),
            "import_growth": round(full["import"]["peak_python_mb"] / max(small["import"]["peak_python_mb"], 0.01), 2),
        },
    }


if __name__ == "__main__":
    print(json.dumps(main(os.sys.argv[1:]), indent=2))
