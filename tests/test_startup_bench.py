"""`python -m bench startup` really runs: the status line (worker stopped and running), the CLI's keyword
search and the MCP server from spawn, each figure sane and beside its budget in `make bench`'s table."""

import pytest


@pytest.mark.slow
def test_startup_bench_reports_every_figure():
    from bench.__main__ import rows
    from bench.bench_startup import main

    report = main(["--quick"])

    assert report["observations"] == 2_000
    stopped, running = report["statusline"], report["statusline_worker_running"]
    assert stopped["line"] == "memory: 2000 notes · worker stopped"
    assert running["line"] == "memory: 2000 notes · observer claude"
    for line in (stopped, running):
        assert line["cpu_ms_median"] > 0 and line["bare_cpu_ms_median"] > 0 and line["cpu_ratio"] > 0
        assert line["wall_ms_median"] >= line["cpu_ms_median"] * 0.5 and line["budget_ratio"] == 1.5
    cli = report["cli_search_keyword"]
    assert cli["wall_ms_median"] > cli["bare_wall_ms_median"] > 0 and cli["budget_ms"] == 120
    mcp = report["mcp_initialize"]
    assert mcp["tools"] == ["get_observations", "search", "timeline"]
    assert 0 < mcp["initialize_ms_median"] <= mcp["tools_list_ms_median"] <= mcp["first_search_ms_median"]
    table = {figure: budget for figure, _value, budget, _within in rows({"startup": report})}
    assert table["MCP server, spawn → initialize reply"] == "≤ 250 ms"
    assert table["CLI `search --mode keyword`, 2,000 observations"] == "≤ 120 ms"
    assert table["statusline, 2,000 observations, worker running (CPU)"] == "≤ 1.5× bare"
    assert set(report["within_budget"]) == {"statusline", "cli_search_keyword", "mcp_initialize"}
