"""Retrieval quality on LoCoMo (Maharana et al., ACL 2024): does search find the turns a question needs?

`python -m bench locomo [--data FILE] [--conversations ID,ID] [--no-dates] [--json]`. Each conversation is stored as
memory is really stored (one data dir per conversation): through the write path that holds teammates'
rows (`store.team.apply_pulled`, one call — one transaction — per LoCoMo session, turns in order), each
LoCoMo session a `session` row started at its date, each turn an `observation` of that session written
by its speaker (`author`) at the session's time plus its index in seconds. Each question of categories
1–4 is asked through the project's own `search()` — what the CLI, MCP and HTTP API run.

Figures, overall, per category, per conversation and on the tune/check split:
- turn-level R@k = |evidence ∩ top k| / |evidence|, averaged over questions;
- session-level R@k (`session_R@k`) = |sessions of the evidence ∩ sessions of the top k turns| /
  |sessions of the evidence| (a dia_id `D8:6` is session 8), and `top_sessions_R@k`, the granularity
  session-retrieval peers publish: the same share among the first k distinct sessions of the ranking
  (its top 10 turns) — issue 29's "session R@5 0.874" is this one;
- p50 / p95 latency, each mode timed on its own: the kept query embeddings are dropped before each
  mode, so every mode's times include embedding its own queries.
The baseline, computed in the same run over the same turns, is plain FTS5 BM25 (porter) over an OR of
the quoted terms minus stop-words (`reference/retrieval.md`: 0.553 R@5 on dev).

Evidence is made honest first: an id that names no turn as written is repaired when splitting it on
`;`/whitespace gives ids that do (`'D8:6; D9:17'`), dropped otherwise (`'D'`, `'D:11:26'`), and a question
left with no evidence is excluded; `evidence` reports the counts.

Split: the lead tunes ranking on the first three conversations of the file (`tune`) and checks that a
gain holds on the rest (`check`); both are reported whatever `--conversations` selects.

It also scores the per-prompt memory (`prompt_context`): each question is asked as a prompt of its
own conversation and of the next one (where nothing is relevant); `evidence_added` is the share of
questions whose evidence the hook would add, `unrelated_spoke` the share of unrelated prompts that
would get anything — by words and meaning (what the worker answers) and by keyword alone (the hook's
fallback). Their thresholds (`recall/prompt_context.py`) were chosen on the dev split with these.

The default data is the dev split (`bench/data/locomo`, conversations 1–5, CC BY-NC 4.0: see the
README there); tune on it only. `--data` scores any file in LoCoMo's JSON layout the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.bench_search import forget_query_embeddings  # a mode asked after another would look free
from claude_mem.domain import iso
from claude_mem.index import fts
from claude_mem.index.query import SearchQuery
from claude_mem.index.search import available_modes, search
from claude_mem.recall import prompt_context, related
from claude_mem.recall.remember import default_title
from claude_mem.store import context_field, db, team
from claude_mem.store.search import SearchFilters

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "locomo", "locomo-dev.json")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
PROJECT = "/bench/locomo"
KS = (5, 10)
TUNE_CONVERSATIONS = 3  # the first three of the file: tune on them, check on the rest
DEVICE = "locomo"  # the pulled rows' device: they are "a teammate's"
WHEN_FORMAT = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"
UNDATED = datetime(2000, 1, 1, tzinfo=UTC)  # a session with no date: this, plus a day per session number
Ask = Callable[[str], list[str]]
Asker = Callable[[dict], Ask]


class BadData(SystemExit):
    """Input the benchmark cannot score: one clear line on stderr, exit status 1, no traceback."""

    def __init__(self, message: str) -> None:
        super().__init__(f"bench locomo: {message}")


# -- the conversation ------------------------------------------------------------------------------


def session_time(text: str, number: int) -> datetime:
    """When LoCoMo's session `number` happened (`session_N_date_time`, taken as UTC)."""
    try:
        return datetime.strptime(text.strip(), WHEN_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return UNDATED + timedelta(days=number)


# Each turn's text ends with its session's date, as the published retrieval protocol stores it; with
# `--no-dates` it does not (as in a memory, whose rows carry their time in `created_at` only): what a date
# in the question can do without words to match (`index.priors`' time window).
DATES_IN_TEXT = True


def sessions(sample: dict) -> list[tuple[int, str, list[tuple[str, str, str]]]]:
    """(number, date text, [(dia_id, speaker, text)]) for every session in order; a turn's text is the
    speaker, what they said, the caption of a shared image and the session's date."""
    conversation = sample["conversation"]
    found = []
    for key in sorted((k for k in conversation if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])):
        when = conversation.get(f"{key}_date_time", "")
        said = []
        for turn in conversation[key]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares an image: {turn['blip_caption']}]"
            said.append((turn["dia_id"], turn["speaker"], f"{text} ({when})" if when and DATES_IN_TEXT else text))
        found.append((int(key.split("_")[1]), when, said))
    return found


def turns(sample: dict) -> list[tuple[str, str]]:
    """(dia_id, text) for every turn, in order."""
    return [(dia_id, text) for _number, _when, said in sessions(sample) for dia_id, _speaker, text in said]


def session_of(dia_id: str) -> int | None:
    """The session number of a dia_id (`D8:6` → 8)."""
    found = re.fullmatch(r"D(\d+):\d+", dia_id)
    return int(found.group(1)) if found else None


# -- evidence --------------------------------------------------------------------------------------


def clean_evidence(evidence: Iterable[str], known: set[str]) -> tuple[list[str], int, int]:
    """(the evidence ids that name a stored turn, entries repaired, ids dropped). An entry that names
    no turn as written is split on `;`/whitespace; it is repaired when a part names one, and every part
    that names none is dropped."""
    kept: list[str] = []
    repaired = dropped = 0
    for entry in evidence:
        entry = str(entry).strip()
        if entry in known:
            kept.append(entry)
            continue
        parts = [part for part in re.split(r"[;,\s]+", entry) if part]
        found = [part for part in parts if part in known]
        repaired += bool(found)
        dropped += (len(parts) - len(found)) if found else 1
        kept += found
    return list(dict.fromkeys(kept)), repaired, dropped


def questions(sample: dict) -> list[dict]:
    """The questions of categories 1–4, each with its evidence cleaned; those left with none are out."""
    known = {dia_id for dia_id, _text in turns(sample)}
    found = []
    for qa in sample["qa"]:
        if qa.get("category") in CATEGORIES and qa.get("evidence"):
            evidence = clean_evidence(qa["evidence"], known)[0]
            if evidence:
                found.append({**qa, "evidence": evidence})
    return found


def evidence_report(samples: list[dict]) -> dict[str, int]:
    """How many evidence entries were repaired, ids dropped, and questions excluded for lack of any."""
    repaired = dropped = excluded = 0
    for sample in samples:
        known = {dia_id for dia_id, _text in turns(sample)}
        for qa in sample["qa"]:
            if qa.get("category") in CATEGORIES and qa.get("evidence"):
                kept, fixed, lost = clean_evidence(qa["evidence"], known)
                repaired, dropped, excluded = repaired + fixed, dropped + lost, excluded + (not kept)
    return {"repaired": repaired, "dropped": dropped, "questions_excluded": excluded}


# -- scoring ---------------------------------------------------------------------------------------


def recall_at(ranked: list[str], evidence: list[str], k: int) -> float:
    wanted = set(evidence)
    return len(wanted & set(ranked[:k])) / len(wanted)


def session_recall_at(ranked: list[str], evidence: list[str], k: int) -> float:
    wanted = {session_of(dia_id) for dia_id in evidence}
    return len(wanted & {session_of(dia_id) for dia_id in ranked[:k]}) / len(wanted)


def top_sessions_recall_at(ranked: list[str], evidence: list[str], k: int) -> float:
    """Session-level recall as session retrieval ranks it: the share of the evidence's sessions among the
    first `k` distinct sessions of the ranking (of its top `max(KS)` turns)."""
    wanted = {session_of(dia_id) for dia_id in evidence}
    return len(wanted & set(list(dict.fromkeys(session_of(dia_id) for dia_id in ranked))[:k])) / len(wanted)


def metrics(ranked: list[str], evidence: list[str]) -> dict[str, float]:
    return {**{f"R@{k}": recall_at(ranked, evidence, k) for k in KS},
            **{f"session_R@{k}": session_recall_at(ranked, evidence, k) for k in KS},
            **{f"top_sessions_R@{k}": top_sessions_recall_at(ranked, evidence, k) for k in KS}}


def mean(values: list[dict[str, float]], names: Iterable[str]) -> dict[str, float]:
    return {name: round(statistics.fmean(value[name] for value in values), 3) for name in names}


def score(samples: list[dict], ask_for: Asker, positions: dict[str, int] | None = None) -> dict[str, object]:
    """Turn- and session-level R@k overall, per category, per conversation and on the tune/check split,
    and latency, for one way of asking (`positions`: each sample's place in the file, default its place
    in `samples`)."""
    positions = positions or {sample["sample_id"]: n for n, sample in enumerate(samples)}
    forget_query_embeddings()
    found: list[tuple[str, str, dict[str, float]]] = []  # (sample id, category, metrics)
    times: list[float] = []
    for sample in samples:
        ask = ask_for(sample)
        for qa in questions(sample):
            started = time.perf_counter()
            ranked = ask(qa["question"])
            times.append((time.perf_counter() - started) * 1000)
            found.append((sample["sample_id"], CATEGORIES[qa["category"]], metrics(ranked, qa["evidence"])))
    if not found:
        raise BadData("no question of categories 1-4 with evidence that names a turn")
    times.sort()
    names = list(found[0][2])
    by = {"category": {name: [m for _s, c, m in found if c == name] for name in CATEGORIES.values()},
          "sample": {sample["sample_id"]: [m for s, _c, m in found if s == sample["sample_id"]] for sample in samples},
          "split": {"tune": [m for s, _c, m in found if positions[s] < TUNE_CONVERSATIONS],
                    "check": [m for s, _c, m in found if positions[s] >= TUNE_CONVERSATIONS]}}
    return {
        **mean([m for _s, _c, m in found], names),
        "p50_ms": round(statistics.median(times), 2), "p95_ms": round(times[max(0, int(len(times) * 0.95) - 1)], 2),
        "questions": len(times),
        "per_category": {name: mean(values, names) for name, values in by["category"].items() if values},
        "per_conversation": {name: mean(values, ["R@5"])["R@5"] for name, values in by["sample"].items() if values},
        "split": {part: {**mean(values, ["R@5", "session_R@5", "top_sessions_R@5"]), "questions": len(values)}
                  for part, values in by["split"].items() if values},
    }


# -- the stores ------------------------------------------------------------------------------------


def pulled_rows(sample: dict) -> list[tuple[list[team.TeamRow], dict[str, list[str]]]]:
    """Per LoCoMo session: the rows a teammate's machine would push ({uid, kind, project, author,
    device, payload, deleted, rev}: the session, then its turns in order), and observation uid →
    the dia_ids it holds (a turn said twice in one session is stored once)."""
    found = []
    rev = 0
    for number, when, said in sessions(sample):
        started = session_time(when, number)
        session_uid = uuid.uuid4().hex
        csid = f"locomo-{sample['sample_id']}-session-{number}"
        last = iso((started + timedelta(seconds=max(0, len(said) - 1))).timestamp())
        rev += 1
        batch: list[team.TeamRow] = [{
            "uid": session_uid, "kind": "session", "project": PROJECT, "author": None, "device": DEVICE,
            "deleted": False, "rev": rev,
            "payload": {"content_session_id": csid, "title": f"{sample['sample_id']} session {number}",
                        "status": "completed", "started_at": iso(started.timestamp()), "ended_at": last,
                        "last_activity_at": last}}]
        dia: dict[str, list[str]] = {}
        by_hash: dict[str, str] = {}
        for index, (dia_id, speaker, text) in enumerate(said):
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            if digest in by_hash:
                dia[by_hash[digest]].append(dia_id)
                continue
            uid = by_hash[digest] = uuid.uuid4().hex
            dia[uid] = [dia_id]
            rev += 1
            batch.append({
                "uid": uid, "kind": "observation", "project": PROJECT, "author": speaker, "device": DEVICE,
                "deleted": False, "rev": rev,
                "payload": {"session_uid": session_uid, "content_session_id": csid,
                            "session_started_at": iso(started.timestamp()), "type": "discovery",
                            "title": default_title(text), "narrative": text, "content_hash": digest,
                            "created_at": iso((started + timedelta(seconds=index)).timestamp())}})
        found.append((batch, dia))
    return found


class Stores:
    """One data dir per conversation, each LoCoMo session stored as a teammate's pulled session with its
    turns as observations (`pulled_rows`); observation id → dia_ids."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.conns: dict[str, sqlite3.Connection] = {}
        self.dia: dict[str, dict[int, list[str]]] = {}
        self.floats: dict[str, dict[int, object]] = {}

    def load(self, sample: dict) -> None:
        conn = db.connect(db.db_path(os.path.join(self.root, sample["sample_id"])))
        by_uid: dict[str, list[str]] = {}
        for batch, dia in pulled_rows(sample):
            applied = team.apply_pulled(conn, batch, {PROJECT: PROJECT})  # one transaction per session
            if applied["stored"] != len(batch):
                raise RuntimeError(f"{sample['sample_id']}: {applied} of {len(batch)} rows stored")
            by_uid.update(dia)
        by_id = {int(row_id): by_uid[uid] for row_id, uid in conn.execute("SELECT id, uid FROM observations")
                 if uid in by_uid}
        context_field.settle(conn)  # what the worker's context service does within a second of each write
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

    def float32_asker(self) -> Asker:
        """Hybrid search as `semantic.HybridIndex` ranks it (`semantic.hybrid_scores`: the same candidates,
        priors and fusion), with exact float32 cosines over every vector instead of the stored int8 ones (and
        no vector index): the baseline of compact storage."""
        import numpy as np

        from claude_mem.index import embedder, semantic
        from claude_mem.store import search as repository

        def for_sample(sample: dict) -> Ask:
            conn, by_id = self.conns[sample["sample_id"]], self.dia[sample["sample_id"]]
            floats = self.floats[sample["sample_id"]]
            ids = np.array(list(floats), dtype=np.int64)
            times = {row_id: hit["created_at"] for row_id, hit in repository.observations_by_id(conn, list(floats)).items()}
            matrix = np.stack(list(floats.values()))

            stamps = np.array([str(times[int(row_id)]) for row_id in ids])

            def ask(question: str) -> list[str]:
                wanted = SearchQuery.build(question, mode="hybrid", project=PROJECT, limit=max(KS))
                cosines = matrix @ embedder.shared().embed([question])[0]

                def nearest(filters: SearchFilters, count: int) -> list[tuple[int, float]]:
                    inside = np.ones(len(ids), dtype=bool)  # every row is the project's: only the dates narrow
                    if filters.since:
                        inside &= stamps >= filters.since
                    if filters.until:
                        inside &= stamps < filters.until
                    scores = np.where(inside, cosines, -np.inf)
                    best = np.argsort(-scores, kind="stable")[:count]
                    return [(int(ids[i]), float(cosines[i])) for i in best if inside[i]]

                fused = semantic.hybrid_scores(conn, wanted, fts.keyword_expression(question), nearest)
                ranked = sorted(fused.items(), key=lambda item: (-item[1], -item[0]))[:max(KS)]
                return [dia for row_id, _score in ranked for dia in by_id.get(row_id, [])]

            return ask

        return for_sample

    def asker(self, mode: str) -> Asker:
        def for_sample(sample: dict) -> Ask:
            conn, by_id = self.conns[sample["sample_id"]], self.dia[sample["sample_id"]]

            def ask(question: str) -> list[str]:
                found = search(conn, SearchQuery.build(question, mode=mode, project=PROJECT, limit=max(KS)))
                return [dia for item in found.items for dia in by_id.get(int(item["id"]), [])]

            return ask

        return for_sample


def prompt_memory(samples: list[dict], stores: Stores) -> dict[str, dict[str, float | None]]:
    """What the per-prompt memory adds, by words and meaning and by keyword alone (see the module doc)."""
    ways: dict[str, Callable[[sqlite3.Connection, str], list[dict]]] = {
        "keyword": lambda conn, text: prompt_context.keyword_matches(conn, PROJECT, text, set(), 3)}
    if "hybrid" in available_modes():
        ways["hybrid"] = lambda conn, text: list(related.related(conn, PROJECT, text, "", 3)["items"])
    report: dict[str, dict[str, float | None]] = {}
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


def baseline(samples: list[dict]) -> Asker:
    """Plain FTS5 BM25 over the same turns, one in-memory index per conversation."""
    indexes: dict[str, sqlite3.Connection] = {}
    for sample in samples:
        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE VIRTUAL TABLE turns USING fts5(dia_id UNINDEXED, text, tokenize='porter unicode61')")
        conn.executemany("INSERT INTO turns VALUES (?, ?)", turns(sample))
        indexes[sample["sample_id"]] = conn

    def for_sample(sample: dict) -> Ask:
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


# -- the run ---------------------------------------------------------------------------------------


def option(argv: list[str], name: str) -> str | None:
    if name not in argv:
        return None
    at = argv.index(name) + 1
    if at >= len(argv) or argv[at].startswith("--"):
        raise BadData(f"{name} needs a value")
    return argv[at]


def read_samples(path: str) -> list[dict[str, Any]]:
    """The conversations of a file in LoCoMo's layout; BadData says what is wrong with it."""
    try:
        with open(path, encoding="utf-8") as handle:
            samples = json.load(handle)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadData(f"cannot read {path}: {error}") from None
    if not isinstance(samples, list) or not all(
            isinstance(s, dict) and isinstance(s.get("conversation"), dict) and isinstance(s.get("qa"), list)
            and "sample_id" in s for s in samples):
        raise BadData(f"{path} is not in LoCoMo's layout (a list of {{sample_id, conversation, qa}})")
    return samples


def main(argv: list[str]) -> dict[str, object]:
    global DATES_IN_TEXT
    DATES_IN_TEXT = "--no-dates" not in argv
    path = option(argv, "--data") or DATA
    everything = read_samples(path)
    positions = {sample["sample_id"]: n for n, sample in enumerate(everything)}
    samples = everything
    chosen = option(argv, "--conversations")
    if chosen is not None:
        wanted = [name.strip() for name in chosen.split(",") if name.strip()]
        unknown = [name for name in wanted if name not in positions]
        if unknown or not wanted:
            raise BadData(f"--conversations: unknown {', '.join(unknown) or '(none given)'}; the file has "
                          f"{', '.join(positions)}")
        samples = [sample for sample in everything if sample["sample_id"] in wanted]
    report: dict[str, object] = {
        "data": os.path.basename(path), "conversations": len(samples), "dates_in_text": DATES_IN_TEXT,
        "split_conversations": {part: [s["sample_id"] for s in samples if (positions[s["sample_id"]] < TUNE_CONVERSATIONS)
                                       == (part == "tune")] for part in ("tune", "check")},
        "evidence": evidence_report(samples)}
    with tempfile.TemporaryDirectory(prefix="bench-locomo-") as root:
        stores = Stores(root)
        for sample in samples:
            stores.load(sample)
        report["modes"] = {mode: score(samples, stores.asker(mode), positions) for mode in available_modes()}
        if "hybrid" in report["modes"]:  # issue 28: int8 vectors lose no more than 0.005 R@5 to float32
            exact = score(samples, stores.float32_asker(), positions)
            report["hybrid_float32"] = exact
            stored = report["modes"]["hybrid"]["R@5"]  # type: ignore[index]
            report["int8_vs_float32"] = {"hybrid_R@5_int8": stored, "hybrid_R@5_float32": exact["R@5"],
                                         "loss": round(float(exact["R@5"]) - float(stored), 4), "target_loss": 0.005}
        report["baseline"] = score(samples, baseline(samples), positions)
        forget_query_embeddings()
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
