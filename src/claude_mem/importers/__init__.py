"""Importers: foreign history turned into what claude-mem stores (DESIGN §13).

`transcripts`: Claude Code's own session transcripts (`~/.claude/projects/**.jsonl`) become the same
capture records the hooks write, through the same capture code.
"""
