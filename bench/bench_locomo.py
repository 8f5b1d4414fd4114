"""Retrieval quality on LoCoMo (Maharana et al., ACL 2024): does search find the turns a question needs?

`python -m bench locomo [--data FILE] [--json]`. Each dialog turn of a conversation is stored through
the project's own write path (`remember`, one data dir per conversation), and each question of
categories 1–4 is asked through the project's own `search()` — what the CLI, MCP and HTTP API run.
R@k = |evidence ∩ top k| / |evidence|, averaged over questions, overall and per category, with p50 /
p95 latency. The baseline, computed in the same run over the same turns, is plain FTS5 BM25 (porter)
over an OR of the quoted terms minus stop-words (`reference/retrieval.md`: 0.553 R@5 on dev).

It also scores the per-prompt memory (`prompt_context`): each question is asked as a prompt of its
own conversation and of the next one (where nothing is relevant); `evidence_added` is the share of
questions whose evidence the hook would add, `unrelated_spoke` the share of unrelated prompts that
would get anything — by words and meaning (what the worker answers) and by keyword alone (the hook's
fallback). Their thresholds (`recall/prompt_context.py`) were chosen on the dev split with these.

The default data is the dev split (`bench/data/locomo`, conversations 1–5, CC BY-NC 4.0: see the
README there); tune on it only. `--data` scores any file in LoCoMo's JSON layout the same way.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

from claude_mem.index import fts
from claude_mem.index.query import SearchQuery
from claude_mem.index.search import available_modes, search
from claude_mem.recall import prompt_context, related
from claude_mem.recall.remember import remember
from claude_mem.store import db

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "locomo", "locomo-dev.json")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
PROJECT = "/bench/locomo"
KS = (5, 10)


def turns(sample: dict) -> list[tuple[str, str]]:
    """(dia_id, text) for every turn: the speaker, what they said, and the caption of a shared image."""
    found = []
    conversation = sample["conversation"]
    for key in sorted((k for k in conversation if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])):
        when = conversation.get(f"{key}_date_time", "")
        for turn in conversation[key]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares an image: {turn['blip_caption']}]"
            found.append((turn["dia_id"], f"{text} ({when})" if when else text))
    return found


def questions(sample: dict) -> list[dict]:
    return [qa for qa in sample["qa"] if qa.get("category") in CATEGORIES and qa.get("evidence")]


def recall_at(ranked: list[str], evidence: list[str], k: int) -> float:
    wanted = set(evidence)
    return len(wanted & set(ranked[:k])) / len(wanted)


def score(samples: list[dict], ask_for: Callable[[dict], Callable[[str], list[str]]]) -> dict[str, object]:
    """R@k overall and per category, and latency, for one way of asking."""
    hits: dict[str, list[float]] = {f"R@{k}": [] for k in KS}
    per_category: dict[str, dict[str, list[float]]] = {name: {f"R@{k}": [] for k in KS} for name in CATEGORIES.values()}
    times: list[float] = []
    for sample in samples:
        ask = ask_for(sample)
        for qa in questions(sample):
            started = time.perf_counter()
            ranked = ask(qa["question"])
            times.append((time.perf_counter() - started) * 1000)
            for k in KS:
                value = recall_at(ranked, qa["evidence"], k)
                hits[f"R@{k}"].append(value)
                per_category[CATEGORIES[qa["category"]]][f"R@{k}"].append(value)
    times.sort()
    return {
        **{name: round(statistics.fmean(values), 3) for name, values in hits.items()},
        "p50_ms": round(statistics.median(times), 2), "p95_ms": round(times[int(len(times) * 0.95) - 1], 2),
        "questions": len(times),
        "per_category": {name: {key: round(statistics.fmean(v), 3) for key, v in values.items()}
                         for name, values in per_category.items() if values[f"R@{KS[0]}"]},
    }


class Stores:
    """One data dir per conversation, each turn stored with `remember`; observation id → dia_id."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.conns: dict[str, sqlite3.Connection] = {}
        self.dia: dict[str, dict[int, list[str]]] = {}
        self.floats: dict[str, dict[int, object]] = {}

    def load(self, sample: dict) -> None:
        conn = db.connect(db.db_path(os.path.join(self.root, sample["sample_id"])))
        by_id: dict[int, list[str]] = {}
        for dia_id, text in turns(sample):
            stored = remember(conn, text, PROJECT, kind="discovery")
            by_id.setdefault(int(stored["id"]), []).append(dia_id)
        if "semantic" in available_modes():  # what the worker's embedding service does, done here at once,
            # keeping the float32 vectors too: the exact float32 search that int8 storage is held against
            from claude_mem.index import embedder
            from claude_mem.index.semantic import store_vectors
            from claude_mem.store import vectors

            floats: dict[int, object] = {}
            while rows := vectors.queued(conn, 256):
                matrix = embedder.shared().embed([text for _kind, _id, text in rows])
                store_vectors(conn, [(kind, row_id) for kind, row_id, _text in rows], matrix)
                floats.update({row_id: matrix[n] for n, (kind, row_id, _text) in enumerate(rows) if kind == "observation"})
            self.floats[sample["sample_id"]] = floats
        self.conns[sample["sample_id"]] = conn
        self.dia[sample["sample_id"]] = by_id

    def float32_asker(self) -> Callable[[dict], Callable[[str], list[str]]]:
        """Hybrid search as `semantic.HybridIndex` ranks it, with exact float32 cosines over every vector
        instead of the stored int8 ones (and no vector index): the baseline of compact storage."""
        import numpy as np

        from claude_mem.index import embedder, semantic
        from claude_mem.store import search as repository

        def for_sample(sample: dict) -> Callable[[str], list[str]]:
            conn, by_id = self.conns[sample["sample_id"]], self.dia[sample["sample_id"]]
            floats = self.floats[sample["sample_id"]]
            ids = np.array(list(floats), dtype=np.int64)
            matrix = np.stack(list(floats.values()))

            def ask(question: str) -> list[str]:
                wanted = SearchQuery.build(question, mode="hybrid", project=PROJECT, limit=max(KS))
                expression = fts.keyword_expression(question)
                keyword = {int(hit["id"]): -float(hit["score"]) for hit in repository.observation_hits(
                    conn, expression, wanted.filters, "relevance", semantic.CANDIDATES).rows} if expression else {}
                cosines = matrix @ embedder.shared().embed([question])[0]
                best = np.argsort(-cosines, kind="stable")[:semantic.CANDIDATES]
                fused = semantic.fuse(keyword, {int(ids[i]): float(cosines[i]) for i in best})
                ranked = sorted(fused.items(), key=lambda item: (-item[1], -item[0]))[:max(KS)]
                return [dia for row_id, _score in ranked for dia in by_id.get(row_id, [])]

            return ask

        return for_sample

    def asker(self, mode: str) -> Callable[[dict], Callable[[str], list[str]]]:
        def for_sample(sample: dict) -> Callable[[str], list[str]]:
            conn, by_id = self.conns[sample["sample_id"]], self.dia[sample["sample_id"]]

            def ask(question: str) -> list[str]:
                found = search(conn, SearchQuery.build(question, mode=mode, project=PROJECT, limit=max(KS)))
                return [dia for item in found.items for dia in by_id.get(int(item["id"]), [])]

            return ask

        return for_sample


def prompt_memory(samples: list[dict], stores: Stores) -> dict[str, dict[str, float]]:
    """What the per-prompt memory adds, by words and meaning and by keyword alone (see the module doc)."""
    ways: dict[str, Callable[[sqlite3.Connection, str], list[dict]]] = {
        "keyword": lambda conn, text: prompt_context.keyword_matches(conn, PROJECT, text, set(), 3)}
    if "hybrid" in available_modes():
        ways["hybrid"] = lambda conn, text: list(related.related(conn, PROJECT, text, "", 3)["items"])
    report = {}
    for way, ask in ways.items():
        added = spoke = asked = 0
        for position, sample in enumerate(samples):
            other = samples[(position + 1) % len(samples)]
            for qa in questions(sample):
                asked += 1
                by_id = stores.dia[sample["sample_id"]]
                found = {dia for item in ask(stores.conns[sample["sample_id"]], qa["question"])
                         for dia in by_id.get(int(item["id"]), [])}
                added += bool(found & set(qa["evidence"]))
                if other is not sample:
                    spoke += bool(ask(stores.conns[other["sample_id"]], qa["question"]))
        report[way] = {"evidence_added": round(added / asked, 3) if asked else 0.0,
                       "unrelated_spoke": round(spoke / asked, 3) if asked and len(samples) > 1 else None}
    return report


def baseline(samples: list[dict]) -> Callable[[dict], Callable[[str], list[str]]]:
    """Plain FTS5 BM25 over the same turns, one in-memory index per conversation."""
    indexes: dict[str, sqlite3.Connection] = {}
    for sample in samples:
        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE VIRTUAL TABLE turns USING fts5(dia_id UNINDEXED, text, tokenize='porter unicode61')")
        conn.executemany("INSERT INTO turns VALUES (?, ?)", turns(sample))
        indexes[sample["sample_id"]] = conn

    def for_sample(sample: dict) -> Callable[[str], list[str]]:
        conn = indexes[sample["sample_id"]]

        def ask(question: str) -> list[str]:
            words = re.findall(r"\w+", question.lower())
            expression = " OR ".join(f'"{w}"' for w in dict.fromkeys(words) if w not in fts.STOPWORDS and len(w) > 1)
            if not expression:
                return []
            rows = conn.execute("SELECT dia_id FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT ?",
                                (expression, max(KS))).fetchall()
            return [row[0] for row in rows]

        return ask

    return for_sample


def main(argv: list[str]) -> dict[str, object]:
    path = argv[argv.index("--data") + 1] if "--data" in argv else DATA
    with open(path, encoding="utf-8") as handle:
        samples = json.load(handle)
    report: dict[str, object] = {"data": os.path.basename(path), "conversations": len(samples)}
    with tempfile.TemporaryDirectory(prefix="bench-locomo-") as root:
        stores = Stores(root)
        for sample in samples:
            stores.load(sample)
        report["modes"] = {mode: score(samples, stores.asker(mode)) for mode in available_modes()}
        if "hybrid" in report["modes"]:  # issue 28: int8 vectors lose no more than 0.005 R@5 to float32
            exact = score(samples, stores.float32_asker())
            report["hybrid_float32"] = exact
            stored = report["modes"]["hybrid"]["R@5"]  # type: ignore[index]
            report["int8_vs_float32"] = {"hybrid_R@5_int8": stored, "hybrid_R@5_float32": exact["R@5"],
                                         "loss": round(float(exact["R@5"]) - float(stored), 4), "target_loss": 0.005}
        report["baseline"] = score(samples, baseline(samples))
        report["prompt_memory"] = prompt_memory(samples, stores)
        for conn in stores.conns.values():
            conn.close()
    return report


if __name__ == "__main__":
    result = main(sys.argv[1:])
    if "--json" in sys.argv:
        print(json.dumps(result))
    else:
        print(json.dumps(result, indent=2))
