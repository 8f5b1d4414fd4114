"""Recall: what a session sees at start (context), search, timeline, remember and forget.

`context`, `sanitize` and `fts` are stdlib-only (they run inside the session-start and
user-prompt hooks); the rest is a library for the CLI, the HTTP API and the MCP server.
Importing this package imports nothing else.
"""
