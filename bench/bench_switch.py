"""What `CLAUDE_MEM` (one switch per session, issue 30) costs each hook, at a 10k-observation store.

Every hook the plugin registers, run exactly as hooks/hooks.json runs it, under each value of the switch
(`on`: unset; `off`, `read`, `write`), interleaved run by run with a bare `python -c pass` so machine
noise hits all alike; median CPU (the child's own rusage) and wall time, and each as a ratio to bare
python (the targets read the CPU ratios, as `bench hooks` does). The user-prompt hook asks a prompt
nothing in the store is relevant to (as `bench recall` does), a new session each run. Targets: `off`
costs no more than bare python plus reading stdin (≤ 1.3×); `read` stays within the `on` hook's
budgets of DESIGN §11 (session start ≤ 2.5× at 10k, user prompt ≤ 2.5×).
`python -m bench switch [--quick]`.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

from bench.bench_recall import PROMPT, generate, interleaved
from bench.plugin_hooks import plugin_command
from claude_mem.store import db

OFF_RATIO_TARGET = 1.3
HOOK_RATIO_BUDGET = 2.5
MODES = {"on": None, "off": "off", "read": "read", "write": "write"}


def payloads(project: str, mode: str) -> dict[str, object]:
    """hook -> a function of the run number giving its stdin (a new session each run)."""
    def make(event: str, **fields: object):
        def payload(n: int) -> bytes:
            return json.dumps({"session_id": f"bench-switch-{mode}-{n}", "transcript_path": "/tmp/t.jsonl",
                               "cwd": project, "hook_event_name": event, **fields}).encode()
        return payload

    return {
        "session-start": make("SessionStart", source="startup"),
        "user-prompt": make("UserPromptSubmit", prompt=f"{PROMPT} (draft)"),
        "post-tool": make("PostToolUse", tool_name="Bash", tool_use_id=None,
                          tool_input={"command": "ls src", "description": "List"},
                          tool_response={"stdout": "a.py\nb.py\n", "stderr": "", "interrupted": False}),
    }


def measure(data_dir: str, project: str, runs: int) -> dict[str, dict[str, dict[str, float]]]:
    """{hook: {mode: figures}}: each hook under every mode, interleaved with bare python."""
    base = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_AUTOSTART": "false"}
    base.pop("CLAUDE_PROJECT_DIR", None)
    base.pop("CLAUDE_MEM", None)
    report: dict[str, dict[str, dict[str, float]]] = {}
    for hook in ("session-start", "user-prompt", "post-tool"):
        commands: dict[str, tuple[list[str], object]] = {"bare": (["env", sys.executable, "-c", "pass"], b"")}
        for mode, value in MODES.items():
            # the switch rides on the argv as `env VAR=…`: one environment for the interleaved runs
            prefix = ["env", f"CLAUDE_MEM={value}"] if value is not None else ["env"]
            commands[mode] = ([*prefix, *plugin_command(hook)], payloads(project, mode)[hook])
        got = interleaved(commands, base, runs)
        bare = got["bare"]
        report[hook] = {mode: {"cpu_ms": got[mode]["cpu_ms"], "p50_ms": got[mode]["wall_ms"],
                               "cpu_ratio_to_bare": round(got[mode]["cpu_ms"] / bare["cpu_ms"], 2),
                               "wall_ratio_to_bare": round(got[mode]["wall_ms"] / bare["wall_ms"], 2)}
                        for mode in MODES}
        report[hook]["bare"] = {"cpu_ms": bare["cpu_ms"], "p50_ms": bare["wall_ms"]}
    return report


def main(argv: list[str]) -> dict:
    quick = "--quick" in argv
    with tempfile.TemporaryDirectory(prefix="bench-switch-") as tmp:
        project = os.path.join(tmp, "proj")
        os.makedirs(os.path.join(project, ".git"))
        data_dir = os.path.join(tmp, "data")
        conn = db.connect(db.db_path(data_dir))
        generate(conn, project, 2_000 if quick else 10_000)
        conn.execute("PRAGMA optimize")
        conn.close()
        figures = measure(data_dir, project, 8 if quick else 20)
    off = max(figures[hook]["off"]["cpu_ratio_to_bare"] for hook in figures)
    return {"observations": 2_000 if quick else 10_000, "hooks": figures,
            "targets": {"off_ratio_to_bare": OFF_RATIO_TARGET, "hook_ratio_to_bare": HOOK_RATIO_BUDGET},
            "within_target": {
                "off": off <= OFF_RATIO_TARGET,
                "read_session_start": figures["session-start"]["read"]["cpu_ratio_to_bare"] <= HOOK_RATIO_BUDGET,
                "read_user_prompt": figures["user-prompt"]["read"]["cpu_ratio_to_bare"] <= HOOK_RATIO_BUDGET}}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
