"""Recall: what a session sees at start (`context`) and beside each prompt (`prompt_context`), the
timeline, records by id, lists, remember and forget, usage figures, and how results read as text
(`present`). Domain logic only: search is `claude_mem.index`, the SQL `claude_mem.store`, export and
import `claude_mem.importers`.

`context`, `prompt_context` and `sanitize` are stdlib-only (they run inside the session-start and
user-prompt hooks); the rest is a library for the CLI, the HTTP API and the MCP server.
Importing this package imports nothing else.
"""
