"""A worker whose code is gone: after `claude plugin uninstall` the plugin folder is removed, but the
worker started from it (or from the venv built from it) keeps running. Stdlib only and cheap: one
read of `worker.json` when no worker runs or it is fine (the CLI checks on every command).

`worker.json` names the folder the worker imported `claude_mem` from (`package`); a worker running
from `<data dir>/venv` came from the plugin folder `venv-progress.json` records as its `source`.
"""

import os

from claude_mem.runtime import discovery, environment


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder + os.sep)


def stale_reason(data_dir: str) -> "tuple[int, str] | None":
    """(pid, why) when the data dir's worker runs from a folder that no longer exists, else None."""
    info = discovery.read_info(data_dir)
    if info is None or not discovery.pid_alive(info["pid"]):
        return None
    package = info.get("package")
    if not isinstance(package, str) or not package:
        return None  # a worker from before `package` was recorded: nothing to go by
    if not os.path.isdir(os.path.join(package, "claude_mem")):
        return info["pid"], "the folder it runs from (%s) is gone" % package
    if _inside(package, environment.venv_dir(data_dir)):
        source = environment.read_progress(data_dir).get("source")
        if isinstance(source, str) and source and not os.path.isdir(source):
            return info["pid"], "the plugin folder its environment was built from (%s) is gone: " \
                                "the plugin was uninstalled or moved" % source
    return None


def stop_if_stale(data_dir: str) -> "str | None":
    """Stop a worker whose code is gone; one line saying what was done and why, or None."""
    found = stale_reason(data_dir)
    if found is None:
        return None
    from claude_mem.runtime import control  # psutil: only when there is something to stop

    pid, why = found
    stopped = control.stop(data_dir)
    if stopped is None:
        return None
    return "stopped the worker (pid %d): %s" % (pid, why)
