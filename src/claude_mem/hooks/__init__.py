"""The hook entry points (DESIGN §2a, §4): parse stdin, call capture, exit 0. Stdlib only and fast.

`runner` runs one hook call (`claude-mem hook NAME`, or `scripts/hook.py` in the plugin);
`session_start` prints the context a new session gets; `statusline` is `claude-mem statusline`.
"""
