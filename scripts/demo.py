"""`make demo`: two Claude Code sessions replayed through the real hooks, then what memory gives back.

Everything happens in one throwaway directory (the project, a data dir, a HOME): the worker it starts
uses the `offline` observer (no LLM, no login) on a free port, and is stopped, and the directory
removed, when the demo ends — also on failure or Ctrl-C.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import demo_story as story  # noqa: E402  (beside this script, not an installed module)

CLAUDE_MEM = os.path.join(os.path.dirname(sys.executable), "claude-mem")
CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WIDTH = 100
BOLD, DIM, RESET = ("\033[1m", "\033[2m", "\033[0m") if sys.stdout.isatty() else ("", "", "")
# The session-start index lists the newest notes; the demo keeps it short, so that session 2's prompt
# can show how an older note comes back when a prompt needs it (the default is 50).
INDEX_SIZE = 3
KEYWORD_QUERY = "retry"
# Shares no word with anything stored (`--mode keyword` finds nothing), but means the failed run of turn 1.
MEANING_QUERY = "the job crashed"
TIMELINE_ANCHOR = "attempt"  # words: the timeline centres on their best match


class DemoError(Exception):
    """A step of the demo did not do what it should: the message says which."""


def step(number: int, title: str) -> None:
    print(f"\n{BOLD}{number}. {title}{RESET}", flush=True)


def say(text: str, indent: str = "   ", first: str | None = None) -> None:
    """`text` wrapped, each line indented (the first line by `first` when given)."""
    print(textwrap.fill(text, WIDTH, initial_indent=indent if first is None else first, subsequent_indent=indent),
          flush=True)


def block(text: str, indent: str = "   │ ") -> None:
    for line in text.splitlines():
        print(f"{indent}{line}".rstrip(), flush=True)


def run(env: dict[str, str], *args: str, show: bool = True, stdin: str | None = None, timeout: float = 60,
        own_session: bool = False) -> str:
    """`claude-mem ARGS…`; its stdout (printed as it would be in a terminal when `show`). With
    `own_session`, a Ctrl-C in the terminal does not reach it."""
    if show:
        print(f"   $ claude-mem {' '.join(_quote(a) for a in args)}", flush=True)
    try:
        done = subprocess.run([CLAUDE_MEM, *args], env=env, input=stdin, capture_output=True, text=True,
                              timeout=timeout, start_new_session=own_session)
    except subprocess.TimeoutExpired as exc:
        raise DemoError(f"`claude-mem {' '.join(args)}` did not finish within {timeout:.0f} s") from exc
    if done.returncode != 0:
        raise DemoError(f"`claude-mem {' '.join(args)}` exited with {done.returncode}: "
                        f"{(done.stderr or done.stdout).strip()[-800:]}")
    if show:
        block(done.stdout, indent="   ")
    return done.stdout


def _quote(arg: str) -> str:
    return f'"{arg}"' if " " in arg else arg


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """A Ctrl-C during the block takes effect after it (a worker half started could not be stopped)."""
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


# -- session 1: capture -------------------------------------------------------------------------


def _tool_label(payload: dict[str, Any], project: str) -> str:
    tool, given = payload["tool_name"], payload.get("tool_input") or {}
    failed = " ✗" if payload["hook_event_name"] == "PostToolUseFailure" else ""
    if tool == "Bash":
        command = given["command"]
        return f"Bash{failed} `{command if len(command) <= 50 else command[:49] + '…'}`"
    path = str(given.get("file_path") or given.get("path") or "")
    return f"{tool}{failed} {os.path.relpath(path, project) + '/' if os.path.isdir(path) else os.path.basename(path)}"


def capture(env: dict[str, str], session: story.Session) -> None:
    """Pipe each payload into `claude-mem hook <name>`, as Claude Code does; print the story compactly."""
    tools: list[str] = []
    turn = 0
    for hook, payload in session.events:
        run(env, "hook", hook, show=False, stdin=json.dumps(payload))
        if hook == "session-start":
            say(f"SessionStart ({payload['source']}): a new project, nothing in memory yet")
        elif hook == "user-prompt":
            turn += 1
            print(flush=True)
            say(f"› {payload['prompt']}", indent="           ", first=f"   turn {turn}  ")
        elif hook == "post-tool":
            tools.append(_tool_label(payload, session.project))
        elif hook == "stop":
            say(" · ".join(tools), indent="           ")
            tools = []
            message = payload["last_assistant_message"]
            say(f"{DIM}Claude: {message[:160] + '…' if len(message) > 160 else message}{RESET}", indent="           ")
        elif hook == "session-end":
            print(flush=True)
            say(f"SessionEnd ({payload['reason']})")


# -- the worker -----------------------------------------------------------------------------------


def status(env: dict[str, str]) -> dict[str, Any]:
    return dict(json.loads(run(env, "status", "--json", show=False)))


def wait_for(env: dict[str, str], ready: Callable[[dict[str, Any]], bool], what: str,
             timeout: float = 90) -> dict[str, Any]:
    """Poll `claude-mem status --json` until `ready(status)`; the last status."""
    deadline = time.monotonic() + timeout
    while True:
        current = status(env)
        if ready(current):
            return current
        if time.monotonic() > deadline:
            raise DemoError(f"{what} did not happen within {timeout:.0f} s (see the worker's log in "
                            f"{current['store']['data_dir']}/logs/)")
        time.sleep(0.2)


def drained(current: dict[str, Any]) -> bool:
    events = current["store"]["counts"]["events"]
    return bool(events["pending"] == 0 and events["claimed"] == 0)


def vectors(current: dict[str, Any]) -> dict[str, Any]:
    return dict((current.get("worker") or {}).get("health", {}).get("vectors") or {})


def embedded(current: dict[str, Any]) -> bool:
    found = vectors(current)
    if found and not found.get("available", True):
        raise DemoError(f"search by meaning is off: {found.get('reason')}")
    return bool(found.get("total")) and found.get("embedded") == found.get("total")


# -- the demo -------------------------------------------------------------------------------------


def demo(root: str, env: dict[str, str]) -> None:
    project = os.path.join(root, story.PROJECT_NAME)
    os.makedirs(project)
    first, second = story.build(project, os.path.join(root, "home"))
    print(f"{BOLD}claude-mem demo{RESET}: two Claude Code sessions on a small project, replayed through the real "
          "hooks, then what memory gives back.")
    say(f"project  {project}", indent="   ")
    say(f"data dir {env['CLAUDE_MEM_DATA_DIR']} (throwaway; ~/.claude-mem-py and ~/.claude are not touched)",
        indent="   ")

    step(1, "Session 1: Claude adds retry with backoff to the project's HTTP client")
    say("Each event is Claude Code's hook JSON piped into `claude-mem hook <name>` (✗: the command failed):")
    capture(env, first)
    queued = status(env)["store"]["counts"]["events"]["pending"]
    say(f"{len(first.events)} hook calls: {queued} events queued for the observer.")
    if queued < 30:
        raise DemoError(f"only {queued} events were captured")

    step(2, "The worker's observer turns the events into memory")
    say("(the `offline` observer: no LLM, no login — with Claude or an API key the notes are written by a model)")
    with interrupts_deferred():
        run(env, "worker", "start", own_session=True)
    done = wait_for(env, drained, "processing the queue")
    counts = done["store"]["counts"]
    events = counts["events"]
    say(f"{events['done']} events processed, {events['failed']} failed → {counts['observations']} observations, "
        f"{counts['summaries']} summaries")
    if events["failed"] or events["done"] != queued or not counts["observations"]:
        raise DemoError(f"the observer did not turn every event into memory: {events}")
    found = vectors(wait_for(env, embedded, "embedding the notes for search by meaning"))
    say(f"vectors for search by meaning: {found['embedded']} of {found['total']} ({found['model']})")

    step(3, "Session 2 starts the next day: the context Claude receives")
    hook, payload = second.events[0]
    out = json.loads(run(env, "hook", hook, show=False, stdin=json.dumps(payload)))
    say(f"the SessionStart hook's additionalContext (the newest {INDEX_SIZE} notes here; the default index "
        "holds 50):")
    block(out["hookSpecificOutput"]["additionalContext"])
    if out.get("systemMessage"):
        say(f"shown to the user: {out['systemMessage']}")

    step(4, "Session 2, first prompt: older memory that matches it is added")
    hook, payload = second.events[1]
    say(f"› {payload['prompt']}", indent="        ", first="   you: ")
    raw = run(env, "hook", hook, show=False, stdin=json.dumps(payload))
    if not raw.strip():
        raise DemoError("the user-prompt hook added no memory to session 2's prompt")
    say("the UserPromptSubmit hook's additionalContext (never a note the session was already shown):")
    block(json.loads(raw)["hookSpecificOutput"]["additionalContext"])

    step(5, "Search by keyword")
    run(env, "search", "--mode", "keyword", KEYWORD_QUERY)

    step(6, "Search by meaning")
    run(env, "search", "--mode", "keyword", MEANING_QUERY)
    say("No word in common with any note; by meaning, the failed run of session 1's first turn comes first:")
    if run(env, "search", "--mode", "semantic", "--limit", "1", MEANING_QUERY).startswith("No match"):
        raise DemoError(f"search by meaning found nothing for {MEANING_QUERY!r}")

    step(7, "A timeline: what happened around the failing test and its fix")
    run(env, "timeline", TIMELINE_ANCHOR, "--before", "2", "--after", "2")

    step(8, "The web viewer")
    info = json.loads(run(env, "worker", "status", "--json", show=False))
    say(f"viewer: {info['url']}/ (a live feed of memory, search, the queue; it stops with the demo's worker — "
        "`claude-mem viewer` opens yours)")


def clean_env(root: str) -> dict[str, str]:
    """The environment for every command: this demo's data dir, the offline observer, a free port, no
    settings of the caller's own (`CLAUDE_MEM_*`, `CLAUDE_PROJECT_DIR` would pick the project)."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("CLAUDE_MEM_") and key not in ("CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT")}
    home = os.path.join(root, "home")
    os.makedirs(home)
    return {**env, "HOME": home, "CLAUDE_MEM_DATA_DIR": os.path.join(root, "data"),
            "CLAUDE_MEM_PROVIDER": "offline", "CLAUDE_MEM_WORKER_PORT": "0",
            # The demo starts the worker itself, once the first session is captured.
            "CLAUDE_MEM_AUTOSTART": "false",
            "CLAUDE_MEM_CONTEXT_OBSERVATIONS": str(INDEX_SIZE),
            # The prompt hook asks the worker for matches by meaning (the model lives there) and falls back
            # to keyword search after 300 ms by default; a machine busy with the demo gets more time.
            "CLAUDE_MEM_PROMPT_CONTEXT_TIMEOUT_MS": "2000",
            # Rich sizes its tables to this (our stdout is a pipe to it), less the demo's indent.
            "COLUMNS": str(max(80, shutil.get_terminal_size((123, 24)).columns - 3))}


def _interrupted(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextmanager
def throwaway() -> Iterator[tuple[str, dict[str, str]]]:
    """A temp root and the demo's environment; on the way out, whatever happened, the worker is
    stopped and the root removed (a second Ctrl-C cannot cut that short)."""
    root = os.path.realpath(tempfile.mkdtemp(prefix="claude-mem-demo-"))
    env: dict[str, str] = {}
    try:
        env = clean_env(root)
        yield root, env
    finally:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            print(f"\n{BOLD}Cleaning up{RESET}", flush=True)
            if env:  # whether or not it got as far as starting one: stopping no worker is a no-op
                _stop_worker(env)
            shutil.rmtree(root, ignore_errors=True)
            say(f"removed {root}" if not os.path.exists(root) else f"could not remove {root}: remove it by hand")
        finally:
            signal.signal(signal.SIGINT, previous)


def _stop_worker(env: dict[str, str]) -> None:
    try:
        stopped = subprocess.run([CLAUDE_MEM, "worker", "stop"], env=env, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        say(f"could not stop the demo's worker ({exc}); `claude-mem worker status` with "
            f"CLAUDE_MEM_DATA_DIR={env['CLAUDE_MEM_DATA_DIR']} finds it")
        return
    block(stopped.stdout + stopped.stderr, indent="   ")


def main() -> int:
    if not os.access(CLAUDE_MEM, os.X_OK):
        print(f"demo failed: {CLAUDE_MEM} is missing; `make demo` installs it into the checkout's .venv",
              file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, _interrupted)
    started = time.monotonic()
    try:
        with throwaway() as (root, env):
            demo(root, env)
    except KeyboardInterrupt:
        print("\ndemo interrupted", file=sys.stderr)
        return 130
    except (DemoError, OSError, subprocess.SubprocessError) as exc:
        print(f"\ndemo failed: {exc}", file=sys.stderr)
        return 1
    here = os.path.relpath(CLAUDE_MEM)
    print(f"\ndemo finished in {time.monotonic() - started:.1f} s.\n")
    say("Next: give your own Claude Code sessions memory (README: Install), from a clean clone (installing copies "
        "the folder, and this checkout now holds a .venv):", indent="")
    print(f"   git clone {CHECKOUT} ~/persistent-memory\n   claude plugin marketplace add ~/persistent-memory\n"
          "   claude plugin install persistent-memory@persistent-memory")
    say(f"then `{CLAUDE_MEM if here.startswith('..') else here} viewer` shows your memory as it is made.", indent="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
