"""The worker daemon: one background process per data dir (DESIGN §7).

This package's `__init__` stays import-free: the hooks import `discovery` and `launch` from it.
"""
