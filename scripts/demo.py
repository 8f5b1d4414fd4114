"""`make demo`: claude-mem end to end in a throwaway data dir, the way a user would see it."""

import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.path.dirname(sys.executable)


def step(title: str) -> None:
    print(f"\n\033[1m== {title}\033[0m", flush=True)


def run(*args: str, env: dict[str, str]) -> None:
    print(f"$ {' '.join(args)}", flush=True)
    subprocess.run([os.path.join(BIN, args[0]), *args[1:]], env=env, check=True)


SESSION = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "tests", "fixtures", "hook-payloads", "session-edit")
HOOK_OF = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt", "PostToolUse": "post-tool",
           "Stop": "stop", "SessionEnd": "session-end"}


def capture_session(env: dict[str, str]) -> None:
    """Feed each recorded payload to `claude-mem hook …` on stdin, as Claude Code would."""
    for name in sorted(os.listdir(SESSION)):
        hook = HOOK_OF[name.split("-", 1)[1].split(".")[0]]
        print(f"$ claude-mem hook {hook} < {name}", flush=True)
        with open(os.path.join(SESSION, name), "rb") as payload:
            # autostart off: the demo shows capture alone and leaves no worker behind
            subprocess.run([os.path.join(BIN, "claude-mem"), "hook", hook], stdin=payload, check=True,
                           env={**env, "CLAUDE_MEM_AUTOSTART": "false"}, timeout=60)
        if hook == "session-start":
            print(flush=True)  # its JSON ends without a newline


def main() -> None:
    data_dir = tempfile.mkdtemp(prefix="claude-mem-demo-")
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir}
    try:
        step(f"A fresh data dir: {data_dir}")
        run("claude-mem", "status", env=env)
        step("Creating the store")
        run("claude-mem", "migrate", env=env)
        run("claude-mem", "status", env=env)
        step("Capturing a recorded Claude Code session through the real hook commands")
        capture_session(env)
        run("claude-mem", "status", env=env)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    print("\ndemo finished; the throwaway data dir was removed.")


if __name__ == "__main__":
    main()
