"""Redaction measured as an attacker would (DESIGN §9), and what it costs (§11).

Two corpora of fake credentials go through the real hooks in every placement, the worker's observer
pipeline (the `openai` provider against a loopback fake that records every request), a backup and
the next session's context (`bench/privacy/harness.py`): the held-out one (`bench/privacy/secrets.py`,
formats the tests never saw) and the tests' own (`tests/secret_corpus.py`). Then:

- formats found stored (any byte of any file in the data dir), sent (a request to the LLM) or shown
  (the next session's context) — target 0 each; the same check in process (`build_record` in every
  placement), and records a second redaction pass still changes (the worker counts those as caught
  late, so they should be 0 too);
- look-alikes (`bench/privacy/lookalikes.py`, and the tests' own) kept verbatim — target ≥ 99 %,
  every masked one printed; and real files nobody wrote for this (the installed packages' code, docs
  and data): spans found per MB, each a false alarm, with examples;
- CPU of redacting a 100 KB Read in process beside the whole post-tool hook and bare `python -c
  pass` — the hook's budget is ≤ 2.0 × bare;
- pathological inputs (1 MB without spaces, 100k `password=`, nesting, invalid UTF-8 …) timed in
  process (in a child killed after a limit) and through the real hook (exit 0, bounded time, the
  input stored or quarantined — never lost).

`--quick`: fewer placements, more secrets per payload, fewer runs, a shorter limit. `--json`: no
lines on stderr.
"""

from __future__ import annotations

import importlib
import json
import sys
import tempfile
import time
from typing import Any

from bench.privacy import harness, pathological

QUICK_PLACEMENTS = ("read", "edit-structured-patch", "bash-command", "prompt")
TARGETS = {"stored": 0, "sent": 0, "shown": 0, "capture_leaks": 0, "second_pass_changes": 0, "lookalikes_kept": 0.99,
           "hook_ratio": harness.BUDGET_RATIO, "pathological_in_process_cpu_s": 5.0, "pathological_hook_wall_s": 10.0}


def corpus(module: str, name: str) -> list | None:
    """`module.name`, or None while that corpus does not exist yet (a broken one raises)."""
    try:
        return getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        return None


def measure_corpus(secrets: list, placements: tuple[str, ...] | None, chunk: int) -> dict[str, Any]:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-privacy-") as data_dir:
        found = harness.through_hooks(data_dir, secrets, placements, chunk)
    end_to_end = time.perf_counter() - started
    second = harness.second_pass(secrets, placements)
    return {
        **found["counts"],
        "placements": len(found["placements"]),
        "hook_calls": found["hook_calls"],
        "hook_failures": found["hook_failures"],
        "events_done": found["events_done"],
        "observations": found["observations"],
        "requests": found["requests"],
        "caught_late": found["caught_late"],
        "leaked": found["leaked"],
        "capture_leaks": [f"{name} in {placement}" for name, placement in harness.capture_leaks(secrets, placements)],
        "second_pass_changes": len(second),
        "second_pass_examples": second[:5],
        "end_to_end_seconds": round(end_to_end, 1),
    }


def pathological_summary(cases: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The slowest input in process and through the hook, and every input over its target."""
    def cpu(name: str) -> float:
        value = cases[name]["in_process"]["cpu_s"]
        return float("inf") if value is None else value

    slowest, slowest_hook = max(cases, key=cpu), max(cases, key=lambda name: cases[name]["hook"]["wall_s"])
    return {
        "slowest_in_process": {"name": slowest, "cpu_s": cases[slowest]["in_process"]["cpu_s"]},
        "over_target_in_process": [name for name in cases if cpu(name) > TARGETS["pathological_in_process_cpu_s"]],
        "slowest_hook": {"name": slowest_hook, "wall_s": cases[slowest_hook]["hook"]["wall_s"]},
        "hook_failed": [name for name, case in cases.items() if case["hook"]["exit"] != 0 or case["hook"]["outcome"] == "lost"],
        "over_target_hook": [name for name, case in cases.items()
                             if case["hook"]["wall_s"] > TARGETS["pathological_hook_wall_s"]],
    }


def within(report: dict[str, Any]) -> bool:
    corpora = [figures for figures in report["corpora"].values() if figures]
    lookalikes = [figures for figures in report["lookalikes"].values() if figures]
    patho = report["pathological_summary"]
    return (all(c["stored"] == c["sent"] == c["shown"] == 0 and not c["capture_leaks"] and not c["second_pass_changes"]
                for c in corpora)
            and all(figures["ratio"] >= TARGETS["lookalikes_kept"] for figures in lookalikes)
            and max(report["cost"]["ratio"], report["cost"]["small_bash_ratio"]) <= TARGETS["hook_ratio"]
            and not (patho["over_target_in_process"] or patho["hook_failed"] or patho["over_target_hook"]))


def main(argv: list[str]) -> dict[str, Any]:
    quick = "--quick" in argv
    say = (lambda line: None) if "--json" in argv else (lambda line: print(line, file=sys.stderr, flush=True))
    placements = QUICK_PLACEMENTS if quick else None
    chunk = 40 if quick else harness.CHUNK
    corpora = {"held_out": corpus("bench.privacy.secrets", "SECRETS"), "tests": corpus("tests.secret_corpus", "SECRETS")}
    lookalike_sets = {"held_out": corpus("bench.privacy.lookalikes", "LOOKALIKES"),
                      "tests": corpus("tests.secret_corpus", "LOOKALIKES")}
    report: dict[str, Any] = {"targets": TARGETS, "corpora": {}, "lookalikes": {}, "seconds": {}}
    for name, secrets in corpora.items():
        say(f"privacy: {name} corpus through the hooks, the observer and the next session …")
        started = time.perf_counter()
        report["corpora"][name] = measure_corpus(secrets, placements, chunk) if secrets else None
        report["seconds"][f"corpus_{name}"] = round(time.perf_counter() - started, 1)
        for format_name, where in (report["corpora"][name] or {}).get("leaked", {}).items():
            say(f"  leaked {format_name}: stored in {where['stored_in'] or 'nothing'}, sent {where['sent']}, "
                f"shown {where['shown']}")
    for name, lookalikes in lookalike_sets.items():
        report["lookalikes"][name] = harness.lookalikes_kept(lookalikes) if lookalikes else None
        for masked in (report["lookalikes"][name] or {}).get("masked", []):
            say(f"  look-alike masked ({name}, {masked['kind'] or 'plain'}, by {masked['where']}): "
                f"{masked['before']!r} → {masked['after']!r}")
    say("privacy: real files of the installed packages (every span there is a false alarm) …")
    report["real_files"] = harness.real_files(limit=300 if quick else 1500)
    for example in report["real_files"]["examples"]:
        say(f"  masked in {example['file']} ({example['marker']}): {example['text']!r}")
    say("privacy: cost of redaction in the post-tool hook …")
    started = time.perf_counter()
    report["cost"] = harness.cost(runs=10 if quick else 30)
    report["seconds"]["cost"] = round(time.perf_counter() - started, 1)
    say("privacy: pathological inputs …")
    started = time.perf_counter()
    report["pathological"] = pathological.measure(limit=5 if quick else 60, hook_limit=5 if quick else 60)
    report["seconds"]["pathological"] = round(time.perf_counter() - started, 1)
    report["pathological_summary"] = pathological_summary(report["pathological"])
    report["within_targets"] = within(report)
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
