"""Past failures and their fixes, spoken up when a command fails again (issue 31).

The scenarios of `bench/failures_data.py` (recurring failures of pytest, npm/node, tsc, pip, cargo, go,
docker, git, make, psql, alembic, each with its fix) are driven through the REAL hook commands, as
hooks/hooks.json runs them (`python3 -I -S scripts/hook.py HOOK`), in one real git repository, with a
real worker and the offline observer turning the sessions into observations:

1. one session per scenario: the failure (a `PostToolUseFailure` of Bash with the tool's real output),
   the fix (Edit/Write of the files, on disk too, and the Bash commands that helped, as `PostToolUse`),
   the command that then succeeds, Stop, SessionEnd; then the worker drains the queue;
2. one later session per recurrence (`--recurrences N`, default 2): the same failure again, with other
   paths, line numbers, timings, temp names (and the command typed through `cd X &&`, `timeout`, `| tail`);
3. one session of UNRELATED failures (other errors of the same tools).

Each failure hook's stdout is read as the note contract says: `{"hookSpecificOutput": {"hookEventName":
"PostToolUseFailure", "additionalContext": NOTE}}`, printed only when earlier failures of the same
signature exist in the project; the note names the fixing observation as `#<id>`. Figures:

- `recurrences_noted`: recurrences whose hook printed a note (target ≥ 90%);
- `right_fix_named`: recurrences whose note cites an observation made from the scenario's fixing
  session (target ≥ 80%); `names_an_edited_file`: ... whose cited observation lists a file the fix edited;
- `unrelated_noted`: unrelated failures that got a note (target ≤ 5%), and `first_noted`: first
  occurrences that got one (there is nothing earlier to match: should be 0);
- `hook_cpu`: the post-tool hook's CPU (and wall time) on a failure with a match, on a failure without one
  (an error never seen), and on a small successful Bash, as ratios to a bare `python -c pass` (DESIGN §11:
  ≤ 2.0×), interleaved run by run, medians, with the history above in the database and no worker (the hook's
  own path); `hook_cpu_with_worker`: the same with a worker running (the hook hands the payload to its
  capture socket, which answers with the note).

With `--before ROOT` (another checkout, e.g. `main` before issue 31), the post-tool hook of this checkout
against that one's `scripts/hook.py`, each on a fresh data dir: on a small successful Bash and on a failure
never seen (`before`).

`python -m bench failures [--quick] [--recurrences N] [--runs N] [--keep DIR] [--before ROOT]` (`--keep`: leave
the repository and data dir in DIR to look at). Until the hooks print notes (the other half of issue 31) every note figure
is 0 and the report says `notes_seen: 0`.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

from bench.failures_data import SCENARIOS, UNRELATED, occurrence, unrelated
from bench.plugin_hooks import plugin_command, run_hook, run_measured

TARGETS = {"recurrences_noted": 0.90, "right_fix_named": 0.80, "unrelated_noted": 0.05}
BUDGET_RATIO = 2.0  # DESIGN §11: the post-tool hook's CPU ≤ 2.0 × bare `python -c pass`
NOTE_ID = re.compile(r"#(\d+)\b")


def option(options: list[str], name: str, default: str | None = None) -> str | None:
    return options[options.index(name) + 1] if name in options and options.index(name) + 1 < len(options) else default


class Project:
    """A real git repository and a data dir, and the hook payloads of sessions in it."""

    def __init__(self, root: str) -> None:
        self.repo = os.path.join(root, "proj")
        self.data_dir = os.path.join(root, "data")
        os.makedirs(self.repo)
        os.makedirs(self.data_dir, mode=0o700)
        self.env = {"CLAUDE_MEM_DATA_DIR": self.data_dir, "CLAUDE_MEM_AUTOSTART": "false",
                    "CLAUDE_MEM_PROVIDER": "offline", "CLAUDE_MEM_WORKER_PORT": "0",
                    "CLAUDE_MEM_BACKUP_INTERVAL_HOURS": "0", "CLAUDE_PROJECT_DIR": self.repo}
        self.counter = 0
        self.seed_files()

    def seed_files(self) -> None:
        """The files the fixes edit, as they were before (one file can hold several scenarios' lines)."""
        contents: dict[str, str] = {}
        for scenario in SCENARIOS:
            for path, _description, before, _after in scenario["fix"]["edits"]:
                contents[path] = contents.get(path, "") + before
        for path, text in contents.items():
            full = os.path.join(self.repo, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as handle:
                handle.write(text)
        git = ["git", "-C", self.repo, "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
        subprocess.run([*git, "init", "-q", "-b", "main"], check=True, capture_output=True)
        subprocess.run([*git, "add", "-A"], check=True, capture_output=True)
        subprocess.run([*git, "commit", "-q", "-m", "seed"], check=True, capture_output=True)

    def next_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter:06d}"

    def base(self, session: str, event: str, turn: str | None = None) -> dict:
        payload = {"session_id": session, "cwd": self.repo, "hook_event_name": event,
                   "transcript_path": os.path.join(self.data_dir, "transcripts", f"{session}.jsonl"),
                   "permission_mode": "default"}
        if turn:
            payload["prompt_id"] = turn
        return payload

    def hook(self, hook: str, payload: dict) -> subprocess.CompletedProcess:
        result = run_hook(hook, payload, self.env)
        if result.returncode != 0:
            raise RuntimeError(f"hook {hook} exited {result.returncode}: {result.stderr[-300:]!r}")
        return result

    def failure(self, session: str, turn: str, command: str, error: str) -> dict:
        payload = {**self.base(session, "PostToolUseFailure", turn), "tool_name": "Bash",
                   "tool_input": {"command": command, "description": "Run it"},
                   "tool_use_id": self.next_id("toolu_fail_"), "error": error, "is_interrupt": False,
                   "duration_ms": 900}
        return payload

    def success(self, session: str, turn: str, command: str, stdout: str = "") -> dict:
        return {**self.base(session, "PostToolUse", turn), "tool_name": "Bash",
                "tool_input": {"command": command, "description": "Run it"},
                "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False,
                                  "noOutputExpected": False},
                "tool_use_id": self.next_id("toolu_ok_"), "duration_ms": 700}

    def edit(self, session: str, turn: str, path: str, before: str, after: str) -> dict:
        """Apply one fix edit on disk and return its PostToolUse (an Edit, or a Write for a new file)."""
        full = os.path.join(self.repo, path)
        with open(full, encoding="utf-8") as handle:
            original = handle.read()
        updated = original.replace(before, after, 1) if before else original + after
        with open(full, "w", encoding="utf-8") as handle:
            handle.write(updated)
        base = self.base(session, "PostToolUse", turn)
        if not before:
            return {**base, "tool_name": "Write", "tool_input": {"file_path": full, "content": updated},
                    "tool_response": {"type": "update" if original else "create", "filePath": full,
                                      "content": updated, "structuredPatch": []},
                    "tool_use_id": self.next_id("toolu_edit_"), "duration_ms": 15}
        patch = [{"oldStart": 1, "oldLines": before.count("\n") + 1, "newStart": 1, "newLines": after.count("\n") + 1,
                  "lines": [f"-{line}" for line in before.splitlines()] + [f"+{line}" for line in after.splitlines()]}]
        return {**base, "tool_name": "Edit",
                "tool_input": {"file_path": full, "old_string": before, "new_string": after, "replace_all": False},
                "tool_response": {"filePath": full, "oldString": before, "newString": after, "originalFile": original,
                                  "structuredPatch": patch, "userModified": False, "replaceAll": False},
                "tool_use_id": self.next_id("toolu_edit_"), "duration_ms": 15}

    def open_session(self, session: str, prompt: str) -> str:
        self.hook("session-start", {**self.base(session, "SessionStart"), "source": "startup"})
        turn = self.next_id("prompt_")
        self.hook("user-prompt", {**self.base(session, "UserPromptSubmit", turn), "prompt": prompt})
        return turn

    def close_session(self, session: str, turn: str, message: str) -> None:
        self.hook("stop", {**self.base(session, "Stop", turn), "stop_hook_active": False,
                           "last_assistant_message": message})
        self.hook("session-end", {**self.base(session, "SessionEnd", turn), "reason": "other"})


def note_of(result: subprocess.CompletedProcess) -> str:
    """The note a failure hook printed under the contract, or "" (nothing, or another output)."""
    text = result.stdout.decode("utf-8", "replace").strip()
    if not text:
        return ""
    try:
        output = json.loads(text)
    except ValueError:
        return ""
    specific = output.get("hookSpecificOutput") if isinstance(output, dict) else None
    if not isinstance(specific, dict) or specific.get("hookEventName") != "PostToolUseFailure":
        return ""
    context = specific.get("additionalContext")
    return context if isinstance(context, str) else ""


def fix_session(project: Project, scenario: dict, session: str) -> dict:
    """Session 1 of a scenario: it fails, is fixed, then succeeds. Returns what the first failure printed."""
    command, error = occurrence(scenario, 0)
    turn = project.open_session(session, f"Run `{command.split('&&')[-1].strip()}` and fix what fails")
    first = note_of(project.hook("post-tool", project.failure(session, turn, command, error)))
    for path, _description, before, after in scenario["fix"]["edits"]:
        project.hook("post-tool", project.edit(session, turn, path, before, after))
    for helper in scenario["fix"]["commands"]:
        project.hook("post-tool", project.success(session, turn, helper))
    project.hook("post-tool", project.success(session, turn, scenario["fix"]["success"], "ok"))
    fixes = "; ".join(description for _path, description, _before, _after in scenario["fix"]["edits"])
    project.close_session(session, turn, f"Fixed: {fixes or ', '.join(scenario['fix']['commands'])}")
    return {"first_note": first}


def wait_for_queue(data_dir: str, timeout: float) -> int:
    """Wait until the worker has processed every captured event; the number still waiting."""
    path = os.path.join(data_dir, "claude-mem.db")
    deadline = time.monotonic() + timeout
    waiting = -1
    while time.monotonic() < deadline:
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as conn:
                waiting = conn.execute("SELECT COUNT(*) FROM pending_events WHERE status IN ('pending', 'claimed')"
                                       ).fetchone()[0]
        except sqlite3.Error:
            waiting = -1
        if waiting == 0:
            return 0
        time.sleep(0.25)
    return waiting


def cited(data_dir: str, note: str) -> list[dict]:
    """The observations a note cites (`#<id>`): their session's content id and files modified."""
    ids = [int(found) for found in NOTE_ID.findall(note)][:10]
    if not ids:
        return []
    with sqlite3.connect(f"file:{os.path.join(data_dir, 'claude-mem.db')}?mode=ro", uri=True, timeout=5) as conn:
        rows = conn.execute(
            "SELECT o.id, s.content_session_id, o.files_modified, o.title FROM observations o"
            " LEFT JOIN sessions s ON s.id = o.session_id"
            f" WHERE o.id IN ({','.join('?' * len(ids))})", ids).fetchall()
    return [{"id": row[0], "session": row[1], "files": json.loads(row[2] or "[]"), "title": row[3]} for row in rows]


def quality(project: Project, recurrences: int) -> dict:
    """Run every scenario's fixing session, then its recurrences, then the unrelated failures."""
    worker = [sys.executable, "-m", "claude_mem", "worker"]
    env = {**os.environ, **project.env}
    started = subprocess.run([*worker, "start"], env=env, capture_output=True, text=True, timeout=120)
    if started.returncode != 0:
        raise RuntimeError(f"worker start failed: {started.stderr[-300:]}")
    per_scenario: dict[str, dict] = {}
    unrelated_notes: list[dict] = []
    try:
        for index, scenario in enumerate(SCENARIOS):
            per_scenario[scenario["name"]] = {"fix_session": f"fix-{index:02d}", **fix_session(
                project, scenario, f"fix-{index:02d}"), "recurrences": []}
        left = wait_for_queue(project.data_dir, 300)
        for k in range(1, recurrences + 1):
            for index, scenario in enumerate(SCENARIOS):
                session = f"again-{k}-{index:02d}"
                command, error = occurrence(scenario, k)
                turn = project.open_session(session, "Run the checks again")
                note = note_of(project.hook("post-tool", project.failure(session, turn, command, error)))
                per_scenario[scenario["name"]]["recurrences"].append(note)
                project.close_session(session, turn, "Stopped at the failure")
        session = "unrelated"
        turn = project.open_session(session, "Try a few other things")
        for item in UNRELATED:
            command, error = unrelated(item)
            note = note_of(project.hook("post-tool", project.failure(session, turn, command, error)))
            unrelated_notes.append({"name": item["name"], "note": note})
        project.close_session(session, turn, "Done")
        left = max(left, wait_for_queue(project.data_dir, 120))
    finally:
        subprocess.run([*worker, "stop"], env=env, capture_output=True, timeout=120)

    recurred = noted = right = edited_file = 0
    misses, wrong = [], []
    for scenario in SCENARIOS:
        found = per_scenario[scenario["name"]]
        edited = {path for path, *_rest in scenario["fix"]["edits"]}
        for note in found["recurrences"]:
            recurred += 1
            if not note:
                misses.append(scenario["name"])
                continue
            noted += 1
            observations = cited(project.data_dir, note)
            own = [obs for obs in observations if obs["session"] == found["fix_session"]]
            if own:
                right += 1
            else:
                wrong.append({"scenario": scenario["name"], "note": note[:300]})
            if any(any(file.endswith(path) for file in obs["files"] for path in edited) for obs in own):
                edited_file += 1
    with_edits = sum(len(per_scenario[s["name"]]["recurrences"]) for s in SCENARIOS if s["fix"]["edits"])
    unrelated_noted = [item for item in unrelated_notes if item["note"]]
    first_noted = [name for name, found in per_scenario.items() if found["first_note"]]
    notes_seen = noted + len(unrelated_noted) + len(first_noted)
    example = next((note for found in per_scenario.values() for note in found["recurrences"] if note), "")
    return {
        "scenarios": len(SCENARIOS), "recurrences": recurred, "unrelated": len(UNRELATED),
        "recurrences_noted": round(noted / recurred, 3) if recurred else 0.0,
        "right_fix_named": round(right / recurred, 3) if recurred else 0.0,
        "names_an_edited_file": round(edited_file / with_edits, 3) if with_edits else 0.0,
        "unrelated_noted": round(len(unrelated_noted) / len(UNRELATED), 3),
        "first_noted": len(first_noted), "notes_seen": notes_seen, "events_left_in_queue": left,
        "targets": TARGETS,
        "within_targets": bool(recurred) and noted / recurred >= TARGETS["recurrences_noted"]
        and right / recurred >= TARGETS["right_fix_named"]
        and len(unrelated_noted) / len(UNRELATED) <= TARGETS["unrelated_noted"],
        "missed": sorted(set(misses)), "wrong_fix": wrong[:5],
        "false_notes": [{"name": item["name"], "note": item["note"][:300]} for item in unrelated_noted][:5],
        "first_noted_names": first_noted, "example_note": example[:600],
    }


def hook_cpu(project: Project, runs: int, worker: bool = False) -> dict:
    """The post-tool hook's CPU on a failure that matches earlier ones, on one never seen, and on a
    small successful Bash, against bare `python -c pass`; interleaved, medians. Without a worker (the
    hook's own path) or, `worker`, with one running: the hook hands its payload to the worker's capture
    socket, which stores it and answers with the note; then the wall time (the user's wait) counts too."""
    from bench.bench_hooks import small_bash
    from claude_mem.capture import handoff

    argv = plugin_command("post-tool")
    env = {**os.environ, **project.env}
    command_worker = [sys.executable, "-m", "claude_mem", "worker"]
    if worker:
        subprocess.run([*command_worker, "start"], env=env, capture_output=True, timeout=120, check=True)
        path = handoff.socket_path(project.data_dir)
        deadline = time.monotonic() + 60
        while not (path and os.path.exists(path)) and time.monotonic() < deadline:
            time.sleep(0.1)
    scenario = SCENARIOS[0]
    samples: dict[str, list[float]] = {}
    noted = {"match": 0, "no_match": 0}
    session = "timing-worker" if worker else "timing"
    try:
        for i in range(runs + 3):
            command, error = occurrence(scenario, (200 if worker else 100) + i)
            matched = project.failure(session, "prompt_timing", command, error)
            fresh_command, fresh_error = unrelated(UNRELATED[0], (200 if worker else 0) + i)
            fresh = project.failure(session, "prompt_timing", fresh_command,
                                    fresh_error.replace("'yaml'", f"'never_seen_{i}_{session}'"))
            measured = {}
            for name, argv_, stdin in (("match", argv, json.dumps(matched).encode()),
                                       ("no_match", argv, json.dumps(fresh).encode()),
                                       ("success", argv, small_bash((70_000 if worker else 60_000) + i)),
                                       ("bare", [sys.executable, "-c", "pass"], b"")):
                result = run_measured(argv_, stdin, env)
                if result.returncode != 0 or result.stderr:
                    raise RuntimeError(f"{name}: exited {result.returncode}: {result.stderr[-300:]!r}")
                if name in noted and note_of(subprocess.CompletedProcess([], 0, result.stdout, b"")):
                    noted[name] += 1
                measured[name] = result.cpu_s * 1000
                measured[f"{name}_wall"] = result.wall_s * 1000
            if i >= 3:  # warm-up: page cache, the compiled-pattern cache
                for name, value in measured.items():
                    samples.setdefault(name, []).append(value)
    finally:
        if worker:
            subprocess.run([*command_worker, "stop"], env=env, capture_output=True, timeout=120)
    median = {name: statistics.median(values) for name, values in samples.items()}
    figures = {name: {"cpu_ms": round(median[name], 2), "ratio": round(median[name] / median["bare"], 3),
                      "wall_ms": round(median[f"{name}_wall"], 2),
                      "wall_ratio": round(median[f"{name}_wall"] / median["bare_wall"], 3)}
               for name in ("match", "no_match", "success")}
    return {**figures, "bare_cpu_ms": round(median["bare"], 2), "bare_wall_ms": round(median["bare_wall"], 2),
            "budget_ratio": BUDGET_RATIO, "runs": runs, "worker": worker, "printed_a_note": noted,
            "within_budget": max(figure["ratio"] for figure in figures.values()) <= BUDGET_RATIO}


def against_before(before: str, runs: int) -> dict:
    """The post-tool hook of this checkout against the one of another checkout (`--before ROOT`, e.g. the
    main branch before issue 31), each on a fresh data dir of its own: a small successful Bash (what every
    command pays; target: no measurable change) and a failure never seen (the signature, its row and the
    lookup); interleaved with bare `python -c pass`, medians."""
    from bench.bench_hooks import small_bash

    samples: dict[str, list[float]] = {"success": [], "success_before": [], "failure": [], "failure_before": [],
                                       "bare": []}
    with tempfile.TemporaryDirectory(prefix="bench-failures-before-") as root:
        dirs = {"now": os.path.join(root, "now"), "before": os.path.join(root, "before")}
        argv = {"now": plugin_command("post-tool"),
                "before": [sys.executable, "-I", "-S", os.path.join(before, "scripts", "hook.py"), "post-tool"]}
        for i in range(runs + 3):
            failure = {"session_id": "before-bench", "cwd": root, "hook_event_name": "PostToolUseFailure",
                       "tool_name": "Bash", "tool_input": {"command": f"pytest tests/test_{i}.py -x"},
                       "tool_use_id": f"toolu_before_{i:06d}", "is_interrupt": False, "duration_ms": 900,
                       "error": occurrence(SCENARIOS[0], 200 + i)[1].replace("'requests'", f"'never_seen_{i}'")}
            measured = {}
            for name, which, stdin in (("success", "now", small_bash(50_000 + i)),
                                       ("success_before", "before", small_bash(50_000 + i)),
                                       ("failure", "now", json.dumps(failure).encode()),
                                       ("failure_before", "before", json.dumps(failure).encode()),
                                       ("bare", "", b"")):
                env = {**os.environ, "CLAUDE_MEM_AUTOSTART": "false"}
                if which:
                    env["CLAUDE_MEM_DATA_DIR"] = dirs[which]
                result = run_measured(argv[which] if which else [sys.executable, "-c", "pass"], stdin, env)
                if result.returncode != 0 or result.stderr:
                    raise RuntimeError(f"{name}: exited {result.returncode}: {result.stderr[-300:]!r}")
                measured[name] = result.cpu_s * 1000
            if i >= 3:
                for name, value in measured.items():
                    samples[name].append(value)
    median = {name: statistics.median(values) for name, values in samples.items()}
    return {"before": before, "runs": runs, "bare_cpu_ms": round(median["bare"], 2),
            **{name: {"cpu_ms": round(median[name], 2), "ratio": round(median[name] / median["bare"], 3)}
               for name in ("success", "success_before", "failure", "failure_before")},
            "success_now_vs_before": round(median["success"] / median["success_before"], 3),
            "failure_now_vs_before": round(median["failure"] / median["failure_before"], 3)}


def signature_cost() -> dict:
    """`failure_signature.signature` in process on the scenarios' errors and on hostile inputs (10 MB error,
    100,000 lines, binary, a 1 MB command): milliseconds, best of 3 — bounded whatever the input."""
    from claude_mem.capture.failure_signature import signature

    inputs = {
        "scenario errors (each)": [(occurrence(s, 0)[0], occurrence(s, 0)[1]) for s in SCENARIOS],
        "10 MB error": [("pytest", "Exit code 1\n" + ("x" * 999 + "\n") * 10_000)],
        "100,000 lines": [("make", "Exit code 2\n" + "\n".join(f"src/f{i}.c:{i}:1: error: thing {i}"
                                                                 for i in range(100_000)))],
        "binary 1 MB": [("cat data.bin", bytes(range(256)).decode("latin-1") * 4096)],
        "1 MB command": [("echo " + "'a b' " * 170_000 + "&& pytest", "Exit code 1\nE   boom")],
        "lines of one long token": [("ls", ("error: " + "." * 400 + "\n") * 100_000)],
    }
    signature("Bash", {"command": "pytest"}, "E   warm")  # the patterns compiled once
    report = {}
    for name, cases in inputs.items():
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            for command, error in cases:
                signature("Bash", {"command": command}, error)
            best = min(best, (time.perf_counter() - started) / len(cases))
        report[name] = round(best * 1000, 3)
    return {"ms": report}


def rows(report: dict | None) -> list[tuple[str, str, str, bool | None]]:
    """The table lines of `python -m bench` for this benchmark: every figure beside its target."""
    if not report:
        return []
    found = report["quality"]
    targets = found["targets"]
    lines: list[tuple[str, str, str, bool | None]] = [
        (f"failures: recurrences that got a note ({found['recurrences']} of {found['scenarios']} scenarios)",
         f"{found['recurrences_noted']:.0%}", f"≥ {targets['recurrences_noted']:.0%}",
         found["recurrences_noted"] >= targets["recurrences_noted"]),
        ("failures: notes naming the fix (an observation of the fixing session)", f"{found['right_fix_named']:.0%}"
         f" (names an edited file {found['names_an_edited_file']:.0%})", f"≥ {targets['right_fix_named']:.0%}",
         found["right_fix_named"] >= targets["right_fix_named"]),
        (f"failures: unrelated failures that got a note ({found['unrelated']})", f"{found['unrelated_noted']:.0%}"
         f" (first occurrences noted: {found['first_noted']})", f"≤ {targets['unrelated_noted']:.0%}",
         found["unrelated_noted"] <= targets["unrelated_noted"] and found["first_noted"] == 0),
    ]
    for key, where in (("hook_cpu", "no worker"), ("hook_cpu_with_worker", "worker running")):
        cpu = report.get(key)
        if not cpu:
            continue
        for name, label in (("match", "a failure seen before"), ("no_match", "a failure never seen"),
                            ("success", "a small successful Bash")):
            lines.append((f"failures: post-tool hook CPU on {label}, {where}",
                          f"{cpu[name]['cpu_ms']} ms = {cpu[name]['ratio']}× bare python CPU ({cpu['bare_cpu_ms']} ms);"
                          f" wall {cpu[name]['wall_ms']} ms = {cpu[name]['wall_ratio']}×", f"≤ {cpu['budget_ratio']}×",
                          cpu[name]["ratio"] <= cpu["budget_ratio"]))
    versus = report.get("before")
    if versus:
        for name, label in (("success", "a small successful Bash"), ("failure", "a failure never seen")):
            lines.append((f"failures: post-tool hook CPU on {label}, this checkout vs {versus['before']}",
                          f"{versus[name]['cpu_ms']} vs {versus[name + '_before']['cpu_ms']} ms = "
                          f"{versus[name + '_now_vs_before']}×", "no measurable change" if name == "success" else "",
                          None))
    worst = max(report["signature"]["ms"].values())
    lines.append(("failures: signing one failure in process, worst of the hostile inputs", f"{worst} ms", "bounded",
                  None))
    return lines


def main(options: list[str]) -> dict:
    quick = "--quick" in options
    recurrences = int(option(options, "--recurrences", "1" if quick else "2") or 2)
    runs = int(option(options, "--runs", "7" if quick else "21") or 21)
    keep = option(options, "--keep")
    before = option(options, "--before")
    root = keep or tempfile.mkdtemp(prefix="bench-failures-")
    os.makedirs(root, exist_ok=True)
    try:
        project = Project(root)
        report = {"quality": quality(project, recurrences), "hook_cpu": hook_cpu(project, runs),
                  "hook_cpu_with_worker": hook_cpu(project, runs, worker=True), "signature": signature_cost()}
        if before:
            report["before"] = against_before(os.path.abspath(before), runs)
    finally:
        if not keep:
            import shutil

            shutil.rmtree(root, ignore_errors=True)
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
