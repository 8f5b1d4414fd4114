"""Reading, checking and writing Claude Code's config files for `claude-mem install` and `uninstall`.

All or nothing: a change is planned for every file of a scope first, and nothing is written unless
each one parses as a JSON object and can be written. A file that is not JSON, is not an object, is too
big, is read-only or changes under us is refused with its name and the fix. Every file is backed up
before it changes (`<data dir>/install/backups/`), written atomically (a temporary file renamed over
it, its mode kept, through a symlink to its target) and put back if a later file fails.

Round trip: the first install into a file records its bytes from before (`install/state.json`).
Uninstall removes our entries and, when what is left equals that original as JSON, writes the
original bytes back — or deletes a file install created, with the directories it created — so a
file's own formatting survives. A file the user edited in between keeps their edits; only our
entries go (and the file is written as 2-space JSON).
"""

from __future__ import annotations

import copy
import difflib
import functools
import hashlib
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from claude_mem import paths
from claude_mem.runtime import claude_config as config
from claude_mem.runtime.claude_config import ConfigError, Install, Target

INSTALL_DIR = "install"
STATE_FILE = "state.json"
MAX_BYTES = 64 * 1024 * 1024  # Claude Code's ~/.claude.json grows with history; far past this, refuse
UNCHANGED, CREATED, UPDATED, RESTORED, REMOVED = "unchanged", "created", "updated", "restored", "removed"


@dataclass(frozen=True)
class Change:
    """One file's planned change: `after` None with action `removed` deletes it."""

    target: Target
    real: str  # the file written (a symlink's target)
    before: bytes | None
    after: bytes | None
    action: str
    what: tuple[str, ...] = ()  # events or server names added or removed
    holds_ours_before: bool = False
    holds_ours_after: bool = False

    def diff(self) -> str:
        """A unified diff of the change (`/dev/null` for a file that appears or goes)."""
        old = (self.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = (self.after or b"").decode("utf-8", "replace").splitlines(keepends=True)
        lines = difflib.unified_diff(old, new, self.target.path if self.before is not None else "/dev/null",
                                     self.target.path if self.action != REMOVED else "/dev/null")
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)

    def as_dict(self) -> dict[str, object]:
        return {"path": self.target.path, "where": self.target.where, "action": self.action, "what": list(self.what)}


@dataclass
class Outcome:
    """What a run did (or, for a dry run, would do)."""

    scope: str
    changes: list[Change]
    backups: dict[str, str] = field(default_factory=dict)  # path -> backup
    dry_run: bool = False

    @property
    def changed(self) -> list[Change]:
        return [change for change in self.changes if change.action != UNCHANGED]

    def as_dict(self) -> dict[str, object]:
        return {"scope": self.scope, "dry_run": self.dry_run, "changed": bool(self.changed),
                "files": [{**change.as_dict(), "backup": self.backups.get(change.target.path)} for change in self.changes]}


# -- reading ------------------------------------------------------------------------------------------

def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the key {key!r} appears twice in one object")
        result[key] = value
    return result


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def parse(raw: bytes, path: str) -> dict[str, Any]:
    """A config file's bytes as a JSON object; empty or blank bytes are an empty object."""
    fix = "fix or move it, then run this again (nothing was changed)"
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text; {fix}") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); {fix}") from None
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{path} cannot be read as settings ({str(exc) or 'nested too deeply'}); {fix}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} holds {config._kind(data)}, not a JSON object as Claude Code expects; {fix}")
    return data


def read(path: str) -> tuple[str, bytes | None]:
    """(the file to write — a symlink's target —, its bytes or None when it does not exist)."""
    real = os.path.realpath(path)
    if not os.path.lexists(path) or not os.path.exists(real):
        return real, None
    if os.path.isdir(real):
        raise ConfigError(f"{path} is a directory, not a file; move it away and run this again (nothing was changed)")
    try:
        size = os.path.getsize(real)
        if size > MAX_BYTES:
            mb = 1024 * 1024
            raise ConfigError(f"{path} is {size // mb} MB, more than claude-mem edits ({MAX_BYTES // mb} MB); shrink it"
                              " (or add the entries by hand) and run this again (nothing was changed)")
        with open(real, "rb") as handle:
            return real, handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path} cannot be read ({exc.strerror}); fix its permissions and run this again "
                          "(nothing was changed)") from None


def dumps(data: Mapping[str, Any]) -> bytes:
    """How we write a file we changed: 2-space JSON, like Claude Code's own."""
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def same_json(a: object, b: object) -> bool:
    """Equal as JSON, key order included."""
    return json.dumps(a) == json.dumps(b)


# -- state: what each file held before our first change --------------------------------------------------

def install_dir(data_dir: str) -> str:
    return os.path.join(data_dir, INSTALL_DIR)


def load_state(data_dir: str) -> dict[str, dict[str, Any]]:
    """{real path: {"existed", "backup", "dirs"}} for each file whose original we know."""
    try:
        with open(os.path.join(install_dir(data_dir), STATE_FILE), encoding="utf-8") as handle:
            files = json.load(handle).get("files")
    except (OSError, ValueError, AttributeError):
        return {}
    return {key: value for key, value in files.items() if isinstance(value, dict)} if isinstance(files, dict) else {}


def original_of(record: dict[str, Any] | None) -> tuple[dict[str, Any] | None, bytes | None]:
    """(the file's content before our first change — {} when it did not exist —, its bytes); (None, None) if unknown."""
    if not record:
        return None, None
    if not record.get("existed"):
        return {}, None
    try:
        with open(str(record.get("backup")), "rb") as handle:
            raw = handle.read()
        return parse(raw, str(record.get("backup"))), raw
    except (OSError, ConfigError):
        return None, None


# -- planning -----------------------------------------------------------------------------------------------

def _plan(target: Target, edit: Callable[[dict[str, Any], str], list[str]],
          restore: tuple[dict[str, Any] | None, bytes | None] | None = None) -> Change:
    real, before = read(target.path)
    current = parse(before, target.path) if before is not None else {}
    data = copy.deepcopy(current)
    what = edit(data, target.path)
    ours_before, ours_after = config.holds_ours(current), config.holds_ours(data)
    if not what:
        return Change(target, real, before, before, UNCHANGED, (), ours_before, ours_after)
    if restore is not None and restore[0] is not None and same_json(data, restore[0]):
        if restore[1] is not None:
            return Change(target, real, before, restore[1], RESTORED, tuple(what), ours_before, ours_after)
        if not data:
            return Change(target, real, before, None, REMOVED, tuple(what), ours_before, ours_after)
    return Change(target, real, before, dumps(data), CREATED if before is None else UPDATED, tuple(what),
                  ours_before, ours_after)


def plan_install(scope: str, cwd: str, environ: Mapping[str, str], install: Install) -> list[Change]:
    def edit(target: Target) -> Callable[[dict[str, Any], str], list[str]]:
        if target.part == "hooks":
            return lambda data, path: config.add_hooks(data, path, install)
        return lambda data, path: [install.server] if config.add_server(data, path, target.keys, install) else []

    return [_plan(target, edit(target)) for target in config.targets(scope, cwd, environ)]


def plan_uninstall(scope: str, cwd: str, environ: Mapping[str, str], data_dir: str) -> list[Change]:
    state = load_state(data_dir)
    changes = []
    for target in config.targets(scope, cwd, environ):
        original = original_of(state.get(os.path.realpath(target.path)))
        changes.append(_plan(target, functools.partial(_remove, target, original[0]), original))
    return changes


def _remove(target: Target, original: dict[str, Any] | None, data: dict[str, Any], _path: str) -> list[str]:
    if target.part == "hooks":
        return config.remove_hooks(data, original)
    return config.remove_server(data, target.keys, original)


# -- writing ------------------------------------------------------------------------------------------------

def _existing_ancestor(directory: str) -> str:
    while not os.path.exists(directory):
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return directory


def check_writable(change: Change) -> None:
    """Refuse, before anything is written, a file or folder that cannot be written."""
    path = change.target.path
    if change.before is not None:
        mode = os.stat(change.real).st_mode
        if not mode & 0o222 or not os.access(change.real, os.W_OK):
            raise ConfigError(f"{path} is read-only; make it writable (chmod u+w {path}) and run this again, "
                              "or choose another --scope (nothing was changed)")
    folder = _existing_ancestor(os.path.dirname(change.real))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(f"cannot write in {folder} (for {path}); fix its permissions and run this again "
                          "(nothing was changed)")


def _make_dirs(directory: str, private: bool) -> list[str]:
    """Create `directory` and missing parents (0700 in the home directory, else 0755); the ones created."""
    missing = []
    while not os.path.exists(directory):
        missing.append(directory)
        directory = os.path.dirname(directory)
    for folder in reversed(missing):
        os.mkdir(folder)
        os.chmod(folder, 0o700 if private else 0o755)
    return list(reversed(missing))


def _write(path: str, data: bytes, mode: int) -> None:
    fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".claude-mem-tmp", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def _remove_dirs(folders: list[str]) -> None:
    """rmdir each (deepest first) that is empty now."""
    for folder in sorted(folders, key=len, reverse=True):
        try:
            os.rmdir(folder)
        except OSError:
            pass


def backup(data_dir: str, change: Change) -> str:
    """Copy the file's current bytes into `<data dir>/install/backups/`; the copy's path."""
    folder = os.path.join(install_dir(data_dir), "backups")
    os.makedirs(folder, exist_ok=True)
    digest = hashlib.sha256(change.real.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    stem = f"{time.strftime(paths.BACKUP_STAMP, time.gmtime())}-{digest}-{os.path.basename(change.real)}"
    name, counter = stem, 0
    while os.path.exists(os.path.join(folder, name)):
        counter += 1
        name = f"{stem}.{counter}"
    with open(os.path.join(folder, name), "xb") as handle:
        handle.write(change.before or b"")
    return os.path.join(folder, name)


def apply(changes: list[Change], data_dir: str) -> dict[str, str]:
    """Back up, then write every changed file (all or nothing); returns {path: backup}."""
    todo = [change for change in changes if change.action != UNCHANGED]
    if not todo:
        return {}
    for change in todo:
        check_writable(change)
    backups: dict[str, str] = {}
    try:
        for change in todo:
            if change.before is not None:
                backups[change.target.path] = backup(data_dir, change)
    except OSError as exc:
        raise ConfigError(f"cannot back up {change.target.path} into {install_dir(data_dir)} ({exc.strerror}); "
                          "nothing was changed") from None
    state = load_state(data_dir)
    done: list[tuple[Change, list[str], int]] = []
    try:
        for change in todo:
            if read(change.target.path)[1] != change.before:
                raise ConfigError(f"{change.target.path} changed while claude-mem was editing it; run this again")
            exists = change.before is not None
            mode = stat.S_IMODE(os.stat(change.real).st_mode) if exists else (0o600 if change.target.private else 0o644)
            created = [] if change.after is None else _make_dirs(os.path.dirname(change.real), change.target.private)
            done.append((change, created, mode))
            if change.after is None:
                os.unlink(change.real)
            else:
                _write(change.real, change.after, mode)
    except (OSError, ConfigError) as exc:
        _roll_back(done)
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"cannot write {done[-1][0].target.path if done else 'the config'} ({exc.strerror}); "
                          "nothing was changed") from None
    for change, created, _mode in done:
        _record(state, change, backups.get(change.target.path), created)
    _save_state(data_dir, state)
    return backups


def _roll_back(done: list[tuple[Change, list[str], int]]) -> None:
    for change, created, mode in reversed(done):
        try:
            if change.before is None:
                if os.path.exists(change.real):
                    os.unlink(change.real)
            elif read(change.target.path)[1] != change.before:
                _write(change.real, change.before, mode)
        except (OSError, ConfigError):
            pass
        _remove_dirs(created)


def _record(state: dict[str, dict[str, Any]], change: Change, backup_path: str | None, created: list[str]) -> None:
    """Keep what the file held before our first change; forget it once none of ours is left."""
    if not change.holds_ours_after:
        record = state.pop(change.real, None)
        if record is not None and change.action == REMOVED:  # a file install created: its folders go too
            _remove_dirs([folder for folder in record.get("dirs") or [] if isinstance(folder, str)])
        return
    if not change.holds_ours_before:
        state[change.real] = {"existed": change.before is not None, "backup": backup_path, "dirs": created,
                              "path": change.target.path}


def _save_state(data_dir: str, state: dict[str, dict[str, Any]]) -> None:
    folder = install_dir(data_dir)
    os.makedirs(folder, exist_ok=True)
    _write(os.path.join(folder, STATE_FILE), dumps({"files": state}), 0o600)
