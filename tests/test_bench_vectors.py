"""`python -m bench ann` really runs, on a tiny store: the real model embeds the sample, each library builds
and answers in a process of its own, and recall is measured against exact float32 search — 1 for exact
search, below 1 for a graph built and searched with deliberately starved parameters."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from claude_mem.index import embedder
from conftest import REPO, require


def test_jittered_copies_are_unit_vectors_near_their_source():
    require(importlib.util.find_spec("numpy") is not None, "numpy is not installed")
    import numpy as np
    from bench.bench_ann import HELD_OUT, exact_top, jittered_store, quantise

    rng = np.random.default_rng(1)
    real = rng.normal(size=(HELD_OUT + 20, 384)).astype(np.float32)
    real /= np.linalg.norm(real, axis=1, keepdims=True)
    store = jittered_store(real, 100)
    assert store.shape == (100, 384) and store.dtype == np.float32
    assert np.allclose(np.linalg.norm(store, axis=1), 1, atol=1e-5)
    assert np.array_equal(store[:20], real[:20])  # the real vectors first, none of the held-out ones
    cosines = np.einsum("ij,ij->i", store[20:], store[np.arange(20, 100) % 20])
    assert 0.85 < cosines.min() and cosines.max() < 0.99  # near their source, never a duplicate of it
    # Each stored vector's nearest neighbour by exact search is itself; int8 keeps the direction.
    assert list(exact_top(store, store[:5], 1)[:, 0]) == [0, 1, 2, 3, 4]
    codes = quantise(store).astype(np.float32)
    assert np.abs(codes).max() == 127
    codes /= np.linalg.norm(codes, axis=1, keepdims=True)
    assert np.einsum("ij,ij->i", codes, store).min() > 0.999


@pytest.mark.slow
def test_ann_bench_measures_recall_against_exact_search(tmp_path):
    reason = embedder.unavailable()
    require(reason is None, f"search by meaning cannot run here: {reason}")
    require(importlib.util.find_spec("usearch") is not None, "usearch is not installed")
    env = {**os.environ, "CLAUDE_MEM_BENCH_CACHE": str(tmp_path / "cache")}
    # 150 real vectors in the store (the rest jittered copies), 150 held out as queries; one graph built with
    # connectivity 2 and expansion_add 4, searched with expansion_search 1 (starved) and 64.
    done = subprocess.run(
        [sys.executable, "-m", "bench", "ann", "--quick", "--no-wheels", "--sizes", "1000", "--real", "300",
         "--methods", "numpy-f32-exact,usearch-exact-i8,usearch-hnsw-i8", "--builds", "2:4", "--expansions", "1,64"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)["ann"]

    data = report["data"]
    assert data["real_vectors"] == 150 and data["held_out_queries"] == 150 and data["queries"] == 200
    assert "jittered copies" in data["note"] and data["k"] == 10
    assert os.path.exists(tmp_path / "cache" / f"minilm-observations-{embedder.MODEL}.npy")  # the sample is kept
    methods = report["sizes"]["1000"]
    assert set(methods) == {"numpy-f32-exact", "usearch-exact-i8", "usearch-hnsw-i8"}

    exact = methods["numpy-f32-exact"]["chosen"]
    assert exact["recall_at_10"] == 1.0 and exact["meets_recall"]
    assert 0 < exact["p50_ms"] <= exact["p95_ms"] and exact["bytes_per_vector"] == 384 * 4
    assert 0.5 < exact["ratio_to_exact_f32"] < 2  # the same search, timed beside itself

    quantised = methods["usearch-exact-i8"]["chosen"]
    assert 0.9 <= quantised["recall_at_10"] <= 1.0 and quantised["bytes_per_vector"] == 384

    (graph,) = methods["usearch-hnsw-i8"]["runs"]
    assert (graph["connectivity"], graph["expansion_add"]) == (2, 4) and graph["build_s"] > 0
    starved, wide = graph["passes"]
    assert (starved["expansion_search"], wide["expansion_search"]) == (1, 64)
    assert starved["recall_at_10"] < 1.0 and starved["recall_at_10"] < wide["recall_at_10"]
    assert all(0 < figures["p50_ms"] <= figures["p95_ms"] for figures in graph["passes"])
    chosen = methods["usearch-hnsw-i8"]["chosen"]
    assert chosen["expansion_search"] == (64 if wide["recall_at_10"] >= 0.95 else wide["expansion_search"])
    # A removed key is gone from the answers; whether its bytes are is reported, not assumed.
    assert graph["forget"]["removal"] and graph["forget"]["answers_without_it"]
    assert isinstance(graph["forget"]["bytes_gone"], bool)

    # Every chosen figure reaches the table beside its budget.
    from bench.__main__ import rows

    table = {figure: (value, budget, within) for figure, value, budget, within in rows({"ann": report})}
    assert table["numpy-f32-exact, 1,000 vectors"][1:] == ("recall ≥ 0.95", True)
    (label,) = [figure for figure in table if figure.startswith("usearch-hnsw-i8 (M 2, ef_add 4, ef ")]
    assert f"recall@10 {chosen['recall_at_10']}" in table[label][0]
