"""Claude Code's auto memory beside ours (issue 30): what it costs the session start and a search.

- The `session-start` hook exactly as hooks.json runs it, at 10k observations (1k with `--quick`), on the same
  store with and without a synced auto memory directory (`MEMORY.md` of 200 lines, a tenth of them stating
  an observation's title, so the index leaves those out), beside a bare `python -c pass`, interleaved; with
  `--before SRC`, also the hook of another checkout's `src` (e.g. the commit before this work) on the store
  without notes. Budget: the hook with notes ≤ 1.05× the hook without them (one index seek and a word
  comparison per row).
- A look at an unchanged directory of 50 notes (what the worker does every 10 s: a listing, no file read)
  and a first sync of them, in µs / ms.
- `claude-mem search --mode keyword` from spawn, notes included (default kinds: it syncs the current project
  first) against `--kind observation`, interleaved. Budget: ≤ 1.2×.

`python -m bench auto-memory [--quick] [--before SRC]`.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time

from bench.bench_recall import generate, interleaved
from claude_mem.recall import auto_memory
from claude_mem.runtime import auto_memory as files
from claude_mem.store import db

HOOK_BUDGET = 1.05
SEARCH_BUDGET = 1.2
NOTES = 50


def _memory_dir(config: str, project: str, titles: list[str]) -> None:
    directory = os.path.join(config, "projects", files.sanitized(project), "memory")
    os.makedirs(directory)
    lines = [f"- [{title}](note_{n}.md) — from an earlier session" if n % 10 == 0 else
             f"- [Topic {n}](note_{n}.md) — deploy staging vpn preference number {n}" for n, title in enumerate(titles[:200])]
    with open(os.path.join(directory, "MEMORY.md"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    for n in range(NOTES - 1):
        with open(os.path.join(directory, f"note_{n}.md"), "w", encoding="utf-8") as handle:
            handle.write(f"---\nname: Topic {n}\ndescription: staging deploy preference {n}\ntype: feedback\n---\n"
                         f"Always run the staging deploy with the vpn up ({n}).\n")


def _hook_argv(src: str) -> list[str]:
    code = (f"import sys; sys.path.insert(0, {json.dumps(src)}); from claude_mem.hooks.runner import run_from_argv;"
            " sys.exit(run_from_argv(sys.argv[1:]))")
    return [sys.executable, "-I", "-S", "-c", code, "session-start"]


def main(argv: list[str]) -> dict:
    quick = "--quick" in argv
    before = argv[argv.index("--before") + 1] if "--before" in argv else None
    size, runs = (1_000, 15) if quick else (10_000, 40)
    root = tempfile.mkdtemp(prefix="bench-auto-memory-")
    try:
        project = os.path.join(root, "repo")
        os.makedirs(os.path.join(project, ".git"))
        config = os.path.join(root, "claude")
        plain, synced = os.path.join(root, "plain"), os.path.join(root, "synced")
        conn = db.connect(db.db_path(plain))
        generate(conn, project, size)
        titles = [row[0] for row in conn.execute(
            "SELECT title FROM observations ORDER BY id DESC LIMIT 200")]  # the index's newest rows
        conn.close()
        shutil.copytree(plain, synced)
        _memory_dir(config, project, titles)
        env = {**os.environ, "CLAUDE_CONFIG_DIR": config, "CLAUDE_MEM_AUTOSTART": "false"}
        conn = db.connect(db.db_path(synced))
        started = time.perf_counter()
        report = auto_memory.sync(conn, project, env)
        first_sync_ms = (time.perf_counter() - started) * 1000
        looks = []
        for _ in range(50):
            started = time.perf_counter()
            assert auto_memory.unchanged(conn, project, env)
            looks.append((time.perf_counter() - started) * 1e6)
        conn.close()
        src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

        def payload(n: int) -> bytes:
            return json.dumps({"session_id": f"bench-{n}", "transcript_path": "/tmp/t.jsonl", "cwd": project,
                               "hook_event_name": "SessionStart", "source": "startup"}).encode()

        def in_dir(data_dir: str, argv_: list[str]) -> list[str]:
            return ["env", f"CLAUDE_MEM_DATA_DIR={data_dir}", *argv_]

        commands = {"without_notes": (in_dir(plain, _hook_argv(src)), payload),
                    "with_notes": (in_dir(synced, _hook_argv(src)), payload),
                    "bare": ([sys.executable, "-c", "pass"], b"")}
        if before:
            commands["before"] = (in_dir(plain, _hook_argv(before)), payload)
        got = interleaved(commands, env, runs)
        shown = {name: json.loads(got[name]["stdout"])["hookSpecificOutput"]["additionalContext"].count("\n#")
                 for name in ("without_notes", "with_notes")}
        hook = {name: {"cpu_ms": got[name]["cpu_ms"], "wall_ms": got[name]["wall_ms"]} for name in got}
        ratio = round(got["with_notes"]["cpu_ms"] / got["without_notes"]["cpu_ms"], 3)
        cli = [sys.executable, "-m", "claude_mem", "search", "staging deploy vpn", "--mode", "keyword", "--json"]
        search_env = {**env, "CLAUDE_MEM_DATA_DIR": synced}
        cwd = os.getcwd()
        os.chdir(project)
        try:
            searched = interleaved({"with_notes": (cli, b""), "observations_only": ([*cli, "--kind", "observation"], b"")},
                                   search_env, max(runs // 4, 5), warm=1)
        finally:
            os.chdir(cwd)
        result = {
            "observations": size, "notes": report["files"], "runs": runs,
            "session_start": hook,
            "session_start_ratio_with_notes": ratio, "session_start_budget": HOOK_BUDGET,
            "rows_injected": shown,
            "first_sync_ms": round(first_sync_ms, 2), "unchanged_look_us": round(statistics.median(looks), 1),
            "cli_search_ms": {name: searched[name]["wall_ms"] for name in searched},
            "cli_search_ratio": round(searched["with_notes"]["wall_ms"] / searched["observations_only"]["wall_ms"], 3),
            "cli_search_budget": SEARCH_BUDGET,
        }
        if before:
            result["session_start_ratio_to_before"] = round(got["with_notes"]["cpu_ms"] / got["before"]["cpu_ms"], 3)
            result["session_start_ratio_to_before_without_notes"] = round(
                got["without_notes"]["cpu_ms"] / got["before"]["cpu_ms"], 3)
        return result
    finally:
        shutil.rmtree(root, ignore_errors=True)
