"""`python -m bench locomo --data FILE --json` scores any file in LoCoMo's layout: each conversation stored
as team memory is (sessions, authors, times), each question asked through the project's own `search()`
beside a plain BM25 baseline, evidence repaired or dropped, turn- and session-level recall, in the
documented JSON shape."""

import json
import os
import subprocess
import sys

from bench import bench_locomo

from claude_mem.recall.remember import default_title

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tiny_conversation(sample_id: str = "tiny-1") -> dict:
    sessions = {
        1: ("1:00 pm on 1 May, 2026", [("Ana", "I adopted a grey cat named Pixel last week."),
                                       ("Ben", "Nice! I started learning the cello."),
                                       ("Ana", "My sister visits from Lisbon in June."),
                                       ("Ben", "The cello teacher says my bowing improved.")]),
        2: ("9:30 am on 3 May, 2026", [("Ana", "We hiked the volcano trail on Saturday."),
                                       ("Ben", "Was it steep up there?"),
                                       ("Ana", "Yes, and windy at the top.")]),
    }
    conversation: dict = {"speaker_a": "Ana", "speaker_b": "Ben"}
    for number, (when, said) in sessions.items():
        conversation[f"session_{number}_date_time"] = when
        conversation[f"session_{number}"] = [{"speaker": speaker, "text": text, "dia_id": f"D{number}:{n + 1}"}
                                             for n, (speaker, text) in enumerate(said)]
    qa = [{"question": "What is the name of Ana's cat?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
          {"question": "Which instrument is Ben learning?", "answer": "cello", "evidence": ["D1:2", "D1:4"], "category": 1},
          # repaired: two ids in one entry
          {"question": "Where did Ana hike, and what is her cat called?", "answer": "volcano trail; Pixel",
           "evidence": ["D1:1; D2:1"], "category": 1},
          # one id names no turn: dropped, the other kept
          {"question": "Where does Ana's sister come from?", "answer": "Lisbon", "evidence": ["D", "D1:3"], "category": 4},
          # no id names a turn: the question is excluded
          {"question": "What did Ana bake?", "answer": "bread", "evidence": ["D:9:9"], "category": 4},
          # the evidence shares no word with the question, the turn before it does: turn recall 0 by plain
          # BM25 (session recall 1); search finds it through that neighbour's words
          {"question": "Which volcano trail?", "answer": "a steep one", "evidence": ["D2:2"], "category": 2}]
    return {"sample_id": sample_id, "qa": qa, "conversation": conversation}


def run_bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bench", "locomo", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": "400"})  # the table's rows on one line each


def test_locomo_bench_scores_a_file_in_locomo_layout(tmp_path):
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([tiny_conversation(f"tiny-{n}") for n in range(1, 5)]))
    result = run_bench("--data", str(data), "--conversations", "tiny-1,tiny-4", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)["locomo"]
    assert report["conversations"] == 2
    assert report["split_conversations"] == {"tune": ["tiny-1"], "check": ["tiny-4"]}  # by place in the file
    assert report["evidence"] == {"repaired": 2, "dropped": 4, "questions_excluded": 2}  # per conversation: 1, 2, 1
    keyword, baseline = report["modes"]["keyword"], report["baseline"]
    for figures in (keyword, baseline):
        assert figures["questions"] == 10
        assert {"R@5", "R@10", "session_R@5", "session_R@10", "top_sessions_R@5", "p50_ms", "p95_ms", "questions",
                "per_category", "per_conversation", "split"} <= set(figures)
        assert set(figures["per_category"]) == {"multi-hop", "temporal", "single-hop"}
        temporal = figures["per_category"]["temporal"]
        assert temporal["session_R@5"] == 1.0
        # plain BM25 finds the neighbour, not the turn; search finds the turn through its neighbour's words (m017)
        assert temporal["R@5"] == (1.0 if figures is keyword else 0.0)
        assert figures["per_category"]["single-hop"]["R@5"] == 1.0
        assert set(figures["per_conversation"]) == {"tiny-1", "tiny-4"}
        assert figures["split"]["tune"]["questions"] == figures["split"]["check"]["questions"] == 5
        assert figures["split"]["tune"]["R@5"] == figures["split"]["check"]["R@5"] == figures["R@5"]  # same talk
    assert baseline["R@5"] == 0.8 and keyword["R@5"] == 1.0  # each other question names its evidence's words
    assert {"modes", "baseline", "prompt_memory"} <= set(report)
    assert "LoCoMo turn R@5, keyword search" in result.stderr  # the table beside the JSON
    assert "2 repaired, 4 dropped, 2 excluded" in result.stderr


def test_bad_input_is_one_clear_line(tmp_path):
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([tiny_conversation()]))
    unknown = run_bench("--data", str(data), "--conversations", "conv-99")
    assert unknown.returncode == 1 and "unknown conv-99; the file has tiny-1" in unknown.stderr
    (tmp_path / "bad.json").write_text('{"not": "a list"}')
    for path in (tmp_path / "bad.json", tmp_path / "missing.json"):
        bad = run_bench("--data", str(path))
        assert bad.returncode == 1 and "bench locomo:" in bad.stderr and "Traceback" not in bad.stderr


def test_evidence_is_repaired_or_dropped():
    known = {"D1:1", "D1:2", "D2:1"}
    assert bench_locomo.clean_evidence(["D1:2", "D1:1; D2:1", "D", "D:11:26", "D1:1 D9:9"], known) == (
        ["D1:2", "D1:1", "D2:1"], 2, 3)
    assert bench_locomo.clean_evidence(["D"], known) == ([], 0, 1)
    assert bench_locomo.metrics(["D2:1", "D1:3"], ["D2:5"]) == {
        "R@5": 0.0, "R@10": 0.0, "session_R@5": 1.0, "session_R@10": 1.0, "top_sessions_R@5": 1.0,
        "top_sessions_R@10": 1.0}
    # top sessions: the evidence's session is the sixth distinct one of the ranking, within the top 10 turns
    ranked = [f"D{n}:1" for n in range(1, 7)]
    assert bench_locomo.top_sessions_recall_at(ranked, ["D6:4"], 5) == 0.0
    assert bench_locomo.top_sessions_recall_at(ranked, ["D6:4", "D1:9"], 10) == 1.0


def test_turns_are_stored_with_their_sessions_authors_and_times(tmp_path):
    sample = tiny_conversation()
    stores = bench_locomo.Stores(str(tmp_path))
    stores.load(sample)
    conn = stores.conns["tiny-1"]
    try:
        stored = conn.execute(
            "SELECT o.id, s.content_session_id, s.started_at, o.author, o.created_at, o.type, o.title, o.narrative"
            " FROM observations o JOIN sessions s ON s.id = o.session_id ORDER BY o.id").fetchall()
        assert conn.execute("SELECT COUNT(*) FROM observations WHERE session_id IS NULL").fetchone()[0] == 0
    finally:
        conn.close()
    texts = dict(bench_locomo.turns(sample))
    by_id = stores.dia["tiny-1"]
    assert [by_id[row[0]] for row in stored] == [[dia] for dia in texts]  # one row a turn, in order
    first, second, later = stored[0], stored[1], stored[5]
    assert first[1:6] == ("locomo-tiny-1-session-1", "2026-05-01T13:00:00.000Z", "Ana", "2026-05-01T13:00:00.000Z",
                          "discovery")
    assert second[3:5] == ("Ben", "2026-05-01T13:00:01.000Z")  # the session's time + the turn's index in seconds
    assert later[1:5] == ("locomo-tiny-1-session-2", "2026-05-03T09:30:00.000Z", "Ben", "2026-05-03T09:30:01.000Z")
    assert later[7] == texts["D2:2"] == "Ben: Was it steep up there? (9:30 am on 3 May, 2026)"
    assert later[6] == default_title(texts["D2:2"])
