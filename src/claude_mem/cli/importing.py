"""The `claude-mem import` group: every way of bringing memory in is one subcommand of it.

Each importer's command lives in its own module (`cli/import_<source>.py`) as a plain click command
and is added to the group at the bottom of this module, so that module never imports this one.
"""


from claude_mem.cli.group import cli


@cli.group("import")
def import_group() -> None:
    """Bring memory in: from an export of claude-mem (jsonl), and from other sources.

    Every import is safe to repeat (what is stored already is not added again), redacts secrets
    like a capture, reports each line or row it had to skip with its file and line, and exits
    with code 1 when it skipped anything.
    """


from claude_mem.cli.import_claude_mem import claude_mem_cmd  # noqa: E402
from claude_mem.cli.import_jsonl import jsonl  # noqa: E402
from claude_mem.cli.import_transcripts import transcripts_cmd  # noqa: E402

import_group.add_command(claude_mem_cmd)
import_group.add_command(jsonl)
import_group.add_command(transcripts_cmd)
