"""The repository root is a Claude Code plugin whose hooks every supported CLI accepts."""

import json
import os
import shlex
import subprocess
import sys

from conftest import REPO
from hook_support import HOOKS_JSON, load, plugin_command

# What Claude Code 2.0.77 knows: an older CLI that meets any other event name drops ALL hooks.
EVENTS_2_0_77 = {"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd",
                 "PreToolUse", "Notification", "SubagentStop", "PreCompact", "SubagentStart", "PermissionRequest"}


def test_plugin_manifest():
    manifest = json.load(open(os.path.join(REPO, ".claude-plugin", "plugin.json"), encoding="utf-8"))
    assert manifest["name"] == "persistent-memory"
    assert not os.path.exists(os.path.join(REPO, ".claude-plugin", "hooks.json"))  # components sit at the root


def test_hooks_json_registers_only_what_2_0_77_knows():
    config = json.load(open(HOOKS_JSON, encoding="utf-8"))
    registered = set(config["hooks"])
    assert registered == {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop",
                          "SessionEnd"}
    assert registered <= EVENTS_2_0_77
    for groups in config["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                assert handler["type"] == "command"
                # Shell form: 2.0.77 has no exec-form `args` (it would run a bare python3 on the payload).
                assert "args" not in handler
                argv = shlex.split(handler["command"])
                assert argv[:3] == ["python3", "-I", "-S"]
                assert argv[3] == "${CLAUDE_PLUGIN_ROOT}/scripts/hook.py"
                assert argv[4] in ("session-start", "user-prompt", "pre-tool", "post-tool", "stop", "session-end")


def test_hook_command_runs_through_a_shell_with_plugin_root_set(data_dir):
    """Exactly what Claude Code does: `sh -c <command>` with CLAUDE_PLUGIN_ROOT in the environment."""
    config = json.load(open(HOOKS_JSON, encoding="utf-8"))
    command = config["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    bindir = os.path.dirname(sys.executable)
    env = {**os.environ, "CLAUDE_PLUGIN_ROOT": REPO, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
           "CLAUDE_MEM_AUTOSTART": "false"}
    payload = json.dumps(load("session-edit/06-PostToolUse.Bash.json")).encode()
    result = subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True, env=env, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert os.path.exists(data_dir / "claude-mem.db")


def test_launcher_refuses_an_old_python_politely(data_dir):
    launcher = os.path.join(REPO, "scripts", "hook.py")
    code = f"import sys; sys.version_info = (3, 10, 4); sys.argv = [{launcher!r}, 'post-tool']; exec(open({launcher!r}).read())"
    result = subprocess.run([sys.executable, "-I", "-S", "-c", code], input=b"{}", capture_output=True, timeout=60)
    assert result.returncode == 0 and result.stdout == b""
    assert result.stderr.decode().strip() == "claude-mem: hooks need Python >= 3.11 as python3 (found 3.10); nothing captured"
    assert not os.path.exists(data_dir)


def test_plugin_command_helper_matches_hooks_json():
    assert plugin_command("stop")[-1] == "stop"
