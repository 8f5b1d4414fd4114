"""Hook payload → capture record: validate, strip private spans, redact secrets, cap sizes.

A *capture record* is a plain JSON-able dict holding everything needed to recreate the rows of
one hook call (`capture.apply_record` writes it; `spool` stores it verbatim when the database is
busy). Its `kind` is `session_start` or one of the pending_events kinds. Stdlib only.
"""

from __future__ import annotations

import os
import time

from claude_mem.fastpath import jsontext

if False:  # for the type checker only: `typing` stays off the hook path
    from typing import Any

RECORD_VERSION = 1

# hook command -> the Claude Code events it serves (the first one is assumed when a payload names none)
HOOK_EVENTS: dict[str, tuple[str, ...]] = {
    "session-start": ("SessionStart",),
    "user-prompt": ("UserPromptSubmit",),
    "pre-tool": ("PreToolUse",),  # captures nothing: a note before a Bash command that keeps failing
    "post-tool": ("PostToolUse", "PostToolUseFailure"),
    "stop": ("Stop",),
    "session-end": ("SessionEnd",),
}
EVENT_KINDS: dict[str, str] = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "prompt",
    "PostToolUse": "tool",
    "PostToolUseFailure": "tool_failure",
    "Stop": "summarize",
    "SessionEnd": "session_end",
}
CUT_MARK = "\n[… claude-mem cut {} chars …]\n"
# Extra characters redacted on the inner side of what a cut keeps, so a secret straddling it is still
# recognised (a private-key block is the longest: ~3,300 chars for RSA-4096).
CUT_MARGIN = 4096
# A tool input or response may hold a few capped fields; past this many times the cap it is cut whole.
CONTAINER_FACTOR = 2


class BadInput(ValueError):
    """The hook's stdin is not a payload we can store (the message never quotes payload content)."""


class Unregistered(Exception):
    """An event this hook does not capture (another event name, a skipped tool, an excluded project)."""


def now_iso() -> str:
    """The current UTC time as `YYYY-MM-DDTHH:MM:SS.fffZ` (the schema's timestamp format)."""
    seconds = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds % 1 * 1000):03d}Z"


def decode(raw: bytes) -> dict[str, Any]:
    """Stdin bytes → payload dict, or BadInput."""
    if not raw.strip():
        raise BadInput("empty stdin")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"stdin is not UTF-8 (byte {exc.start})") from None
    try:
        payload = jsontext.loads(text)
    except ValueError as exc:
        raise BadInput(f"stdin is not JSON ({exc})") from None
    except RecursionError:
        raise BadInput("stdin is JSON nested too deep to read") from None
    if not isinstance(payload, dict):
        raise BadInput(f"payload is a JSON {type(payload).__name__}, not an object")
    return payload


def _field(payload: dict[str, Any], name: str, types: tuple[type, ...], required: bool = False,
           default: object = None) -> object:
    value = payload.get(name)
    if value is None:
        if required:
            raise BadInput(f"field {name!r} is missing")
        return default
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise BadInput(f"field {name!r} is a {type(value).__name__}")
    return _valid_text(value) if isinstance(value, str) else value


def _valid_text(text: str) -> str:
    """Lone surrogates (legal in JSON, not in UTF-8) replaced so SQLite and files accept the text."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def _cut(text: str, limit: int) -> str:
    """`text` capped at `limit` chars: head and tail kept, the cut marked (counting earlier cuts it removes)."""
    if len(text) <= limit:
        return text
    head_len, tail_len = _split(limit)
    middle = text[head_len:len(text) - tail_len]
    removed = len(middle)
    if "claude-mem cut" in middle:
        import re

        for match in re.finditer(re.escape(CUT_MARK).replace(re.escape("{}"), "([0-9]+)"), middle):
            removed += int(match.group(1)) - len(match.group(0))
    return text[:head_len] + CUT_MARK.format(removed) + (text[-tail_len:] if tail_len else "")


def _split(limit: int) -> tuple[int, int]:
    """How many chars of a cut string `_cut` keeps at its head and at its tail."""
    head = max(limit * 2 // 3, 1)
    return head, max(limit - head, 0)


def _prepared(value: object, limit: int) -> object:
    """Valid text everywhere, and a string far longer than `limit` reduced to what `_cut` will keep of
    it plus CUT_MARGIN on each inner side, so redaction sees a secret at either edge of the cut whole
    without reading megabytes it is going to drop."""
    if isinstance(value, str):
        value = _valid_text(value)
        head, tail = _split(limit)
        head, tail = head + CUT_MARGIN, tail + CUT_MARGIN
        if len(value) > head + tail + len(CUT_MARK) + 12:
            return value[:head] + CUT_MARK.format(len(value) - head - tail) + value[-tail:]
        return value
    if isinstance(value, dict):
        return {_valid_text(str(key)): _prepared(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [_prepared(item, limit) for item in value]
    return value


def _capped_strings(value: object, limit: int) -> object:
    if isinstance(value, str):
        return _cut(value, limit)
    if isinstance(value, dict):
        return {key: _capped_strings(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [_capped_strings(item, limit) for item in value]
    return value


def cleaned(fields: dict[str, object], limit: int) -> dict[str, object]:
    """The fields of one event, private spans and secrets removed as ONE document (a span opened in
    the tool input and closed in its output, a key block written one patch line per item), then
    each string capped at `limit`, and a container whose JSON still exceeds CONTAINER_FACTOR ×
    `limit` (many long fields) replaced by its cut JSON text."""
    from claude_mem import privacy  # not at import: a hook handed to the worker never redacts

    value = privacy.strip_private_tree(fields)
    value = _prepared(value, limit)
    value = privacy.redact_tree(value)
    assert isinstance(value, dict)
    result: dict[str, object] = {}
    for name, item in value.items():
        item = _capped_strings(item, limit)
        if isinstance(item, (dict, list)):
            text = jsontext.dumps(item, ensure_ascii=False)
            if len(text) > CONTAINER_FACTOR * limit:
                item = _cut(text, CONTAINER_FACTOR * limit)
        result[name] = item
    return result


def event_key(session_id: str, kind: str, payload: dict[str, object], turn: str | None) -> str:
    """Dedup key (DESIGN §3): the hash of session + kind + payload (+ the turn it belongs to)."""
    from claude_mem.capture.digest import sha256_hex

    body = jsontext.dumps([session_id, kind, payload, turn], sort_keys=True, ensure_ascii=False)
    return "h:" + sha256_hex(body.encode("utf-8", "replace"))


def _turn_marker(payload: dict[str, Any]) -> str | None:
    """What tells two identical events of different turns apart: `prompt_id` (≥ 2.1), else the
    transcript's size (it grows every turn; a duplicate delivery of one event sees the same size)."""
    prompt_id = payload.get("prompt_id")
    if isinstance(prompt_id, str) and prompt_id:
        return prompt_id
    transcript = payload.get("transcript_path")
    if isinstance(transcript, str) and transcript:
        try:
            return f"size:{os.stat(transcript).st_size}"
        except OSError:
            return None
    return None


def event_name(hook: str, payload: dict[str, Any]) -> str:
    """The Claude Code event of `payload`, if `hook` captures it (else Unregistered)."""
    event = payload.get("hook_event_name")
    if event is None:
        return HOOK_EVENTS[hook][0]
    if not isinstance(event, str):
        raise BadInput(f"field 'hook_event_name' is a {type(event).__name__}")
    if event not in HOOK_EVENTS[hook]:
        raise Unregistered(f"{event} is not captured by `hook {hook}`")
    return event


def excluded(project: str, cwd: str, globs: list[str]) -> bool:
    """Whether a project (or the cwd inside it) matches one of the `excluded_projects` globs."""
    if not globs:
        return False
    from fnmatch import fnmatch

    for pattern in globs:
        pattern = os.path.expanduser(str(pattern))
        if fnmatch(project, pattern) or (cwd and fnmatch(cwd, pattern)):
            return True
    return False


def capture_record(hook: str, payload: dict[str, Any], config: dict[str, Any],
                   env: dict[str, str]) -> dict[str, Any]:
    """The capture record for one decoded payload under the user's settings: Unregistered for a tool
    in `skip_tools` or a project in `excluded_projects`, BadInput for a payload we cannot store.

    The one gate shared by the hooks and the transcript importer, so both keep and clean exactly
    the same. `env` supplies `CLAUDE_PROJECT_DIR` (the session's start directory) as Claude Code
    sets it for hooks."""
    event = event_name(hook, payload)
    tool_name = payload.get("tool_name")
    if event in ("PostToolUse", "PostToolUseFailure") and isinstance(tool_name, str) and tool_name in config["skip_tools"]:
        raise Unregistered(f"{tool_name} is in skip_tools")
    from claude_mem.project import identity

    cwd = str(payload["cwd"]) if isinstance(payload.get("cwd"), str) else ""
    project, remote = identity(cwd or None, env)  # the store maps a moved checkout to its first-known key
    if excluded(project, cwd, config["excluded_projects"]):
        raise Unregistered("the project is in excluded_projects")
    record = build_record(hook, payload, project, int(config["max_field_chars"]))
    record["remote"] = remote
    return record


def build_record(hook: str, payload: dict[str, Any], project: str, limit: int) -> dict[str, Any]:
    """The capture record for one payload, or BadInput / Unregistered."""
    event = event_name(hook, payload)
    session_id = str(_field(payload, "session_id", (str,), required=True))
    if not session_id.strip():
        raise BadInput("field 'session_id' is empty")
    cwd = _field(payload, "cwd", (str,), default="")
    kind = EVENT_KINDS[event]
    record: dict[str, object] = {
        "v": RECORD_VERSION, "kind": kind, "content_session_id": session_id, "project": project,
        "cwd": cwd, "captured_at": now_iso(), "event_key": None, "private": False, "payload": {},
    }
    if kind == "session_start":
        _field(payload, "source", (str,))
        return record
    fields: dict[str, object]
    if kind == "prompt":
        raw_prompt = str(_field(payload, "prompt", (str,), required=True))  # a str: `_field` checked it
        fields = {"prompt": raw_prompt}
    elif kind in ("tool", "tool_failure"):
        fields = {"tool_name": _field(payload, "tool_name", (str,), required=True), "tool_input": payload.get("tool_input")}
        if kind == "tool":
            fields["tool_response"] = payload.get("tool_response")
        else:
            fields["error"] = _field(payload, "error", (str,), default="")
    elif kind == "summarize":
        fields = {"last_assistant_message": _field(payload, "last_assistant_message", (str,), default="")}
    else:
        fields = {"reason": _field(payload, "reason", (str,), default="other")}
    body = cleaned(fields, limit if kind != "session_end" else 200)
    if kind == "prompt":
        record["private"] = not str(body["prompt"]).strip() and bool(raw_prompt.strip())
    elif kind in ("tool", "tool_failure"):
        body["is_interrupt"] = _field(payload, "is_interrupt", (bool,), default=False)
        body["tool_use_id"] = _field(payload, "tool_use_id", (str,))
        body["cwd"] = cwd
        duration = _field(payload, "duration_ms", (int, float))
        body["duration_ms"] = int(duration) if isinstance(duration, int | float) else None
    record["payload"] = body
    tool_use_id = body.get("tool_use_id")
    if isinstance(tool_use_id, str) and tool_use_id:
        record["event_key"] = tool_use_id
    else:
        record["event_key"] = event_key(session_id, kind, body, _turn_marker(payload))
    return record
