"""Team memory (DESIGN §12): replication of opted-in projects' derived rows to a shared PostgreSQL.

Local-first: hooks, the observer and every read path keep using the local SQLite store; only the
worker's team service (and `claude-mem team sync`) talk to the server, through `team.sync`.
"""
