"""Our hooks and MCP server in Claude Code's own config files, per scope (`claude-mem install`).

Where each scope lives (hooks: reference/claude-code-integration.md §1.1; MCP servers: where
`claude mcp add --scope …` of the bundled CLI 2.1.330 writes them; settings are read from the
directory Claude Code starts in, not from its git root):

| scope   | hooks                                        | MCP server                                          |
|---------|----------------------------------------------|-----------------------------------------------------|
| user    | `~/.claude/settings.json` ($CLAUDE_CONFIG_DIR) | `~/.claude.json` → mcpServers ($CLAUDE_CONFIG_DIR/.claude.json) |
| project | `<cwd>/.claude/settings.json`                | `<cwd>/.mcp.json` → mcpServers                      |
| local   | `<cwd>/.claude/settings.local.json`          | `~/.claude.json` → projects[<git root or cwd>].mcpServers |

Our entries are recognised by what they run, never by position: a hook whose command runs
`claude_mem.hooks.runner`, a server whose args run `claude_mem.mcp_server`. Everything else in a
file — foreign hooks for the same events included — is left as it is: we add a matcher group of our
own and remove only that. Pure functions on parsed JSON; reading and writing is `config_files`.
"""

from __future__ import annotations

import json
import os
import shlex
import site
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from claude_mem.domain import ClaudeMemError
from claude_mem.runtime.mcp_names import SERVER_ENV, SERVER_NAME

SCOPES = ("user", "project", "local")
# The events and timeouts of the plugin's hooks/hooks.json (a test keeps the two in step): only events
# Claude Code 2.0.77 knows (DESIGN §1).
HOOKS: tuple[tuple[str, str, str | None], ...] = (
    ("SessionStart", "session-start", None),
    ("UserPromptSubmit", "user-prompt", None),
    ("PreToolUse", "pre-tool", "Bash"),
    ("PostToolUse", "post-tool", "*"),
    ("PostToolUseFailure", "post-tool", "*"),
    ("Stop", "stop", None),
    ("SessionEnd", "session-end", None),
)
HOOK_TIMEOUT = 30
HOOK_MARKER = "claude_mem.hooks.runner"
SERVER_MODULE = "claude_mem.mcp_server"
PLUGIN_NAME = "persistent-memory"


class ConfigError(ClaudeMemError):
    """A config file claude-mem will not change; the message names the file and the fix."""


@dataclass(frozen=True)
class Target:
    """One file of a scope and what of ours it holds: `hooks`, or an MCP server under `keys`."""

    path: str
    part: str
    keys: tuple[str, ...] = ()
    private: bool = False  # created 0600 (files in the home directory), else 0644

    @property
    def where(self) -> str:
        """Where in the file, in words."""
        return "hooks" if self.part == "hooks" else ".".join(self.keys)


def config_dir(environ: Mapping[str, str]) -> str:
    """Claude Code's user config dir: `$CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    return os.path.expanduser(environ.get("CLAUDE_CONFIG_DIR") or os.path.join("~", ".claude"))


def user_state_file(environ: Mapping[str, str]) -> str:
    """`~/.claude.json`, Claude Code's own state file (user and local MCP servers), or `$CLAUDE_CONFIG_DIR/.claude.json`."""
    custom = environ.get("CLAUDE_CONFIG_DIR")
    return os.path.join(os.path.expanduser(custom), ".claude.json") if custom else os.path.expanduser("~/.claude.json")


def git_root(directory: str) -> str:
    """The nearest directory at or above `directory` holding `.git` (a worktree's file too), else `directory`:
    the key under which Claude Code keeps a folder's local MCP servers."""
    current = directory
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return directory
        current = parent


def targets(scope: str, cwd: str, environ: Mapping[str, str]) -> list[Target]:
    """The files `scope` uses, hooks first."""
    if scope == "user":
        return [Target(os.path.join(config_dir(environ), "settings.json"), "hooks", private=True),
                Target(user_state_file(environ), "mcp", ("mcpServers",), private=True)]
    if scope == "project":
        return [Target(os.path.join(cwd, ".claude", "settings.json"), "hooks"),
                Target(os.path.join(cwd, ".mcp.json"), "mcp", ("mcpServers",))]
    if scope == "local":
        return [Target(os.path.join(cwd, ".claude", "settings.local.json"), "hooks"),
                Target(user_state_file(environ), "mcp", ("projects", git_root(cwd), "mcpServers"), private=True)]
    raise ValueError(f"unknown scope {scope!r}")


# -- our entries ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Install:
    """What `claude-mem install` writes: hook commands and an MCP server entry for one interpreter."""

    python: str  # the interpreter that has claude_mem installed (sys.executable)
    package_parent: str  # the directory holding the `claude_mem` package
    server: str = SERVER_NAME

    def hook_command(self, hook: str) -> str:
        """Shell form (Claude Code runs it with `sh -c`), as fast as the plugin's launcher: `-I -S` keep
        site-packages and their start-up cost out; the package's directory is *appended* to sys.path, so
        nothing installed beside it can shadow the standard library (and `-I` keeps the current
        directory out). A missing interpreter exits 127 and a missing package 1: never 2, which
        Claude Code would feed back to the model."""
        code = (f"import sys; sys.path.append({json.dumps(self.package_parent)}); "
                f"from {HOOK_MARKER} import run_from_argv; sys.exit(run_from_argv(sys.argv[1:]))")
        return f"{SERVER_ENV}={self.server} {shlex.quote(self.python)} -I -S -c {shlex.quote(code)} {hook}"

    def hook_group(self, hook: str, matcher: str | None) -> dict[str, Any]:
        handler = {"type": "command", "command": self.hook_command(hook), "timeout": HOOK_TIMEOUT}
        return {"matcher": matcher, "hooks": [handler]} if matcher else {"hooks": [handler]}

    def server_entry(self) -> dict[str, Any]:
        """`python -I -m claude_mem.mcp_server` (`-I`: a project folder named like a package cannot shadow it);
        `-P` instead when the package lives in the user site-packages, which `-I` would hide."""
        flag = "-P" if in_user_site(self.package_parent) else "-I"
        return {"type": "stdio", "command": self.python, "args": [flag, "-m", SERVER_MODULE],
                "env": {SERVER_ENV: self.server}}


def in_user_site(directory: str) -> bool:
    user_site = site.getusersitepackages()
    return bool(user_site) and os.path.realpath(directory) == os.path.realpath(user_site)


def is_our_hook(handler: object) -> bool:
    return isinstance(handler, dict) and isinstance(handler.get("command"), str) and HOOK_MARKER in handler["command"]


def is_our_server(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    args, env = entry.get("args"), entry.get("env")
    return (isinstance(args, list) and SERVER_MODULE in args) or (isinstance(env, dict) and SERVER_ENV in env)


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def _child(data: dict[str, Any], key: str, path: str, where: str, kind: type, create: bool) -> Any:
    """data[key], which must be `kind` (created empty when missing and `create`); None when missing."""
    value = data.get(key)
    if value is None and key not in data:
        if not create:
            return None
        value = data[key] = kind()
    if not isinstance(value, kind):
        wanted = "an object" if kind is dict else "a list"
        raise ConfigError(f"{path}: {where} is {_kind(value)}, not {wanted} as Claude Code expects; fix it by hand "
                          "and run this again (nothing was changed)")
    return value


def _our_groups(groups: list[Any]) -> list[int]:
    """Indexes of the matcher groups holding one of our hooks."""
    return [i for i, group in enumerate(groups) if isinstance(group, dict) and isinstance(group.get("hooks"), list)
            and any(is_our_hook(handler) for handler in group["hooks"])]


def add_hooks(data: dict[str, Any], path: str, install: Install) -> list[str]:
    """Put our hook group into every event (replacing an older one of ours); the events changed."""
    changed = []
    for event, hook, matcher in HOOKS:
        wanted = install.hook_group(hook, matcher)
        hooks = data.get("hooks")
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        if isinstance(groups, list) and [groups[i] for i in _our_groups(groups)] == [wanted]:
            continue
        groups = _child(_child(data, "hooks", path, '"hooks"', dict, True), event, path, f'"hooks.{event}"', list, True)
        _strip_hooks(groups)
        groups.append(wanted)
        changed.append(event)
    hooks = data.get("hooks")
    ours = {event for event, _, _ in HOOKS}
    for event, groups in (hooks.items() if isinstance(hooks, dict) else ()):
        if event not in ours and isinstance(groups, list) and _strip_hooks(groups):
            changed.append(event)  # an event an older claude-mem registered
    return changed


def _strip_hooks(groups: list[Any]) -> bool:
    """Remove our handlers from `groups` in place, and groups that held nothing else."""
    found = False
    for index in reversed(_our_groups(groups)):
        group = groups[index]
        group["hooks"] = [handler for handler in group["hooks"] if not is_our_hook(handler)]
        found = True
        if not group["hooks"]:
            del groups[index]
    return found


def _present(original: Any, keys: tuple[str, ...]) -> bool:
    """Whether the object path `keys` exists in `original` (unknown original: assume not)."""
    for key in keys:
        if not isinstance(original, dict) or key not in original:
            return False
        original = original[key]
    return True


def remove_hooks(data: dict[str, Any], original: dict[str, Any] | None) -> list[str]:
    """Remove every hook of ours, in any event; containers left empty go unless `original` had them."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return []
    changed = []
    for event in list(hooks):
        groups = hooks[event]
        if isinstance(groups, list) and _strip_hooks(groups):
            changed.append(event)
            if not groups and not _present(original, ("hooks", event)):
                del hooks[event]
    if changed and not hooks and not _present(original, ("hooks",)):
        del data["hooks"]
    return changed


def add_server(data: dict[str, Any], path: str, keys: tuple[str, ...], install: Install) -> bool:
    """Put our server under `keys` + its name; a foreign server of that name is refused. Changed?"""
    container = data
    for depth, key in enumerate(keys):
        where = ".".join(json.dumps(k) if k.startswith("/") else k for k in keys[: depth + 1])
        container = _child(container, key, path, where, dict, False) or {}
    current = container.get(install.server)
    wanted = install.server_entry()
    if current == wanted:
        return False
    if install.server in container and not is_our_server(current):
        command = current.get("command") if isinstance(current, dict) else current
        raise ConfigError(f"{path}: an MCP server named {install.server!r} is already there and is not claude-mem's "
                          f"(command: {str(command)[:80]}); rename or remove it (e.g. `claude mcp remove {install.server}`),"
                          " then run `claude-mem install` again (nothing was changed)")
    container = data
    for key in keys:
        container = container.setdefault(key, {})
    container[install.server] = wanted
    return True


def remove_server(data: dict[str, Any], keys: tuple[str, ...], original: dict[str, Any] | None) -> list[str]:
    """Remove our servers under `keys`; containers left empty go unless `original` had them. Names removed."""
    chain: list[dict[str, Any]] = [data]
    for key in keys:
        child = chain[-1].get(key)
        if not isinstance(child, dict):
            return []
        chain.append(child)
    removed = [name for name, entry in chain[-1].items() if is_our_server(entry)]
    for name in removed:
        del chain[-1][name]
    if removed:
        for depth in range(len(keys), 0, -1):
            if chain[depth] or _present(original, keys[:depth]):
                break
            del chain[depth - 1][keys[depth - 1]]
    return removed


def holds_ours(data: object) -> bool:
    """Whether a parsed file holds any entry of ours: a hook, or a server at the top or of any project."""
    if not isinstance(data, dict):
        return False
    hooks = data.get("hooks")
    if isinstance(hooks, dict) and any(isinstance(groups, list) and _our_groups(groups) for groups in hooks.values()):
        return True
    projects = data.get("projects")
    holders = [data, *(projects.values() if isinstance(projects, dict) else ())]
    return any(isinstance(holder, dict) and isinstance(holder.get("mcpServers"), dict)
               and any(is_our_server(entry) for entry in holder["mcpServers"].values()) for holder in holders)


def plugin_enabled(settings_data: object) -> bool:
    """Whether user settings enable the persistent-memory plugin (its hooks would capture every event too)."""
    plugins = settings_data.get("enabledPlugins") if isinstance(settings_data, dict) else None
    return isinstance(plugins, dict) and any(
        str(name).split("@")[0] == PLUGIN_NAME and value is True for name, value in plugins.items())
