"""`python -m bench write`: the observer's write path (`store_batch`) timed into a store at schema 16 (before
issue 29) and one at the current schema, on the same generated observations."""

import json
import os
import subprocess
import sys

import pytest
from bench import bench_write

from claude_mem.store import db, migrations

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_write_bench_reports_both_rates_on_a_tiny_size():
    result = subprocess.run([sys.executable, "-m", "bench", "write", "--size", "40", "--quick", "--json"], cwd=REPO,
                            capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "400"})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)["write"]
    assert report["observations"] == 40 and report["sessions"] == 2  # every generated observation stored, in both
    assert report["schemas"] == {"before": 16, "after": migrations.SCHEMA_VERSION}
    assert report["before_rows_per_s"] > 0 and report["after_rows_per_s"] > 0
    assert report["slowdown"] == pytest.approx(report["before_rows_per_s"] / report["after_rows_per_s"], rel=0.01)
    assert report["target_slowdown"] == 1.3
    assert "write path, observations/s" in result.stderr  # the table row


def test_the_generated_turns_are_stored_as_the_observer_stores_them(tmp_path):
    turns = bench_write.generate(20)
    assert len(turns) == 4 and all(len(turn.observations) == bench_write.PER_TURN for turn in turns)
    conn = bench_write.open_before(str(tmp_path / "before.db"))
    try:
        for turn in turns:
            assert bench_write.store_turn(conn, "before", turn)[2] == bench_write.PER_TURN
        assert db.schema_version(conn) == 16
        sessions, observations, summaries, files, done = conn.execute(
            "SELECT (SELECT COUNT(*) FROM sessions), (SELECT COUNT(*) FROM observations WHERE session_id IS NOT NULL),"
            " (SELECT COUNT(*) FROM summaries), (SELECT COUNT(*) FROM observation_files),"
            " (SELECT COUNT(*) FROM pending_events WHERE status = 'done')").fetchone()
    finally:
        conn.close()
    assert (sessions, observations, summaries, done) == (1, 20, 4, 20)  # 4 turns of prompt, 3 tools, stop
    assert files > 0  # the tools' file fingerprints reached the observations


def test_schema_16_that_cannot_be_reached_fails_loudly(tmp_path, monkeypatch):
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:15])
    with pytest.raises(SystemExit, match="fewer than 16"):
        bench_write.open_before(str(tmp_path / "before.db"))
