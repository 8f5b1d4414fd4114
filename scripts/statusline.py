"""Claude Code status line launcher: `claude-mem statusline` with the system python3, no install.

For ~/.claude/settings.json: {"statusLine": {"type": "command",
"command": "python3 -I -S <plugin dir>/scripts/statusline.py"}}. Stdlib only, like the hooks.
"""

import sys

if sys.version_info < (3, 11):  # noqa: UP036 - old Pythons must still print a line
    sys.stdout.write("memory: needs Python >= 3.11 as python3\n")
    sys.exit(0)

import os  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
try:
    from claude_mem.hooks.statusline import run  # noqa: E402
except Exception as exc:  # noqa: BLE001 - a broken checkout must not break Claude Code's screen
    sys.stdout.write("memory: cannot load claude-mem (%s)\n" % type(exc).__name__)
    sys.exit(0)
sys.exit(run(sys.argv[1:]))
