"""`claude-mem hook NAME`: one Claude Code hook call, from stdin JSON to committed rows, exit 0.

Fail-open and fast (DESIGN §2, §4): `store.intake.take` turns the payload into a cleaned capture
record and commits it in one `BEGIN IMMEDIATE` transaction with a 250 ms busy timeout, or spools
it; bad input costs one stderr line, one log line and a bounded, cleaned quarantine copy. Then the
session-start and user-prompt hooks add their output. Stdout carries only the hook's JSON. Stdlib
only: never import click, rich, logging, typing, dataclasses or pathlib from here.
"""

import os
import sys

from claude_mem import paths, settings
from claude_mem.capture import diagnostics, payload
from claude_mem.fastpath import jsontext, patterns
from claude_mem.runtime import switch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

HELP_FLAGS = ("-h", "--help")
COMMAND_CHARS = 20_000  # of a command the pre-tool hook normalizes (its signature reads far less)
# hook command -> what it does; `claude-mem hook --help` and the click group (cli/hook.py) show it.
HOOK_HELP = {
    "session-start": (
        "SessionStart (startup, resume, clear, compact): record the session and print the memory "
        "context as Claude Code's JSON (hookSpecificOutput.additionalContext)."
    ),
    "user-prompt": (
        "UserPromptSubmit: store the prompt (numbered per session, <private> parts removed, secrets "
        "redacted) and queue it for the observer. A fully private prompt makes the whole turn private."
    ),
    "post-tool": (
        "PostToolUse and PostToolUseFailure: queue the tool call with its input and output or error "
        "(cleaned and capped at max_field_chars). Tools in skip_tools are ignored. A failure the project has "
        "seen before gets a note (hookSpecificOutput.additionalContext): how often, when, and the fix that "
        "resolved it last time (setting failure_notes)."
    ),
    "pre-tool": (
        "PreToolUse (Bash only): captures nothing; when the same command (normalized) failed on its last run in "
        "this project and nothing fixed it since, adds a note (hookSpecificOutput.additionalContext) on how often "
        "it failed and what fixed it before. Never allows or denies the call. Setting failure_notes_before_retry."
    ),
    "stop": "Stop: queue a summary request for the turn, with Claude's last message.",
    "session-end": "SessionEnd: queue the session's end and mark it completed; finishes well under 1.5 s.",
}
HOOK_INTRO = (
    "Claude Code hooks: read the hook JSON on stdin, capture it, exit 0.\n\n"
    "Installed by the plugin (hooks/hooks.json) or by hand in Claude Code settings. Every hook "
    "always exits 0 and prints nothing but its JSON; bad input is logged to logs/hooks.log and a "
    "cleaned copy kept in quarantine/. When the database is busy for more than 250 ms the event "
    "is written to spool/ and the worker picks it up later. When the data dir takes no write (disk "
    "full, read-only, a database of a newer claude-mem) the event waits outside it (XDG_RUNTIME_DIR, "
    "/dev/shm or /tmp, 16 MiB at most) until it can, and the hook says so once a session "
    "(systemMessage). Projects matching excluded_projects are never captured.\n\n"
    "One switch per session, CLAUDE_MEM in Claude Code's environment (e.g. `CLAUDE_MEM=off claude`): "
    "off (also 0, false, no) stores and shows nothing; read shows memory and stores nothing of the "
    "session; write stores the session and shows no memory; unset, on, 1, true: both. Any other "
    "value is taken as off."
)


def _stderr(hook: str, message: str) -> None:
    try:
        sys.stderr.write(f"claude-mem: hook {hook}: {' '.join(message.split())}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _stdout(output: "dict[str, Any]") -> None:
    sys.stdout.buffer.write(jsontext.dumps(output, ensure_ascii=True).encode("ascii"))
    sys.stdout.buffer.flush()


def with_notice(output: "dict[str, Any] | None", notice: "str | None") -> "dict[str, Any] | None":
    """`output` with `notice` (the data dir takes no write: `capture.trouble`) added to its `systemMessage`,
    the line Claude Code shows the user for every hook event."""
    if not notice:
        return output
    if not output:
        return {"systemMessage": notice}
    shown = output.get("systemMessage")
    return {**output, "systemMessage": f"{shown}\n{notice}" if shown else notice}


def _after_capture(hook: str, data_dir: str, config: "dict[str, Any]") -> None:
    """Work after the capture is durable, for session-start and user-prompt only.

    Worker autostart (`claude_mem.runtime.autostart`, owned by the worker) is called from here.
    """
    if not config.get("autostart", True):
        return  # not even the import: autostart pulls the worker's launch helpers
    from claude_mem.runtime.autostart import ensure_worker

    ensure_worker(data_dir, config)


def _asker(data_dir: str) -> "Callable[[dict[str, Any], dict[str, Any]], object]":
    """`intake.take`'s `before_store` for the user-prompt hook: the question to the worker, sent early."""
    from claude_mem.recall.prompt_context import ask_early

    return lambda record, config: ask_early(record, config, data_dir)


def handle(hook: str, raw: bytes, env: "dict[str, Any]", shows: bool = True) -> int:
    """Process one hook call; always returns 0. Without `shows` (`CLAUDE_MEM=write`) the session-start and
    user-prompt hooks capture and print no memory."""
    from claude_mem.store import intake

    data_dir = settings.data_dir()
    patterns.use_cache(patterns.cache_file(paths.cache_dir(data_dir)))
    # the user-prompt hook asks the worker before it stores the prompt: the worker searches meanwhile
    taken = intake.take(hook, raw, env, data_dir, before_store=_asker(data_dir) if hook == "user-prompt" and shows
                        else None)
    for message in taken.messages:
        _stderr(hook, message)
    record, conn, config, incoming = taken.record, taken.conn, taken.config, taken.incoming
    if record is None:
        return 0
    notice = taken.notice
    try:
        if hook in ("session-start", "user-prompt") and taken.condition != "newer-schema":  # it would not start
            _after_capture(hook, data_dir, config)
        if not shows:
            from claude_mem.hooks.switched import write_output

            written = with_notice(write_output(hook, env), notice)
            if written:
                _stdout(written)
            return 0
        if hook == "post-tool" and "failure" in record and taken.outcome == "stored" and conn is not None \
                and config.get("failure_notes", True):
            noted = failure_note(conn, record, data_dir)
            if noted:
                _stdout(noted)
        if hook == "session-start":
            from claude_mem.hooks.session_start import build_output

            try:
                built: dict[str, Any] | None = build_output(conn, record, config, incoming)
            except Exception as exc:  # noqa: BLE001 - the event is kept; only the memory shown is lost
                diagnostics.log(data_dir, hook, f"memory not shown: {type(exc).__name__}: {exc}")
                built = {"systemMessage": f"claude-mem: memory not shown ({type(exc).__name__}); see logs/hooks.log"}
            _stdout(with_notice(built, notice) or {})
            notice = None
        if hook == "user-prompt" and config["prompt_context"] and not record["private"]:
            from claude_mem.recall.prompt_context import Asked, user_prompt

            related = user_prompt({"prompt": record["payload"].get("prompt"), "cwd": str(record["cwd"] or ""),
                                   "session_id": incoming.get("session_id"),
                                   "project": record["project"] if conn is not None else None},
                                  data_dir, config, env, conn,
                                  asked=taken.early if isinstance(taken.early, Asked) else None)
            if related:
                _stdout(with_notice(related, notice) or related)
                notice = None
        if notice:
            _stdout({"systemMessage": notice})
    finally:
        if conn is not None:
            conn.close()
    return 0


def before_tool(raw: bytes, shows: bool) -> int:
    """The pre-tool hook (Bash): a note before a command whose last run in this project failed and that nothing
    fixed since (`recall.failure_notes.before_retry`); silent otherwise. Stores nothing but the note's record;
    creates no database. Exit code 0, whatever happens."""
    if not shows:
        return 0
    try:
        incoming = payload.decode(raw)
        given = incoming.get("tool_input")
        command = given.get("command") if isinstance(given, dict) else None
        session_id = incoming.get("session_id")
        if incoming.get("tool_name") != "Bash" or not isinstance(command, str) or not isinstance(session_id, str) \
                or incoming.get("hook_event_name", "PreToolUse") != "PreToolUse":
            return 0
        data_dir = settings.data_dir()
        config = settings.load(data_dir)
        if not config["failure_notes_before_retry"] or not config["failure_notes"]:
            return 0
        from claude_mem.capture import failing
        from claude_mem.capture.failure_signature import command_signature

        signature = command_signature(command[:COMMAND_CHARS])
        if not failing.contains(data_dir, signature) or not os.path.exists(paths.db_path(data_dir)):
            return 0  # never failed, or fixed since: SQLite is not even imported
        from claude_mem import store

        patterns.use_cache(patterns.cache_file(paths.cache_dir(data_dir)))
        conn = store.open(data_dir, busy_timeout_ms=store.HOOK_BUSY_MS)
        try:
            from claude_mem.recall.failure_notes import before_retry

            output = before_retry(conn, session_id, signature, payload.now_iso())
        finally:
            conn.close()
        if output:
            _stdout(output)
    except payload.BadInput as exc:
        _stderr("pre-tool", f"ignored bad input: {exc}")
    except Exception as exc:  # noqa: BLE001 - a hook must never fail Claude Code; the call runs as it would
        _stderr("pre-tool", f"no note ({type(exc).__name__})")
    return 0


def failure_note(conn: "Any", record: "dict[str, Any]", data_dir: str) -> "dict[str, Any] | None":
    """The note beside a failure the project has seen before (`recall.failure_notes`), or None; a problem
    costs the note and a log line, never the capture."""
    try:
        from claude_mem.recall.failure_notes import after_failure

        return after_failure(conn, record, data_dir)
    except Exception as exc:  # noqa: BLE001 - the event is stored; only the note is lost
        diagnostics.log(data_dir, "post-tool", f"failure note skipped: {type(exc).__name__}: {exc}")
        return None


def usage(hook: str | None = None) -> str:
    """`claude-mem hook --help` (or `hook NAME --help`) as plain text."""
    from textwrap import fill

    if hook is not None:
        return f"Usage: claude-mem hook {hook}\n\n{fill(HOOK_HELP[hook], 96, initial_indent='  ', subsequent_indent='  ')}" \
               "\n\n  Reads the hook payload (JSON) on stdin.\n"
    width = max(len(name) for name in HOOK_HELP)
    lines = ["Usage: claude-mem hook NAME  (the payload JSON on stdin)", ""]
    lines += [fill(part, 96, initial_indent="  ", subsequent_indent="  ") + "\n" for part in HOOK_INTRO.split("\n\n")]
    lines.append("Hooks:")
    lines += [fill(text, 100, initial_indent=f"  {name.ljust(width)}  ", subsequent_indent=" " * (width + 4))
              for name, text in HOOK_HELP.items()]
    return "\n".join(lines) + "\n"


def run_from_argv(argv: list[str]) -> int:
    """Entry for `claude-mem hook …` and the plugin launcher. Exit code 0, whatever happens."""
    paths.private_files()
    if not argv or argv[0] in HELP_FLAGS or any(arg in HELP_FLAGS for arg in argv[1:]):
        # Usage without click (the plugin runs this with `python3 -I -S`, where click is absent):
        # asked for, on stdout; a call with no hook name is a mistake, so on stderr. Exit 0 either way.
        stream = sys.stdout if argv else sys.stderr
        stream.write(usage(argv[0] if argv and argv[0] in payload.HOOK_EVENTS else None))
        stream.flush()
        return 0
    hook = argv[0]
    if os.environ.get("CLAUDE_MEM_OBSERVER_CHILD"):
        return 0  # inside our own observer's Claude Code child: never capture the observer itself
    chosen = switch.mode(os.environ)
    if chosen not in (switch.ON, switch.WRITE):  # before anything is read, opened or handed over
        return _not_captured(hook, chosen)
    if hook not in payload.HOOK_EVENTS:
        _stderr(hook, f"unknown hook (known: {', '.join(payload.HOOK_EVENTS)}); nothing captured")
        try:  # a misconfigured hook still loses nothing: its input goes to quarantine
            raw = sys.stdin.buffer.read() if sys.stdin is not None else b""
            if raw.strip():
                diagnostics.quarantine(settings.data_dir(), "unknown-hook", raw)
        except Exception:  # noqa: BLE001 - a hook must never fail Claude Code
            pass
        return 0
    try:
        raw = sys.stdin.buffer.read() if sys.stdin is not None else b""
    except Exception as exc:  # noqa: BLE001 - a hook must never fail Claude Code
        _stderr(hook, f"cannot read stdin ({type(exc).__name__}); nothing captured")
        return 0
    if hook == "pre-tool":
        return before_tool(raw, switch.shows(chosen))
    env = dict(os.environ)
    try:  # a running worker captures a post-tool event with everything loaded (capture/handoff.py)
        from claude_mem.capture import handoff

        answered = handoff.send(settings.data_dir(), hook, raw, env, switch.shows(chosen))
    except Exception:  # noqa: BLE001 - then the hook captures the event itself
        answered = None
    if answered is not None:
        messages, output = answered
        for message in messages:
            _stderr(hook, message)
        if output:
            _stdout(output)
        return 0
    return handle_safely(hook, raw, env, switch.shows(chosen))


def _not_captured(hook: str, chosen: str) -> int:
    """A hook of a session that stores nothing (`CLAUDE_MEM=off` or `read`): reads its stdin, writes no
    file at all, and prints the session-start message (`off`) or memory from a read-only store (`read`)."""
    try:
        raw = sys.stdin.buffer.read() if sys.stdin is not None else b""
    except Exception:  # noqa: BLE001 - a hook must never fail Claude Code
        raw = b""
    problem = switch.problem(os.environ)
    if problem and hook == "session-start":  # once a session, where the user sees hooks' output
        _stderr(hook, problem)
    if hook not in payload.HOOK_EVENTS:
        return 0
    from claude_mem.hooks import switched

    env = dict(os.environ)
    if chosen == switch.OFF:
        output = switched.off_output(hook, env)
    else:
        try:
            output, messages = switched.read_output(hook, raw, env)
        except Exception as exc:  # noqa: BLE001 - busy, damaged: nothing shown, and nothing written to say so
            output, messages = None, [f"memory not shown ({type(exc).__name__}); nothing stored (CLAUDE_MEM=read)"]
        for message in messages:
            _stderr(hook, message)
    if output:
        _stdout(output)
    return 0


def handle_safely(hook: str, raw: bytes, env: "dict[str, Any]", shows: bool = True) -> int:
    """`handle`, and on any internal error a log line and a quarantine copy: no input just vanishes.
    Then, the capture being durable, the patterns it compiled go to the cache for the next hook."""
    try:
        return handle(hook, raw, env, shows)
    except Exception as exc:  # noqa: BLE001 - a hook must never fail Claude Code
        try:
            data_dir = settings.data_dir()
            copy = diagnostics.quarantine(data_dir, hook, raw)
            diagnostics.log(data_dir, hook, f"internal error: {type(exc).__name__}: {exc}; copy in {copy}")
        except Exception:  # noqa: BLE001
            pass
        _stderr(hook, f"internal error ({type(exc).__name__}); see logs/hooks.log")
        return 0
    finally:
        try:
            patterns.save()
        except Exception:  # noqa: BLE001 - only the next hook's speed depends on it
            pass
