"""Code fingerprints at capture (issue 26): which files a tool event read or modified, as they were.

For each file a Read, Edit, Write, MultiEdit or NotebookEdit names, a fingerprint
`{"path", "size", "mtime_ns", "hash", "commit"}` (`store.fingerprints.FileFingerprint`):

Each is a `store.fingerprints.FileFingerprint` (typed here as a dict: capture does not import store).

- `path` relative to the *checkout root*: the directory holding the `.git` directory or file found by
  walking up from the session's directory (`CLAUDE_PROJECT_DIR`, else the payload's `cwd`); for a
  linked worktree that is the worktree itself, so the path is the repository path. Outside git the
  root is that directory. A file outside the root (after resolving symlinks) is not recorded, nor is
  a directory, a device, a FIFO or a missing file.
- `size` and `mtime_ns` from the open file (after the tool ran: PostToolUse is what the observation
  describes, so an edited file is fingerprinted with its new content).
- `hash` git's blob hash (`git hash-object`: SHA-1 of `b"blob <size>\\0" + content`); None for a file
  over HASH_MAX_BYTES or one that cannot be read.
- `commit` the checkout's HEAD read from `.git` without running git (loose ref, `packed-refs`,
  detached HEAD); None outside git or before the first commit.

Stdlib only and light (it runs in the hook): `_sha1` is CPython's builtin SHA-1 (`hashlib` loads
OpenSSL). Bounded (MAX_FILES_PER_EVENT, HASH_MAX_BYTES, TIME_BUDGET_S) and never raises: it returns
what it could.
"""

from __future__ import annotations

import os
import stat
import time

if False:  # for the type checker only: `typing` stays off the hook path
    from typing import Any

# The tools whose input names the file they read or modify, and the input field naming it.
FILE_TOOLS: dict[str, str] = {
    "Read": "file_path", "Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
# A file larger than this is recorded with its size and mtime but not hashed (hash None).
HASH_MAX_BYTES = 1 << 20
# At most this many files per event (and per `remember --file` call).
MAX_FILES_PER_EVENT = 20
# Fingerprinting stops (returning what it has) once it has taken this long.
TIME_BUDGET_S = 0.25
# A path longer than this is not a file name worth a syscall.
MAX_PATH_CHARS = 4096
# git files read here: HEAD and a loose ref are one line; packed-refs is read up to this many bytes.
PACKED_REFS_MAX_BYTES = 16 << 20
_SYMREF_DEPTH = 5
_HEX = frozenset("0123456789abcdef")


def blob_hash(data: bytes) -> str:
    """git's object id of a blob holding `data` (what `git hash-object` prints)."""
    try:  # imported here: most tool calls name no file to hash
        from _sha1 import sha1  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # pragma: no cover - builds without the builtin module
        from hashlib import sha1  # type: ignore[assignment,unused-ignore]
    digest = sha1(b"blob %d\0" % len(data))
    digest.update(data)
    result: str = digest.hexdigest()
    return result


def _first_line(path: str, limit: int = 4096) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    except (OSError, ValueError):
        return None


def _object_id(text: str | None) -> str | None:
    if text and len(text) in (40, 64) and set(text) <= _HEX:
        return text
    return None


def checkout(start: str) -> tuple[str, str | None]:
    """(checkout root, its git directory or None) for the directory `start`: the nearest ancestor
    with a `.git` directory, or a `.git` file saying `gitdir: …` (linked worktree, submodule)."""
    try:
        begin = os.path.realpath(os.path.abspath(start or "."))
    except (OSError, ValueError):
        return start, None
    current = begin
    for _ in range(256):
        dotgit = os.path.join(current, ".git")
        try:
            if os.path.isdir(dotgit):
                return current, dotgit
            if os.path.isfile(dotgit):
                line = _first_line(dotgit) or ""
                if not line.startswith("gitdir:"):
                    return current, None
                gitdir = line[len("gitdir:"):].strip()
                gitdir = os.path.normpath(os.path.join(current, gitdir))
                return current, (gitdir if os.path.isdir(gitdir) else None)
        except (OSError, ValueError):
            return begin, None
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return begin, None


def _common_dir(gitdir: str) -> str:
    """Where a worktree's shared refs live (its `commondir`), else the git dir itself."""
    common = _first_line(os.path.join(gitdir, "commondir"))
    if not common:
        return gitdir
    return os.path.normpath(os.path.join(gitdir, common))


def _safe_ref(name: str) -> bool:
    return (name.startswith("refs/") and ".." not in name and "\0" not in name and "\\" not in name
            and not name.endswith("/") and len(name) < 1024)


def _packed_ref(common: str, name: str) -> str | None:
    try:
        with open(os.path.join(common, "packed-refs"), "rb") as handle:
            wanted = b" " + name.encode("utf-8", "replace")
            read = 0
            for line in handle:
                read += len(line)
                if read > PACKED_REFS_MAX_BYTES:
                    return None
                line = line.rstrip(b"\r\n")
                if line.endswith(wanted) and not line.startswith((b"#", b"^")):
                    return _object_id(line[:-len(wanted)].decode("ascii", "replace"))
    except (OSError, ValueError):
        return None
    return None


def head_commit(gitdir: str | None) -> str | None:
    """The commit HEAD names in `gitdir` (detached or through a branch, loose or packed); None for a
    repository without commits, outside git, or when the git files cannot be read."""
    if not gitdir:
        return None
    try:
        common = _common_dir(gitdir)
        line = _first_line(os.path.join(gitdir, "HEAD"))
        for _ in range(_SYMREF_DEPTH):
            if line is None:
                return None
            if not line.startswith("ref:"):
                return _object_id(line)
            name = line[4:].strip()
            if not _safe_ref(name):
                return None
            line = None
            for base in (gitdir, common):  # per-worktree refs first, then the shared ones
                loose = _first_line(os.path.join(base, *name.split("/")))
                if loose:
                    line = loose
                    break
            if line is None:
                return _packed_ref(common, name)
    except (OSError, ValueError):
        return None
    return None


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _one(path: str, root: str, real_root: str, commit: str | None) -> dict[str, Any] | None:
    """The fingerprint of one file, or None when there is nothing to record (see the module doc)."""
    absolute = os.path.normpath(os.path.join(root, path))
    real = os.path.realpath(absolute)
    if not _inside(real, real_root) or real == real_root:
        return None  # outside the project (directly or through a symlink)
    if _inside(absolute, root):
        relative = os.path.relpath(absolute, root)
    else:  # named through a symlinked spelling of the root: its real path is inside
        relative = os.path.relpath(real, real_root)
    digest: str | None = None
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        try:
            info = os.stat(real)  # exists but unreadable: size and mtime without a hash
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
    else:
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            if info.st_size <= HASH_MAX_BYTES:
                chunks: list[bytes] = []
                left = HASH_MAX_BYTES + 1
                while left > 0:
                    chunk = os.read(fd, min(left, 1 << 18))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    left -= len(chunk)
                data = b"".join(chunks)
                if len(data) <= HASH_MAX_BYTES:
                    digest = blob_hash(data)
                    if len(data) != info.st_size:  # written meanwhile: describe what was hashed
                        info = os.fstat(fd)
        except OSError:
            digest = None
        finally:
            os.close(fd)
    return {"path": relative.replace(os.sep, "/"), "size": int(info.st_size), "mtime_ns": int(info.st_mtime_ns),
            "hash": digest, "commit": commit}


def fingerprints(paths: list[str], base: str, start: str | None = None,
                 limit: int = MAX_FILES_PER_EVENT) -> tuple[list[dict[str, Any]], str | None]:
    """(fingerprints of `paths`, HEAD commit) for the files under the checkout root found from `start`
    (default `base`). A relative path is taken from `base`. At most `limit` files (a path named twice
    counts once); never raises."""
    try:
        return _fingerprints(paths, base, start or base, limit)
    except Exception:  # noqa: BLE001 - capture must never fail because of a fingerprint
        return [], None


def _fingerprints(paths: list[str], base: str, start: str,
                  limit: int) -> tuple[list[dict[str, Any]], str | None]:
    deadline = time.monotonic() + TIME_BUDGET_S
    base = os.path.abspath(base or ".")
    root, gitdir = checkout(start)
    real_root = os.path.realpath(root)
    commit = head_commit(gitdir)
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in paths[: limit * 4]:  # a flood of paths costs a bounded amount of work
        if len(found) >= limit or time.monotonic() > deadline:
            break
        if not isinstance(path, str) or not path or len(path) > MAX_PATH_CHARS or "\0" in path:
            continue
        try:
            item = _one(os.path.join(base, path), root, real_root, commit)
        except (OSError, ValueError):
            continue
        if item is not None and item["path"] not in seen:
            seen.add(item["path"])
            found.append(item)
    return found, commit


def tool_paths(tool_name: object, tool_input: object) -> list[str]:
    """The files a tool call reads or modifies, as its input names them (empty for other tools)."""
    field = FILE_TOOLS.get(tool_name) if isinstance(tool_name, str) else None
    if field is None or not isinstance(tool_input, dict):
        return []
    value = tool_input.get(field)
    return [value] if isinstance(value, str) and value else []


def for_event(incoming: dict[str, Any], env: dict[str, Any]) -> dict[str, Any] | None:
    """`{"files": […], "commit": …}` for a raw PostToolUse / PostToolUseFailure payload whose tool
    names files, else None. Relative paths are taken from the payload's `cwd`; the root is found from
    `CLAUDE_PROJECT_DIR` (else `cwd`). Never raises."""
    try:
        paths = tool_paths(incoming.get("tool_name"), incoming.get("tool_input"))
        if not paths:
            return None
        cwd = incoming.get("cwd")
        cwd = cwd if isinstance(cwd, str) and cwd else os.getcwd()
        start = env.get("CLAUDE_PROJECT_DIR")
        start = start if isinstance(start, str) and start else cwd
        files, commit = fingerprints(paths, cwd, start)
        if not files:
            return None
        return {"files": files, "commit": commit}
    except Exception:  # noqa: BLE001 - capture must never fail because of a fingerprint
        return None
