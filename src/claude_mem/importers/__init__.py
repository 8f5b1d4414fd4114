"""Importers: every way memory comes in from elsewhere, and our own export, behind one protocol
(DESIGN §13).

`source.py` holds what they share: the `Source` protocol (a name, a size for a progress bar, a dry
run, a progress callback), the `ImportReport` every source returns (added, already present, skipped
with each problem named, notes) and `run`, which opens our store the way a (dry) run needs it. The
CLI (`cli/importing.py`) picks a source, runs it with a progress bar and shows its report.

The sources, one module each:

- `transcripts`: Claude Code's own session transcripts (`~/.claude/projects/**.jsonl`, read by
  `transcript_reader`) become the capture records the hooks write, through the hooks' own gate and
  writer, queued for the observer (`estimate` prices a dry run in observer tokens).
- `original`: the original (TypeScript) claude-mem's database becomes our derived rows as they are.
- `jsonl`: our export format (`export_format`, docs/export-format.md) — its writer (`claude-mem
  export`) and its reader (`claude-mem import jsonl`) side by side, so the two cannot drift apart.

The SQL stays in the store: `store.portable` (rows by global id, out and in), `store.foreign` (the
original's database, read-only) and `store.imports` (what a transcript import finds captured).
`lines` reads JSONL a line at a time, whatever is in it.
"""

from claude_mem.importers.source import ImportReport, Progress, Source, run

__all__ = ["ImportReport", "Progress", "Source", "run"]
