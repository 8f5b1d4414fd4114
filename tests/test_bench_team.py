"""`python -m bench team` really runs on a small store: two real workers, a real PostgreSQL, every figure sane."""

import pytest
from bench.pg_cluster import bin_dir

from conftest import require


@pytest.mark.slow
def test_team_bench_reports_every_figure(monkeypatch, tmp_path):
    require(bin_dir() is not None, "PostgreSQL is not installed (apt-get install postgresql; make test does)")
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", str(tmp_path / "unused"))
    from bench.__main__ import rows
    from bench.bench_team import main

    report = main(["--quick", "--size", "500"])

    lag, initial, drain = report["lag"], report["initial"], report["drain"]
    assert lag["samples"] == 5 and 0 < lag["p50_s"] <= lag["p90_s"] <= lag["max_s"] < 30
    assert initial["rows"] == 505 and initial["pulled"] >= 505
    assert initial["push_rows_per_s"] > 0 and initial["pull_rows_per_s"] > 0 and initial["bare_copy_rows_per_s"] > 0
    assert drain["pushed"] == drain["rows"] == 101
    figures = [row[0] for row in rows({"team": report})]
    assert any(name.startswith("team lag") for name in figures) and len(figures) == 7
    join = report["join"]
    assert join["rows"] == 505 and join["pulled"] >= 505 and join["rows_per_s"] > 0
    assert join["first_search_s"] is not None and 0 < join["first_search_s"] <= join["seconds"] + 1  # a poll away
    assert join["bare_copy_rows_per_s"] > 0 and join["rows_per_cpu_s"] > 0 and join["stream_copy_rows_per_s"] > 0
