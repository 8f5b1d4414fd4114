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

