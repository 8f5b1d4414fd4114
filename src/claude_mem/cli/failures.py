"""`claude-mem failures [--project P] [--all] [--json]`: recurring failures and their fixes (issue 31)."""

import click

from claude_mem.cli.group import cli
from claude_mem.cli.options import json_option, project_option
from claude_mem.cli.output import emit_json
from claude_mem.cli.recall import opened
from claude_mem.recall import failures as recall_failures
from claude_mem.recall.common import resolve_project
from claude_mem.recall.sanitize import clean


def _when(at: object) -> str:
    return str(at or "-")[:16].replace("T", " ")


def _fix(row: dict[str, object]) -> str:
    observations = row["fix_observations"]
    assert isinstance(observations, list)
    named = "; ".join(f"#{obs['id']} {clean(obs['title'], 70)}" + (
        f" \u2014 {', '.join(obs['files_modified'][:2])}" if obs["files_modified"] else "") for obs in observations)
    fix = clean(row["fix"], 160)
    if row["resolved_by"] is None:
        return "not resolved"
    text = f"fixed {_when(row['resolved_at'])}: " + (named + (f" ({fix})" if fix else "") if named else fix)
    return text if row["resolved"] else f"{text}; failed again since ({row['open']} open)"


@cli.command("failures")
@project_option()
@click.option("--all", "every", is_flag=True, help="Also failures seen only once.")
@json_option()
def failures(project: str | None, every: bool, as_json: bool) -> None:
    """Recurring failures per project: how often and when, and the fix that resolved them.

    A failure is a tool call that failed (a Bash command's non-zero exit, an edit that did not apply),
    grouped by its normalized command (paths, numbers and temp names abstracted) or, outside Bash, its
    error. Its fix: the files edited and commands run between the last failure and the success of the
    same command, and the observations made from them (`#id`, see `claude-mem show ID`). The same facts
    are what the hooks add beside a failure that recurs (settings failure_notes, failure_notes_before_retry).
    """
    with opened() as conn:
        rows = recall_failures.listing(conn, resolve_project(conn, project), 1 if every else 2, 200)
    if as_json:
        emit_json({"failures": rows})
        return
    if not rows:
        click.echo("No recurring failures." if not every else "No failures recorded.")
        return
    for row in rows:
        click.echo(f"{row['project_name']}  {row['count']}\u00d7  last {_when(row['last_seen'])}  "
                   f"first {_when(row['first_seen'])}  {clean(row['program'], 40)}")
        click.echo(f"  command: {clean(row['command'], 120) or '-'}")
        click.echo(f"  error:   {clean(row['error'], 160) or '-'}")
        click.echo(f"  fix:     {_fix(row)}")
