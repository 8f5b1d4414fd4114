"""`claude-mem uninstall --purge`: delete the data dir, venv included — only when it is recognisably ours.

A data dir is only ever chosen by `CLAUDE_MEM_DATA_DIR` or the default, so a typo there must not
delete someone's home or Claude Code's config: the folder has to hold something only claude-mem
writes, and must not be a symlink, a git checkout, the home directory, Claude Code's config dir or
a folder above them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from claude_mem import paths
from claude_mem.runtime.claude_config import config_dir
from claude_mem.runtime.config_files import INSTALL_DIR

# Names only claude-mem writes into its data dir (paths.py): one of them must be there.
MARKERS = (paths.DB_FILENAME, paths.WORKER_LOCK, paths.WORKER_INFO, paths.SPOOL_DIR, paths.QUARANTINE_DIR, INSTALL_DIR)


def _above_or_same(folder: str, inner: str) -> bool:
    """Whether `folder` is `inner` or one of its parents."""
    folder, inner = os.path.realpath(folder), os.path.realpath(inner)
    return inner == folder or inner.startswith(folder.rstrip(os.sep) + os.sep)


def refusal(data_dir: str, environ: Mapping[str, str]) -> str | None:
    """Why `data_dir` must not be deleted (a sentence), or None when it may be."""
    if os.path.islink(data_dir):
        return f"{data_dir} is a symbolic link; delete it and what it points to by hand if you are sure"
    if not os.path.isdir(data_dir):
        return f"{data_dir} is not a directory"
    for name, protected in (("your home directory", os.path.expanduser("~")), ("Claude Code's config dir", config_dir(environ))):
        if _above_or_same(data_dir, protected):
            return f"{data_dir} is {name} or holds it"
    entries = set(os.listdir(data_dir))
    if ".git" in entries:
        return f"{data_dir} is a git checkout"
    if not entries & set(MARKERS):
        return (f"{data_dir} does not look like claude-mem's data dir (none of {', '.join(MARKERS)} is in it); "
                "check CLAUDE_MEM_DATA_DIR, or delete it by hand if you are sure")
    return None


def size_of(folder: str) -> int:
    """Bytes under `folder` (symlinks not followed)."""
    total = 0
    for root, _dirs, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total



def leftovers(data_dir: str) -> dict[str, object]:
    """What stays on disk once claude-mem is no longer registered: the data dir and, inside it, the
    memory (database and backups) and the plugin's venv, with their sizes in bytes."""
    from claude_mem.runtime.environment import venv_dir

    if not os.path.isdir(data_dir):
        return {"data_dir": data_dir, "exists": False, "bytes": 0, "memory_bytes": 0, "venv": None, "venv_bytes": 0}
    memory = sum(size_of(path) if os.path.isdir(path) else _file_size(path)
                 for path in (paths.db_path(data_dir), paths.backups_dir(data_dir)))
    memory += sum(_file_size(paths.db_path(data_dir) + suffix) for suffix in ("-wal", "-shm"))
    venv = venv_dir(data_dir)
    return {"data_dir": data_dir, "exists": True, "bytes": size_of(data_dir), "memory_bytes": memory,
            "venv": venv if os.path.isdir(venv) else None, "venv_bytes": size_of(venv) if os.path.isdir(venv) else 0}


def _file_size(path: str) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


def removal_hint(found: dict[str, object]) -> str:
    """How to remove what `leftovers` found, in one sentence (the README says the same)."""
    venv = f"`rm -rf {found['venv']}` frees the venv alone; " if found["venv"] else ""
    return (f"{venv}`claude-mem uninstall --purge` (or `rm -rf {found['data_dir']}`) deletes everything, "
            "your memory included; keep it to find your memory again after a reinstall")
