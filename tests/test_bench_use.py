"""`python -m bench use --quick` runs and reports its figures (the budget is read from the report, never
asserted on timings here: machines are shared and noisy)."""

from bench import bench_use


def test_bench_use_reports_status_and_derivation_figures():
    report = bench_use.main(["--quick"])
    status = report["status_json"]
    assert status["before_p50_ms"] > 0 and status["now_p50_ms"] > 0 and status["budget_ratio"] == 2.0
    assert status["sessions"] > 0 and status["shown"] > status["sessions"]
    assert report["derive"]["events"] == 5_000 and report["derive"]["events_per_s"] > 0
