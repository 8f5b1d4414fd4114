"""`python -m bench search` really runs, on a small store: the model embeds, a real worker answers over HTTP,
`claude-mem mcp` over stdio, and every figure of the report is there and sane."""

import pytest

from claude_mem.index import embedder
from conftest import require


@pytest.mark.slow
def test_search_bench_reports_every_figure():
    reason = embedder.unavailable()
    require(reason is None, f"search by meaning cannot run here: {reason}")
    from bench.__main__ import rows
    from bench.bench_search import main

    report = main(["--quick", "--size", "200", "--sweep", "300", "--clients-sizes=300"])

    assert report["observations"] == 200
    throughput, backfill = report["throughput"], report["backfill"]
    assert throughput["rows_per_s"] > 0 and throughput["batch"] == 32 and throughput["median_tokens_per_text"] > 10
    # Every observation and the one summary embedded, nothing before the backfill, nothing left after it.
    assert backfill["rows"] == backfill["total"] == backfill["embedded_after"] == 201 and backfill["embedded_before"] == 0
    assert backfill["seconds"] > 0 and backfill["rows_per_s"] > 0

    in_process = report["in_process"]
    assert in_process["queries"] == 50 and in_process["bare_fts5_top20_p50_ms"] > 0
    for mode in ("hybrid", "keyword", "semantic"):
        figures = in_process[mode]
        assert 0 < figures["p50_ms"] <= figures["p95_ms"] and figures["ratio_to_bare_fts5"] > 0
        assert figures["median_total"] > 0, mode
    # Hybrid ranks the union of both candidate lists: it finds at least what keyword search finds.
    assert in_process["hybrid"]["median_total"] >= in_process["keyword"]["median_total"]
    assert 0 < in_process["hybrid_repeated_query"]["p50_ms"] <= in_process["hybrid_repeated_query"]["p95_ms"]
    assert 0 < report["http_hybrid"]["p50_ms"] <= report["http_hybrid"]["p95_ms"]

    memory = report["worker_memory"]
    # The model's weights and runtime are resident once the worker has run a hybrid search.
    assert memory["rss_mb"] > memory["rss_before_model_mb"] + 20 and memory["peak_rss_mb"] >= memory["rss_mb"]

    surfaces = report["surfaces"]
    assert list(surfaces) == ["300"]
    http, mcp, cli = surfaces["300"]["http_keyword"], surfaces["300"]["mcp_keyword"], surfaces["300"]["cli_keyword"]
    assert http["queries_differing_from_in_process"] == 0  # the worker answers what search() answers
    assert 0 < http["p50_ms"] <= http["p90_ms"] and http["bare_fts5_top20_p50_ms"] <= http["bare_fts5_top20_p90_ms"]
    assert mcp["queries_with_hits"] > 25  # the launcher's server found this project's store from its cwd
    assert 0 < mcp["p50_ms"] <= mcp["p95_ms"] and http["ratio_to_bare_fts5"] > 0 and mcp["ratio_to_bare_fts5"] > 0
    assert cli["runs_with_hits"] == cli["runs"] > 0 and cli["p50_ms"] > cli["bare_python_p50_ms"] > 0
    # Issue 28: every search by meaning of the CLI and the MCP server was answered by the running worker.
    clients = report["clients"]["300"]
    assert clients["checks"] == {"cli_hybrid_without_note": 20, "mcp_without_note": 20, "http_hybrid_mode": 20, "runs": 20}
    for name in ("cli_keyword", "cli_hybrid", "mcp_hybrid", "http_hybrid"):
        assert 0 < clients[name]["p50_ms"] <= clients[name]["p90_ms"] and clients[name]["cpu_p50_ms"] > 0, name
    assert 0 < clients["mcp_server_memory"]["rss_mb"] < 100  # no model in the MCP server
    # Only what this run measured is judged: no 10k or 100k store here.
    assert set(report["within_budget"]) == {"hybrid_p50", "worker_rss", "mcp_keyword", "cli_keyword",
                                            "cli_hybrid_to_keyword_300", "mcp_hybrid_to_http_300"}

    table = rows({"search": report})
    assert len(table) == 8 + 4 + 5 and all(value for _figure, value, _budget, _within in table)
    assert [within is not None for *_rest, within in table].count(True) == 2 + 2 + 2
