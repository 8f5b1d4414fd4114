"""Whether what a worker was started for (`runtime.origin`) is still installed, looked at cheaply.

The worker (`Watch`) notes at start which of its origin's files register claude-mem, then looks again
every few seconds — a `stat` per file, a parse only when a file changed — and says why once none
does: after `claude plugin uninstall` (the plugin leaves installed_plugins.json; its cached folder is
deleted or marked `.orphaned_at`), `claude-mem uninstall`, or hooks removed by hand. It also notices
the folder its own code comes from being deleted. A worker started by hand or for
`claude --plugin-dir` (nothing registered) only watches its own code.
"""

from __future__ import annotations

import json
import os
from typing import Any

from claude_mem.runtime.claude_config import HOOK_MARKER, PLUGIN_NAME

ORPHANED = ".orphaned_at"  # what `claude plugin uninstall` leaves in the plugin's cached copy
INSTALLED_PLUGINS = os.path.join("plugins", "installed_plugins.json")
UNREADABLE = object()


def _signature(path: str) -> tuple[int, int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size, found.st_ino


def _read(path: str) -> Any:
    """The JSON in `path`; None when the file is missing, `UNREADABLE` when it cannot be parsed (it may be
    half-written this very moment: that is no reason to stop)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return UNREADABLE


def plugin_listed(path: str, name: str) -> bool | None:
    """Whether installed_plugins.json at `path` lists an install of plugin `name` (any marketplace, any
    scope); None when it cannot be read."""
    found = _read(path)
    if found is UNREADABLE:
        return None
    plugins = found.get("plugins") if isinstance(found, dict) else None
    return isinstance(plugins, dict) and any(key.split("@", 1)[0] == name and entries
                                             for key, entries in plugins.items())


def holds_our_hooks(path: str) -> bool | None:
    """Whether a settings file has a hook that runs claude-mem (what `claude-mem install` writes, or
    `claude-mem hook`); None when it cannot be read."""
    found = _read(path)
    if found is UNREADABLE:
        return None
    hooks = found.get("hooks") if isinstance(found, dict) else None
    for groups in hooks.values() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            for handler in (group.get("hooks") or []) if isinstance(group, dict) else ():
                command = handler.get("command") if isinstance(handler, dict) else None
                if isinstance(command, str) and (HOOK_MARKER in command or "claude-mem hook" in command):
                    return True
    return False


class Watch:
    """What registers this worker, looked at again cheaply: `gone()` says why it no longer is."""

    def __init__(self, origin: dict[str, Any], package: str) -> None:
        self.package = os.path.join(package, "claude_mem")
        self.root = ""
        self.listing = ""
        self.files: list[str] = []
        self.seen: dict[str, tuple[int, int, int] | None] = {}
        self.plugin = PLUGIN_NAME
        if origin.get("kind") == "plugin" and isinstance(origin.get("root"), str):
            root = origin["root"]
            if os.path.isdir(root) and not os.path.exists(os.path.join(root, ORPHANED)):
                self.root = root
            listing = os.path.join(str(origin.get("config") or ""), INSTALLED_PLUGINS)
            if plugin_listed(listing, self.plugin) is True:
                self.listing = listing
        elif origin.get("kind") == "settings" and isinstance(origin.get("files"), list):
            self.files = [str(path) for path in origin["files"] if holds_our_hooks(str(path)) is True]
        for path in [self.listing, *self.files]:
            if path:
                self.seen[path] = _signature(path)

    @property
    def registered(self) -> str:
        """What this worker was started for, in words ("" when nothing registers it)."""
        if self.root or self.listing:
            return "the plugin %s%s" % (self.plugin, " (%s)" % self.root if self.root else "")
        return "the hooks in %s" % ", ".join(self.files) if self.files else ""

    def _changed(self, path: str) -> bool:
        now = _signature(path)
        if now == self.seen.get(path):
            return False
        self.seen[path] = now
        return True

    def gone(self) -> str | None:
        """Why this worker has nothing left to serve, or None (the common case: a few `stat` calls)."""
        if not os.path.isdir(self.package):
            return "the folder its code comes from (%s) is gone" % os.path.dirname(self.package)
        if self.root and (not os.path.isdir(self.root) or os.path.exists(os.path.join(self.root, ORPHANED))):
            return "the plugin %s was uninstalled (its folder %s is %s)" % (
                self.plugin, self.root, "gone" if not os.path.isdir(self.root) else "marked orphaned")
        if self.listing and self._changed(self.listing) and plugin_listed(self.listing, self.plugin) is False:
            return "the plugin %s was uninstalled (%s no longer lists it)" % (self.plugin, self.listing)
        if self.files:
            if any([self._changed(path) for path in self.files]) and \
                    all(holds_our_hooks(path) is False for path in self.files):
                return "claude-mem's hooks were removed from %s" % ", ".join(self.files)
        return None
