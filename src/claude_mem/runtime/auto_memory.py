"""Claude Code's own auto memory: where a project's memory directory is, whether it is on, and what its
files hold. Stdlib only; read-only (we never write there).

The facts relied on (Claude Code docs `memory.md`, "Auto memory", mirror ericbuess/claude-code-docs
@e82bac3; its `memdir/paths.ts` for the details the page leaves out):

- The directory is `<config dir>/projects/<project>/memory/`, config dir `$CLAUDE_CONFIG_DIR` or
  `~/.claude`; `<project>` is the canonical git root (worktrees share the main worktree's) with every
  character that is not `[A-Za-z0-9]` replaced by `-` (a name past 200 characters is cut there and
  a hash appended: we find it by its first 200 characters). `CLAUDE_CODE_PROJECT_DIR_NAME` names
  `<project>` instead.
- `autoMemoryDirectory` moves it; "read from any settings scope: user, project, local, policy, or
  --settings" (project and local under the workspace-trust rule, which we cannot see: we honour them).
  The first scope that sets it wins, local > project > user. "The value must be an absolute path or
  start with `~/`": `~/` is the home directory; anything else is refused (and said so).
- On unless `CLAUDE_CODE_DISABLE_AUTO_MEMORY` is truthy (`1`/`true`: off; `0`/`false`: on whatever
  the settings say), `CLAUDE_CODE_SIMPLE` (`--bare`) is truthy, or `autoMemoryEnabled` is false in the
  settings (local > project > user).
- `MEMORY.md` is the index: its first 200 lines or 25,000 bytes (cut at a line) are loaded into every
  session. Topic files carry YAML front matter (`name`, `description`, `type`: user / feedback /
  project / reference, `modified`) and are read on demand. The bundled CLI 2.1.332 rewrites a note's
  front matter when it writes one: `name` as a slug, and `type`, `modified` and `originSessionId`
  nested under `metadata:` (seen in tests/test_auto_memory.py against the real CLI); both shapes are read.
"""

from __future__ import annotations

import os
import stat

if False:  # for the type checker only: `typing` stays off the hook path
    from collections.abc import Mapping

INDEX_FILE = "MEMORY.md"
LOADED_LINES = 200
LOADED_BYTES = 25_000
NAME_LIMIT = 200
# Bounds on what one directory costs us: files indexed, bytes kept of one file, bytes a settings file may be.
MAX_FILES = 1000
MAX_FILE_BYTES = 256 * 1024
MAX_SETTINGS_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 4
BINARY_PROBE = 8192
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def home(environ: Mapping[str, str]) -> str:
    """The home directory of `environ` (its `HOME`, else this process's)."""
    return environ.get("HOME") or os.path.expanduser("~")


def config_dir(environ: Mapping[str, str]) -> str:
    """Claude Code's config dir: `$CLAUDE_CONFIG_DIR`, else `~/.claude` (`~` of `environ`)."""
    custom = environ.get("CLAUDE_CONFIG_DIR")
    if custom:
        return os.path.join(home(environ), custom[2:]) if custom.startswith("~/") else custom
    return os.path.join(home(environ), ".claude")


def sanitized(root: str) -> str:
    """`/home/me/my_repo` → `-home-me-my-repo`: every character not in [A-Za-z0-9] becomes `-`."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in root)


def _settings_files(root: str, environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(scope, path) in precedence order: local, project, user."""
    return [("local", os.path.join(root, ".claude", "settings.local.json")),
            ("project", os.path.join(root, ".claude", "settings.json")),
            ("user", os.path.join(config_dir(environ), "settings.json"))]


def _read_settings(path: str) -> tuple[dict[str, object], str]:
    """A settings file's object ({} when it does not exist) and what is wrong with it ("" when nothing)."""
    import json  # off the hook path (it imports `re`): the session-start hook never locates

    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_SETTINGS_BYTES + 1)
    except FileNotFoundError:
        return {}, ""
    except OSError as exc:
        return {}, f"{path}: cannot be read ({exc.strerror or exc})"
    if len(raw) > MAX_SETTINGS_BYTES:
        return {}, f"{path}: larger than {MAX_SETTINGS_BYTES // (1024 * 1024)} MB, not read"
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return {}, f"{path}: not valid JSON ({exc}); its auto memory settings are ignored"
    if not isinstance(data, dict):
        return {}, f"{path}: not a JSON object; its auto memory settings are ignored"
    return data, ""


def _directory_setting(value: object, path: str, home_dir: str) -> tuple[str | None, str]:
    """`autoMemoryDirectory` → (absolute directory, "") or (None, why it is refused)."""
    import json

    if not isinstance(value, str):
        return None, f"{path}: autoMemoryDirectory is not a string ({json.dumps(value)[:60]}); ignored"
    candidate = value
    if candidate.startswith("~/"):
        rest = os.path.normpath(candidate[2:] or ".")
        if rest in (".", ".."):
            return None, f"{path}: autoMemoryDirectory {value!r} names the home directory itself; ignored"
        candidate = os.path.join(home_dir, rest)
    candidate = os.path.normpath(candidate) if candidate else candidate
    if not candidate or not os.path.isabs(candidate) or len(candidate) < 3 or "\0" in candidate:
        return None, (f"{path}: autoMemoryDirectory {value!r} is neither an absolute path nor starts with ~/"
                      " (Claude Code ignores it too)")
    return candidate, ""


class Location:
    """Where a project's auto memory lives and whether it is on; `problems` are clear lines for a person."""

    __slots__ = ("directory", "enabled", "why_off", "source", "problems")

    def __init__(self, directory: str, enabled: bool, why_off: str, source: str, problems: list[str]) -> None:
        self.directory, self.enabled, self.why_off, self.source, self.problems = (
            directory, enabled, why_off, source, problems)

    def as_dict(self) -> dict[str, object]:
        return {"directory": self.directory, "enabled": self.enabled, "why_off": self.why_off,
                "source": self.source, "problems": list(self.problems)}


def _default_directory(root: str, environ: Mapping[str, str]) -> str:
    projects = os.path.join(config_dir(environ), "projects")
    name = environ.get("CLAUDE_CODE_PROJECT_DIR_NAME") or sanitized(root)
    if len(name) > NAME_LIMIT:  # Claude Code cuts it and appends a hash of its own: find it by the cut part
        prefix = name[:NAME_LIMIT]
        try:
            found = sorted(entry for entry in os.listdir(projects) if entry.startswith(prefix))
        except OSError:
            found = []
        name = found[0] if found else prefix
    return os.path.join(projects, name, "memory")


def locate(root: str, environ: Mapping[str, str] | None = None) -> Location:
    """Where auto memory lives for the project whose key (repository root) is `root`, and whether it is on."""
    import json

    environ = os.environ if environ is None else environ
    problems: list[str] = []
    directory, source = "", "default"
    enabled: bool | None = None
    enabled_from = ""
    for scope, path in _settings_files(root, environ):
        data, problem = _read_settings(path)
        if problem:
            problems.append(problem)
        if not directory and "autoMemoryDirectory" in data:
            chosen, problem = _directory_setting(data["autoMemoryDirectory"], path, home(environ))
            if problem:
                problems.append(problem)
            if chosen:
                directory, source = chosen, f"autoMemoryDirectory in {scope} settings ({path})"
        if enabled is None and "autoMemoryEnabled" in data:
            value = data["autoMemoryEnabled"]
            if isinstance(value, bool):
                enabled, enabled_from = value, f"autoMemoryEnabled is false in {scope} settings ({path})"
            else:
                problems.append(f"{path}: autoMemoryEnabled is not true or false ({json.dumps(value)[:60]}); ignored")
    directory = directory or _default_directory(root, environ)
    switch = (environ.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY") or "").strip().lower()
    if switch in _TRUE:
        return Location(directory, False, "CLAUDE_CODE_DISABLE_AUTO_MEMORY is set", source, problems)
    if switch in _FALSE:
        return Location(directory, True, "", source, problems)
    if (environ.get("CLAUDE_CODE_SIMPLE") or "").strip().lower() in _TRUE:
        return Location(directory, False, "CLAUDE_CODE_SIMPLE (--bare) is set", source, problems)
    if enabled is False:
        return Location(directory, False, enabled_from, source, problems)
    return Location(directory, True, "", source, problems)


# -- the files ---------------------------------------------------------------------------------------------


class Listing:
    """A directory's files by stat: relative path → (size, mtime_ns), and what was left out and why."""

    __slots__ = ("files", "capped", "problems", "missing")

    def __init__(self) -> None:
        self.files: dict[str, tuple[int, int]] = {}
        self.capped = 0  # files past MAX_FILES, not indexed
        self.problems: list[str] = []
        self.missing = False


def listing(directory: str, cap: int = MAX_FILES) -> Listing:
    """Every regular file under `directory` (hidden ones and symlinked directories aside, `MAX_DEPTH` deep),
    `MEMORY.md` first, then the newest, up to `cap`. Never raises: a directory that cannot be read (a
    symlink loop, no permission) is a problem line."""
    found = Listing()
    try:
        top = os.stat(directory)
    except FileNotFoundError:
        found.missing = True
        return found
    except OSError as exc:
        found.problems.append(f"{directory}: cannot be read ({exc.strerror or exc})")
        return found
    if not stat.S_ISDIR(top.st_mode):
        found.problems.append(f"{directory}: is not a directory")
        return found
    entries: dict[str, tuple[int, int]] = {}
    pending = [("", 0)]
    while pending:
        relative, depth = pending.pop()
        where = os.path.join(directory, relative) if relative else directory
        try:
            with os.scandir(where) as scan:
                children = list(scan)
        except OSError as exc:
            found.problems.append(f"{where}: cannot be listed ({exc.strerror or exc})")
            continue
        for entry in children:
            if entry.name.startswith("."):
                continue
            name = f"{relative}/{entry.name}" if relative else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth + 1 < MAX_DEPTH:
                        pending.append((name, depth + 1))
                    continue
                info = entry.stat()  # a symlinked file is read where it points
            except OSError as exc:
                found.problems.append(f"{name}: skipped ({exc.strerror or exc})")
                continue
            if stat.S_ISREG(info.st_mode):
                entries[name] = (info.st_size, info.st_mtime_ns)
    ordered = sorted(entries, key=lambda name: (name != INDEX_FILE, -entries[name][1], name))
    found.files = {name: entries[name] for name in ordered[:cap]}
    found.capped = max(len(ordered) - cap, 0)
    return found


class Note:
    """One file's text and fields as indexed; `binary` ones are skipped (counted), `problem` says what was odd."""

    __slots__ = ("name", "description", "type", "body", "hash", "binary", "problem")

    def __init__(self, name: str, description: str, type_: str, body: str, digest: str, binary: bool,
                 problem: str) -> None:
        self.name, self.description, self.type, self.body, self.hash, self.binary, self.problem = (
            name, description, type_, body, digest, binary, problem)


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def front_matter(text: str) -> tuple[dict[str, str], str, str]:
    """(fields, body, problem) of a Markdown file with optional YAML front matter: simple `key: value`
    lines between `---` lines. A block that is not closed, or a line that is not `key: value`, is a
    problem; the file is then indexed as it stands."""
    if not text.startswith("---"):
        return {}, text, ""
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return {}, text, ""
    fields: dict[str, str] = {}
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return fields, "\n".join(lines[index + 1:]).lstrip("\n"), ""
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "-")):
            continue  # blank, comment, or a list item: not needed here
        key, colon, value = stripped.partition(":")
        if not colon or not key.strip():
            return {}, text, f"front matter line {index + 1} is not `key: value`; indexed as plain text"
        if line.startswith((" ", "\t")):  # nested (`metadata:` → `type`, `modified`): a top-level key wins
            fields.setdefault(key.strip().lower(), _unquote(value))
        else:
            fields[key.strip().lower()] = _unquote(value)
    return {}, text, "front matter is not closed by a `---` line; indexed as plain text"


def read_note(path: str) -> Note:
    """The file at `path` as a note: cut past `MAX_FILE_BYTES`, invalid UTF-8 replaced, binary flagged."""
    import hashlib  # not on the hook path

    problems: list[str] = []
    with open(path, "rb") as handle:
        raw = handle.read(MAX_FILE_BYTES + 1)
    digest = hashlib.sha256(raw).hexdigest()
    if b"\0" in raw[:BINARY_PROBE]:
        return Note("", "", "", "", digest, True, "binary file; skipped")
    if len(raw) > MAX_FILE_BYTES:
        raw = raw[:MAX_FILE_BYTES]
        problems.append(f"larger than {MAX_FILE_BYTES // 1024} KB; the rest is not indexed")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")
        if len(raw) <= MAX_FILE_BYTES or text.count("\ufffd") > 1:  # a cut may split one character
            problems.append("not valid UTF-8; the bad bytes are replaced")
    fields, body, problem = front_matter(text.replace("\r\n", "\n"))
    if problem:
        problems.append(problem)
    return Note(fields.get("name", "")[:200], fields.get("description", "")[:500], fields.get("type", "")[:40],
                body, digest, False, "; ".join(problems))


def loaded_part(text: str) -> str:
    """What Claude Code loads of `MEMORY.md` at session start: the first 200 lines, then at most
    25,000 bytes cut at the last line end before the limit."""
    lines = text.split("\n")
    part = "\n".join(lines[:LOADED_LINES])
    encoded = part.encode("utf-8")
    if len(encoded) > LOADED_BYTES:
        cut = encoded[:LOADED_BYTES]
        end = cut.rfind(b"\n")
        part = (cut[:end] if end > 0 else cut).decode("utf-8", "ignore")
    return part
