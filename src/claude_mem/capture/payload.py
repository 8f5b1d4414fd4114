"""Hook payload → capture record: validate, strip private spans, redact secrets, cap sizes.

A *capture record* is a plain JSON-able dict holding everything needed to recreate the rows of
one hook call (`capture.apply_record` writes it; `spool` stores it verbatim when the database is
busy). Its `kind` is `session_start` or one of the pending_events kinds. Stdlib only.
"""

import json
import os
import time

from claude_mem import privacy

RECORD_VERSION = 1

# hook command -> the Claude Code events it serves (the first one is assumed when a payload names none)
HOOK_EVENTS: dict[str, tuple[str, ...]] = {
    "session-start": ("SessionStart",),
    "user-prompt": ("UserPromptSubmit",),
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
# Extra characters redacted on each side of a cut, so a secret straddling it is still recognised.
CUT_MARGIN = 512
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


def decode(raw: bytes) -> dict:
    """Stdin bytes → payload dict, or BadInput."""
    if not raw.strip():
        raise BadInput("empty stdin")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"stdin is not UTF-8 (byte {exc.start})") from None
    try:
        payload = json.loads(text)
    except ValueError as exc:
        raise BadInput(f"stdin is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise BadInput(f"payload is a JSON {type(payload).__name__}, not an object")
    return payload


def _field(payload: dict, name: str, types: tuple, required: bool = False, default: object = None) -> object:
    value = payload.get(name)
    if value is None:
        if required:
            raise BadInput(f"field {name!r} is missing")
        return default
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise BadInput(f"field {name!r} is a {type(value).__name__}")
    return _valid_text(value) if isinstance(value, str) else value


def cut(text: str, limit: int) -> str:
    """`text` redacted and capped at `limit` chars: head and tail kept, the cut marked."""
    # Private spans go first, over the whole text: a window could start inside one.
    text = privacy.strip_private(text)
    if len(text) <= limit:
        return privacy.redact(text)
    head_len = max(limit * 2 // 3, 1)
    tail_len = max(limit - head_len, 0)
    removed = len(text) - head_len - tail_len
    head = _clean_window(text, head_len, from_end=False)
    tail = _clean_window(text, tail_len, from_end=True) if tail_len else ""
    return head + CUT_MARK.format(removed) + tail


def _clean_window(text: str, keep: int, from_end: bool) -> str:
    """The first (or last) `keep` chars of the cleaned text, without cleaning all of it.

    A window CUT_MARGIN longer than what is kept is cleaned, so a secret across the cut is still
    recognised; when redactions shrink the window below that margin it grows and is cleaned again.
    """
    size = keep + CUT_MARGIN
    while True:
        window = text[-size:] if from_end else text[:size]
        cleaned = privacy.redact(window)
        if len(cleaned) >= keep + CUT_MARGIN or size >= len(text):
            return cleaned[-keep:] if from_end else cleaned[:keep]
        size += keep + CUT_MARGIN - len(cleaned) + CUT_MARGIN


def _valid_text(text: str) -> str:
    """Lone surrogates (legal in JSON, not in UTF-8) replaced so SQLite and files accept the text."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def scrub(value: object, limit: int) -> object:
    """A JSON value with every string cleaned and capped; secret-named keys get their value hidden."""
    if isinstance(value, str):
        return cut(_valid_text(value), limit)
    if isinstance(value, dict):
        result: dict[str, object] = {}
        for key, item in value.items():
            name = privacy.clean(_valid_text(str(key)))
            if isinstance(item, str) and privacy.secret_name(name) and privacy.secret_value(item):
                result[name] = privacy.REDACTED.format("secret")
            else:
                result[name] = scrub(item, limit)
        return result
    if isinstance(value, list):
        return [scrub(item, limit) for item in value]
    return value


def capped(value: object, limit: int) -> object:
    """A scrubbed value: each string capped at `limit`, and a container whose JSON still exceeds
    CONTAINER_FACTOR × `limit` (many long fields) replaced by its cut JSON text."""
    cleaned = scrub(value, limit)
    if isinstance(cleaned, (dict, list)):
        text = json.dumps(cleaned, ensure_ascii=False)
        if len(text) > CONTAINER_FACTOR * limit:
            return cut(text, CONTAINER_FACTOR * limit)
    return cleaned


def event_key(session_id: str, kind: str, payload: dict, turn: str | None) -> str:
    """Dedup key (DESIGN §3): the hash of session + kind + payload (+ the turn it belongs to)."""
    from claude_mem.capture.digest import sha256_hex

    body = json.dumps([session_id, kind, payload, turn], sort_keys=True, ensure_ascii=False)
    return "h:" + sha256_hex(body.encode("utf-8", "replace"))


def _turn_marker(payload: dict) -> str | None:
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


def event_name(hook: str, payload: dict) -> str:
    """The Claude Code event of `payload`, if `hook` captures it (else Unregistered)."""
    event = payload.get("hook_event_name")
    if event is None:
        return HOOK_EVENTS[hook][0]
    if not isinstance(event, str):
        raise BadInput(f"field 'hook_event_name' is a {type(event).__name__}")
    if event not in HOOK_EVENTS[hook]:
        raise Unregistered(f"{event} is not captured by `hook {hook}`")
    return event


def build_record(hook: str, payload: dict, project: str, limit: int) -> dict:
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
    body: dict[str, object]
    if kind == "session_start":
        _field(payload, "source", (str,))
        return record
    if kind == "prompt":
        raw_prompt = _valid_text(_field(payload, "prompt", (str,), required=True))  # type: ignore[arg-type]
        text = privacy.strip_private(raw_prompt)
        record["private"] = not text.strip() and bool(raw_prompt.strip())
        body = {"prompt": cut(text, limit)}
    elif kind in ("tool", "tool_failure"):
        body = {
            "tool_name": _field(payload, "tool_name", (str,), required=True),
            "tool_input": capped(payload.get("tool_input"), limit),
        }
        if kind == "tool":
            body["tool_response"] = capped(payload.get("tool_response"), limit)
        else:
            body["error"] = cut(_valid_text(_field(payload, "error", (str,), default="")), limit)  # type: ignore[arg-type]
        body["is_interrupt"] = _field(payload, "is_interrupt", (bool,), default=False)
        body["tool_use_id"] = _field(payload, "tool_use_id", (str,))
        body["cwd"] = cwd
        duration = _field(payload, "duration_ms", (int, float))
        body["duration_ms"] = int(duration) if duration is not None else None  # type: ignore[call-overload]
    elif kind == "summarize":
        message = _field(payload, "last_assistant_message", (str,), default="")
        body = {"last_assistant_message": cut(_valid_text(message), limit)}  # type: ignore[arg-type]
    else:
        body = {"reason": cut(_valid_text(_field(payload, "reason", (str,), default="other")), 200)}  # type: ignore[arg-type]
    record["payload"] = body
    tool_use_id = body.get("tool_use_id")
    if isinstance(tool_use_id, str) and tool_use_id:
        record["event_key"] = tool_use_id
    else:
        record["event_key"] = event_key(session_id, kind, body, _turn_marker(payload))
    return record
