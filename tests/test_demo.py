"""`make demo` is the first command of the README: CI runs the script it runs."""

import os
import subprocess
import sys

import pytest

from conftest import REPO


@pytest.mark.slow
def test_make_demo_script_runs_end_to_end(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    result = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "demo.py")], env=env,
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    out = result.stdout
    assert "queue drained: 7 done, 0 failed" in out
    assert "# claude-mem memory · project proj" in out and "hello.txt" in out
    assert "worker stopped" in out
    assert not any(name.startswith("claude-mem-demo-") for name in os.listdir(tmp_path))  # cleaned up
