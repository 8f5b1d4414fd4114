"""The worker daemon: one background process per data dir (DESIGN §7)."""
