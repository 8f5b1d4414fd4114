"""`python -m bench failures` drives its scenarios through the real hooks and a real worker with the offline
observer, reads the notes under the hooks' contract and reports every figure beside its target (targets are
read from the report; timings are never asserted here)."""

import json
import os
import sqlite3
import subprocess

import pytest
from bench import bench_failures
from bench.failures_data import SCENARIOS, UNRELATED


def completed(stdout: str) -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess([], 0, stdout.encode(), b"")


def test_a_note_is_read_only_under_the_contract():
    note = {"hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "Seen twice: #12"}}
    assert bench_failures.note_of(completed(json.dumps(note))) == "Seen twice: #12"
    assert bench_failures.note_of(completed("")) == ""
    assert bench_failures.note_of(completed("not json")) == ""
    other = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "x"}}
    assert bench_failures.note_of(completed(json.dumps(other))) == ""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    keep = str(tmp_path_factory.mktemp("bench-failures"))
    report = bench_failures.main(["--quick", "--recurrences", "1", "--runs", "1", "--keep", keep])
    return report, keep


def test_the_bench_drives_every_scenario_through_the_hooks_and_the_observer(run):
    report, keep = run
    quality = report["quality"]
    assert quality["scenarios"] == len(SCENARIOS) >= 20 and quality["unrelated"] == len(UNRELATED) >= 20
    assert quality["recurrences"] == len(SCENARIOS)
    assert quality["events_left_in_queue"] == 0  # the worker observed every session before the recurrences
    with sqlite3.connect(os.path.join(keep, "data", "claude-mem.db")) as conn:
        failures = conn.execute("SELECT COUNT(*) FROM pending_events WHERE kind = 'tool_failure'").fetchone()[0]
        fixed = conn.execute(
            "SELECT COUNT(DISTINCT s.content_session_id) FROM observations o JOIN sessions s ON s.id = o.session_id"
            " WHERE s.content_session_id LIKE 'fix-%' AND o.files_modified != '[]'").fetchone()[0]
    assert failures >= 2 * len(SCENARIOS) + len(UNRELATED)  # every failure hook stored its event
    with_edits = sum(1 for scenario in SCENARIOS if scenario["fix"]["edits"])
    assert fixed == with_edits  # each fix is in memory, with the files it edited
    # the fixed files really changed on disk in a real git repository
    status = subprocess.run(["git", "-C", os.path.join(keep, "proj"), "status", "--porcelain"], capture_output=True,
                            text=True, check=True)
    assert len(status.stdout.splitlines()) >= 10


def test_recurrences_get_a_note_naming_their_fix(run):
    """Issue 31's targets, on the offline observer's observations (deterministic: fixed seeds, no LLM)."""
    quality = run[0]["quality"]
    targets = quality["targets"]
    assert quality["recurrences_noted"] >= targets["recurrences_noted"], quality["missed"]
    assert quality["right_fix_named"] >= targets["right_fix_named"], quality["wrong_fix"]
    assert "#" in quality["example_note"] and len(quality["example_note"]) <= 600
    assert quality["within_targets"]


def test_nothing_is_noted_that_was_never_seen(run):
    quality = run[0]["quality"]
    assert quality["first_noted"] == 0, quality["first_noted_names"]
    assert quality["unrelated_noted"] <= quality["targets"]["unrelated_noted"], quality["false_notes"]


def test_the_report_gives_every_figure_beside_its_target(run):
    report = run[0]
    for key in ("hook_cpu", "hook_cpu_with_worker"):
        cpu = report[key]
        assert {"match", "no_match", "success"} <= set(cpu) and cpu["budget_ratio"] == 2.0
        assert all(cpu[name]["cpu_ms"] > 0 and cpu[name]["wall_ms"] > 0 for name in ("match", "no_match", "success"))
        assert cpu["printed_a_note"]["match"] > 0 and cpu["printed_a_note"]["no_match"] == 0  # it timed what it says
    assert set(report["signature"]["ms"]) >= {"10 MB error", "100,000 lines", "binary 1 MB", "1 MB command"}
    lines = bench_failures.rows(report)
    assert len(lines) == 10 and all(target for _name, _value, target, _within in lines)
    assert any("recurrences that got a note" in name for name, *_rest in lines)
