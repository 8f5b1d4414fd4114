"""`python -m bench team [--quick] [--size N]`: team memory on a throwaway PostgreSQL (Debian's package).

Figures:
- **lag**: two real workers (two data dirs, one shared project) at the default `team_sync_seconds`;
  an observation committed to A's store (as the observer commits one) until it is in B's store,
  where search finds it. p50 and p90 over `SAMPLES` observations (quick: 5), one at a time, at random
  moments. Budget p50 ≤ 2 s.
- **initial pull**: `--size` observations (default 100k; quick 10k) pushed by A, then pulled by a
  fresh B in one `team sync`: rows per second for each, beside a bare baseline measured in the same
  run (the same rows copied with one psycopg COPY into a plain table, no upsert or local store).
- **join**: a fresh data dir pulls the same rows in one `team sync` (target ≥ 5,000 rows/s), with the
  time until a search on it finds something while the pull runs, beside the rows/s of a bare COPY and
  of streaming the rows from the server with no local work (COPY … TO STDOUT and a server-side cursor).
- **outbox drain after an outage**: the server stopped while A writes 10% of `--size` more
  observations; after it returns, the time for one exchange to push them all (rows per second).
- **reconcile** (issue 32): the reconciliation check of a project of `--size` observations pushed
  from A (beside as many of a teammate's): the server's digest query, p50, with its index and without;
  and the whole check from A. Budget ≤ 100 ms on the server.
- **authorship push** (issue 32): `--size`/10 observations pushed into a server without the row size
  CHECK (the push as before), with it, and set up with `team init` (row-level security, the guard
  trigger, a member role): rows per second, and the ratios to the first.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta

from bench.bench_search import option
from bench.pg_cluster import Cluster
from claude_mem import settings
from claude_mem.runtime import control
from claude_mem.store import db
from claude_mem.team.config import from_settings
from claude_mem.team.sync import Replicator

REMOTE = "github.com/acme/app"
SAMPLES = 20
LAG_BUDGET_P50_S = 2.0
JOIN_TARGET_ROWS_PER_S = 5000


def machine(root: str, name: str, url: str) -> tuple[str, str]:
    """A data dir sharing REMOTE, and its project key."""
    data_dir = os.path.join(root, name)
    os.makedirs(data_dir)
    with open(settings.settings_path(data_dir), "w") as handle:
        json.dump({"team_database_url": url, "team_projects": [REMOTE], "team_author": name,
                   "backup_interval_hours": 0, "provider": "offline", "worker_port": 0}, handle)
    key = f"/home/{name}/app"
    conn = db.connect(db.db_path(data_dir))
    conn.execute("INSERT INTO projects (key, remote) VALUES (?, ?)", (key, REMOTE))
    conn.close()
    return data_dir, key


def fill(data_dir: str, key: str, count: int, tag: str) -> None:
    """`count` observations in sessions of 100, written in one transaction as the observer writes them."""
    start = datetime.now(UTC) - timedelta(days=30)
    conn = db.connect(db.db_path(data_dir))
    conn.execute("BEGIN")
    session = 0
    for n in range(count):
        if n % 100 == 0:
            session = conn.execute("INSERT INTO sessions (content_session_id, project, started_at) VALUES (?, ?, ?)",
                                   (f"{tag}-{n}", key, start.isoformat())).lastrowid
        title = f"Observation {n} of {tag}: lease renewal and the sweeper interval"
        conn.execute(
            "INSERT INTO observations (session_id, project, type, title, narrative, facts, concepts, content_hash,"
            " created_at) VALUES (?, ?, 'discovery', ?, ?, '[\"a fact\"]', '[\"leases\"]', ?, ?)",
            (session, key, title, f"{title}. A narrative of a few sentences about what was learned and why it matters"
             " for the next session that touches this code.", hashlib.sha256(title.encode()).hexdigest(),
             (start + timedelta(seconds=n)).isoformat()))
    conn.execute("COMMIT")
    conn.close()


def replicator(data_dir: str) -> Replicator:
    return Replicator(from_settings(settings.load(data_dir)), lambda: db.connect(db.db_path(data_dir)))


def timed_sync(data_dir: str) -> tuple[float, object]:
    worker = replicator(data_dir)
    try:
        started = time.perf_counter()
        totals = worker.sync_once()
        return time.perf_counter() - started, totals
    finally:
        worker.close()


def bare_copy(cluster: Cluster, database: str, rows: int) -> float:
    """Seconds to COPY `rows` rows of the same shape into a plain table (the floor of any push)."""
    import psycopg

    payload = json.dumps({"title": "Observation of bench", "narrative": "x" * 160, "facts": ["a fact"]})
    with psycopg.connect(cluster.admin_url(database), autocommit=True) as conn:
        conn.execute("CREATE TABLE bare (uid text PRIMARY KEY, payload jsonb)")
        started = time.perf_counter()
        with conn.cursor() as cursor, cursor.copy("COPY bare (uid, payload) FROM STDIN") as copy:
            for n in range(rows):
                copy.write_row((f"{n:032x}", payload))
        return time.perf_counter() - started


def join(cluster: Cluster, root: str, url: str, rows: int) -> dict[str, object]:
    """A fresh data dir joins the project A pushed (`rows` rows on the server): one `team sync`, timed,
    while another connection searches its store until the first hit (the time to first usable
    search); beside the ceilings measured in the same run: the same rows streamed bare from the server
    (COPY … TO STDOUT and a server-side cursor, no local work) and a bare COPY into a plain table."""
    import threading

    import psycopg

    from claude_mem.index.search import SearchQuery, search
    from claude_mem.store import team_server

    ceilings: dict[str, float] = {}
    for how in ("copy", "cursor", "copy", "cursor"):  # interleaved: the machine is shared
        with psycopg.connect(url, autocommit=True) as conn:
            started = time.perf_counter()
            got = sum(len(batch) for batch in team_server.stream(conn, REMOTE, 0, "nobody", (5000,), how))
            rate = got / (time.perf_counter() - started)
        ceilings[how] = max(ceilings.get(how, 0.0), rate)
    c, c_key = machine(root, f"join-{rows}", url)
    first_hit: list[float] = []
    done = threading.Event()

    def searcher(started: float) -> None:
        conn = db.connect(db.db_path(c))
        try:
            while not done.is_set() or time.perf_counter() - started < 60:  # a small pull may end before a hit
                if search(conn, SearchQuery.build("lease renewal sweeper", project=c_key, mode="keyword")).items:
                    first_hit.append(time.perf_counter() - started)
                    return
                time.sleep(0.02)
        finally:
            conn.close()

    watcher = threading.Thread(target=searcher, args=(time.perf_counter(),))
    watcher.start()
    cpu = time.process_time()  # this process's (the searcher's polls are a few ms of it)
    try:
        pull_s, totals = timed_sync(c)
    finally:
        cpu = time.process_time() - cpu
        done.set()
        watcher.join()
    database = url.rsplit("/", 1)[1]
    cluster.create_database(f"{database}_bare", f"{database}_bare", "bare-pw")
    bare_s = bare_copy(cluster, f"{database}_bare", rows)
    return {"rows": rows, "pulled": getattr(totals, "pulled", 0), "seconds": round(pull_s, 2),
            "rows_per_s": round(rows / pull_s), "target_rows_per_s": JOIN_TARGET_ROWS_PER_S,
            # on a shared machine the wall figure moves with the load; CPU seconds of the puller do not
            "cpu_s": round(cpu, 2), "rows_per_cpu_s": round(rows / cpu) if cpu else None,
            "first_search_s": round(first_hit[0], 2) if first_hit else None,
            "stream_copy_rows_per_s": round(ceilings["copy"]), "stream_cursor_rows_per_s": round(ceilings["cursor"]),
            "bare_copy_rows_per_s": round(rows / bare_s)}


def lag(root: str, url: str, samples_wanted: int) -> dict[str, object]:
    a, a_key = machine(root, "lag-a", url)
    b, _ = machine(root, "lag-b", url)
    env_before = dict(os.environ)
    os.environ["CLAUDE_MEM_AUTOSTART"] = "false"
    samples = []
    try:
        for data_dir in (a, b):
            os.environ["CLAUDE_MEM_DATA_DIR"] = data_dir
            control.start(data_dir)
        conn_a, conn_b = db.connect(db.db_path(a)), db.connect(db.db_path(b))
        session = conn_a.execute("INSERT INTO sessions (content_session_id, project) VALUES ('lag', ?)",
                                 (a_key,)).lastrowid
        rng = random.Random(5)
        for n in range(samples_wanted):
            time.sleep(rng.uniform(0.05, 1.2))  # not in step with the workers' interval
            title = f"Lag probe {n}: renewals spread with jitter"
            cursor = conn_a.execute(
                "INSERT INTO observations (session_id, project, type, title, narrative, content_hash)"
                " VALUES (?, ?, 'discovery', ?, 'probe', ?)", (session, a_key, title, f"probe-{n}"))
            committed = time.perf_counter()
            uid = conn_a.execute("SELECT uid FROM observations WHERE id = ?", (cursor.lastrowid,)).fetchone()[0]
            deadline = committed + 30
            while time.perf_counter() < deadline:
                if conn_b.execute("SELECT 1 FROM observations WHERE uid = ?", (uid,)).fetchone():
                    samples.append(time.perf_counter() - committed)
                    break
                time.sleep(0.01)
            else:
                raise RuntimeError(f"observation {n} never reached machine B")
        conn_a.close()
        conn_b.close()
    finally:
        for data_dir in (a, b):
            control.stop(data_dir)
        os.environ.clear()
        os.environ.update(env_before)
    ordered = sorted(samples)
    return {"samples": len(samples), "p50_s": round(statistics.median(ordered), 3),
            "p90_s": round(ordered[int(len(ordered) * 0.9) - 1], 3),
            "p95_s": round(ordered[max(int(len(ordered) * 0.95) - 1, 0)], 3), "max_s": round(ordered[-1], 3),
            "interval_s": settings.DEFAULTS["team_sync_seconds"], "budget_p50_s": LAG_BUDGET_P50_S}


def main(argv: list[str]) -> dict[str, object]:
    quick = "--quick" in argv
    size = int(option(argv, "--size") or (10_000 if quick else 100_000))
    cluster = Cluster().start()
    root = tempfile.mkdtemp(prefix="claude-mem-bench-team-")
    try:
        url = cluster.create_database("bench", "bench", "bench-pw")
        report: dict[str, object] = {"lag": lag(root, url, 5 if quick else SAMPLES)}
        print(f"  lag p50 {report['lag']['p50_s']} s", file=sys.stderr)  # type: ignore[index]

        a, a_key = machine(root, "a", url)
        b, _ = machine(root, "b", url)
        fill(a, a_key, size, "bulk")
        rows = size + (size + 99) // 100  # observations and their sessions
        push_s, _ = timed_sync(a)
        pull_s, totals = timed_sync(b)
        cluster.create_database("bare", "bare", "bare-pw")
        bare_s = bare_copy(cluster, "bare", rows)
        report["initial"] = {
            "observations": size, "rows": rows, "push_rows_per_s": round(rows / push_s),
            "pull_rows_per_s": round(rows / pull_s), "pulled": getattr(totals, "pulled", 0),
            "bare_copy_rows_per_s": round(rows / bare_s),
            "push_ratio_to_bare": round(push_s / bare_s, 1), "pull_ratio_to_bare": round(pull_s / bare_s, 1),
        }
        print(f"  initial: push {report['initial']['push_rows_per_s']} rows/s, "  # type: ignore[index]
              f"pull {report['initial']['pull_rows_per_s']} rows/s", file=sys.stderr)

        report["join"] = join(cluster, root, url, rows)
        print(f"  join: {report['join']['rows_per_s']} rows/s (target {JOIN_TARGET_ROWS_PER_S}), first search after "  # type: ignore[index]
              f"{report['join']['first_search_s']} s; bare COPY {report['join']['bare_copy_rows_per_s']} rows/s, "  # type: ignore[index]
              f"stream COPY {report['join']['stream_copy_rows_per_s']} rows/s", file=sys.stderr)  # type: ignore[index]

        cluster.pause()
        backlog = max(size // 10, 100)
        fill(a, a_key, backlog, "offline")
        try:
            replicator(a).sync_once()
        except Exception:
            pass  # the server is away: the rows wait in the outbox
        cluster.resume()
        drain_s, totals = timed_sync(a)
        report["drain"] = {"rows": backlog + (backlog + 99) // 100, "seconds": round(drain_s, 2),
                           "rows_per_s": round((backlog + (backlog + 99) // 100) / drain_s),
                           "pushed": getattr(totals, "pushed", 0)}
        report["reconcile"] = reconcile_cost(cluster, root, size)
        print(f"  reconcile: server {report['reconcile']['server_digest_ms']} ms"  # type: ignore[index]
              f" (budget {RECONCILE_BUDGET_MS} ms)", file=sys.stderr)
        report["authorship_push"] = authorship_push_cost(cluster, root, max(size // 10, 1000))
        return report
    finally:
        cluster.stop()
        import shutil

        shutil.rmtree(root, ignore_errors=True)


RECONCILE_BUDGET_MS = 100.0


def reconcile_cost(cluster: Cluster, root: str, size: int, runs: int = 7) -> dict[str, object]:
    """Issue 32: the reconciliation check of one project of `size` observations pushed from A, beside
    as many rows of other devices: the server's digest query (p50 of `runs`, with and without its
    index), and the whole check from A (the local uid scan, the digest, nothing to re-send)."""
    import psycopg

    from claude_mem.store import team_digest, team_server
    from claude_mem.team import integrity
    from claude_mem.team.sync import device_id

    url = cluster.create_database("reconcile", "reconcile", "reconcile-pw")
    a, a_key = machine(root, "reconcile-a", url)
    fill(a, a_key, size, "reconcile")
    conn = db.connect(db.db_path(a))
    device = device_id(conn)
    for table in ("sessions", "observations"):  # as if pushed: acknowledged at revision 1
        conn.execute(f"UPDATE {table} SET team_rev = 1 WHERE project = ?", (a_key,))
    conn.commit()
    mine = team_digest.pushed_uids(conn, [a_key])
    conn.close()
    admin = cluster.admin_url("reconcile")
    with psycopg.connect(url, autocommit=True) as server:
        team_server.migrate(server)
    with psycopg.connect(admin, autocommit=True) as server:
        server.execute("INSERT INTO claude_mem.projects (id) VALUES (%s)", (REMOTE,))
        with server.cursor() as cursor, cursor.copy(
                "COPY claude_mem.rows (uid, kind, project, author, device, payload, rev) FROM STDIN") as copy:
            for n, (kind, uid) in enumerate(mine):
                copy.write_row((uid, kind, REMOTE, "a", device, '{"title": "x"}', n + 1))
            for n in range(size):  # a teammate's rows of the same project
                copy.write_row((hashlib.md5(f"other-{n}".encode()).hexdigest(), "observation", REMOTE, "b", "dev-b",
                                '{"title": "x"}', len(mine) + n + 1))
        server.execute("VACUUM ANALYZE claude_mem.rows")

        def digest_ms() -> float:
            samples = []
            for _ in range(runs):
                started = time.perf_counter()
                team_server.digest(server, REMOTE, device)
                samples.append((time.perf_counter() - started) * 1000)
            return round(statistics.median(samples), 1)

        with_index = digest_ms()
        server.execute("DROP INDEX claude_mem.rows_reconcile")
        without_index = digest_ms()
        server.execute("CREATE INDEX rows_reconcile ON claude_mem.rows (project, device, uid) WHERE NOT deleted")
        server.execute("VACUUM ANALYZE claude_mem.rows")
        with_index_again = digest_ms()
    worker = replicator(a)
    try:
        worker.open()
        local_conn = db.connect(db.db_path(a))
        samples, resent = [], 0
        for _ in range(3):
            started = time.perf_counter()
            resent += integrity.reconcile(worker, local_conn, device).resent
            samples.append((time.perf_counter() - started) * 1000)
        local_conn.close()
    finally:
        worker.close()
    server_ms = min(with_index, with_index_again)  # the two with-index runs bracket the one without
    return {"observations": size, "rows_on_server": len(mine) + size, "server_digest_ms": server_ms,
            "server_digest_without_index_ms": without_index, "whole_check_ms": round(statistics.median(samples), 1),
            "resent": resent, "budget_ms": RECONCILE_BUDGET_MS}


def authorship_push_cost(cluster: Cluster, root: str, size: int) -> dict[str, object]:
    """Issue 32: what the row limit and verified authorship cost a push. The same `size` observations
    pushed by one exchange into three servers in this run: schema 2 without its size CHECK (the push
    as before), schema 2 (the CHECK), and a server set up with `team init` (row-level security and the
    guard trigger), as a member role. Rows per second each."""
    import shutil

    import psycopg

    from claude_mem.store import team_admin

    source, key = machine(root, "authorship-source", "postgresql://unused@127.0.0.1/none")
    fill(source, key, size, "authorship")
    cluster.sql("CREATE ROLE authadmin LOGIN CREATEROLE PASSWORD 'authadmin-pw'")
    urls = {}
    for name in ("no_check", "check", "verified"):
        if name == "verified":
            cluster.sql("CREATE DATABASE auth_verified OWNER authadmin")
            admin_url = cluster.url("authadmin", "authadmin-pw", "auth_verified")
            with psycopg.connect(admin_url, autocommit=True) as conn:
                team_admin.init(conn)
                made = team_admin.add_member(conn, "Bench member", "bench_member")
            urls[name] = cluster.url(made["role"], made["password"], "auth_verified")
        else:
            urls[name] = cluster.create_database(f"auth_{name}", f"auth_{name}", f"auth-{name}-pw")
            with psycopg.connect(urls[name], autocommit=True) as conn:
                team_admin.team_server.migrate(conn)
                if name == "no_check":
                    conn.execute("ALTER TABLE claude_mem.rows DROP CONSTRAINT rows_payload_limit")
    rows = size + (size + 99) // 100
    report: dict[str, object] = {"observations": size, "rows": rows}
    for name, url in urls.items():
        data_dir = os.path.join(root, f"authorship-{name}")
        shutil.copytree(source, data_dir)
        with open(settings.settings_path(data_dir)) as handle:
            values = json.load(handle)
        with open(settings.settings_path(data_dir), "w") as handle:
            json.dump({**values, "team_database_url": url}, handle)
        seconds, _ = timed_sync(data_dir)
        report[f"{name}_rows_per_s"] = round(rows / seconds)
    report["check_ratio"] = round(report["no_check_rows_per_s"] / report["check_rows_per_s"], 2)  # type: ignore[operator]
    report["verified_ratio"] = round(report["no_check_rows_per_s"] / report["verified_rows_per_s"], 2)  # type: ignore[operator]
    return report
