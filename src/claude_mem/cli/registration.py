"""What Claude Code will run: installed plugins and hook commands in its settings files (read only).

The formats, as the real CLI (2.1.330) writes them, with `CLAUDE_CONFIG_DIR` replacing `~/.claude`:

- `<config>/plugins/installed_plugins.json`: `{"version": 2, "plugins": {"name@marketplace": [{"scope":
  "user" | "project" | "local", "installPath", "version", "projectPath" (project and local scopes)}]}}`;
- `<config>/plugins/known_marketplaces.json`: `{"marketplace": {"source": {"source": "directory", "path"},
  "installLocation"}}` — a marketplace that is a local folder is read from that folder at every start;
- `enabledPlugins: {"name@marketplace": true | false}` in `<config>/settings.json` (user),
  `<project>/.claude/settings.json` (project) and `<project>/.claude/settings.local.json` (local), the
  later overriding the earlier; a plugin missing from every one of them is disabled;
- `hooks: {"Event": [{"matcher", "hooks": [{"type": "command", "command"}]}]}` in the same files.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from claude_mem.runtime import claude_config

PLUGIN = claude_config.PLUGIN_NAME
ORIGINAL_PLUGIN = "claude-mem"  # the original TypeScript claude-mem (e.g. claude-mem@thedotmack)
HOOK_EVENTS = tuple(event for event, _, _ in claude_config.HOOKS)  # those Claude Code 2.0.77 knows
OUR_HOOK_COMMAND = re.compile(r"""claude-mem["']?\s+hook\b|claude_mem\b.*\bhook|\bhook\b.*claude_mem\b""")


def config_dir() -> str:
    """Claude Code's configuration folder: `CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    return os.path.abspath(claude_config.config_dir(os.environ))


def settings_files(cwd: str | None = None) -> list[tuple[str, str]]:
    """(scope, path) of every settings file Claude Code reads when started in `cwd` (project settings
    come from that directory, not its git root), lowest precedence first."""
    here = os.path.abspath(cwd or os.getcwd())
    return [("user", os.path.join(config_dir(), "settings.json")),
            ("project", os.path.join(here, ".claude", "settings.json")),
            ("local", os.path.join(here, ".claude", "settings.local.json"))]


def read_json(path: str) -> tuple[dict[str, Any] | None, str]:
    """(the JSON object, "") or (None, why not); a missing file is (None, "")."""
    try:
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle)
    except FileNotFoundError:
        return None, ""
    except (OSError, ValueError) as exc:
        return None, f"cannot read {path}: {exc}"
    if not isinstance(value, dict):
        return None, f"{path} is not a JSON object"
    return value, ""


@dataclass(frozen=True)
class PluginInstall:
    """One install of a plugin, as Claude Code records it, and whether it is enabled here."""

    plugin_id: str
    scope: str
    version: str
    install_path: str
    project_path: str
    enabled: bool
    folder: str  # what Claude Code loads it from: a local marketplace folder, else the install path

    @property
    def name(self) -> str:
        return self.plugin_id.split("@", 1)[0]

    def describe(self) -> str:
        where = f" for {self.project_path}" if self.project_path else ""
        return f"{self.plugin_id} v{self.version} ({self.scope} scope{where}) from {self.folder}"


@dataclass
class Registration:
    """Everything found: plugin installs that apply here, our hooks in settings files, read errors."""

    installs: list[PluginInstall] = field(default_factory=list)
    settings_hooks: dict[str, list[str]] = field(default_factory=dict)  # settings file -> events
    errors: list[str] = field(default_factory=list)

    def plugin(self, name: str, *, enabled: bool = True) -> list[PluginInstall]:
        return [item for item in self.installs if item.name == name and (item.enabled or not enabled)]

    @property
    def ours_by_plugin(self) -> bool:
        return bool(self.plugin(PLUGIN))

    @property
    def ours_by_settings(self) -> bool:
        return bool(self.settings_hooks)


def is_our_hook(handler: object) -> bool:
    """A hook `claude-mem install` wrote, or one that runs `claude-mem hook` or another claude_mem launcher."""
    command = handler.get("command") if isinstance(handler, dict) else None
    return claude_config.is_our_hook(handler) or (isinstance(command, str) and bool(OUR_HOOK_COMMAND.search(command)))


def our_hook_events(settings: dict[str, Any]) -> list[str]:
    """The events whose hooks in one settings object run `claude-mem hook` or a claude_mem launcher."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return []
    events = []
    for event, matchers in hooks.items():
        for matcher in matchers if isinstance(matchers, list) else []:
            entries = matcher.get("hooks") if isinstance(matcher, dict) else None
            if any(is_our_hook(entry) for entry in entries or []):
                events.append(str(event))
                break
    return events


def _installs(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    plugins = data.get("plugins")
    found = []
    for plugin_id, entries in (plugins.items() if isinstance(plugins, dict) else []):
        for entry in entries if isinstance(entries, list) else [entries]:  # version 1 held one entry
            if isinstance(entry, dict):
                found.append((str(plugin_id), entry))
    return found


def _marketplace_folders(config: str, errors: list[str]) -> dict[str, str]:
    """Marketplaces that are local folders: name -> folder (Claude Code reads their plugins there)."""
    known, problem = read_json(os.path.join(config, "plugins", "known_marketplaces.json"))
    if problem:
        errors.append(problem)
    folders = {}
    for name, entry in (known or {}).items():
        source = entry.get("source") if isinstance(entry, dict) else None
        if isinstance(source, dict) and source.get("source") == "directory" and isinstance(source.get("path"), str):
            folders[str(name)] = source["path"]
    return folders


def read_registration(cwd: str | None = None) -> Registration:
    """Plugin installs that apply in `cwd`, and the settings files holding our hooks."""
    found = Registration()
    enabled: dict[str, bool] = {}
    for _, path in settings_files(cwd):
        settings, problem = read_json(path)
        if problem:
            found.errors.append(problem)
        if settings is None:
            continue
        plugins = settings.get("enabledPlugins")
        if isinstance(plugins, dict):
            enabled.update({str(key): value is True for key, value in plugins.items()})
        events = our_hook_events(settings)
        if events:
            found.settings_hooks[path] = events
    config = config_dir()
    installed, problem = read_json(os.path.join(config, "plugins", "installed_plugins.json"))
    if problem:
        found.errors.append(problem)
    folders = _marketplace_folders(config, found.errors) if installed else {}
    here = os.path.realpath(cwd or os.getcwd())
    for plugin_id, entry in _installs(installed or {}):
        scope = str(entry.get("scope") or "user")
        project_path = str(entry.get("projectPath") or "")
        if scope != "user" and os.path.realpath(project_path) != here:
            continue  # installed for another project
        install_path = str(entry.get("installPath") or "")
        name, _, marketplace = plugin_id.partition("@")
        folder = _plugin_folder(folders[marketplace], name) if marketplace in folders else install_path
        found.installs.append(PluginInstall(
            plugin_id, scope, str(entry.get("version") or "?"), install_path, project_path,
            enabled.get(plugin_id, False), folder or install_path))
    return found


def _plugin_folder(marketplace: str, name: str) -> str:
    """Where a local-folder marketplace keeps plugin `name` (its `source`, relative to the folder)."""
    listing, _ = read_json(os.path.join(marketplace, ".claude-plugin", "marketplace.json"))
    for plugin in (listing or {}).get("plugins") or []:
        if isinstance(plugin, dict) and plugin.get("name") == name and isinstance(plugin.get("source"), str):
            return os.path.normpath(os.path.join(marketplace, plugin["source"]))
    return ""
