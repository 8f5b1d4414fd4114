"""Start-up benchmarks (DESIGN §11, issue 27 item 2): what a user waits on before any work is done.

- the statusline exactly as a status bar runs it (`python -I -S scripts/statusline.py`) at 10k
  observations, beside a bare `python -c pass` of the same interpreter, interleaved: the ratio of
  the medians in CPU (user+sys of the child, `os.wait4`) and in wall time, with the worker stopped
  and running (a worker.json naming a live process). Budget: ≤ 1.5× bare.
- `claude-mem search --mode keyword WORD` (the console script) at 10k observations, wall ms.
  Budget: ≤ 120 ms.
- the MCP server as `.mcp.json` starts it (`python scripts/mcp_server.py`): spawn → `initialize`
  reply → `tools/list` reply, wall ms. Budget: ≤ 250 ms. Also the answer to a first keyword search
  (the first call loads the store and the search).

`python -m bench startup [--quick]` (quick: 2k observations, fewer runs).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench.bench_recall import generate
from bench.plugin_hooks import run_measured
from claude_mem.store import db

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
STATUSLINE_BUDGET_RATIO = 1.5
CLI_SEARCH_BUDGET_MS = 120.0
MCP_INITIALIZE_BUDGET_MS = 250.0
PROTOCOL = "2025-06-18"


def _entry() -> str:
    """The `claude-mem` console script beside this interpreter."""
    return os.path.join(os.path.dirname(sys.executable), "claude-mem")


def _ratio(values: list[float], bare: list[float]) -> float:
    return round(statistics.median(values) / statistics.median(bare), 2)


def bench_statusline(data_dir: str, project: str, runs: int) -> dict:
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir}
    command = [sys.executable, "-I", "-S", os.path.join(REPO, "scripts", "statusline.py")]
    bare = [sys.executable, "-c", "pass"]
    payload = json.dumps({"session_id": "s", "cwd": project, "workspace": {"current_dir": project}}).encode()
    line = run_measured(command, payload, env).stdout.decode().strip()
    cpu, wall, bare_cpu, bare_wall = [], [], [], []
    for _ in range(runs):
        measured = run_measured(bare, b"", env)
        bare_cpu.append(measured.cpu_s * 1000)
        bare_wall.append(measured.wall_s * 1000)
        measured = run_measured(command, payload, env)
        cpu.append(measured.cpu_s * 1000)
        wall.append(measured.wall_s * 1000)
    return {"line": line, "runs": runs, "cpu_ms_median": round(statistics.median(cpu), 2),
            "wall_ms_median": round(statistics.median(wall), 2),
            "bare_cpu_ms_median": round(statistics.median(bare_cpu), 2),
            "bare_wall_ms_median": round(statistics.median(bare_wall), 2),
            "cpu_ratio": _ratio(cpu, bare_cpu), "wall_ratio": _ratio(wall, bare_wall),
            "budget_ratio": STATUSLINE_BUDGET_RATIO}


def bench_cli_search(data_dir: str, project: str, runs: int) -> dict:
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false"}
    command = [_entry(), "search", "--mode", "keyword", "cache"]
    bare = [sys.executable, "-c", "pass"]
    first = subprocess.run(command, env=env, cwd=project, capture_output=True, timeout=120)
    if first.returncode != 0:
        raise RuntimeError(f"claude-mem search failed: {first.stderr.decode(errors='replace')[-500:]}")
    wall, cpu, bare_wall = [], [], []
    for _ in range(runs):
        bare_wall.append(run_measured(bare, b"", env).wall_s * 1000)
        started = time.perf_counter()
        process = subprocess.Popen(command, env=env, cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        wall.append((time.perf_counter() - started) * 1000)
        process.returncode = os.waitstatus_to_exitcode(status)
        cpu.append((usage.ru_utime + usage.ru_stime) * 1000)
    return {"runs": runs, "wall_ms_median": round(statistics.median(wall), 1), "cpu_ms_median": round(statistics.median(cpu), 1),
            "bare_wall_ms_median": round(statistics.median(bare_wall), 1), "wall_ratio": _ratio(wall, bare_wall),
            "budget_ms": CLI_SEARCH_BUDGET_MS}


def _message(process: subprocess.Popen[bytes], expect_id: int) -> dict:
    """The next JSON-RPC reply with `expect_id` on the server's stdout (notifications skipped)."""
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("the MCP server closed its stdout")
        message = json.loads(line)
        if message.get("id") == expect_id:
            return message


def mcp_start_once(command: list[str], env: dict, cwd: str) -> tuple[float, float, float, list[str]]:
    """Wall ms from spawn to the `initialize` reply, to the `tools/list` reply and to the answer of a first
    keyword search (what loads the store), and the tool names."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               env=env, cwd=cwd)
    assert process.stdin is not None
    try:
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}
        process.stdin.write(json.dumps(initialize).encode() + b"\n")
        process.stdin.flush()
        _message(process, 1)
        initialized = (time.perf_counter() - started) * 1000
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode() + b"\n")
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode() + b"\n")
        process.stdin.flush()
        tools = _message(process, 2)
        listed = (time.perf_counter() - started) * 1000
        search = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                  "params": {"name": "search", "arguments": {"query": "cache", "mode": "keyword"}}}
        process.stdin.write(json.dumps(search).encode() + b"\n")
        process.stdin.flush()
        answer = _message(process, 3)
        if answer["result"].get("isError"):
            raise RuntimeError(f"the first search failed: {answer}")
        searched = (time.perf_counter() - started) * 1000
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return initialized, listed, searched, sorted(tool["name"] for tool in tools["result"]["tools"])


def bench_mcp(data_dir: str, project: str, runs: int) -> dict:
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false"}
    command = [sys.executable, os.path.join(REPO, "scripts", "mcp_server.py")]
    initialize, listed, searched, bare = [], [], [], []
    names: list[str] = []
    for _ in range(runs):
        bare.append(run_measured([sys.executable, "-c", "pass"], b"", env).wall_s * 1000)
        first, second, third, names = mcp_start_once(command, env, project)
        initialize.append(first)
        listed.append(second)
        searched.append(third)
    return {"runs": runs, "tools": names, "initialize_ms_median": round(statistics.median(initialize), 1),
            "tools_list_ms_median": round(statistics.median(listed), 1),
            "first_search_ms_median": round(statistics.median(searched), 1),
            "bare_wall_ms_median": round(statistics.median(bare), 1), "initialize_ratio": _ratio(initialize, bare),
            "budget_ms": MCP_INITIALIZE_BUDGET_MS}


def main(argv: list[str]) -> dict:
    quick = "--quick" in argv
    count = 2_000 if quick else 10_000
    runs = 8 if quick else 25
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        project = os.path.join(tmp, "proj")
        os.makedirs(os.path.join(project, ".git"))
        data_dir = os.path.join(tmp, "data")
        conn = db.connect(db.db_path(data_dir))
        generate(conn, project, count)
        conn.execute("PRAGMA optimize")
        conn.close()
        report = {"observations": count, "statusline": bench_statusline(data_dir, project, runs)}
        # A running worker as the status line sees it: worker.json naming a live process and its observer.
        with open(os.path.join(data_dir, "worker.json"), "w", encoding="utf-8") as handle:
            json.dump({"pid": os.getpid(), "port": 1, "provider": {"name": "claude"}}, handle)
        report["statusline_worker_running"] = bench_statusline(data_dir, project, runs)
        os.unlink(os.path.join(data_dir, "worker.json"))
        report.update({
                       "cli_search_keyword": bench_cli_search(data_dir, project, runs),
                       "mcp_initialize": bench_mcp(data_dir, project, runs)})
    report["within_budget"] = {
        "statusline": all(report[name][figure] <= STATUSLINE_BUDGET_RATIO
                          for name in ("statusline", "statusline_worker_running") for figure in ("cpu_ratio", "wall_ratio")),
        "cli_search_keyword": report["cli_search_keyword"]["wall_ms_median"] <= CLI_SEARCH_BUDGET_MS,
        "mcp_initialize": report["mcp_initialize"]["initialize_ms_median"] <= MCP_INITIALIZE_BUDGET_MS,
    }
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
