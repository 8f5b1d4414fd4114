"""`claude-mem doctor`'s checks of Claude Code's side: our hooks' registration, and the original
(TypeScript) claude-mem installed beside us, which reads the same `CLAUDE_MEM_DATA_DIR` and
`CLAUDE_MEM_WORKER_PORT` variables."""

from __future__ import annotations

import json
import os
import socket
from typing import Any

from claude_mem import settings
from claude_mem.cli.checks import INFO, OK, PROBLEM, WARNING, Check, Context
from claude_mem.cli.plugin_env import leftovers_line
from claude_mem.cli.registration import HOOK_EVENTS, ORIGINAL_PLUGIN, PLUGIN, config_dir, read_json
from claude_mem.paths import DB_FILENAME
from claude_mem.runtime import environment, origin, purge
from claude_mem.store import checkup

PORT_PROBE_TIMEOUT = 0.3


def hooks_checks(ctx: Context) -> list[Check]:
    found = [Check("hooks", WARNING, problem, "fix or remove that file") for problem in ctx.registration.errors]
    plugins = ctx.registration.plugin(PLUGIN)
    by_settings = ctx.registration.settings_hooks
    for install in plugins:
        if not os.path.isdir(install.folder):
            found.append(Check("hooks", PROBLEM, f"plugin {install.describe()}: that folder is gone",
                               f"`claude plugin uninstall {install.plugin_id}`, then install it again"))
    if plugins and by_settings:
        files = ", ".join(by_settings)
        found.append(Check("hooks", PROBLEM, f"registered twice: by the plugin {plugins[0].plugin_id} and in {files}; "
                           "every event would be captured twice", f"remove one: `claude plugin uninstall "
                           f"{plugins[0].plugin_id}`, or `claude-mem uninstall` (the hooks in {files})"))
        return found
    if plugins:
        return found + [Check("hooks", OK, f"plugin {install.describe()}, enabled") for install in plugins]
    for path, events in by_settings.items():
        missing = [event for event in HOOK_EVENTS if event not in events]
        if missing:
            found.append(Check("hooks", WARNING, f"in {path}, but not for {', '.join(missing)}",
                               "`claude-mem install` writes them all again"))
        else:
            found.append(Check("hooks", OK, f"in {path} ({len(events)} events)"))
    if by_settings:
        return found
    disabled = ctx.registration.plugin(PLUGIN, enabled=False)
    if disabled:
        return found + [Check("hooks", PROBLEM, f"plugin {disabled[0].describe()} is disabled: nothing is captured",
                              f"`claude plugin enable {disabled[0].plugin_id}`")]
    return found + [Check("hooks", PROBLEM, "not registered with Claude Code: sessions are not captured (unless "
                          "started with `claude --plugin-dir`)", install_fix())]


def install_fix() -> str:
    """How to register claude-mem again, as the README's Install section says: the plugin from the
    marketplace Claude Code still knows (`claude plugin uninstall` keeps it), else from a clean clone;
    or a regular install's `claude-mem install`."""
    marketplace = known_marketplace()
    if marketplace:
        plugin = f"`claude plugin install {PLUGIN}@{marketplace}` (its marketplace is still added)"
    else:
        where = environment.CHECKOUT if clean_clone(environment.CHECKOUT) else "<a clean clone of the repository>"
        plugin = f"`claude plugin marketplace add {where}` then `claude plugin install {PLUGIN}@{PLUGIN}`"
    return f"{plugin}; or, without the plugin, `claude-mem install` (pip, pipx or uv tool install)"


def clean_clone(folder: str) -> bool:
    """A folder the README lets you add as a marketplace: it lists the plugin, and it is neither a checkout
    where `make test` built a `.venv` (the plugin cache would copy it) nor Claude Code's copy of the plugin."""
    plugins = os.path.join(config_dir(), "plugins")
    inside = os.path.realpath(folder).startswith(os.path.realpath(plugins) + os.sep)
    return os.path.isfile(os.path.join(folder, ".claude-plugin", "marketplace.json")) and \
        not os.path.exists(os.path.join(folder, ".venv")) and not inside


def known_marketplace() -> str | None:
    """The name of a marketplace Claude Code knows that lists our plugin, or None."""
    known, _ = read_json(os.path.join(config_dir(), "plugins", "known_marketplaces.json"))
    for name, entry in (known or {}).items():
        source = entry.get("source") if isinstance(entry, dict) else None
        folder = entry.get("installLocation") if isinstance(entry, dict) else None
        folder = folder or (source.get("path") if isinstance(source, dict) else None)
        listing, _ = read_json(os.path.join(str(folder), ".claude-plugin", "marketplace.json")) if folder else (None, "")
        if any(isinstance(item, dict) and item.get("name") == PLUGIN for item in (listing or {}).get("plugins") or []):
            return str(name)
    return None


def leftovers_checks(ctx: Context) -> list[Check]:
    """When Claude Code runs none of our hooks: why the worker stopped, and what stays on disk."""
    if not ctx.nothing_registered:
        return []
    found = []
    stopped = origin.read_stopped(ctx.data_dir)
    if stopped:
        found.append(Check("uninstalled", INFO, f"the worker (pid {stopped.get('pid')}) stopped itself at "
                           f"{stopped.get('at')}: {stopped.get('why')}"))
    kept = purge.leftovers(ctx.data_dir)
    if kept["exists"]:
        found.append(Check("kept on disk", INFO, leftovers_line(kept), purge.removal_hint(kept)))
    return found


def original_dir() -> str:
    return os.path.expanduser("~/.claude-mem")


def _original_settings() -> dict[str, Any]:
    try:
        with open(os.path.join(original_dir(), "settings.json"), encoding="utf-8") as handle:
            value = json.load(handle)
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def original_ports(original_settings: dict[str, Any]) -> list[int]:
    """The ports the original's worker may use: its setting, else its default (37777 in most releases,
    37700 + uid % 100 in recent ones)."""
    configured = str(original_settings.get("CLAUDE_MEM_WORKER_PORT") or "")
    if configured.isdigit():
        return [int(configured)]
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return [37777, 37700 + uid % 100]


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=PORT_PROBE_TIMEOUT):
            return True
    except OSError:
        return False


def _same_path(one: str, other: str) -> bool:
    return os.path.realpath(os.path.expanduser(one)) == os.path.realpath(os.path.expanduser(other))


def original_checks(ctx: Context) -> list[Check]:
    theirs = original_dir()
    their_settings = _original_settings()
    ports = original_ports(their_settings)
    plugins = ctx.registration.plugin(ORIGINAL_PLUGIN, enabled=False)
    enabled = [install for install in plugins if install.enabled]
    has_data = os.path.isdir(theirs) and not _same_path(theirs, ctx.data_dir)
    present = has_data or bool(plugins)
    found = []
    raw_dir = os.environ.get(settings.ENV_PREFIX + "DATA_DIR")
    if raw_dir and _same_path(ctx.data_dir, theirs):
        found.append(Check("CLAUDE_MEM_DATA_DIR", PROBLEM, f"points at {theirs}, the original claude-mem's data dir: "
                           f"both would keep {DB_FILENAME} and settings.json there",
                           "unset CLAUDE_MEM_DATA_DIR (ours defaults to ~/.claude-mem-py)"))
    elif raw_dir and present:
        found.append(Check("CLAUDE_MEM_DATA_DIR", PROBLEM, f"is set ({raw_dir}) and the original claude-mem reads it "
                           f"too: both would keep {DB_FILENAME} there", "unset it (ours defaults to ~/.claude-mem-py), "
                           "or remove one of the two"))
    their_dir = str(their_settings.get("CLAUDE_MEM_DATA_DIR") or "")
    if their_dir and _same_path(their_dir, ctx.data_dir):
        found.append(Check("original claude-mem", PROBLEM, f"its settings.json puts its data in our data dir "
                           f"({ctx.data_dir})", f"change CLAUDE_MEM_DATA_DIR in {theirs}/settings.json"))
    found.extend(_port_checks(ctx, ports, present))
    if not present:
        return found + [Check("original claude-mem", OK, "not installed")]
    what = [f"data in {theirs}" + _their_rows(theirs)] if has_data else []
    what += [f"plugin {install.plugin_id} ({'enabled' if install.enabled else 'disabled'})" for install in plugins]
    what += [f"a worker on its port {port}" for port in ports if _listening(port)]
    found.append(Check("original claude-mem", INFO, "installed beside us: " + ", ".join(what) +
                       "; it keeps its own memory (we never write it; `claude-mem import claude-mem`"
                       " copies it into ours, read-only)"))
    if enabled and (ctx.registration.ours_by_plugin or ctx.registration.ours_by_settings):
        found.append(Check("original claude-mem", WARNING, f"{enabled[0].plugin_id} is enabled too: both capture every "
                           "session (two observers, twice the cost, two memories injected)",
                           f"`claude plugin disable {enabled[0].plugin_id}`, or remove ours"))
    return found


def _their_rows(theirs: str) -> str:
    count = checkup.count_rows(os.path.join(theirs, DB_FILENAME), "observations")
    return f" ({count} observations)" if count is not None else ""


def _port_checks(ctx: Context, ports: list[int], present: bool) -> list[Check]:
    raw = os.environ.get(settings.ENV_PREFIX + "WORKER_PORT")
    ours = ctx.values.get("worker_port")
    ours = settings.default_port() if ours is None else int(ours)
    if ours in ports:
        source = "CLAUDE_MEM_WORKER_PORT" if raw else "the worker_port setting"
        return [Check("CLAUDE_MEM_WORKER_PORT", PROBLEM, f"our worker port {ours} (from {source}) is the original "
                      "claude-mem's: one of the two workers cannot start",
                      f"unset it, or `claude-mem settings set worker_port {settings.default_port()}`")]
    if raw and ours != 0 and present:
        return [Check("CLAUDE_MEM_WORKER_PORT", PROBLEM, f"is set ({raw}) and the original claude-mem reads it too: "
                      f"both workers would want port {ours}", f"unset it and `claude-mem settings set worker_port {ours}`"
                      " (our settings.json is ours alone)")]
    return []


def auto_memory_checks(ctx: Context) -> list[Check]:
    """Claude Code's own auto memory for the current project: on or off, where, what we index of it, and
    the tokens each memory injects at session start (issue 30). Reads only."""
    from claude_mem.recall import auto_memory_report

    found = auto_memory_report.for_data_dir(ctx.data_dir, ctx.values)
    if found.get("error"):
        return [Check("auto memory", WARNING, f"not checked: {found['error']}")]
    checks = [Check("auto memory", INFO, auto_memory_report.summary_line(found))]
    if found["enabled"] and found["exists"] and not found["indexed"] and found["synced_at"] is None:
        checks.append(Check("auto memory", INFO, "its notes are not indexed yet",
                            "`claude-mem search WORDS` in the project indexes them (the worker does for active ones)"))
    checks.extend(Check("auto memory", WARNING, problem, "fix that file or setting; the rest is indexed")
                  for problem in found["problems"][:10])
    return checks
