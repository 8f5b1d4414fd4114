"""`python -m bench privacy --quick` really runs: both corpora through the hooks and the observer,
look-alikes, the hook's cost and the pathological inputs, every figure there with its type, and the
table rows `make bench` prints. Whether the figures meet their targets is test_privacy_corpora's job."""

import pytest
from bench.privacy import pathological


@pytest.mark.slow
def test_privacy_bench_reports_every_figure():
    from bench.__main__ import rows
    from bench.bench_privacy import QUICK_PLACEMENTS, TARGETS, main

    report = main(["--quick", "--json"])

    assert report["targets"] == TARGETS and TARGETS["hook_ratio"] == 2.0
    for name in ("held_out", "tests"):
        corpus = report["corpora"][name]
        assert corpus["placements"] == len(QUICK_PLACEMENTS) and corpus["formats"] >= 100
        assert not corpus["hook_failures"] and corpus["events_done"] >= 0.9 * corpus["hook_calls"] > 0
        assert corpus["requests"] > 0 and corpus["observations"] > 0
        for key in ("stored", "sent", "shown", "second_pass_changes"):
            assert isinstance(corpus[key], int) and 0 <= corpus[key] <= corpus["formats"] * len(QUICK_PLACEMENTS)
        assert isinstance(corpus["leaked"], dict) and isinstance(corpus["capture_leaks"], list)
        assert len(corpus["leaked"]) == len({n for n, w in corpus["leaked"].items() if w["stored_in"] or w["sent"] or w["shown"]})
        kept = report["lookalikes"][name]
        assert kept["total"] > 50 and 0 <= kept["ratio"] <= 1 and kept["kept"] + len(kept["masked"]) == kept["total"]
    cost = report["cost"]
    for key in ("clean_tree_cpu_ms", "capture_record_cpu_ms", "hook_cpu_ms", "hook_small_bash_cpu_ms", "bare_python_cpu_ms"):
        assert isinstance(cost[key], float) and cost[key] > 0, key
    assert cost["ratio"] == pytest.approx(cost["hook_cpu_ms"] / cost["bare_python_cpu_ms"], rel=0.01)
    assert cost["payload_bytes"] > 100_000 and cost["budget_ratio"] == 2.0
    assert set(report["pathological"]) == set(pathological.PATHOLOGICAL)
    for figures in report["pathological"].values():
        assert figures["bytes"] > 1_000 and isinstance(figures["hook"]["wall_s"], float)
        assert figures["in_process"]["cpu_s"] is None or figures["in_process"]["cpu_s"] >= 0
    assert report["pathological_summary"]["slowest_in_process"]["name"] in pathological.PATHOLOGICAL
    assert isinstance(report["within_targets"], bool)

    real = report["real_files"]
    assert real["files"] > 50 and real["chars"] > 100_000 and real["spans"] >= 0 and len(real["examples"]) <= 20

    table = rows({"privacy": report})
    assert len(table) == 13
    assert all(isinstance(within, bool) for figure, _value, _budget, within in table if not figure.startswith("real files"))
    assert any("held-out corpus" in figure and "stored" in value for figure, value, _budget, _within in table)
