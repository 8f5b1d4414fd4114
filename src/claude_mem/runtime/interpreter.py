"""The environment `claude-mem install` recorded: an interpreter that can import every dependency of
claude-mem, so the worker runs there and no `<data dir>/venv` is built.

`claude-mem install` checks the interpreter it runs in — it imports every runtime dependency and those
of the default extras (`search`, `team`, what the plugin's own venv installs) — and writes the result
to `<data dir>/install/environment.json`. A hook that starts the worker (`autostart`), the plugin's
included, runs the worker with that interpreter when the record is usable: the interpreter is still
there, it is of this claude-mem version, and no required dependency was missing (a missing extra only
costs what it brings, e.g. search by meaning). `claude-mem uninstall` removes the record.

Stdlib only: hooks read the record when they start a worker.
"""

from __future__ import annotations

import os
import time

from claude_mem import __version__
from claude_mem.runtime import discovery
from claude_mem.runtime.origin import load_json

if False:  # for the type checker only: `typing` stays off the hook path
    from typing import Any

RECORD = os.path.join("install", "environment.json")  # beside install's backups (config_files.INSTALL_DIR)
DISTRIBUTION = "claude-mem-py"
DEFAULT_EXTRAS = ("search", "team")  # what the plugin's venv installs beside the dependencies
REQUIRED = "required"  # the key of the dependencies outside any extra
NAME_PATTERN = r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)"
EXTRA_PATTERN = r"""extra\s*==\s*["']([^"']+)["']"""


def record_path(directory: str) -> str:
    return os.path.join(directory, RECORD)


def _normal(name: str) -> str:
    import re  # only `claude-mem install` checks dependencies: the hooks that read the record skip `re`

    return re.sub(r"[-_.]+", "-", name).lower()


def requirements(checkout: str) -> dict[str, list[str]]:
    """Dependency names by group: `required`, then each default extra. From the checkout's
    pyproject.toml when there is one (the code that runs), else the installed distribution's metadata."""
    import importlib.metadata
    import re

    groups: dict[str, list[str]] = {REQUIRED: [], **{extra: [] for extra in DEFAULT_EXTRAS}}
    project = os.path.join(checkout, "pyproject.toml")
    if os.path.isfile(project):
        import tomllib

        with open(project, "rb") as handle:
            table = tomllib.load(handle).get("project", {})
        entries = [(str(item), REQUIRED) for item in table.get("dependencies", [])]
        for extra in DEFAULT_EXTRAS:
            entries += [(str(item), extra) for item in table.get("optional-dependencies", {}).get(extra, [])]
    else:
        entries = []
        for item in importlib.metadata.requires(DISTRIBUTION) or []:
            requirement, _, marker = item.partition(";")
            named = re.search(EXTRA_PATTERN, marker)
            entries.append((requirement, named.group(1) if named else REQUIRED))
    for requirement, group in entries:
        name = re.match(NAME_PATTERN, requirement)
        if name and group in groups and _normal(name.group(1)) not in groups[group]:
            groups[group].append(_normal(name.group(1)))
    return groups


def _modules_of() -> dict[str, list[str]]:
    """Distribution (normalised name) -> its top-level import names, for every installed one."""
    import importlib.metadata

    found: dict[str, list[str]] = {}
    for module, distributions in importlib.metadata.packages_distributions().items():
        for distribution in distributions:
            found.setdefault(_normal(distribution), []).append(module)
    return found


def check(groups: dict[str, list[str]]) -> dict[str, Any]:
    """Import every dependency in this interpreter: {missing: {group: ["name (why)", …]}, seconds}."""
    import importlib

    began = time.monotonic()
    modules = _modules_of()
    missing: dict[str, list[str]] = {}
    for group, names in groups.items():
        for name in names:
            tops = sorted(module for module in modules.get(name, []) if not module.startswith("_"))
            problem = "not installed" if not tops else ""
            for module in tops:
                try:
                    importlib.import_module(module)
                except Exception as exc:  # noqa: BLE001 - a broken native library, a missing sub-dependency…
                    problem = "import %s: %s: %s" % (module, type(exc).__name__, str(exc)[:120])
                    break
            if problem:
                missing.setdefault(group, []).append("%s (%s)" % (name, problem))
    return {"missing": missing, "seconds": round(time.monotonic() - began, 2)}


def record(directory: str, python: str, package: str, checked: dict[str, Any]) -> dict[str, Any]:
    """Write the record of `python` (which imports claude_mem from `package`) with its check; returns it."""
    from claude_mem.domain import utc_stamp

    value = {"python": python, "package": package, "version": __version__, "recorded": utc_stamp(),
             "missing": checked["missing"], "check_seconds": checked["seconds"],
             "complete": not checked["missing"]}
    before = read(directory)
    if before is not None and all(before.get(key) == value[key] for key in ("python", "package", "version", "missing")):
        return before  # nothing new: a second install writes nothing
    os.makedirs(os.path.dirname(record_path(directory)), mode=0o700, exist_ok=True)
    discovery.write_json(record_path(directory), value)
    return value


def read(directory: str) -> dict[str, Any] | None:
    """The record as written, or None when there is none (or it is unreadable)."""
    value = load_json(record_path(directory))
    return value if isinstance(value, dict) and isinstance(value.get("python"), str) else None


def problem(found: dict[str, Any]) -> str:
    """Why a record cannot run the worker ("" when it can)."""
    python = str(found.get("python") or "")
    if not os.access(python, os.X_OK):
        return "its interpreter %s is gone" % python
    if found.get("version") != __version__:
        return "it was recorded by claude-mem %s, this is %s (run `claude-mem install` again)" % (
            found.get("version"), __version__)
    missing = found.get("missing")
    required = missing.get(REQUIRED) if isinstance(missing, dict) else None
    if required:
        return "it lacks %s" % ", ".join(str(name) for name in required)
    return ""


def usable(directory: str) -> dict[str, Any] | None:
    """The record when the worker can run with its interpreter, else None."""
    found = read(directory)
    return found if found is not None and not problem(found) else None


def forget(directory: str) -> bool:
    """Remove the record (`claude-mem uninstall`); True when there was one."""
    try:
        os.remove(record_path(directory))
    except FileNotFoundError:
        return False
    return True
