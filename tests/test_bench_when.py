"""`python -m bench when`: the time-in-the-question figures on a tiny conversation in LoCoMo's layout,
where each answer is known by hand."""

import json

from bench import bench_when
from bench.__main__ import rows

CONVERSATION = {
    "speaker_a": "Ann", "speaker_b": "Bo",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I ran a race yesterday."}],
    "session_2_date_time": "10:00 am on 2 July, 2023",
    "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "We went camping."}],
}
QA = [
    {"question": "What did Ann do on 7 May, 2023?", "evidence": ["D1:1"], "category": 4},  # told a day later
    {"question": "Where did Bo go in July 2023?", "evidence": ["D2:1"], "category": 4},  # holds it
    {"question": "What did Ann do recently?", "evidence": ["D1:1"], "category": 4},  # relative to the last session
    {"question": "What happened after the race?", "evidence": ["D2:1"], "category": 1},  # an anchor
    {"question": "When did Ann run a race?", "evidence": ["D1:1"], "category": 2},  # names no time
    {"question": "Ignored: no evidence", "evidence": [], "category": 2},
    {"question": "Ignored: adversarial in May 2023", "evidence": ["D1:1"], "category": 5},
]


def test_figures_on_a_conversation_known_by_hand(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps([{"sample_id": "t", "conversation": CONVERSATION, "qa": QA}]))
    report = bench_when.main(["--data", str(path)])
    assert report["median_conversation_days"] == 54
    single, temporal, multi = (report["categories"][name] for name in ("single-hop", "temporal", "multi-hop"))
    assert (single["questions"], single["hinted"], single["windows"], single["anchors"]) == (3, 3, 3, 0)
    assert single["window_holds_all_evidence"] == 0.333  # only July holds its session; "recently" counts from 2 July
    assert (single["calendar_windows"], single["calendar_holds_all_evidence"]) == (2, 0.5)
    assert single["calendar_holds_all_within_a_week_after"] == 1.0  # 8 May is a day after 7 May
    assert single["median_window_days"] == 15.0  # 1, 15 and 31 days
    assert single["median_sessions_inside"] == 0.5  # of 2 sessions: none on 7 May, 1 in July, 1 in 18 June-2 July
    assert (temporal["questions"], temporal["hinted"], temporal["window_holds_all_evidence"]) == (1, 0, None)
    assert (multi["hinted"], multi["anchors"], multi["windows"]) == (1, 1, 0)
    assert report["calendar_misses"][0]["phrase"] == "on 7 May, 2023"
    assert report["calendar_misses"][0]["evidence_sessions"] == ["2023-05-08"]
    table = [figure for figure, *_ in rows({"when": report})]
    assert "time named in the question, LoCoMo single-hop (3 questions)" in table


def test_evidence_ids_name_sessions():
    assert bench_when.evidence_sessions(["D8:6; D9:17", "D10:2", "D:11:26", "nonsense"]) == [8, 9, 10]
