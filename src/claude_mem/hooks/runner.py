"""`claude-mem hook NAME`: one Claude Code hook call, from stdin JSON to committed rows, exit 0.

Fail-open and fast (DESIGN §2, §4): the payload becomes a cleaned capture record (payload.py),
written in one `BEGIN IMMEDIATE` transaction with a 250 ms busy timeout; past that, or on any
database error, the record goes to the spool instead. Bad input costs one stderr line, one log
line and a bounded, cleaned quarantine copy. Stdout carries only the hook's JSON. Stdlib only:
never import click, rich, logging, typing, dataclasses or pathlib from here.
"""

import os
import sys

from claude_mem import paths, settings
from claude_mem.capture import diagnostics, payload
from claude_mem.capture.payload import BadInput, Unregistered
from claude_mem.domain import TURN_KINDS
from claude_mem.fastpath import jsontext, patterns

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook imports the store only when it writes
    from typing import Any

    from claude_mem.store import Store

HELP_FLAGS = ("-h", "--help")
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
        "(cleaned and capped at max_field_chars). Tools in skip_tools are ignored."
    ),
    "stop": "Stop: queue a summary request for the turn, with Claude's last message.",
    "session-end": "SessionEnd: queue the session's end and mark it completed; finishes well under 1.5 s.",
}
HOOK_INTRO = (
    "Claude Code hooks: read the hook JSON on stdin, capture it, exit 0.\n\n"
    "Installed by the plugin (hooks/hooks.json) or by hand in Claude Code settings. Every hook "
    "always exits 0 and prints nothing but its JSON; bad input is logged to logs/hooks.log and a "
    "cleaned copy kept in quarantine/. When the database is busy for more than 250 ms the event "
    "is written to spool/ and the worker picks it up later. Projects matching excluded_projects "
    "are never captured."
)
# A raw payload bigger than this is reported (its fields are cut to `max_field_chars` and stored).
OVERSIZED_BYTES = 1_000_000


def _stderr(hook: str, message: str) -> None:
    try:
        sys.stderr.write(f"claude-mem: hook {hook}: {' '.join(message.split())}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _stdout(output: "dict[str, Any]") -> None:
    sys.stdout.buffer.write(jsontext.dumps(output, ensure_ascii=True).encode("ascii"))
    sys.stdout.buffer.flush()


def private_marker(data_dir: str, content_session_id: str) -> str:
    """A file whose existence says "this session's current turn is private" (survives a spooled prompt)."""
    from claude_mem.capture.digest import sha256_hex

    digest = sha256_hex(content_session_id.encode("utf-8", "replace"))[:32]
    return os.path.join(data_dir, "spool", f".private-{digest}")


def _mark_turn(data_dir: str, record: "dict[str, Any]") -> None:
    marker = private_marker(data_dir, str(record["content_session_id"]))
    if record["private"]:
        os.makedirs(os.path.dirname(marker), mode=0o700, exist_ok=True)
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT, 0o600))
    else:
        try:
            os.unlink(marker)
        except FileNotFoundError:
            pass


def _bad_input(hook: str, data_dir: str, raw: bytes, problem: str) -> int:
    copy = diagnostics.quarantine(data_dir, hook, raw)
    where = f"; copy in {copy}" if copy else ""
    diagnostics.log(data_dir, hook, f"bad input: {problem} ({len(raw)} bytes){where}")
    _stderr(hook, f"ignored bad input: {problem}")
    return 0


def _store(data_dir: str, record: "dict[str, Any]", hook: str) -> "tuple[str, Store | None]":
    """Commit `record` (or spool it). Returns (outcome, open connection or None).

    outcome: "stored", "duplicate" (nothing new), or "spooled".
    """
    from claude_mem import store
    from claude_mem.store.capture import apply_record

    conn = None
    try:
        conn = store.open(data_dir, busy_timeout_ms=store.HOOK_BUSY_MS)
        with store.transaction(conn):
            added = apply_record(conn, record)
        return ("stored" if added else "duplicate"), conn
    except Exception as exc:  # noqa: BLE001 - busy, locked, damaged or anything else: never lose the event
        if conn is not None:
            conn.close()
        from claude_mem.capture import spool

        spool.append(data_dir, record)
        diagnostics.log(data_dir, hook, f"spooled {record['kind']} event: {type(exc).__name__}: {exc}")
        return "spooled", None


def _after_capture(hook: str, data_dir: str, config: "dict[str, Any]") -> None:
    """Work after the capture is durable, for session-start and user-prompt only.

    Worker autostart (`claude_mem.runtime.autostart`, owned by the worker) is called from here.
    """
    if not config.get("autostart", True):
        return  # not even the import: autostart pulls the worker's launch helpers
    from claude_mem.runtime.autostart import ensure_worker

    ensure_worker(data_dir, config)


def _fingerprint(data_dir: str, hook: str, record: "dict[str, Any]", incoming: "dict[str, Any]",
                 env: "dict[str, Any]") -> None:
    """The files a Read/Edit/Write… names, fingerprinted after the tool ran (issue 26), into the
    record's payload as `files` and `commit`. Fail-open: a failure here only costs the fingerprints."""
    try:
        from claude_mem.capture.fingerprint import for_event

        found = for_event(incoming, env)
        if found:
            record["payload"].update(found)
    except Exception as exc:  # noqa: BLE001 - the event is stored with or without its fingerprints
        diagnostics.log(data_dir, hook, f"file fingerprints skipped: {type(exc).__name__}")


def handle(hook: str, raw: bytes, env: "dict[str, Any]") -> int:
    """Process one hook call; always returns 0."""
    data_dir = settings.data_dir()
    patterns.use_cache(patterns.cache_file(paths.cache_dir(data_dir)))
    try:
        incoming = payload.decode(raw)
        event = payload.event_name(hook, incoming)
    except BadInput as exc:
        return _bad_input(hook, data_dir, raw, str(exc))
    except Unregistered:
        return 0
    kind = payload.EVENT_KINDS[event]
    session_id = incoming.get("session_id")
    if kind in TURN_KINDS and isinstance(session_id, str) and os.path.exists(private_marker(data_dir, session_id)):
        return 0
    config = settings.load(data_dir)
    try:  # skip_tools, excluded_projects, cleaning: shared with the transcript importer
        record = payload.capture_record(hook, incoming, config, env)
    except Unregistered:
        return 0
    except BadInput as exc:
        return _bad_input(hook, data_dir, raw, str(exc))
    cwd = str(record["cwd"] or "")
    if kind in ("tool", "tool_failure"):
        _fingerprint(data_dir, hook, record, incoming, env)
    if kind == "prompt":
        _mark_turn(data_dir, record)
    outcome, conn = _store(data_dir, record, hook)
    if len(raw) > OVERSIZED_BYTES and outcome != "duplicate":
        diagnostics.quarantine(data_dir, hook, raw)
        diagnostics.log(data_dir, hook, f"oversized input ({len(raw)} bytes): fields cut to {config['max_field_chars']} chars")
        _stderr(hook, f"input of {len(raw)} bytes: stored with long fields cut to {config['max_field_chars']} chars")
    try:
        if hook in ("session-start", "user-prompt"):
            _after_capture(hook, data_dir, config)
        if hook == "session-start":
            from claude_mem.hooks.session_start import build_output

            _stdout(build_output(conn, record, config, incoming))
        if hook == "user-prompt" and config["prompt_context"] and not record["private"]:
            from claude_mem.recall.prompt_context import user_prompt

            related = user_prompt({"prompt": record["payload"].get("prompt"), "cwd": cwd, "session_id": session_id,
                                   "project": record["project"] if conn is not None else None},
                                  data_dir, config, env, conn)
            if related:
                _stdout(related)
    finally:
        if conn is not None:
            conn.close()
    return 0


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
    return handle_safely(hook, raw, dict(os.environ))


def handle_safely(hook: str, raw: bytes, env: "dict[str, Any]") -> int:
    """`handle`, and on any internal error a log line and a quarantine copy: no input just vanishes.
    Then, the capture being durable, the patterns it compiled go to the cache for the next hook."""
    try:
        return handle(hook, raw, env)
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
