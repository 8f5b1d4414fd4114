"""Settings: typed and validated once (DESIGN §8): defaults in one place, `settings.json` in the data
dir, `CLAUDE_MEM_<KEY>` env overrides.

Precedence is env > file > default. A bad value is refused when it is set (`update_file`); one already
in the file or the environment is never used and never silent: `load` puts the next usable value in
its place and `problems` says what was refused and why (`status`, `/health` and the viewer show it).
Keys ending in `_api_key`, `_token` or `_database_url` are secrets: masked in every display, never returned by an API.

Stdlib only and import-light (the hooks read settings on every call): no typing, dataclasses or re.
"""

import os

from claude_mem import plugins
from claude_mem.domain import PROVIDERS, ClaudeMemError
from claude_mem.fastpath import jsontext

TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy only: the hooks never pay for `typing`
    from typing import Any

ENV_PREFIX = "CLAUDE_MEM_"
SECRET_SUFFIXES = ("_api_key", "_token", "_database_url")
MASK = "********"
LOG_LEVELS = ("debug", "info", "warning", "error")
URL_SCHEMES = ("http://", "https://")
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
PORT_MAX = 65535
TOKENS_MAX = 10**12  # an observer budget: far above any real spend, far below SQLite's integer limit


def _choices_text(names: "tuple[str, ...] | list[str]") -> str:
    return ", ".join(names[:-1]) + " or " + names[-1]


def _provider_description() -> str:
    """The `provider` row of every listing, written from the one list of provider names."""
    return "Observer, one of: " + "; ".join(f"{name} — {meaning}" for name, meaning in PROVIDERS.items()) + "."


def _plain(number: float) -> str:
    """`10000000`, not `1e+07`."""
    return str(int(number)) if float(number).is_integer() else f"{number:g}"


class Setting:
    """One key: its default, its type (bool, int, float, str, list or choice), limits and meaning."""

    __slots__ = ("default", "kind", "minimum", "maximum", "choices", "plugin_group", "optional", "url", "description")

    def __init__(self, default: object, kind: str, description: str, *, minimum: "float | None" = None,
                 maximum: "float | None" = None, choices: "tuple[str, ...]" = (), plugin_group: str = "",
                 optional: bool = False, url: "bool | tuple[str, ...]" = False) -> None:
        self.default = default
        self.kind = kind
        self.description = description
        self.minimum = minimum
        self.maximum = maximum
        self.choices = choices  # what listings show
        # an entry-point group (`plugins.PROVIDERS`): the names installed plugins register are valid too
        self.plugin_group = plugin_group
        self.optional = optional  # None ("unset") is a valid value
        # empty, or a URL with one of these schemes (`url=True`: http or https)
        self.url: tuple[str, ...] = URL_SCHEMES if url is True else url or ()

    def options(self) -> "tuple[str, ...]":
        """Every valid choice: the listed ones, then the names installed plugins add (not for the hooks:
        it scans the installed distributions)."""
        added = plugins.names(self.plugin_group) if self.plugin_group else ()
        return self.choices + tuple(name for name in added if name not in self.choices)

    def rule(self) -> str:
        """The constraint in words, for error messages."""
        if self.kind == "choice":
            return "one of " + _choices_text(self.choices) + (" (or an installed plugin's name)" if self.plugin_group else "")
        if self.kind == "bool":
            return "true or false"
        if self.kind == "list":
            return "a list of strings (JSON list, or comma-separated)"
        if self.kind in ("int", "float"):
            what = "a whole number" if self.kind == "int" else "a number"
            if self.minimum is not None and self.maximum is not None:
                what += f" from {_plain(self.minimum)} to {_plain(self.maximum)}"
            elif self.minimum is not None:
                what += f" of at least {_plain(self.minimum)}"
            return what + (", or empty for unset" if self.optional else "")
        if self.url:
            return "an " + " or ".join(self.url) + " URL (or empty)"
        return "a string"


def _int(default: int, description: str, maximum: int, minimum: int = 1) -> Setting:
    """A whole-number key; its ceiling keeps times, counts and SQL parameters far from any overflow."""
    return Setting(default, "int", description, minimum=minimum, maximum=maximum)


# Every key, its type and limits. The README documents every key with its default and meaning.
SETTINGS: dict[str, Setting] = {
    # where things live
    "data_dir": Setting("~/.claude-mem-py", "str", "Where the database, logs, spool and backups live (env only)."),
    "log_level": Setting("info", "choice", f"Log verbosity: {_choices_text(LOG_LEVELS)}.", choices=LOG_LEVELS),
    # worker
    "worker_port": Setting(None, "int", "Worker port on 127.0.0.1; unset means 38700 + uid % 100, 0 means any free port.",
                           minimum=0, maximum=PORT_MAX, optional=True),
    "autostart": Setting(True, "bool", "Hooks, and a CLI or MCP search by meaning, start the worker when it is not running."),
    "backups_keep": _int(5, "How many database snapshots to keep.", 1000),
    "backup_interval_hours": _int(24, "Hours between automatic database snapshots (0 turns them off).", 8760, minimum=0),
    # capture
    "max_field_chars": _int(20000, "Longest stored tool input/output field; longer ones keep head and tail.", 10_000_000,
                            minimum=100),
    "skip_tools": Setting(["TodoWrite", "ListMcpResourcesTool", "AskUserQuestion"], "list",
                          "Tools whose calls are never captured."),
    "excluded_projects": Setting([], "list", "Path globs of projects that are never captured."),
    # observer
    "provider": Setting("auto", "choice", _provider_description(), choices=tuple(PROVIDERS), plugin_group=plugins.PROVIDERS),
    "claude_model": Setting("claude-haiku-4-5", "str", "Model for the claude (Agent SDK) observer."),
    "cli_path": Setting("", "str", "Claude Code CLI for the claude observer; empty means the one bundled with the SDK."),
    "max_observers": _int(2, "Most observer sessions open at once (claude provider).", 64),
    "anthropic_api_key": Setting("", "str", "API key for the anthropic observer."),
    "anthropic_base_url": Setting("", "str", "Base URL for the anthropic observer; empty means the SDK default.", url=True),
    "anthropic_model": Setting("claude-haiku-4-5", "str", "Model for the anthropic observer."),
    "openai_base_url": Setting("http://127.0.0.1:11434/v1", "str", "Base URL of an OpenAI-compatible server.", url=True),
    "openai_model": Setting("llama3.1", "str", "Model for the openai observer."),
    "openai_api_key": Setting("", "str", "API key for the openai observer (optional for local servers)."),
    "observer_language": Setting("English", "str", "Language the observer writes observations and summaries in"
                                 " (e.g. Deutsch, Español, 日本語)."),
    "observer_timeout_seconds": _int(120, "Longest wait for one observer reply.", 86_400),
    "observer_history_turns": _int(6, "Recent turns a stateless observer keeps besides its recap.", 1000, minimum=0),
    "observer_daily_tokens": _int(0, "Observer tokens (input + output, every provider) a UTC day may use; once spent, the"
                                  " offline observer takes over until midnight UTC. 0 means unlimited.", TOKENS_MAX,
                                  minimum=0),
    "observer_session_tokens": _int(0, "Observer tokens (input + output) one session may use; once spent, the offline"
                                    " observer takes over for the rest of that session. 0 means unlimited.", TOKENS_MAX,
                                    minimum=0),
    "max_attempts": _int(3, "Attempts per event before it is marked failed.", 20),
    "retry_backoff_seconds": Setting(2.0, "float", "Base of the exponential backoff between attempts.", minimum=0,
                                     maximum=3600),
    "lease_seconds": _int(300, "How long a claimed batch stays claimed before it returns to the queue.", 86_400),
    "batch_max_events": _int(20, "Most events in one observer turn.", 1000),
    "batch_max_chars": _int(30000, "Most characters of events in one observer turn.", 10_000_000),
    "session_idle_hours": _int(24, "Hours of silence after which an active session becomes interrupted.", 8760),
    # recall
    "context_observations": _int(50, "Observations in the session-start index.", 10_000, minimum=0),
    "context_index_tokens": _int(1000, "Token budget of the index rows.", 1_000_000, minimum=0),
    "context_max_tokens": _int(1400, "Token budget of the whole session-start context.", 1_000_000, minimum=0),
    "stale_memory": Setting("mark", "choice", "Memories whose files changed or were deleted since: mark (the index and"
                            " per-prompt memory flag them), hide (left out of both) or show (no marks); search and"
                            " show always say.", choices=("mark", "hide", "show")),
    "prompt_context": Setting(True, "bool", "Add the memories that match a prompt well to it (never ones the session"
                              " has already been shown; nothing when none matches well)."),
    "prompt_context_results": _int(3, "Most memories added to one prompt.", 100),
    "prompt_context_tokens": _int(300, "Token budget of the memories added to a prompt.", 100_000, minimum=0),
    "prompt_context_timeout_ms": _int(100, "Longest wait for the worker's search by meaning before the prompt hook"
                                      " searches by keyword itself.", 10_000, minimum=0),
    "failure_notes": Setting(True, "bool", "When a command fails as it failed before in the project, add a note beside"
                             " the error: how often and when, and the fix that resolved it last time."),
    "failure_notes_before_retry": Setting(True, "bool", "Before a Bash command whose last run in the project failed"
                                          " (and nothing fixed it since) runs again, add the same note."),
    # team memory (DESIGN §12): nothing leaves this machine unless team_database_url and team_projects say so
    "team_database_url": Setting("", "str", "PostgreSQL server of team memory, e.g. postgresql://user:password@host/db"
                                 "?sslmode=verify-full&sslrootcert=/path/ca.pem (libpq options pass through); a secret."
                                 " Empty turns team memory off.", url=POSTGRES_SCHEMES),
    "team_projects": Setting([], "list", "Projects whose memory is shared through team_database_url: globs of project"
                             " paths or repository remotes (github.com/acme/*). Nothing else leaves this machine."),
    "team_author": Setting("", "str", "Name your shared memory carries; empty means git config user.name, else the"
                           " login name."),
    "team_share_prompts": Setting(False, "bool", "Share your prompts too (off: only sessions' metadata, observations"
                                  " and summaries)."),
    "team_sync_seconds": Setting(1.0, "float", "Seconds between two exchanges with the team server.", minimum=0.2,
                                 maximum=3600),
}

# key -> (default, one-line description): the view most callers need.
SPEC: dict[str, tuple[object, str]] = {key: (spec.default, spec.description) for key, spec in SETTINGS.items()}
DEFAULTS: "dict[str, Any]" = {key: spec.default for key, spec in SETTINGS.items()}


class SettingsError(ClaudeMemError, ValueError):
    """A setting has a value that cannot be used."""


def is_secret(key: str) -> bool:
    return key.endswith(SECRET_SUFFIXES)


def data_dir() -> str:
    """The data dir: `CLAUDE_MEM_DATA_DIR` or the default, with `~` expanded (never from the file)."""
    raw = os.environ.get(ENV_PREFIX + "DATA_DIR") or str(DEFAULTS["data_dir"])
    return os.path.abspath(os.path.expanduser(raw))


def settings_path(directory: "str | None" = None) -> str:
    return os.path.join(directory or data_dir(), "settings.json")


def default_port() -> int:
    getuid = getattr(os, "getuid", None)
    return 38700 + (getuid() % 100 if getuid else 0)


def _number(spec: Setting, value: object) -> "int | float | None":
    """`value` as the key's number type, or None when it is not one."""
    if isinstance(value, bool):
        return None
    if spec.kind == "int":
        if isinstance(value, float):
            return int(value) if value.is_integer() else None
        try:
            return int(str(value).strip())
        except ValueError:
            return None
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return number if number == number and number not in (float("inf"), float("-inf")) else None


def _list(value: object) -> "list[str] | None":
    if isinstance(value, list):
        return [str(item) for item in value]
    if isinstance(value, dict):
        return None
    text = str(value).strip()
    if text.startswith("["):
        try:
            parsed = jsontext.loads(text)
        except ValueError:
            return None
        return [str(item) for item in parsed] if isinstance(parsed, list) else None
    return [part.strip() for part in text.split(",") if part.strip()]


def _convert(spec: Setting, value: object) -> object:
    """The typed value, or raise ValueError with the reason."""
    if spec.kind == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower() if isinstance(value, (str, int)) else None
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off", ""):
            return False
        raise ValueError(f"not {spec.rule()}")
    if spec.kind in ("int", "float"):
        if spec.optional and (value is None or (isinstance(value, str) and not value.strip())):
            return None
        number = _number(spec, value)
        if number is None:
            raise ValueError(f"not {spec.rule()}")
        if (spec.minimum is not None and number < spec.minimum) or (spec.maximum is not None and number > spec.maximum):
            raise ValueError(f"out of range ({spec.rule()})")
        return number
    if spec.kind == "list":
        items = _list(value)
        if items is None:
            raise ValueError(f"not {spec.rule()}")
        return items
    if isinstance(value, (dict, list)) or value is None:
        raise ValueError(f"not {spec.rule()}")
    text = str(value)
    if spec.kind == "choice":
        text = text.strip().lower()  # `Claude` and `claude` are the same provider everywhere
        # A plugin's name is looked up only when it is not built in: the hooks never scan distributions.
        if text not in spec.choices and not (spec.plugin_group and text in plugins.names(spec.plugin_group)):
            raise ValueError(f"not {spec.rule()}")
        return text
    if spec.url and text.strip() and not text.strip().lower().startswith(spec.url):
        raise ValueError(f"not {spec.rule()}")
    return text.strip() if spec.url else text


def _validate(key: str, value: object) -> object:
    """The typed value for a known `key`, or ValueError with the reason (no key or value in it)."""
    spec = SETTINGS[key]
    if value is None and not spec.optional:
        return spec.default
    try:
        return _convert(spec, value)
    except TypeError:
        raise ValueError(f"not {spec.rule()}") from None


def coerce(key: str, value: object) -> object:
    """`value` (an env string or a JSON value) validated and converted for `key`; SettingsError says why not."""
    if key not in SETTINGS:
        raise SettingsError(f"unknown setting {key!r}")
    try:
        return _validate(key, value)
    except ValueError as exc:
        raise SettingsError(f"setting {key!r}: cannot use {_shown(key, value)}: {exc}") from None


def _shown(key: str, value: object) -> str:
    """A value as messages quote it: secrets masked, None as "unset"."""
    if value is None:
        return "unset"
    shown = display(key, value)
    if shown == MASK:
        return MASK
    quoted = repr(shown)
    return quoted if len(quoted) <= 80 else quoted[:60] + f"… ({len(str(shown))} characters)"


def read_file(directory: "str | None" = None) -> "dict[str, Any]":
    """The raw settings file as a dict; missing file -> {}; unreadable file -> SettingsError."""
    path = settings_path(directory)
    try:
        with open(path, encoding="utf-8") as handle:
            raw = jsontext.loads(handle.read())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise SettingsError(f"{path}: not a readable JSON object ({exc})") from exc
    if not isinstance(raw, dict):
        raise SettingsError(f"{path}: expected a JSON object, found {type(raw).__name__}")
    return raw


def _resolve(directory: "str | None") -> "tuple[dict[str, Any], list[str]]":
    """(effective values, one line per refused value): the work behind `load` and `problems`."""
    found: list[str] = []
    try:
        from_file = read_file(directory)
    except SettingsError as exc:
        from_file = {}
        found.append(f"{exc}; every key uses its environment value or default")
    for key in sorted(set(from_file) - set(SETTINGS)):
        found.append(f"{settings_path(directory)}: unknown setting {key!r} is ignored")
    result = dict(DEFAULTS)
    sources = dict.fromkeys(SETTINGS, "the default")
    for key in SETTINGS:
        env_name = ENV_PREFIX + key.upper()
        refused: list[tuple[str, object, str]] = []
        for source, raw in (("settings.json", from_file.get(key)), (env_name, os.environ.get(env_name))):
            if raw is None or key == "data_dir":
                continue
            try:
                result[key] = _validate(key, raw)
                sources[key] = "settings.json" if source == "settings.json" else "the environment"
            except ValueError as exc:
                refused.append((source, raw, str(exc)))
        for source, raw, reason in refused:
            where = "file" if source == "settings.json" else "env"
            found.append(f"{key} = {_shown(key, raw)} from {where} ({source}) is refused: {reason}; "
                         f"using {_shown(key, result[key])} from {sources[key]}")
    result["data_dir"] = data_dir()
    return result, found


def load(directory: "str | None" = None, strict: bool = False) -> "dict[str, Any]":
    """Effective, validated settings. A refused value gives way to the next source (file, then the
    default) and is reported by `problems`; with `strict` the first problem raises SettingsError."""
    values, found = _resolve(directory)
    if strict and found:
        raise SettingsError(found[0])
    return values


def problems(directory: "str | None" = None) -> list[str]:
    """One line per refused setting: key, source (file or env), value, reason and what is used instead."""
    return _resolve(directory)[1]


def source_of(key: str, directory: "str | None" = None) -> str:
    """Where a key's effective value comes from: env, file or default (a refused value is skipped)."""
    sources: list[tuple[str, object]] = [("env", os.environ.get(ENV_PREFIX + key.upper()))]
    try:
        sources.append(("file", read_file(directory).get(key)))
    except SettingsError:
        pass
    for source, raw in sources:
        if raw is None:
            continue
        try:
            coerce(key, raw)
        except SettingsError:
            continue
        return source
    return "default"


def masked(values: "dict[str, Any]") -> "dict[str, Any]":
    """A copy safe to display (see `display`)."""
    return {key: display(key, value) for key, value in values.items()}


def display(key: str, value: object) -> object:
    """A value safe to show: a non-empty secret masked, and a credential inside any other value
    (`https://user:pw@proxy`, `?api_key=…` in a base URL) redacted."""
    if is_secret(key) and value:
        return MASK
    if isinstance(value, str):
        from claude_mem import privacy

        return privacy.redact(value)
    return value


def update_file(changes: "dict[str, object]", directory: "str | None" = None) -> "dict[str, Any]":
    """Validate every change, then write them into settings.json atomically (nothing is written when one
    is refused); returns the new file contents."""
    unknown = sorted(set(changes) - set(SETTINGS))
    if unknown:
        raise SettingsError(f"unknown setting(s): {', '.join(unknown)}")
    if "data_dir" in changes:
        raise SettingsError("data_dir is chosen with CLAUDE_MEM_DATA_DIR, not in settings.json")
    validated = {key: coerce(key, value) for key, value in changes.items()}
    current = read_file(directory)
    current.update(validated)
    path = settings_path(directory)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temp = f"{path}.{os.getpid()}.tmp"
    import json

    with open(temp, "w", encoding="utf-8") as handle:
        json.dump(current, handle, indent=2, sort_keys=True)
        handle.write("\n")
    os.chmod(temp, 0o600)
    os.replace(temp, path)
    return current
