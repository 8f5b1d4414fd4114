"""The post-tool hook, run exactly as hooks/hooks.json runs it, against a bare `python -c pass`.

Budget (DESIGN §11): the CPU (user + system, the child's own rusage) of the post-tool hook, for a
PostToolUse of a Read whose content is 100 KB of source code (what redaction works hardest on) and
for a small Bash, ≤ 2.0 × the CPU of `python -c pass` of the same interpreter (`cpu`). The hook
runs as hooks.json says (`python3 -I -S scripts/hook.py post-tool`, `python3` being this
interpreter), a new `tool_use_id` each run so every run really inserts, interleaved run by run
with the baseline so machine noise hits both alike; medians. The floor `python -I -S -c 'import
json, sqlite3'` is shown beside it. `--phases` breaks the hook's CPU down by phase (interpreter
start, imports, parsing, redaction, fingerprints, database open, insert + commit, exit;
`bench/hook_phases.py`), for this checkout or, with `--before SRC`, the `src` of another.
`with_worker`: the same with a real worker running, to which the hook hands its payload over a
local socket (capture/handoff.py): the hook's CPU, and its wall time with the worker's work.

Wall-clock figures follow, as extra lines: the hook command taken from hooks/hooks.json (shell
form, `${CLAUDE_PLUGIN_ROOT}` set to this checkout, `python3` resolved on PATH like Claude Code
does) against the same `python3` running `-c pass` through the same shell.

Because `python3` may be a wrapper (a pyenv shim costs tens of ms) and `site` may import a lot
(`.pth` files), the report also gives the same comparison with the resolved interpreter called
directly, and the floor `python3 -I -S -c pass` that the hook's own flags start from.

A regular install (pipx, uv tool, pip) registers its hooks with `claude-mem install`: the same
comparison runs that command (`installed`) against `-c pass` of the interpreter it names (this one),
and the `claude-mem hook post-tool` console script (`console_script`) shows what the launcher saves.
"""

import ast
import json
import os
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

from bench.plugin_hooks import Measured, hook_command, plugin_command, run_measured

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUDGET_RATIO = 2.0  # DESIGN §11: post-tool hook CPU ≤ 2.0 × bare `python -c pass`, 100 KB Read and small Bash
PHASE_PROBE = os.path.join(REPO, "bench", "hook_phases.py")
RESPONSE_BYTES = 100 * 1024


def installed_command(hook: str = "post-tool") -> str:
    """The hook command `claude-mem install` writes for this interpreter."""
    from claude_mem.runtime.claude_config import Install
    from claude_mem.runtime.environment import PACKAGE_PARENT

    return Install(sys.executable, PACKAGE_PARENT).hook_command(hook)


def source_text(size: int) -> str:
    """`size` characters of this project's own source: ordinary code, full of the words (`token`, `key`,
    `password`, `secret`, URLs) that make the redactor look twice."""
    parts, total = [], 0
    for root, _dirs, names in sorted(os.walk(os.path.join(REPO, "src", "claude_mem"))):
        for name in sorted(names):
            if name.endswith(".py") and name != "privacy.py":
                with open(os.path.join(root, name), encoding="utf-8") as handle:
                    parts.append(handle.read())
                total += len(parts[-1])
        if total >= size:
            break
    return "".join(parts)[:size]


SOURCE = source_text(RESPONSE_BYTES)


def payload(index: int) -> bytes:
    """A PostToolUse of a Read whose file content is ~100 KB of source code."""
    path = os.path.join(REPO, "tests", "fixtures", "hook-payloads", "session-edit", "05-PostToolUse.Read.json")
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    data["tool_response"] = {"type": "text", "file": {"filePath": "/home/dev/proj/module.py", "content": SOURCE}}
    data["tool_use_id"] = f"toolu_bench_{index:06d}"
    return json.dumps(data).encode()


def small_bash(index: int) -> bytes:
    """The recorded PostToolUse of a small Bash command, a new `tool_use_id` each run."""
    from bench.privacy.harness import small_bash as recorded  # (the harness imports this module)

    return recorded(index)


def _checked(result: Measured) -> float:
    """CPU milliseconds of a finished child that must have exited 0 and said nothing on stderr."""
    if result.returncode != 0 or result.stderr:
        raise RuntimeError(f"exited {result.returncode}: {result.stderr[-300:]!r}")
    return result.cpu_s * 1000


def cpu_figures(runs: int) -> dict:
    """CPU of the post-tool hook (100 KB Read, small Bash) and of the floor `import json, sqlite3`
    against bare `python -c pass`, interleaved; medians and ratios."""
    argv = plugin_command("post-tool")
    samples: dict[str, list[float]] = {"read": [], "small_bash": [], "bare": [], "floor": []}
    with tempfile.TemporaryDirectory(prefix="bench-hooks-cpu-") as data_dir:
        env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false"}
        for i in range(runs + 3):
            measured = {"read": _checked(run_measured(argv, payload(70_000 + i), env)),
                        "small_bash": _checked(run_measured(argv, small_bash(70_000 + i), env)),
                        "bare": _checked(run_measured([sys.executable, "-c", "pass"], b"", env)),
                        "floor": _checked(run_measured([sys.executable, "-I", "-S", "-c", "import json, sqlite3"],
                                                       b"", env))}
            if i >= 3:  # warm-up: page cache, the database's creation, the compiled-pattern cache
                for name, value in measured.items():
                    samples[name].append(value)
    median = {name: statistics.median(values) for name, values in samples.items()}
    figure = {name: {"cpu_ms": round(median[name], 2), "ratio": round(median[name] / median["bare"], 3)}
              for name in ("read", "small_bash", "floor")}
    return {**figure, "bare_cpu_ms": round(median["bare"], 2), "budget_ratio": BUDGET_RATIO, "runs": runs,
            "within_budget": max(figure["read"]["ratio"], figure["small_bash"]["ratio"]) <= BUDGET_RATIO}


def worker_figures(runs: int) -> dict:
    """The same CPU figures with a real worker running (`claude-mem worker start`): the post-tool hook
    hands its payload to the worker's capture socket (capture/handoff.py), which redacts and commits
    it before answering; the hook's own CPU and its wall time (the user's wait, the worker's work
    included) against bare `python -c pass`. Every event is checked stored."""
    from claude_mem.capture import handoff

    argv = plugin_command("post-tool")
    samples: dict[str, list[float]] = {"read": [], "small_bash": [], "bare": [], "read_wall": [], "small_bash_wall": [],
                                       "bare_wall": []}
    with tempfile.TemporaryDirectory(prefix="bench-hooks-worker-") as data_dir:
        env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false",
               "CLAUDE_MEM_PROVIDER": "offline", "CLAUDE_MEM_WORKER_PORT": "0", "CLAUDE_MEM_BACKUP_INTERVAL_HOURS": "0"}
        worker = [sys.executable, "-m", "claude_mem", "worker"]
        subprocess.run([*worker, "start"], env=env, capture_output=True, timeout=120, check=True)
        try:
            path = handoff.socket_path(data_dir)
            deadline = time.perf_counter() + 60
            while not (path and os.path.exists(path)) and time.perf_counter() < deadline:
                time.sleep(0.1)
            for i in range(runs + 3):
                read, bash = run_measured(argv, payload(90_000 + i), env), run_measured(argv, small_bash(90_000 + i), env)
                bare = run_measured([sys.executable, "-c", "pass"], b"", env)
                measured = {"read": _checked(read), "small_bash": _checked(bash), "bare": _checked(bare),
                            "read_wall": read.wall_s * 1000, "small_bash_wall": bash.wall_s * 1000,
                            "bare_wall": bare.wall_s * 1000}
                if i >= 3:
                    for name, value in measured.items():
                        samples[name].append(value)
        finally:
            subprocess.run([*worker, "stop"], env=env, capture_output=True, timeout=120)
        with sqlite3.connect(os.path.join(data_dir, "claude-mem.db")) as conn:
            stored = conn.execute("SELECT COUNT(*) FROM pending_events WHERE kind = 'tool'").fetchone()[0]
    median = {name: statistics.median(values) for name, values in samples.items()}
    figure = {name: {"cpu_ms": round(median[name], 2), "ratio": round(median[name] / median["bare"], 3),
                     "wall_ms": round(median[f"{name}_wall"], 2),
                     "wall_ratio": round(median[f"{name}_wall"] / median["bare_wall"], 3)}
              for name in ("read", "small_bash")}
    return {**figure, "bare_cpu_ms": round(median["bare"], 2), "bare_wall_ms": round(median["bare_wall"], 2),
            "events_stored": int(stored), "events_sent": 2 * (runs + 3), "budget_ratio": BUDGET_RATIO, "runs": runs}


def phases(runs: int, src: str = os.path.join(REPO, "src")) -> dict:
    """The post-tool hook's CPU by phase (`bench/hook_phases.py` run on the checkout at `src` as
    hooks.json runs the hook), for the 100 KB Read and the small Bash; medians, interleaved with a
    bare `python -I -S -c pass` (interpreter start) and `python -c pass` (the budget's baseline)."""
    samples: dict[str, dict[str, list[float]]] = {"read": {}, "small_bash": {}}
    start, bare = [], []
    with tempfile.TemporaryDirectory(prefix="bench-hooks-phases-") as data_dir:
        env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false"}
        stdin = os.path.join(data_dir, "payload.json")
        for i in range(runs + 3):
            for name, make in (("read", payload), ("small_bash", small_bash)):
                with open(stdin, "wb") as handle:
                    handle.write(make(80_000 + i))
                result = run_measured([sys.executable, "-I", "-S", PHASE_PROBE, src, stdin], b"", env)
                total = _checked(result)
                if i >= 3:
                    found = ast.literal_eval(result.stdout.decode())
                    found["whole process"] = total
                    for phase, value in found.items():
                        samples[name].setdefault(phase, []).append(value)
            isolated = _checked(run_measured([sys.executable, "-I", "-S", "-c", "pass"], b"", env))
            plain = _checked(run_measured([sys.executable, "-c", "pass"], b"", env))
            if i >= 3:
                start.append(isolated)
                bare.append(plain)
    start_ms, bare_ms = statistics.median(start), statistics.median(bare)
    report: dict = {"src": src, "bare_cpu_ms": round(bare_ms, 2), "budget_ratio": BUDGET_RATIO, "runs": runs}
    for name, found in samples.items():
        median = {phase: statistics.median(values) for phase, values in found.items()}
        whole, inside = median.pop("whole process"), median.pop("in process")
        rows = {"interpreter start (python -I -S -c pass)": start_ms, **median,
                "interpreter exit and the rest": whole - inside - start_ms}
        report[name] = {"phases_cpu_ms": {phase: round(value, 2) for phase, value in rows.items()},
                        "total_cpu_ms": round(whole, 2), "ratio": round(whole / bare_ms, 3)}
    return report


def timed(argv: list[str], stdin: bytes, env: dict) -> float:
    started = time.perf_counter()
    result = subprocess.run(argv, input=stdin, capture_output=True, env=env, timeout=60)
    elapsed = (time.perf_counter() - started) * 1000
    if result.returncode != 0 or result.stderr:
        raise RuntimeError(f"{argv[:3]}… exited {result.returncode}: {result.stderr[-300:]!r}")
    return elapsed


def compare(hook_argv: list[str], base_argv: list[str], env: dict, runs: int, start: int) -> dict:
    """Interleaved runs; returns medians, ratio and the raw spread."""
    hook_ms, base_ms = [], []
    for i in range(runs + 3):
        h = timed(hook_argv, payload(start + i), env)
        b = timed(base_argv, b"", env)
        if i >= 3:  # warm-up: page cache, first database creation
            hook_ms.append(h)
            base_ms.append(b)
    hook_median, base_median = statistics.median(hook_ms), statistics.median(base_ms)
    return {
        "hook_ms_median": round(hook_median, 2),
        "baseline_ms_median": round(base_median, 2),
        "ratio": round(hook_median / base_median, 3),
        "hook_ms_p90": round(sorted(hook_ms)[int(len(hook_ms) * 0.9) - 1], 2),
        "runs": runs,
    }


def fingerprint_cost(python: str, env: dict, runs: int) -> dict:
    """CPU (user + system, the child's own rusage) of the post-tool hook on a Read of a 100 KB file in a
    git repository: with the file fingerprinted (stat, git blob hash, HEAD) and without (the same
    payload naming no file), against `python -c pass`, interleaved run by run."""
    from bench.plugin_hooks import run_measured

    with tempfile.TemporaryDirectory(prefix="bench-fingerprint-") as project:
        git_env = {**env, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
                   "GIT_COMMITTER_EMAIL": "b@example.com"}
        module = os.path.join(project, "module.py")
        with open(module, "w", encoding="utf-8") as handle:
            handle.write(SOURCE)
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
            subprocess.run(["git", *args], cwd=project, env=git_env, check=True, capture_output=True, timeout=60)
        argv = [python, *shlex.split(hook_command().replace("${CLAUDE_PLUGIN_ROOT}", REPO))[1:]]
        hook_env = {**env, "CLAUDE_PROJECT_DIR": project}

        def read(index: int, path: str) -> bytes:
            data = json.loads(payload(index))
            data["cwd"] = project
            data["tool_input"] = {"file_path": path}
            data["tool_response"]["file"]["filePath"] = path
            return json.dumps(data).encode()

        cpu: dict[str, list[float]] = {"with": [], "without": [], "bare": []}
        for i in range(runs + 3):
            with_files = run_measured(argv, read(50_000 + i, module), hook_env)
            without = run_measured(argv, read(60_000 + i, ""), hook_env)
            bare = run_measured([python, "-c", "pass"], b"", hook_env)
            for result in (with_files, without, bare):
                if result.returncode != 0 or result.stderr:
                    raise RuntimeError(f"exited {result.returncode}: {result.stderr[-300:]!r}")
            if i >= 3:
                cpu["with"].append(with_files.cpu_s * 1000)
                cpu["without"].append(without.cpu_s * 1000)
                cpu["bare"].append(bare.cpu_s * 1000)
    with sqlite3.connect(os.path.join(env["CLAUDE_MEM_DATA_DIR"], "claude-mem.db")) as conn:
        stored = conn.execute("SELECT COUNT(*) FROM pending_events WHERE json_extract(payload, '$.files') IS NOT NULL"
                              ).fetchone()[0]
    medians = {name: statistics.median(values) for name, values in cpu.items()}
    return {
        "file_bytes": len(SOURCE.encode()),
        "cpu_ms_median": {name: round(value, 2) for name, value in medians.items()},
        "with_vs_bare": round(medians["with"] / medians["bare"], 3),
        "without_vs_bare": round(medians["without"] / medians["bare"], 3),
        "with_vs_without": round(medians["with"] / medians["without"], 3),
        "events_with_files": int(stored),
        "runs": runs,
    }


def main(argv: list[str]) -> dict:
    runs = 10 if "--quick" in argv else 30
    if "--phases" in argv:  # only the breakdown (of another checkout's src with `--before SRC`)
        before = argv[argv.index("--before") + 1] if "--before" in argv else None
        return {"phases": phases(runs, before) if before else phases(runs)}
    if "--fingerprints" in argv:  # only the fingerprint figure
        with tempfile.TemporaryDirectory(prefix="bench-hooks-") as data_dir:
            env = {**os.environ, "CLAUDE_PLUGIN_ROOT": REPO, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false"}
            return {"fingerprints": fingerprint_cost(sys.executable, env, runs)}
    cpu = cpu_figures(runs)
    with_worker = worker_figures(runs)
    command = hook_command()
    with tempfile.TemporaryDirectory(prefix="bench-hooks-") as data_dir:
        env = {**os.environ, "CLAUDE_PLUGIN_ROOT": REPO, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false"}
        shell = ["/bin/sh", "-c"]
        python3 = shlex.split(command)[0]
        as_installed = compare(shell + [command], shell + [f"{python3} -c pass"], env, runs, 0)
        real = subprocess.run([python3, "-c", "import sys; print(sys.executable)"], capture_output=True,
                              text=True, env=env, timeout=60).stdout.strip()
        direct = [real, *shlex.split(command.replace("${CLAUDE_PLUGIN_ROOT}", REPO))[1:]]
        resolved = compare(direct, [real, "-c", "pass"], env, runs, 10_000)
        floor = compare(direct, [real, "-I", "-S", "-c", "pass"], env, runs, 20_000)
        this_python = shlex.quote(sys.executable)
        installed = compare(shell + [installed_command()], shell + [f"{this_python} -c pass"], env, runs, 30_000)
        script = os.path.join(os.path.dirname(sys.executable), "claude-mem")
        console_script = compare([script, "hook", "post-tool"], [sys.executable, "-c", "pass"], env, runs, 40_000) \
            if os.path.exists(script) else None
        fingerprints = fingerprint_cost(real, env, runs)
    return {
        "command": command,
        "interpreter": real,
        "tool_response_bytes": RESPONSE_BYTES,
        "budget_ratio": BUDGET_RATIO,
        "cpu": cpu,
        "with_worker": with_worker,
        "as_installed": as_installed,
        "resolved_interpreter": resolved,
        "vs_isolated_no_site_floor": floor,
        "installed_command": installed_command(),
        "installed": installed,
        "console_script": console_script,
        "fingerprints": fingerprints,
        "within_budget": cpu["within_budget"] and max(with_worker["read"]["ratio"],
                                                      with_worker["small_bash"]["ratio"]) <= BUDGET_RATIO,
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
