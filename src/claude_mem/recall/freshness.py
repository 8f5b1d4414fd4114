"""Freshness at read time (issue 26): is what a memory says about its files still true of the tree?

An observation's files were fingerprinted when it was made (`store.fingerprints`: path relative to
the project root, size, mtime, git blob hash, HEAD then). Reading it, each file is compared with the
working tree it is read from:

- `current` — every file is as it was (same size and mtime, or, when those moved, the same content);
- `changed` — a file's content differs (it is named; outside the hooks, with the commits since);
- `deleted` — a file is gone (none changed);
- `unknown` — no files recorded, no project root here, not a git checkout, or nothing could be told.

Stat first; a file is hashed (git's blob hash) only when its size or mtime moved, at most
`MAX_HASH_FILE` bytes of it, and the hashes are cached per process (keyed by path, size, mtime).
A `Budget` bounds one read (files stat'ed, bytes hashed, wall time); past it a file is `unknown`.
Stdlib only and import-light (the session-start and prompt hooks run it): the sha1 module is loaded
on the first hash, and git itself (`commits_since`) runs only where the caller asks (CLI, worker, MCP).
"""

from __future__ import annotations

import os
import stat as _stat  # already loaded by `os`
import time

from claude_mem import project as identity
from claude_mem.recall.sanitize import clean

if False:  # for the type checker only: `typing` stays off the hook path
    from collections.abc import Iterable, Mapping
    from typing import Any

    from claude_mem.store import Store

CURRENT, CHANGED, DELETED, UNKNOWN = "current", "changed", "deleted", "unknown"
STATES = (CURRENT, CHANGED, DELETED, UNKNOWN)
STALE = (CHANGED, DELETED)
MODES = ("mark", "hide", "show")
MAX_HASH_FILE = 4 * 1024 * 1024  # a larger file whose size is unchanged is `unknown`, never read
MAX_FILES = 2000  # files stat'ed in one read
MAX_BYTES = 32 * 1024 * 1024  # bytes hashed in one read
MAX_SECONDS = 0.25  # wall time of one read
MAX_GIT_CALLS = 20  # `git log` runs in one read (outside the hooks)
GIT_TIMEOUT = 1.0
_CHUNK = 1024 * 1024

# (absolute path, size, mtime_ns) -> git blob hash: a file unchanged since it was last hashed is not read again.
_HASHES: dict[tuple[str, int, int], str] = {}
_HASH_CACHE_MAX = 20_000
# (root, recorded commit, path) -> (when asked, short hashes): a worker answering many searches asks git once
# per file every `COMMITS_TTL` seconds.
_COMMITS: dict[tuple[str, str, str], tuple[float, list[str]]] = {}
COMMITS_TTL = 10.0
_ROOTS: dict[tuple[str, str, str], tuple[float, str | None]] = {}
ROOTS_TTL = 5.0
_REAL: dict[str, tuple[float, str]] = {}  # directory -> (when, its realpath)
# (root, recorded path, size, mtime, hash) -> (when, state, why): a worker or MCP server answering many
# searches looks at a file at most once every `STATE_TTL` seconds (a one-shot hook or CLI never reuses it).
_STATES: dict[tuple[str, str, object, object, object], tuple[float, str, str]] = {}
STATE_TTL = 1.0
hash_reads = 0  # how many files this process has read to hash (tests and the benchmark watch it)


class Budget:
    """What one read may spend: files stat'ed, bytes hashed, seconds; then everything left is `unknown`."""

    def __init__(self, files: int = MAX_FILES, hash_bytes: int = MAX_BYTES, seconds: float = MAX_SECONDS,
                 git_calls: int = 0) -> None:
        self.files = files
        self.hash_bytes = hash_bytes
        self.deadline = time.monotonic() + seconds
        self.git_calls = git_calls
        self.real: dict[str, str] = {}  # directory -> its realpath, within this read

    def checkout(self, root: str) -> bool:
        found = self.real.get("\0" + root)
        if found is None:
            found = self.real["\0" + root] = "1" if is_checkout(root) else ""
        return bool(found)

    def realpath(self, path: str) -> str:
        """`os.path.realpath` of a directory, kept for this read and `ROOTS_TTL` seconds in the process."""
        found = self.real.get(path)
        if found is None:
            kept = _REAL.get(path)
            if kept is not None and time.monotonic() - kept[0] < ROOTS_TTL:
                found = kept[1]
            else:
                found = os.path.realpath(path)
                if len(_REAL) >= _HASH_CACHE_MAX:
                    _REAL.clear()
                _REAL[path] = (time.monotonic(), found)
            self.real[path] = found
        return found

    def spent(self) -> bool:
        return self.files <= 0 or time.monotonic() > self.deadline


def blob_hash(path: str, size: int, budget: Budget | None = None) -> str | None:
    """git's blob hash of the file (sha1 of `blob <size>\\0` + content), or None when it cannot be read
    in budget, is larger than `MAX_HASH_FILE`, or its size changed while reading."""
    global hash_reads
    if size > MAX_HASH_FILE or (budget is not None and size > budget.hash_bytes):
        return None
    digest: Any
    try:
        import _sha1  # type: ignore[import-not-found]  # builtin: `hashlib` costs more to import than a hook may spend
        digest = _sha1.sha1(b"blob %d\0" % size)
    except ImportError:  # pragma: no cover - a Python built without it
        import hashlib
        digest = hashlib.sha1(b"blob %d\0" % size, usedforsecurity=False)
    read = 0
    try:
        with open(path, "rb") as handle:
            hash_reads += 1
            while True:
                chunk = handle.read(_CHUNK)
                if not chunk:
                    break
                read += len(chunk)
                if read > size:
                    return None
                digest.update(chunk)
    except OSError:
        return None
    if budget is not None:
        budget.hash_bytes -= read
    return digest.hexdigest() if read == size else None


def _cached_hash(path: str, size: int, mtime_ns: int, budget: Budget) -> str | None:
    key = (path, size, mtime_ns)
    found = _HASHES.get(key)
    if found is not None:
        return found
    digest = blob_hash(path, size, budget)
    if digest is not None:
        if len(_HASHES) >= _HASH_CACHE_MAX:
            _HASHES.clear()
        _HASHES[key] = digest
    return digest


def _inside(root: str, relative: str, budget: Budget) -> str | None:
    """The absolute path of `relative` under `root`, or None when it leaves the root (`..`, absolute,
    a symlink pointing out) or is not a usable name."""
    if not relative or "\0" in relative or os.path.isabs(relative):
        return None
    if ".." in relative or "//" in relative or "./" in relative or relative.endswith("/."):
        joined = os.path.normpath(os.path.join(root, relative))
        if joined != root and not joined.startswith(root.rstrip(os.sep) + os.sep):
            return None
    else:  # already normal: the common case, without normpath's cost
        joined = root.rstrip(os.sep) + os.sep + relative
    # its directory, symlinks resolved, stays under the root (the file itself is checked by `file_state`)
    return joined if _under(budget.realpath(joined.rpartition(os.sep)[0] or os.sep), budget.realpath(root)) else None


def _under(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def file_state(root: str, recorded: Mapping[str, Any], budget: Budget) -> tuple[str, str]:
    """(state, why) of one recorded file under `root`: a state of `STATES` and a short reason (looked at
    again after `STATE_TTL` seconds at most)."""
    key = (root, str(recorded.get("path")), recorded.get("size"), recorded.get("mtime_ns"), recorded.get("hash"))
    seen = _STATES.get(key)
    now = time.monotonic()
    if seen is not None and now - seen[0] < STATE_TTL:
        return seen[1], seen[2]
    if budget.spent():
        return UNKNOWN, "not checked (budget)"
    state, why = _file_state(root, recorded, budget)
    if len(_STATES) >= _HASH_CACHE_MAX:
        _STATES.clear()
    _STATES[key] = (now, state, why)
    return state, why


def _file_state(root: str, recorded: Mapping[str, Any], budget: Budget) -> tuple[str, str]:
    budget.files -= 1
    relative = recorded.get("path")
    path = _inside(root, relative, budget) if isinstance(relative, str) else None
    if path is None:
        return UNKNOWN, "outside the project"
    try:
        info = os.lstat(path)
        if _stat.S_ISLNK(info.st_mode):
            if not _under(os.path.realpath(path), budget.realpath(root)):
                return UNKNOWN, "outside the project"
            info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return DELETED, "deleted"
    except (OSError, ValueError):
        return UNKNOWN, "unreadable"
    if not _stat.S_ISREG(info.st_mode):
        return CHANGED, "no longer a file"
    size, mtime = recorded.get("size"), recorded.get("mtime_ns")
    if info.st_size == size and info.st_mtime_ns == mtime:
        return CURRENT, ""
    was = recorded.get("hash")
    if not isinstance(was, str) or not was:
        return (CHANGED, "size differs") if isinstance(size, int) and info.st_size != size else (UNKNOWN, "no hash")
    if isinstance(size, int) and info.st_size != size:
        return CHANGED, "content differs"  # a blob hash covers the size: no need to read it
    now = _cached_hash(path, info.st_size, info.st_mtime_ns, budget)
    if now is None:
        return UNKNOWN, "not hashed"
    return (CURRENT, "") if now == was.lower() else (CHANGED, "content differs")


def is_checkout(root: str | None) -> bool:
    """Whether `root` is the top of a git checkout (a `.git` directory or file)."""
    return bool(root) and os.path.exists(os.path.join(str(root), ".git"))


def assess(files: Iterable[Mapping[str, Any]] | None, root: str | None, budget: Budget | None = None,
           commits: bool = False) -> dict[str, Any]:
    """`{"freshness": state, "changed_files": [path…]}` (+ `"changed_commits": {path: [sha…]}` when
    `commits` and git knows) for one observation's recorded files read against the tree at `root`."""
    files = list(files or ())
    if not files or not root or not (budget.checkout(root) if budget is not None else is_checkout(root)):
        return {"freshness": UNKNOWN, "changed_files": []}
    budget = budget if budget is not None else Budget()
    states: dict[str, str] = {}
    for item in files:
        state, _why = file_state(str(root), item, budget)
        states[str(item.get("path"))] = state
    stale = [path for path, state in states.items() if state in STALE]
    if stale:
        overall = CHANGED if any(states[path] == CHANGED for path in stale) else DELETED
    elif all(state == CURRENT for state in states.values()):
        overall = CURRENT
    else:
        overall = UNKNOWN
    result: dict[str, Any] = {"freshness": overall, "changed_files": stale}
    if commits and stale:
        by_path = {str(item.get("path")): item.get("commit") for item in files}
        found = {path: commits_since(str(root), by_path.get(path), path, budget) for path in stale}
        result["changed_commits"] = {path: shas for path, shas in found.items() if shas}
    return result


def commits_since(root: str, commit: object, path: str, budget: Budget | None = None) -> list[str]:
    """Short hashes of the commits since `commit` that touched `path` (newest first), [] when git cannot
    tell in `GIT_TIMEOUT` (no commit recorded, unknown commit, no git). Not for the hooks."""
    if not isinstance(commit, str) or not commit or not all(c in "0123456789abcdefABCDEF" for c in commit):
        return []
    key = (root, commit, path)
    cached = _COMMITS.get(key)
    if cached is not None and time.monotonic() - cached[0] < COMMITS_TTL:
        return cached[1]
    if budget is not None:
        if budget.git_calls <= 0:
            return []
        budget.git_calls -= 1
    import subprocess
    try:
        done = subprocess.run(
            ["git", "-C", root, "log", "--format=%h", "-n", "20", f"{commit}..HEAD", "--", path],
            capture_output=True, timeout=GIT_TIMEOUT, check=False, stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return []
    found = [line for line in done.stdout.decode("ascii", "replace").split() if line][:20] if done.returncode == 0 else []
    if len(_COMMITS) >= _HASH_CACHE_MAX:
        _COMMITS.clear()
    _COMMITS[key] = (time.monotonic(), found)
    return found


def root_for(conn: Store | None, key: str | None, cwd: str | None = None,
             env: dict[str, str] | None = None) -> str | None:
    """The working tree to read project `key`'s files from: this directory's checkout when it is that
    project (a moved or re-cloned checkout of a remote-keyed one too), else the key's own directory.
    Kept `ROOTS_TTL` seconds per process (a worker answers many searches)."""
    if not key:
        return None
    cwd = cwd or os.getcwd()
    environ = os.environ if env is None else env
    cache_key = (key, cwd, environ.get("CLAUDE_PROJECT_DIR") or "")
    cached = _ROOTS.get(cache_key)
    if cached is not None and time.monotonic() - cached[0] < ROOTS_TTL:
        return cached[1]
    found = _root_for(conn, key, cwd, env)
    if len(_ROOTS) >= 1000:
        _ROOTS.clear()
    _ROOTS[cache_key] = (time.monotonic(), found)
    return found


def _root_for(conn: Store | None, key: str, cwd: str, env: dict[str, str] | None) -> str | None:
    try:
        here, remote = identity.identity(cwd, env)
    except (OSError, ValueError):
        here, remote = "", None
    if here == key:
        return here
    if here and conn is not None:
        from claude_mem.store import projects as store_projects
        if store_projects.resolve(conn, here, remote) == key:
            return here
    return key if os.path.isabs(key) and os.path.isdir(key) else None


class Reader:
    """Freshness of many observations in one read: fingerprints fetched at once, roots resolved once."""

    def __init__(self, conn: Store, cwd: str | None = None, commits: bool = False, budget: Budget | None = None,
                 root: str | None = None) -> None:
        self.conn = conn
        self.cwd = cwd
        self.commits = commits
        self.budget = budget if budget is not None else Budget(git_calls=MAX_GIT_CALLS if commits else 0)
        self.root = root
        self._roots: dict[str, str | None] = {}

    def root_of(self, key: str | None) -> str | None:
        if self.root is not None:
            return self.root
        key = key or ""
        if key not in self._roots:
            self._roots[key] = root_for(self.conn, key, self.cwd)
        return self._roots[key]

    def assess(self, items: Iterable[tuple[int, str | None]]) -> dict[int, dict[str, Any]]:
        """observation id -> `assess` result, for (id, project key) pairs."""
        wanted = list(items)
        from claude_mem.store import DatabaseError, fingerprints
        try:
            recorded = fingerprints.of(self.conn, [i for i, _ in wanted])
        except DatabaseError:
            recorded = {}
        return {i: assess(recorded.get(i), self.root_of(key), self.budget, self.commits) for i, key in wanted}

    def annotate(self, items: Iterable[Any]) -> None:
        """Add `freshness` and `changed_files` (and `changed_commits`) to each observation item (a dict
        with `id` and `project`, and `kind` "observation" when it has one)."""
        rows = [item for item in items if item.get("kind", "observation") == "observation"
                and isinstance(item.get("id"), int)]
        found = self.assess((item["id"], item.get("project")) for item in rows)
        for item in rows:
            item.update(found[item["id"]])


def demote_stale(items: list[Any], positions: int = 3) -> list[Any]:
    """Relevance order with every changed or deleted item moved `positions` places down (stable)."""
    keyed = [(index + (positions if item.get("freshness") in STALE else 0), index, item)
             for index, item in enumerate(items)]
    return [item for _, _, item in sorted(keyed, key=lambda entry: (entry[0], entry[1]))]


def marker(item: Mapping[str, Any] | None, limit: int = 2) -> str:
    """A few characters for a stale item: ` (changed: a.py)`, ` (deleted: b.py)`; "" otherwise."""
    if not item:
        return ""
    state = item.get("freshness")
    if state not in STALE:
        return ""
    names = [os.path.basename(str(path)) or str(path) for path in item.get("changed_files") or []]
    shown = ", ".join(clean(name, 60) for name in names[:limit])
    if len(names) > limit:
        shown += f" +{len(names) - limit}"
    return f" ({state}: {shown})" if shown else f" ({state})"


def mode(values: Mapping[str, Any] | None) -> str:
    """The `stale_memory` setting: mark (default), hide or show."""
    chosen = (values or {}).get("stale_memory")
    return chosen if chosen in MODES else "mark"


def on_hits(conn: Store, hits: list[Any], rank: bool = True) -> list[Any]:
    """Search hits with their `freshness` and `changed_files` (and the commits since, where git tells);
    in relevance order (`rank`), changed or deleted ones a few places lower. Not for the hooks."""
    Reader(conn, commits=True).annotate(hits)
    if rank:
        hits[:] = demote_stale(hits)
    return hits
