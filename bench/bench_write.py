"""Write-path cost (issue 29): observations/s through the observer's write path, before and after the
schema changes of issue 29, on the same generated observations in the same run.

`python -m bench write [--quick] [--size N] [--json]`. The observer stores what it parsed from a reply
with `store.results.store_batch` (observations, the turn's summary, their sources and file fingerprints,
the events' end, one transaction). This benchmark times exactly that call into two stores:
- before: a database migrated only to schema version 16 (the schema before issue 29), opened with the
  pragmas `store.db.connect` sets;
- after: a database at the current schema (`store.db.connect`).
Both get the same captured sessions (many sessions of ~20 observations each, in turns of 5: a prompt,
tool events naming files, a stop; titles, narratives, facts and concepts sized like the observer's),
written through the capture path (`store.capture.apply_record`) and claimed (`store.queue.claim_batch`)
untimed, then stored batch by batch, timed. The two stores are written in turn, batch after batch (which
goes first alternates), from empty each round, and each figure is the median over rounds of the total
`store_batch` wall and CPU (`time.thread_time`) time per observation. Target: after within 1.3× of
before (`slowdown` = before rate / after rate, on CPU time; wall beside it). Fails loudly when schema 16
cannot be reached.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from bench.bench_recall import zipf_sampler
from claude_mem.domain import iso
from claude_mem.store import capture, db, migrations, queue
from claude_mem.store.models import ParsedObservation, ParsedSummary
from claude_mem.store.results import store_batch
from claude_mem.store.retry_schema import m021_failure_class
from claude_mem.store.transaction import transaction

BEFORE_VERSION = 16  # the schema before issue 29 (m016_compact_vectors)
TARGET_SLOWDOWN = 1.3
PER_SESSION = 20
PER_TURN = 5
SIZE, QUICK_SIZE = 2_000, 400  # observations
ROUNDS, QUICK_ROUNDS = 5, 3
PROJECT = "/home/dev/bench-write"
TYPES = ("bugfix", "feature", "refactor", "change", "discovery", "decision")


@dataclass(frozen=True)
class Turn:
    """One observer batch: its captured events (capture records) and what the observer made of them."""

    records: tuple[dict[str, Any], ...]
    observations: tuple[ParsedObservation, ...]
    summary: ParsedSummary


def sentence(draw: Any, rng: random.Random, low: int, high: int) -> str:
    return " ".join(draw(rng.randint(low, high))).capitalize() + "."


def generate(observations: int, seed: int = 29) -> list[Turn]:
    """Turns of `PER_TURN` observations, `PER_SESSION` to a session, dated a minute apart."""
    rng = random.Random(seed)
    draw = zipf_sampler(rng)
    start = time.time() - observations * 60
    turns: list[Turn] = []
    for n in range(0, observations, PER_TURN):
        session, turn = divmod(n, PER_SESSION)
        csid, when = f"bench-write-{session}", iso(start + n * 60)
        paths = [f"src/{draw(1)[0]}/{draw(1)[0]}.py" for _ in range(3)]
        files = [{"path": path, "size": rng.randint(500, 40_000), "mtime_ns": rng.randint(1, 2**60),
                  "hash": f"{rng.getrandbits(128):032x}", "commit": f"{rng.getrandbits(160):040x}"} for path in paths]
        base = {"content_session_id": csid, "project": PROJECT, "cwd": PROJECT, "captured_at": when}
        records = [{**base, "kind": "prompt", "event_key": f"{csid}:p{turn}",
                    "payload": {"prompt": sentence(draw, rng, 8, 30)}}]
        records += [{**base, "kind": "tool", "event_key": f"{csid}:t{turn}:{k}",
                     "payload": {"tool_name": rng.choice(("Edit", "Read", "Bash")), "cwd": PROJECT, "files": files[k:k + 1],
                                 "tool_input": {"file_path": f"{PROJECT}/{paths[k]}"},
                                 "tool_response": {"stdout": sentence(draw, rng, 20, 80)}}} for k in range(3)]
        records.append({**base, "kind": "summarize", "event_key": f"{csid}:s{turn}",
                        "payload": {"last_assistant_message": sentence(draw, rng, 20, 60)}})
        made = tuple(ParsedObservation(
            type=rng.choice(TYPES), title=sentence(draw, rng, 6, 12)[:-1], subtitle=sentence(draw, rng, 8, 16),
            narrative=" ".join(sentence(draw, rng, 12, 25) for _ in range(rng.randint(2, 5))),
            facts=tuple(sentence(draw, rng, 8, 15) for _ in range(rng.randint(2, 4))),
            concepts=tuple(draw(rng.randint(2, 4))), files_read=tuple(rng.sample(paths, 2)),
            files_modified=tuple(rng.sample(paths, 1))) for _ in range(min(PER_TURN, observations - n)))
        summary = ParsedSummary(request=sentence(draw, rng, 8, 20), investigated=sentence(draw, rng, 15, 40),
                                learned=sentence(draw, rng, 15, 40), completed=sentence(draw, rng, 10, 30),
                                next_steps=sentence(draw, rng, 8, 20), files_read=tuple(paths[:2]))
        turns.append(Turn(tuple(records), made, summary))
    return turns


def open_before(path: str) -> db.Store:
    """A store at schema 16: `store.db.connect`'s pragmas, then the migrations up to 16 only."""
    if len(migrations.MIGRATIONS) < BEFORE_VERSION:
        raise SystemExit(f"bench write: the code knows {len(migrations.MIGRATIONS)} migrations, fewer than "
                         f"{BEFORE_VERSION}: cannot build the schema before issue 29")
    conn = db.connect(path, migrate=False)
    migrations.migrate(conn, target=BEFORE_VERSION)
    version = db.schema_version(conn)
    recorded = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0]
    if version != BEFORE_VERSION or recorded != BEFORE_VERSION:
        conn.close()
        raise SystemExit(f"bench write: migrating to schema {BEFORE_VERSION} left user_version {version}, "
                         f"recorded {recorded}")
    # Today's queue code claims events through columns added since (m021: a failure's class); they add
    # nothing to what is timed here, the storing of an observer's results.
    m021_failure_class(conn)
    return conn


def open_after(path: str) -> db.Store:
    return db.connect(path)


OPENERS = {"before": open_before, "after": open_after}


def fresh(opener: str, folder: str) -> db.Store:
    path = os.path.join(folder, f"{opener}.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    return OPENERS[opener](path)


def store_turn(conn: db.Store, name: str, turn: Turn) -> tuple[float, float, int]:
    """Capture one turn's events and claim them (untimed), then store the observer's results for them:
    (wall s, CPU s, observations stored) of the `store_batch` call."""
    with transaction(conn):
        for record in turn.records:
            capture.apply_record(conn, dict(record))
    batch = queue.claim_batch(conn, lease_seconds=600, max_events=100, max_chars=10**7, max_attempts=3)
    if batch is None or len(batch.events) != len(turn.records):
        raise RuntimeError(f"bench write ({name}): claimed {batch and len(batch.events)} events of {len(turn.records)}")
    wall, cpu = time.perf_counter(), time.thread_time()
    result = store_batch(conn, batch, turn.observations, turn.summary, input_tokens=1200, output_tokens=400,
                         provider="bench")
    cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    if result is None:
        raise RuntimeError(f"bench write ({name}): a batch lost its lease")
    return wall, cpu, len(result.observations)


def run_round(turns: list[Turn], folder: str) -> dict[str, dict[str, float]]:
    """Both stores from empty, written turn by turn in turn (which goes first alternates): each store's
    total `store_batch` wall and CPU seconds, observations stored and schema version."""
    conns = {name: fresh(name, folder) for name in OPENERS}
    totals = {name: {"wall_s": 0.0, "cpu_s": 0.0, "observations": 0} for name in OPENERS}
    try:
        for number, turn in enumerate(turns):
            for name in (("before", "after") if number % 2 == 0 else ("after", "before")):
                wall, cpu, stored = store_turn(conns[name], name, turn)
                totals[name]["wall_s"] += wall
                totals[name]["cpu_s"] += cpu
                totals[name]["observations"] += stored
        return {name: {**totals[name], "schema": db.schema_version(conn)} for name, conn in conns.items()}
    finally:
        for conn in conns.values():
            conn.close()


def main(argv: list[str]) -> dict[str, object]:
    quick = "--quick" in argv
    size = int(argv[argv.index("--size") + 1]) if "--size" in argv else QUICK_SIZE if quick else SIZE
    rounds = QUICK_ROUNDS if quick else ROUNDS
    turns = generate(max(PER_TURN, size))
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in OPENERS}
    with tempfile.TemporaryDirectory(prefix="bench-write-") as folder:
        for _ in range(rounds):
            for name, figures in run_round(turns, folder).items():
                runs[name].append(figures)
    count = runs["before"][0]["observations"]
    if any(r["observations"] != count for rs in runs.values() for r in rs):
        raise RuntimeError(f"bench write: the stores kept different numbers of observations: {runs}")
    rate = {name: {"cpu": round(count / statistics.median(r["cpu_s"] for r in rs), 1),
                   "wall": round(count / statistics.median(r["wall_s"] for r in rs), 1)} for name, rs in runs.items()}
    return {
        "observations": count, "sessions": -(-count // PER_SESSION), "rounds": rounds,
        "schemas": {name: int(rs[0]["schema"]) for name, rs in runs.items()},
        "before_rows_per_s": rate["before"]["cpu"], "after_rows_per_s": rate["after"]["cpu"],
        "slowdown": round(rate["before"]["cpu"] / rate["after"]["cpu"], 3),
        "wall": {"before_rows_per_s": rate["before"]["wall"], "after_rows_per_s": rate["after"]["wall"],
                 "slowdown": round(rate["before"]["wall"] / rate["after"]["wall"], 3)},
        "target_slowdown": TARGET_SLOWDOWN,
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=None if "--json" in sys.argv else 2))
