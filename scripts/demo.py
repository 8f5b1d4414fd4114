"""`make demo`: claude-mem end to end in a throwaway data dir, the way a user would see it."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

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


def wait_for_observer(env: dict[str, str], timeout: float = 60) -> None:
    """Poll `status --json` until the worker has processed every captured event."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run([os.path.join(BIN, "claude-mem"), "status", "--json"], env=env,
                             capture_output=True, text=True, check=True)
        events = json.loads(out.stdout)["store"]["counts"]["events"]
        if events["pending"] == 0 and events["claimed"] == 0:
            print(f"queue drained: {events['done']} done, {events['failed']} failed", flush=True)
            return
        time.sleep(0.3)
    raise SystemExit("demo: the worker did not process the events in time (see logs/worker.log)")


def main() -> None:
    data_dir = tempfile.mkdtemp(prefix="claude-mem-demo-")
    # The offline observer needs no LLM or login; port 0 avoids clashing with a real worker.
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir, "CLAUDE_MEM_PROVIDER": "offline",
           "CLAUDE_MEM_WORKER_PORT": "0"}
    worker_started = False
    try:
        step(f"A fresh data dir: {data_dir}")
        run("claude-mem", "status", env=env)
        step("Capturing a recorded Claude Code session through the real hook commands")
        capture_session(env)
        run("claude-mem", "queue", env=env)
        step("The worker's observer (offline provider) turns the events into memory")
        run("claude-mem", "worker", "start", env=env)
        worker_started = True
        wait_for_observer(env)
        run("claude-mem", "status", env=env)
        step("Searching memory")
        run("claude-mem", "search", "hello", env=env)
        step("What the next Claude Code session in /home/dev/proj starts with")
        run("claude-mem", "context", "--project", "/home/dev/proj", env=env)
    finally:
        if worker_started:
            subprocess.run([os.path.join(BIN, "claude-mem"), "worker", "stop"], env=env, timeout=60)
        shutil.rmtree(data_dir, ignore_errors=True)
    print("\ndemo finished; the worker was stopped and the throwaway data dir removed.")
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    print(f"Next: `claude --plugin-dir {checkout}` to give your own sessions memory, and "
          "`claude-mem viewer` to watch it being made.")


if __name__ == "__main__":
    main()
