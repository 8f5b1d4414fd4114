"""`python -m bench switch`: every hook under every value of `CLAUDE_MEM`, beside bare python."""

import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_switch_bench_reports_every_hook_under_every_value():
    result = subprocess.run([sys.executable, "-m", "bench", "switch", "--quick", "--json"], cwd=REPO,
                            capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "400"})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)["switch"]
    assert set(report["hooks"]) == {"session-start", "user-prompt", "post-tool"}
    for figures in report["hooks"].values():
        assert set(figures) == {"on", "off", "read", "write", "bare"}
        assert all(figures[mode]["cpu_ms"] > 0 and figures[mode]["cpu_ratio_to_bare"] > 0
                   for mode in ("on", "off", "read", "write"))
    assert set(report["within_target"]) == {"off", "read_session_start", "read_user_prompt"}
