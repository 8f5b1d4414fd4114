"""Capture: a Claude Code hook payload becomes a capture record (DESIGN §2a). Stdlib only: the hooks
and the transcript importers run it.

`payload` validates a payload, strips `<private>` spans, redacts secrets (`claude_mem.privacy`) and
caps sizes; `spool` keeps a record when SQLite stays busy; `diagnostics` is the hook's log and
quarantine; `digest` hashes without `hashlib`; `fingerprint` records the files a tool call read or
modified (path, size, mtime, git blob hash, HEAD) so memory can tell when it went stale.
"""
