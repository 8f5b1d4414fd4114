"""The embedding model at the speed of the model, in bounded memory (issue 28, items 4-5): the settings of
`claude_mem.index.embedder` against the old ones, reproduced in the same run as the baseline.

`python -m bench embed [--quick]`. Texts are what the worker embeds for an observation (title, subtitle,
narrative), from two sources: `generated` (bench_recall's generator, as the search benchmark stores:
~60 tokens) and `observer` (the 240 observations of the original claude-mem's database in
tests/fixtures, written in its observer's format: ~110 tokens); `long` joins three of those (~330
tokens) to show what the length cap does.

1. Token lengths of each source (p50 / p90 / max, share over 128 and 256 word pieces).
2. Backfill throughput: rows per CPU second of `embed(batch of 32)` (what embed_missing passes), on one
   onnxruntime thread, the configurations interleaved round by round on the same texts:
   - `before`: the old embedder: float32 products, 256 tokens, the whole batch padded to its longest
     text, memory arena on;
   - `sorted`: float32 products, 128 tokens, sorted sub-batches (the batching alone);
   - `int8_256`, `int8_arena`: the new arithmetic with 256 tokens, or with the memory arena on;
   - `after`: what the worker runs (int8 products, 128 tokens, one text a run, no arena).
   CPU time (`time.process_time`) rather than wall: the machine is shared; medians of 5 rounds (3 with
   --quick). Target: after ≥ 100 rows/s on observation texts.
3. Memory: a fresh process per configuration loads the model, embeds one query (its resident memory
   then is the floor), embeds `long` texts in batches of 32 (5,000 of them, --quick 500; the old settings
   640, --quick 160: the arena grows with the largest batch, not with the count), then one query again.
   Target: after the backfill, resident memory within 16 MB of the floor (flat).
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from claude_mem.index import embedder

TARGET_ROWS_PER_S = 100.0
FLAT_MB = 16.0  # resident memory after a long backfill may exceed the one-query floor by this much
BATCH = 32  # texts per embed() call, as the worker's backfill passes them
ORIGINAL_DB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "fixtures",
                           "claude-mem-13.25.3", "claude-mem.db")
CONFIGS: dict[str, dict[str, Any]] = {  # Embedder arguments, and whether embed() is the old padded batch
    "before": {"int8": False, "max_tokens": 256, "arena": True, "old_batching": True},
    "sorted": {"int8": False, "max_tokens": 128, "arena": False},
    "int8_256": {"int8": True, "max_tokens": 256, "arena": False},
    "int8_arena": {"int8": True, "max_tokens": 128, "arena": True},
    "after": {"int8": True, "max_tokens": 128, "arena": False},
}
QUERY = "why did the worker restart after the migration"


def progress(message: str) -> None:
    print(f"  embed: {message}", file=sys.stderr, flush=True)


def generated_texts(count: int) -> list[str]:
    from bench.bench_recall import generate
    from bench.bench_search import observation_texts
    from claude_mem.store import db

    with tempfile.TemporaryDirectory(prefix="bench-embed-") as root:
        conn = db.connect(os.path.join(root, "claude-mem.db"))
        generate(conn, "bench-embed", count)
        texts = observation_texts(conn, count)
        conn.close()
    return texts


def observer_texts() -> list[str]:
    """The original's observations, as our worker would embed them after an import."""
    conn = sqlite3.connect(f"file:{ORIGINAL_DB}?mode=ro&immutable=1", uri=True)
    try:
        return [text for (text,) in conn.execute(
            "SELECT title || char(10) || coalesce(subtitle, '') || char(10) || coalesce(narrative, '')"
            " FROM observations ORDER BY id")]
    finally:
        conn.close()


def long_texts(observer: list[str], count: int) -> list[str]:
    return ["\n".join(observer[(n + k) % len(observer)] for k in range(3)) for n in range(count)]


def make(config: dict[str, Any]) -> tuple[embedder.Embedder, Callable[[list[str]], object]]:
    """An embedder with `config`'s settings and the function that embeds a batch with them."""
    settings = {key: value for key, value in config.items() if key != "old_batching"}
    padded = embedder.Embedder(**settings)
    if not config.get("old_batching"):
        return padded, padded.embed
    padded.tokenizer.enable_padding()

    def old_embed(texts: list[str]) -> object:  # the embedder before issue 28: one padded run per call
        encoded = padded.tokenizer.encode_batch([text or " " for text in texts])
        ids = np.array([item.ids for item in encoded], dtype=np.int64)
        mask = np.array([item.attention_mask for item in encoded], dtype=np.int64)
        return padded._pooled(ids, mask)

    return padded, old_embed


def lengths(model: embedder.Embedder, texts: list[str]) -> dict[str, Any]:
    full = sorted(len(item.ids) for item in model.tokenizer.encode_batch(texts, add_special_tokens=True))
    return {"texts": len(full), "p50": full[len(full) // 2], "p90": full[int(len(full) * 0.9)], "max": full[-1],
            "over_128": round(sum(n > 128 for n in full) / len(full), 3),
            "over_256": round(sum(n > 256 for n in full) / len(full), 3)}


def bench_throughput(sources: dict[str, list[str]], rounds: int, per_round: int) -> dict[str, Any]:
    """Rows per CPU second of each configuration on each source, interleaved: every round runs
    `per_round` batches of every configuration on the same texts, in rotating order."""
    embedders = {name: make(config) for name, config in CONFIGS.items()}
    report: dict[str, Any] = {}
    for source, texts in sources.items():
        for _model, embed in embedders.values():
            embed(texts[:BATCH])  # warm: first-run allocations
        seconds: dict[str, list[float]] = {name: [] for name in CONFIGS}
        for round_ in range(rounds):
            names = list(CONFIGS)
            names = names[round_ % len(names):] + names[:round_ % len(names)]
            for name in names:
                embed = embedders[name][1]
                started = time.process_time()
                for n in range(per_round):
                    start = ((round_ * per_round + n) * BATCH) % len(texts)
                    embed((texts + texts)[start:start + BATCH])
                seconds[name].append(time.process_time() - started)
        rows = per_round * BATCH
        rates = {name: round(rows / statistics.median(times), 1) for name, times in seconds.items()}
        report[source] = {"rows_per_s": rates,
                          "ratio_to_before": {name: round(rate / rates["before"], 2) for name, rate in rates.items()}}
        progress(f"{source}: " + ", ".join(f"{name} {rate} rows/s" for name, rate in rates.items()))
    report["compute"] = {name: model.compute for name, (model, _embed) in embedders.items()}
    return report


def rss_mb(field: str = "VmRSS") -> float:
    """This process's resident memory (VmRSS) or its peak since exec (VmHWM: ru_maxrss would count the
    parent's peak before the fork)."""
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(f"{field}:"):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def memory_child(name: str, count: int) -> dict[str, Any]:
    """In a fresh process: RSS with the model and one query, then after `count` long texts, then one query."""
    observer = observer_texts()
    model, embed = make(CONFIGS[name])
    model.embed([QUERY])
    floor = rss_mb()
    texts = long_texts(observer, count)
    started = time.process_time()
    for start in range(0, count, BATCH):
        embed(texts[start:start + BATCH])
    cpu_s = time.process_time() - started
    model.embed([QUERY])
    after = rss_mb()
    return {"texts": count, "rss_one_query_mb": floor, "rss_after_mb": after, "growth_mb": round(after - floor, 1),
            "peak_rss_mb": rss_mb("VmHWM"),
            "rows_per_s": round(count / cpu_s, 1)}


def bench_memory(counts: dict[str, int]) -> dict[str, Any]:
    report = {}
    for name, count in counts.items():
        progress(f"memory: {name}, {count:,} long texts in a fresh process")
        done = subprocess.run([sys.executable, "-m", "bench.bench_embed", "--memory-child", name, str(count)],
                              capture_output=True, text=True, check=True)
        report[name] = json.loads(done.stdout)
        report[name]["flat"] = report[name]["growth_mb"] <= FLAT_MB
    return report


def main(argv: list[str]) -> dict[str, Any]:
    reason = embedder.unavailable()
    if reason:
        return {"unavailable": reason}
    quick = "--quick" in argv
    observer = observer_texts()
    sources = {"generated": generated_texts(1_000 if quick else 4_000), "observer": observer}
    probe = embedder.Embedder(int8=False, max_tokens=100_000)
    report: dict[str, Any] = {
        "target_rows_per_s": TARGET_ROWS_PER_S, "flat_mb": FLAT_MB, "batch": BATCH, "model": embedder.MODEL,
        "threads": 1, "max_tokens": embedder.MAX_TOKENS,
        "tokens": {name: lengths(probe, texts) for name, texts in {**sources, "long": long_texts(observer, 240)}.items()}}
    del probe
    progress("throughput, configurations interleaved")
    report["throughput"] = bench_throughput({**sources, "long": long_texts(observer, 240)},
                                            rounds=3 if quick else 5, per_round=2 if quick else 3)
    report["memory"] = bench_memory({"before": 160 if quick else 640, "after": 500 if quick else 5_000})
    return report


if __name__ == "__main__":
    if "--memory-child" in sys.argv:
        at = sys.argv.index("--memory-child")
        print(json.dumps(memory_child(sys.argv[at + 1], int(sys.argv[at + 2]))))
    else:
        print(json.dumps(main(sys.argv[1:]), indent=2))
