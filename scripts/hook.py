"""Claude Code plugin hook launcher: runs a claude-mem hook with the system python3, no install.

hooks/hooks.json calls `python3 -I -S "${CLAUDE_PLUGIN_ROOT}/scripts/hook.py" <hook>`, so capture
works on the very first event. `-I -S` keep the user's PYTHONPATH and site-packages (and their
start-up cost) out: the hook path is stdlib only. Kept valid for old Pythons so the version
check itself can run and explain.
"""

import sys

if sys.version_info < (3, 11):
    sys.stderr.write(
        "claude-mem: hooks need Python >= 3.11 as python3 (found %d.%d); nothing captured\n" % sys.version_info[:2]
    )
    sys.exit(0)

import os  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
try:
    from claude_mem.hooks.runner import run_from_argv  # noqa: E402
except Exception as exc:  # noqa: BLE001 - a broken checkout must not fail Claude Code
    sys.stderr.write("claude-mem: cannot load the hook code (%s); nothing captured\n" % type(exc).__name__)
    sys.exit(0)
code = run_from_argv(sys.argv[1:])
try:
    sys.stdout.flush()
    sys.stderr.flush()
except Exception:  # noqa: BLE001 - a closed pipe must not fail Claude Code
    pass
# Every file is closed and the capture committed by now: skip the interpreter's teardown (freeing every
# module and object one by one), ~3 ms of a ~20 ms hook.
os._exit(code)
