"""`python -m bench locomo --data FILE --json` scores any file in LoCoMo's layout through the project's
own `remember` and `search()`, beside a plain BM25 baseline, in the documented JSON shape."""

import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tiny_conversation() -> list[dict]:
    turns = [("Ana", "I adopted a grey cat named Pixel last week."), ("Ben", "Nice! I started learning the cello."),
             ("Ana", "My sister visits from Lisbon in June."), ("Ben", "The cello teacher says my bowing improved.")]
    session = [{"speaker": speaker, "text": text, "dia_id": f"D1:{n + 1}"} for n, (speaker, text) in enumerate(turns)]
    qa = [{"question": "What is the name of Ana's cat?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
          {"question": "Which instrument is Ben learning?", "answer": "cello", "evidence": ["D1:2", "D1:4"], "category": 1},
          {"question": "Where does Ana's sister come from?", "answer": "Lisbon", "evidence": ["D1:3"], "category": 4}]
    return [{"sample_id": "tiny-1", "qa": qa, "conversation": {"speaker_a": "Ana", "speaker_b": "Ben",
                                                               "session_1_date_time": "1:00 pm on 1 May, 2026",
                                                               "session_1": session}}]


def test_locomo_bench_scores_a_file_in_locomo_layout(tmp_path):
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(tiny_conversation()))
    result = subprocess.run([sys.executable, "-m", "bench", "locomo", "--data", str(data), "--json"], cwd=REPO,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)["locomo"]
    keyword, baseline = report["modes"]["keyword"], report["baseline"]
    assert keyword["questions"] == baseline["questions"] == 3
    assert keyword["R@5"] == 1.0 and baseline["R@5"] == 1.0  # each question names its evidence's words
    assert set(keyword["per_category"]) == {"multi-hop", "single-hop"}
    assert "LoCoMo R@5, keyword search" in result.stderr  # the table beside the JSON
