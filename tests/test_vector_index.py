"""Search by meaning that scales (issue 28): compact int8 vectors, the queue of rows to embed, the
vector index (exact and HNSW) following every write, a forgotten vector gone from memory and from
the saved graph, and searches that embed what they need or say what they could not compare."""

from __future__ import annotations

import os

import numpy as np
import pytest

from claude_mem.index import embedder, semantic, vector_index
from claude_mem.index.query import SearchQuery
from claude_mem.index.search import search
from claude_mem.recall.forget import forget
from claude_mem.recall.remember import remember
from claude_mem.store import db, migrations, vectors
from claude_mem.store.search import SearchFilters
from recall_seed import add_observation, add_prompt, add_session

PROJECT = "/home/dev/app"


@pytest.fixture
def conn(tmp_path):
    opened = db.connect(str(tmp_path / "claude-mem.db"))
    yield opened
    opened.close()


def unit_vectors(count: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((count, embedder.DIMENSIONS)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def observations(conn, count: int, project: str = PROJECT) -> list[int]:
    ids = [add_observation(conn, project, f"note number {n}", narrative=f"body {n}") for n in range(count)]
    conn.commit()
    return ids


# -- compact storage -----------------------------------------------------------------------------------

def test_int8_vectors_keep_the_cosines_and_the_ranking_of_float32():
    matrix = embedder.shared().embed([f"the deploy step {n} needs the VPN and the registry token" for n in range(40)]
                                     + ["unrelated words about cooking pasta", "flaky test in the websocket suite"])
    scales, quantized = vector_index.quantize(matrix)
    assert quantized.dtype == np.int8 and quantized.shape == matrix.shape and np.abs(quantized).max() == 127
    restored = quantized.astype(np.float32) * scales[:, None]
    assert np.abs(restored - matrix).max() < 0.01
    query = embedder.shared().embed(["which network does the deploy need"])[0]
    exact = matrix @ query
    approximate = vector_index.exact_cosines(quantized, vector_index.quantize(query[None, :])[1][0])
    assert np.abs(exact - approximate).max() < 0.01
    assert set(np.argsort(-exact)[:10]) == set(np.argsort(-approximate)[:10])


def test_a_vector_is_stored_inline_in_about_400_bytes(conn, tmp_path):
    ids = observations(conn, 2000)
    semantic.store_vectors(conn, [("observation", row_id) for row_id in ids], unit_vectors(len(ids)))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = conn.execute("SELECT COUNT(*), SUM(pgsize) FROM dbstat WHERE name = 'vectors'").fetchone()
    assert pages[1] / len(ids) < 520, pages  # float32 WITHOUT ROWID (m003): ~4.7 KB a vector
    assert conn.execute("SELECT length(vector) FROM vectors LIMIT 1").fetchone() == (embedder.DIMENSIONS,)
    assert vectors.model(conn) == embedder.MODEL  # named once, not on every row


# -- the queue -----------------------------------------------------------------------------------------

def test_every_write_path_queues_and_unqueues_what_it_should(conn):
    session = add_session(conn, "s-queue", PROJECT)
    note = add_observation(conn, PROJECT, "Port 5432 already in use", session_id=session)
    spoken = add_prompt(conn, session, 1, "why is the port busy")
    conn.execute("INSERT INTO prompts (session_id, prompt_number, text, private) VALUES (?, 2, 'secret plan', 1)",
                 (session,))
    conn.commit()
    assert sorted(vectors.queued(conn, 10)) == [("observation", note, "Port 5432 already in use\n\nPort 5432 already in use."
                                                 " The change keeps the hook path fast and the store consistent."),
                                                ("prompt", spoken, "why is the port busy")]
    while semantic.embed_missing(conn, 8):
        pass
    assert vectors.progress(conn) == {"embedded": 2, "queued": 0, "total": 2}
    before = vectors.marks(conn)[1]
    conn.execute("UPDATE observations SET title = 'Port 5432 held by a stale postgres' WHERE id = ?", (note,))
    conn.commit()
    assert vectors.progress(conn) == {"embedded": 1, "queued": 1, "total": 2}  # the edited text is embedded anew
    assert vectors.removals(conn, before) == [(before + 1, note)]
    conn.execute("UPDATE prompts SET private = 1 WHERE id = ?", (spoken,))
    conn.commit()
    assert vectors.progress(conn) == {"embedded": 0, "queued": 1, "total": 1}  # a private prompt keeps no vector
    conn.execute("DELETE FROM observations WHERE id = ?", (note,))
    conn.commit()
    assert vectors.progress(conn) == {"embedded": 0, "queued": 0, "total": 0}


def test_the_backfill_reads_the_queue_head_not_every_embedded_row(conn):
    ids = observations(conn, 3000)
    semantic.store_vectors(conn, [("observation", row_id) for row_id in ids[:-5]], unit_vectors(len(ids) - 5))
    plan = " ".join(row[3] for row in conn.execute(
        "EXPLAIN QUERY PLAN SELECT row_id FROM vector_queue WHERE kind = 'observation' ORDER BY row_id DESC LIMIT 64"))
    assert "SCAN vectors" not in plan and "vector_queue" in plan
    assert [row_id for _kind, row_id, _text in vectors.queued(conn, 64)] == ids[-5:][::-1]  # newest first


def test_float32_vectors_of_before_m016_are_converted_not_embedded_again(tmp_path):
    path = str(tmp_path / "old.db")
    old = db.connect(path, migrate=False)
    migrations.migrate(old, target=15)
    ids = observations(old, 4)
    matrix = unit_vectors(3)
    old.executemany("INSERT INTO vectors (kind, row_id, model, vector) VALUES ('observation', ?, ?, ?)",
                    [(ids[0], embedder.MODEL, matrix[0].tobytes()), (ids[1], embedder.MODEL, matrix[1].tobytes()),
                     (ids[2], "an-older-model", matrix[2].tobytes())])
    old.commit()
    old.close()
    conn = db.connect(path)
    try:
        assert vectors.progress(conn) == {"embedded": 0, "queued": 4, "total": 4}  # 3 to convert, 1 to embed
        assert vectors.any_vector(conn, embedder.MODEL)  # search by meaning stays the default meanwhile
        assert semantic.convert_legacy(conn) == 3 and semantic.convert_legacy(conn) == 0
        assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vectors_f32'").fetchone()
        assert conn.execute("PRAGMA freelist_count").fetchone() == (0,)  # its pages went back to the disk
        converted = dict(conn.execute("SELECT row_id, vector FROM vectors").fetchall())
        assert set(converted) == {ids[0], ids[1]}
        restored = np.frombuffer(converted[ids[0]], dtype=np.int8).astype(np.float32)
        assert float(restored @ matrix[0]) / float(np.linalg.norm(restored)) > 0.999
        assert sorted(row_id for _kind, row_id, _text in vectors.queued(conn, 10)) == [ids[2], ids[3]]
    finally:
        conn.close()


# -- the index -----------------------------------------------------------------------------------------

@pytest.fixture
def graph_dir(tmp_path, monkeypatch):
    """This process keeps HNSW graphs, from the first vector on (the worker's settings, made small)."""
    monkeypatch.setenv("CLAUDE_MEM_VECTOR_INDEX", "graph")
    directory = str(tmp_path / "vectors")
    monkeypatch.setattr(vector_index, "_graph_dir", directory)
    monkeypatch.setattr(vector_index, "_INDEXES", {})
    return directory


def test_the_graph_answers_like_exact_search_and_follows_writes_and_forgets(conn, tmp_path, graph_dir):
    ids = observations(conn, 400) + observations(conn, 100, project="/other")
    matrix = unit_vectors(len(ids))
    semantic.store_vectors(conn, [("observation", row_id) for row_id in ids], matrix)
    index = vector_index.for_store(conn)
    index.build_graph()
    assert index.graph is not None and len(index.graph) == len(ids)
    query = matrix[3] + 0.3 * unit_vectors(1, seed=3)[0]
    query /= np.linalg.norm(query)
    exact = [int(ids[i]) for i in np.argsort(-(matrix @ query))[:10]]
    assert len(set(exact) & {row_id for row_id, _c in index.nearest(conn, query, SearchFilters(), 10)}) >= 9
    other = SearchQuery.build("x", project="/other").filters
    assert {row_id for row_id, _c in index.nearest(conn, query, other, 10)} <= set(ids[400:])
    assert not index.flat and not len(index.matrix)  # the graph holds the vectors, the matrix went
    rare = [add_observation(conn, PROJECT, f"bug {n}", kind="bugfix") for n in range(3)]
    conn.commit()
    semantic.store_vectors(conn, [("observation", row_id) for row_id in rare], unit_vectors(3, seed=11))
    bugs = SearchQuery.build("x", types="bugfix").filters  # too rare to find through the graph: exact, from the store
    assert sorted(row_id for row_id, _c in vector_index.for_store(conn).nearest(conn, query, bugs, 10)) == rare

    moved = ids[0]
    conn.execute("UPDATE observations SET project = '/other' WHERE id = ?", (moved,))  # as a project merge does
    conn.commit()
    assert moved in {row_id for row_id, _c in vector_index.for_store(conn).nearest(conn, matrix[0], other, 5)}
    assert moved not in {row_id for row_id, _c in index.nearest(conn, matrix[0], SearchQuery.build("x", project=PROJECT).filters, 5)}

    gone = ids[3]
    forget(conn, str(tmp_path), ids=[gone])
    added = observations(conn, 1)[0]
    semantic.store_vectors(conn, [("observation", added)], query[None, :])
    index = vector_index.for_store(conn)  # the same index, synced
    found = [row_id for row_id, _c in index.nearest(conn, query, SearchFilters(), 10)]
    assert found[0] == added and gone not in found
    assert index.graph.get(gone) is None and gone not in index.graph
    index.save()
    saved = open(os.path.join(graph_dir, f"{embedder.MODEL}.usearch"), "rb").read()
    _scale, forgotten = vector_index.quantize(matrix[3:4])
    assert forgotten[0].tobytes() not in saved  # not recoverable from the file either
    _scale, kept = vector_index.quantize(matrix[4:5])
    assert kept[0].tobytes() in saved  # (the check can see a vector that is there)


def test_a_saved_graph_is_reloaded_and_a_damaged_or_foreign_one_rebuilt(conn, graph_dir, caplog):
    ids = observations(conn, 300)
    matrix = unit_vectors(len(ids))
    semantic.store_vectors(conn, [("observation", row_id) for row_id in ids], matrix)
    first = vector_index.for_store(conn)
    first.build_graph()
    first.save()
    path = os.path.join(graph_dir, f"{embedder.MODEL}.usearch")
    later = observations(conn, 1)[0]  # stored while no worker ran
    semantic.store_vectors(conn, [("observation", later)], matrix[:1])
    for damage in (None, "truncate", "foreign"):
        if damage == "truncate":
            with open(path, "r+b") as handle:
                handle.truncate(os.path.getsize(path) // 3)
        if damage == "foreign":
            first.save()  # a whole file again, but of another database
            meta = path + ".json"
            with open(meta, encoding="utf-8") as handle:
                text = handle.read()
            with open(meta, "w", encoding="utf-8") as handle:
                handle.write(text.replace(first.database, "1:2"))
        fresh = vector_index.VectorIndex(embedder.MODEL, path, first.database)
        fresh.sync(conn)
        fresh.build_graph()
        assert fresh.graph is not None and len(fresh.graph) == len(ids) + 1
        best = fresh.nearest(conn, matrix[0], SearchFilters(), 2)
        assert {row_id for row_id, _c in best} == {ids[0], later}
        first.dirty = True
    assert "rebuilding the vector index" in caplog.text


def test_vectors_of_the_wrong_dimension_are_skipped_not_fatal(conn, caplog):
    ids = observations(conn, 3)
    semantic.store_vectors(conn, [("observation", row_id) for row_id in ids[:2]], unit_vectors(2))
    vectors.save(conn, embedder.MODEL, [("observation", ids[2], b"\x01" * 768)])  # a teammate's other model
    far = conn.execute("INSERT INTO observations (project, type, title, narrative, content_hash, id)"
                       " VALUES (?, 'discovery', 'far', 'n', 'h-far', ?)", (PROJECT, vector_index.MAX_ID + 5)).lastrowid
    conn.commit()
    semantic.store_vectors(conn, [("observation", far)], unit_vectors(1, seed=5))  # no 2**26-entry map for it
    found = search(conn, SearchQuery.build("note", mode="semantic", project=PROJECT))
    assert found.mode == "semantic"
    assert "not 384 dimensions, or an observation id past" in caplog.text
    assert len(vector_index.for_store(conn)) == 2 and len(vector_index.for_store(conn).position_of) < 10_000


# -- searches embed what they need, or say what they could not compare ---------------------------------

def test_a_fresh_note_is_found_by_meaning_before_any_backfill(conn):
    remember(conn, "The deploy script needs the VPN up before it can reach the registry", PROJECT)
    remember(conn, "Dark mode colours follow the design tokens", PROJECT)
    assert vectors.progress(conn)["embedded"] == 0
    for mode in ("semantic", "hybrid"):
        found = search(conn, SearchQuery.build("which network must be connected to ship a release", mode=mode,
                                               project=PROJECT))
        assert found.items and "VPN" in found.items[0]["title"] and found.unembedded == 0 and not found.note


def test_rows_beyond_what_a_search_embeds_are_counted_and_named(conn, monkeypatch):
    monkeypatch.setattr(semantic, "ON_DEMAND", 2)
    for n in range(5):
        remember(conn, f"Release step {n}: tag, build the wheel, upload it", PROJECT)
    found = search(conn, SearchQuery.build("how do we publish a version", mode="semantic", project=PROJECT))
    assert found.unembedded == 3 and "3 matching observations not embedded yet" in found.note
    assert found.as_dict()["unembedded"] == 3
    hybrid = search(conn, SearchQuery.build("release wheel", mode="hybrid", project=PROJECT))
    assert hybrid.unembedded == 3 and "found by keyword only" in hybrid.note
    assert vectors.progress(conn)["embedded"] == 0  # a search never writes: the backfill stores vectors
    assert hybrid.total == 5  # the words still find every one


# -- the worker ----------------------------------------------------------------------------------------

def test_the_worker_keeps_the_graph_saved_and_a_forgotten_vector_leaves_it(tmp_path, monkeypatch):
    """Through a real worker: the graph is built and saved beside the database, `forget` through the
    worker takes the vector out of memory and out of the saved file, and /health shows the index."""
    import json

    from test_worker_lifecycle import cli, wait_for

    for name, value in {"CLAUDE_MEM_DATA_DIR": str(tmp_path), "CLAUDE_MEM_WORKER_PORT": "0",
                        "CLAUDE_MEM_PROVIDER": "offline", "CLAUDE_MEM_BACKUP_INTERVAL_HOURS": "0",
                        "CLAUDE_MEM_VECTOR_INDEX": "graph"}.items():
        monkeypatch.setenv(name, value)
    conn = db.connect(db.db_path(str(tmp_path)))
    ids = [add_observation(conn, PROJECT, f"Deploy note {n}: the registry {n} needs the VPN") for n in range(12)]
    conn.commit()
    path = os.path.join(str(tmp_path), "vectors", f"{embedder.MODEL}.usearch")
    cli("worker", "start")
    try:
        def index() -> dict:
            health = json.loads(cli("worker", "status", "--json").stdout)["health"]
            return health["vectors"] if health["vectors"]["queued"] == 0 else {}

        wait_for(lambda: index().get("index", {}).get("kind") == "graph" and os.path.exists(path), timeout=90,
                 message="the graph built and saved")
        gone = conn.execute("SELECT vector FROM vectors WHERE row_id = ?", (ids[5],)).fetchone()[0]
        assert gone in open(path, "rb").read()
        assert "index: HNSW graph of 12" in cli("worker", "status").stdout
        cli("forget", str(ids[5]), "--yes")
        wait_for(lambda: gone not in open(path, "rb").read(), timeout=60, message="the forgotten vector gone from the file")
        assert index()["index"]["size"] == 11
        found = json.loads(cli("search", "registry VPN", "--mode", "semantic", "--json", "--limit", "20").stdout)
        assert ids[5] not in [hit["id"] for hit in found["items"]] and len(found["items"]) == 11
    finally:
        cli("worker", "stop")
        conn.close()


def test_the_vector_index_library_and_the_model_runtime_load_in_either_order():
    """usearch 2.26 crashed the process (SIGSEGV) when imported before onnxruntime: the pin holds."""
    import subprocess
    import sys

    for first, second in (("usearch.index", "onnxruntime"), ("onnxruntime", "usearch.index")):
        done = subprocess.run([sys.executable, "-c", f"import {first}; import {second}"], capture_output=True, timeout=120)
        assert done.returncode == 0, (first, second, done.returncode, done.stderr[-500:])


def test_a_graph_that_cannot_be_saved_is_logged_and_search_goes_on(conn, tmp_path, graph_dir, caplog):
    from claude_mem.worker.embedding_service import EmbeddingService

    ids = observations(conn, 50)
    semantic.store_vectors(conn, [("observation", row_id) for row_id in ids], unit_vectors(len(ids)))
    index = vector_index.for_store(conn)
    index.build_graph()
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the vectors directory should be")
    index.graph_path = str(blocker / "graph.usearch")  # as a full or read-only disk would refuse it
    EmbeddingService()._save(now=True)
    assert "the vector index could not be saved" in caplog.text
    assert index.dirty and len(index.nearest(conn, unit_vectors(1)[0], SearchFilters(), 5)) == 5


def test_the_worker_finds_a_note_by_meaning_before_its_backfill_stores_it(tmp_path, monkeypatch):
    """The worker answers searches from read-only connections: a note stored a moment ago is embedded
    for the search, kept in memory, and found by a paraphrase through /api/search."""
    import json

    from test_worker_lifecycle import cli

    for name, value in {"CLAUDE_MEM_DATA_DIR": str(tmp_path), "CLAUDE_MEM_WORKER_PORT": "0",
                        "CLAUDE_MEM_PROVIDER": "offline", "CLAUDE_MEM_BACKUP_INTERVAL_HOURS": "0"}.items():
        monkeypatch.setenv(name, value)
    cli("remember", "Dark mode colours follow the design tokens")  # the project of this directory
    cli("worker", "start")
    try:
        cli("remember", "Deploys need the VPN up before the registry answers")
        found = json.loads(cli("search", "which network must be on to ship a release", "--mode", "semantic",
                               "--json").stdout)
        assert found["items"] and "VPN" in found["items"][0]["title"], found
        assert not found.get("degraded") and not found.get("unembedded") and found["mode"] == "semantic", found
    finally:
        cli("worker", "stop")
    log = open(os.path.join(str(tmp_path), "logs", "worker.log"), encoding="utf-8").read()
    assert "readonly database" not in log and "Traceback" not in log, log[-2000:]
