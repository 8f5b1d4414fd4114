"""The real hook processes: `claude-mem hook session-start` and `user-prompt` with recall wired in."""

import json
import os
import subprocess
import sys

import pytest

from claude_mem.store import db
from recall_seed import add_observation, seed_project, stamp

HOOK_CODE = (
    "import sys\n"
    "from claude_mem.hooks.runner import run_from_argv\n"
    "code = run_from_argv(sys.argv[1:])\n"
    "heavy = sorted({'typing', 'dataclasses', 'pathlib', 'logging', 'click', 'rich'} & set(sys.modules))\n"
    "sys.stderr.write('LOADED-HEAVY ' + ','.join(heavy) + '\\n')\n"
    "sys.exit(code)\n"
)


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return str(root)


def hook(data_dir, name: str, payload: dict, **env: str) -> tuple[dict | None, str]:
    environment = {**os.environ, "CLAUDE_MEM_DATA_DIR": str(data_dir), "CLAUDE_MEM_AUTOSTART": "false", **env}
    done = subprocess.run([sys.executable, "-c", HOOK_CODE, name], input=json.dumps(payload).encode(),
                          capture_output=True, timeout=60, env=environment)
    assert done.returncode == 0, done.stderr
    stdout = done.stdout.decode()
    return (json.loads(stdout) if stdout.strip() else None), done.stderr.decode()


def payload(project: str, event: str, **extra: object) -> dict:
    return {"session_id": "sess-hook", "transcript_path": "/tmp/t.jsonl", "cwd": project, "hook_event_name": event, **extra}


def test_session_start_injects_the_index_then_resume_only_news(data_dir, project):
    out, err = hook(data_dir, "session-start", payload(project, "SessionStart", source="startup"))
    assert "no memory stored yet" in out["hookSpecificOutput"]["additionalContext"]
    assert "LOADED-HEAVY \n" in err  # the hook path stays light
    conn = db.connect(db.db_path(str(data_dir)))
    ids = seed_project(conn, project, 30)
    out, _ = hook(data_dir, "session-start", payload(project, "SessionStart", source="startup"))
    text = out["hookSpecificOutput"]["additionalContext"]
    assert all(f"#{i} " in text for i in ids)
    assert out["systemMessage"].startswith("claude-mem: 30 observation(s) of proj in context")
    injected = conn.execute("SELECT last_injected_at FROM sessions WHERE content_session_id = 'sess-hook'").fetchone()[0]
    assert injected
    out, _ = hook(data_dir, "session-start", payload(project, "SessionStart", source="resume"))
    assert "Nothing new was stored" in out["hookSpecificOutput"]["additionalContext"]
    newer = add_observation(conn, project, "Resume now shows only what is new", created_at=stamp(-0.01))
    out, _ = hook(data_dir, "session-start", payload(project, "SessionStart", source="resume"))
    text = out["hookSpecificOutput"]["additionalContext"]
    assert f"#{newer} " in text and f"#{ids[0]} " not in text
    conn.close()


def test_user_prompt_adds_matching_memory_unless_disabled(data_dir, project):
    conn = db.connect(db.db_path(str(data_dir)))
    seed_project(conn, project, 10)
    target = add_observation(conn, project, "Billing webhook retries use exponential backoff", kind="decision")
    conn.close()
    prompt = payload(project, "UserPromptSubmit", prompt="How do the billing webhook retries work?")
    out, _ = hook(data_dir, "user-prompt", prompt, CLAUDE_MEM_PROMPT_CONTEXT="false")
    assert out is None
    out, err = hook(data_dir, "user-prompt", prompt)  # on by default
    text = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert text.splitlines()[1].startswith(f"#{target} ")
    assert len(text) // 4 <= 300
    assert "LOADED-HEAVY \n" in err
    private = payload(project, "UserPromptSubmit", prompt="<private>billing webhook retries</private>")
    out, _ = hook(data_dir, "user-prompt", private, CLAUDE_MEM_PROMPT_CONTEXT="true")
    assert out is None
