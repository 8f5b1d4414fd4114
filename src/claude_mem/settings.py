"""Settings: defaults in one place, `settings.json` in the data dir, `CLAUDE_MEM_<KEY>` env overrides.

Precedence is env > file > default. Stdlib only (the hooks read settings on every call).
Keys ending in `_api_key` or `_token` are secrets: masked in every display, never returned by an API.
"""

import json
import os

ENV_PREFIX = "CLAUDE_MEM_"
SECRET_SUFFIXES = ("_api_key", "_token")
MASK = "********"

# key -> (default, one-line description). The README documents every key with this default.
SPEC: dict[str, tuple[object, str]] = {
    # where things live
    "data_dir": ("~/.claude-mem-py", "Where the database, logs, spool and backups live (env only)."),
    "log_level": ("info", "Log verbosity: debug, info, warning or error."),
    # worker
    "worker_port": (None, "Worker port on 127.0.0.1; unset means 38700 + uid % 100, 0 means any free port."),
    "autostart": (True, "Hooks start the worker when it is not running."),
    "backups_keep": (5, "How many database snapshots to keep."),
    "backup_interval_hours": (24, "Hours between automatic database snapshots (0 turns them off)."),
    # capture
    "max_field_chars": (20000, "Longest stored tool input/output field; longer ones keep head and tail."),
    "skip_tools": (
        ["TodoWrite", "ListMcpResourcesTool", "AskUserQuestion"],
        "Tools whose calls are never captured.",
    ),
    "excluded_projects": ([], "Path globs of projects that are never captured."),
    # observer
    "provider": ("auto", "Observer: auto, claude, anthropic, openai or offline."),
    "claude_model": ("claude-haiku-4-5", "Model for the claude (Agent SDK) observer."),
    "cli_path": ("", "Claude Code CLI for the claude observer; empty means the one bundled with the SDK."),
    "max_observers": (2, "Most observer sessions open at once (claude provider)."),
    "anthropic_api_key": ("", "API key for the anthropic observer."),
    "anthropic_base_url": ("", "Base URL for the anthropic observer; empty means the SDK default."),
    "anthropic_model": ("claude-haiku-4-5", "Model for the anthropic observer."),
    "openai_base_url": ("http://127.0.0.1:11434/v1", "Base URL of an OpenAI-compatible server."),
    "openai_model": ("llama3.1", "Model for the openai observer."),
    "openai_api_key": ("", "API key for the openai observer (optional for local servers)."),
    "observer_timeout_seconds": (120, "Longest wait for one observer reply."),
    "observer_history_turns": (6, "Recent turns a stateless observer keeps besides its recap."),
    "max_attempts": (3, "Attempts per event before it is marked failed."),
    "retry_backoff_seconds": (2.0, "Base of the exponential backoff between attempts."),
    "lease_seconds": (300, "How long a claimed batch stays claimed before it returns to the queue."),
    "batch_max_events": (20, "Most events in one observer turn."),
    "batch_max_chars": (30000, "Most characters of events in one observer turn."),
    "session_idle_hours": (24, "Hours of silence after which an active session becomes interrupted."),
    # recall
    "context_observations": (50, "Observations in the session-start index."),
    "context_index_tokens": (1000, "Token budget of the index rows."),
    "context_max_tokens": (1400, "Token budget of the whole session-start context."),
    "prompt_context": (False, "Add the best matching memories to each prompt."),
    "prompt_context_results": (3, "Matches added to a prompt when prompt_context is on."),
    "prompt_context_tokens": (300, "Token budget of the memories added to a prompt."),
}

DEFAULTS: dict[str, object] = {key: spec[0] for key, spec in SPEC.items()}


class SettingsError(ValueError):
    """A setting has a value that cannot be used."""


def is_secret(key: str) -> bool:
    return key.endswith(SECRET_SUFFIXES)


def data_dir() -> str:
    """The data dir: `CLAUDE_MEM_DATA_DIR` or the default, with `~` expanded (never from the file)."""
    raw = os.environ.get(ENV_PREFIX + "DATA_DIR") or str(DEFAULTS["data_dir"])
    return os.path.abspath(os.path.expanduser(raw))


def settings_path(directory: str | None = None) -> str:
    return os.path.join(directory or data_dir(), "settings.json")


def default_port() -> int:
    getuid = getattr(os, "getuid", None)
    return 38700 + (getuid() % 100 if getuid else 0)


def coerce(key: str, value: object) -> object:
    """Convert a raw value (env string or JSON value) to the type of the key's default."""
    default = DEFAULTS[key]
    if value is None:
        return default
    try:
        if isinstance(default, bool):
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(value)
        if key == "worker_port" or isinstance(default, int):
            if isinstance(value, bool):
                raise ValueError(value)
            if isinstance(value, str) and value.strip() == "" and key == "worker_port":
                return None
            number = int(value) if not isinstance(value, float) or value.is_integer() else None
            if number is None or number < 0:
                raise ValueError(value)
            return number
        if isinstance(default, float):
            if isinstance(value, bool):
                raise ValueError(value)
            number = float(value)
            if number < 0:
                raise ValueError(value)
            return number
        if isinstance(default, list):
            if isinstance(value, list):
                return [str(item) for item in value]
            text = str(value).strip()
            if text.startswith("["):
                parsed = json.loads(text)
                if not isinstance(parsed, list):
                    raise ValueError(value)
                return [str(item) for item in parsed]
            return [part.strip() for part in text.split(",") if part.strip()]
        if isinstance(value, (dict, list)):
            raise ValueError(value)
        return str(value)
    except (TypeError, ValueError) as exc:
        raise SettingsError(f"setting {key!r}: cannot use {value!r} ({type(default).__name__} expected)") from exc


def read_file(directory: str | None = None) -> dict[str, object]:
    """The raw settings file as a dict; missing file -> {}; unreadable file -> SettingsError."""
    path = settings_path(directory)
    try:
        with open(path, encoding="utf-8") as handle:
            raw = json.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise SettingsError(f"{path}: not a readable JSON object ({exc})") from exc
    if not isinstance(raw, dict):
        raise SettingsError(f"{path}: expected a JSON object, found {type(raw).__name__}")
    return raw


def load(directory: str | None = None, strict: bool = False) -> dict[str, object]:
    """Effective settings. Bad values fall back to the default unless `strict` (then SettingsError)."""
    try:
        from_file = read_file(directory)
    except SettingsError:
        if strict:
            raise
        from_file = {}
    result = dict(DEFAULTS)
    for key in SPEC:
        env_value = os.environ.get(ENV_PREFIX + key.upper())
        for raw in (from_file.get(key), env_value):
            if raw is None:
                continue
            try:
                result[key] = coerce(key, raw)
            except SettingsError:
                if strict:
                    raise
    result["data_dir"] = data_dir()
    return result


def source_of(key: str, directory: str | None = None) -> str:
    """Where a key's effective value comes from: env, file or default."""
    if os.environ.get(ENV_PREFIX + key.upper()) is not None:
        return "env"
    try:
        if key in read_file(directory):
            return "file"
    except SettingsError:
        pass
    return "default"


def masked(values: dict[str, object]) -> dict[str, object]:
    """A copy safe to display: every non-empty secret replaced by a mask."""
    return {key: (MASK if is_secret(key) and value else value) for key, value in values.items()}


def update_file(changes: dict[str, object], directory: str | None = None) -> dict[str, object]:
    """Validate and write `changes` into settings.json atomically; returns the new file contents."""
    unknown = sorted(set(changes) - set(SPEC))
    if unknown:
        raise SettingsError(f"unknown setting(s): {', '.join(unknown)}")
    if "data_dir" in changes:
        raise SettingsError("data_dir is chosen with CLAUDE_MEM_DATA_DIR, not in settings.json")
    current = read_file(directory)
    for key, value in changes.items():
        current[key] = coerce(key, value)
    path = settings_path(directory)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temp = f"{path}.{os.getpid()}.tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        json.dump(current, handle, indent=2, sort_keys=True)
        handle.write("\n")
    os.chmod(temp, 0o600)
    os.replace(temp, path)
    return current


def describe_default(key: str) -> str:
    """The default as the README writes it."""
    if key == "worker_port":
        return "38700 + uid % 100"
    default = DEFAULTS[key]
    if isinstance(default, bool):
        return "true" if default else "false"
    if isinstance(default, list):
        return ",".join(default) if default else "(empty)"
    if default == "":
        return "(empty)"
    return str(default)
