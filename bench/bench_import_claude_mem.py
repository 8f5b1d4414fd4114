"""`python -m bench import-claude-mem [--quick] [--size N]`: `claude-mem import claude-mem` on a generated
database of the original's exact schema (the fixture's, emptied and refilled: default 10k
observations, 100 to a session, with 5 prompts and 5 summaries per session; quick: 2k).

Figures: rows per second of the import into a fresh data dir (read read-only, map, redact, one
transaction per session), beside a bare baseline measured in the same run (the same rows read and
inserted into our tables with one `executemany` per table, no checks). Memory: the peak of Python
allocations (tracemalloc) on the full database and on one a fifth of its size (sessions of the same
size) — streamed code keeps the same peak.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import tempfile
from datetime import UTC, datetime, timedelta

from bench.bench_export import OBSERVATIONS_PER_SESSION, PROMPTS_PER_SESSION, SUMMARIES_PER_SESSION, TYPES, peak_mb, timed
from bench.bench_recall import zipf_sampler
from bench.bench_search import option
from claude_mem import importers
from claude_mem.importers import original
from claude_mem.store import db

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "fixtures",
                       "claude-mem-13.25.3", "claude-mem.db")
THEIR_TABLES = ("sdk_sessions", "user_prompts", "observations", "session_summaries")


def generate(path: str, observations: int, seed: int = 5) -> int:
    """The original's database with `observations` observations in the formats its worker writes; returns its rows."""
    shutil.copy(FIXTURE, path)
    rng = random.Random(seed)
    draw = zipf_sampler(rng)
    conn = sqlite3.connect(path, isolation_level=None)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    sessions = max(1, observations // OBSERVATIONS_PER_SESSION)
    per_session = observations // sessions

    def at(minutes: float) -> tuple[str, int]:
        moment = start + timedelta(minutes=minutes)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z"), int(moment.timestamp() * 1000)

    rows = 0
    conn.execute("BEGIN")
    for table in reversed(THEIR_TABLES):
        conn.execute(f"DELETE FROM {table}")
    for number in range(sessions):
        base = number * 600
        content, memory, project = f"content-{number:05d}", f"memory-{number:05d}", f"p{number % 5}"
        session = conn.execute(
            "INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, user_prompt, started_at,"
            " started_at_epoch, completed_at, completed_at_epoch, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'completed')",
            (content, memory, project, " ".join(draw(12)), *at(base), *at(base + 500))).lastrowid
        conn.executemany(
            "INSERT INTO user_prompts (session_db_id, content_session_id, prompt_number, prompt_text, created_at,"
            " created_at_epoch) VALUES (?, ?, ?, ?, ?, ?)",
            [(session, content, n + 1, " ".join(draw(rng.randint(8, 40))), *at(base + n * 100))
             for n in range(PROMPTS_PER_SESSION)])
        count = per_session if number < sessions - 1 else observations - per_session * (sessions - 1)
        conn.executemany(
            "INSERT INTO observations (memory_session_id, project, type, title, subtitle, facts, narrative, concepts,"
            " files_read, files_modified, prompt_number, created_at, created_at_epoch, discovery_tokens, content_hash)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(memory, project, rng.choice(TYPES), " ".join(draw(rng.randint(6, 12))), " ".join(draw(8)),
              json.dumps(draw(3)), " ".join(draw(rng.randint(25, 60))) + ".", json.dumps(draw(2)),
              json.dumps([f"src/{w}.py" for w in draw(2)]), json.dumps([f"src/{w}.py" for w in draw(1)]),
              n % PROMPTS_PER_SESSION + 1, *at(base + n * 500 / max(count, 1)), 2000, f"{number:08x}{n:08x}")
             for n in range(count)])
        conn.executemany(
            "INSERT INTO session_summaries (memory_session_id, project, request, investigated, learned, completed,"
            " next_steps, files_read, files_edited, notes, prompt_number, created_at, created_at_epoch)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(memory, project, " ".join(draw(12)), " ".join(draw(20)), " ".join(draw(20)), " ".join(draw(15)),
              " ".join(draw(12)), json.dumps(["src/app.py"]), json.dumps(["src/app.py"]), None, n + 1,
              *at(base + n * 100 + 90)) for n in range(SUMMARIES_PER_SESSION)])
        rows += 1 + PROMPTS_PER_SESSION + count + SUMMARIES_PER_SESSION
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return rows


def import_into(data_dir: str, path: str) -> int:
    with original.OriginalSource.open(path, {}, data_dir) as source:
        report = importers.run(source, data_dir)
    assert not report.incomplete, report.problems[:3]
    return report.added.total()


def bare_insert(path: str, target: str) -> int:
    """Baseline: the same rows read and inserted into our four tables with one executemany each, no checks."""
    src = sqlite3.connect(path)
    conn = db.connect(target)
    with db.transaction(conn):
        conn.executemany("INSERT INTO sessions (id, content_session_id, memory_session_id, project, started_at)"
                         " VALUES (?, ?, ?, ?, ?)", src.execute(
                             "SELECT id, content_session_id, memory_session_id, project, started_at FROM sdk_sessions"))
        conn.executemany("INSERT INTO prompts (session_id, prompt_number, text, created_at) VALUES (?, ?, ?, ?)",
                         src.execute("SELECT session_db_id, prompt_number, prompt_text, created_at FROM user_prompts"))
        conn.executemany(
            "INSERT INTO observations (session_id, project, type, title, subtitle, narrative, facts, concepts,"
            " files_read, files_modified, prompt_number, content_hash, created_at) VALUES"
            " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", src.execute(
                "SELECT s.id, o.project, o.type, o.title, o.subtitle, o.narrative, o.facts, o.concepts, o.files_read,"
                " o.files_modified, o.prompt_number, o.content_hash, o.created_at FROM observations o"
                " JOIN sdk_sessions s ON s.memory_session_id = o.memory_session_id"))
        conn.executemany(
            "INSERT INTO summaries (session_id, project, request, investigated, learned, completed, next_steps,"
            " files_read, files_edited, prompt_number, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            src.execute("SELECT s.id, m.project, m.request, m.investigated, m.learned, m.completed, m.next_steps,"
                        " m.files_read, m.files_edited, m.prompt_number, m.created_at FROM session_summaries m"
                        " JOIN sdk_sessions s ON s.memory_session_id = m.memory_session_id"))
    count = sum(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                for table in ("sessions", "prompts", "observations", "summaries"))
    src.close()
    conn.close()
    return count


def measure(tmp: str, observations: int) -> dict:
    source = os.path.join(tmp, f"theirs-{observations}.db")
    rows = generate(source, observations)
    import_s, added = timed(lambda: import_into(os.path.join(tmp, f"ours-{observations}"), source))
    assert added == rows, (added, rows)
    again_s, again = timed(lambda: import_into(os.path.join(tmp, f"ours-{observations}"), source))
    bare_s, bare = timed(lambda: bare_insert(source, os.path.join(tmp, f"bare-{observations}.db")))
    assert bare == rows, (bare, rows)
    peak = peak_mb(lambda: import_into(os.path.join(tmp, f"peak-{observations}"), source))
    return {"observations": observations, "rows": rows, "db_mb": round(os.path.getsize(source) / 2**20, 2),
            "import": {"seconds": round(import_s, 3), "rows_per_s": round(rows / import_s),
                       "bare_insert_rows_per_s": round(rows / bare_s), "ratio_to_bare": round(import_s / bare_s, 2),
                       "peak_python_mb": peak},
            "reimport": {"seconds": round(again_s, 3), "rows_added": again, "rows_per_s": round(rows / again_s)}}


def main(argv: list[str]) -> dict:
    size = int(option(argv, "--size") or (2_000 if "--quick" in argv else 10_000))
    with tempfile.TemporaryDirectory(prefix="bench-import-claude-mem-") as tmp:
        full = measure(tmp, size)
        small = measure(tmp, max(OBSERVATIONS_PER_SESSION, size // 5))
    peaks = [small["import"]["peak_python_mb"], full["import"]["peak_python_mb"]]
    return {**full, "memory_flat": {"small_observations": small["observations"], "import_peak_mb": peaks,
                                    "growth": round(peaks[1] / max(peaks[0], 0.01), 2)}}


if __name__ == "__main__":
    print(json.dumps(main(os.sys.argv[1:]), indent=2))
