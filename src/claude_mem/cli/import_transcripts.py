"""`claude-mem import transcripts`: bring past Claude Code sessions into memory.

The command is registered on the `claude-mem import` group (cli/importing.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from claude_mem import project as projects
from claude_mem import settings
from claude_mem.cli.options import project_option
from claude_mem.cli.output import console
from claude_mem.domain import RecallError, parse_time
from claude_mem.importers import transcript_import, transcripts
from claude_mem.importers.transcript_import import Outcome


def project_filter(value: str) -> Callable[[str], bool]:
    """Whether a project key is the one the user named: its key, a path inside it, or its folder name(s)."""
    root = projects.project_root(value) if os.path.exists(value) else None
    tail = "/" + value.strip("/")

    def wanted(key: str) -> bool:
        return key == value or key == root or key.rstrip("/").endswith(tail)

    return wanted


@click.command("transcripts")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@project_option("Only sessions of this project (its path, a path inside it, or its folder name).")
@click.option("--since", help="Only sessions started since this date (2026-11-20, 2026-11-20T14:30, or 7d / 12h / 2w).")
@click.option("--dry-run", is_flag=True, help="Show what would be imported and the observer tokens it would cost; "
              "write nothing.")
def transcripts_cmd(paths: tuple[str, ...], project: str | None, since: str | None, dry_run: bool) -> None:
    """Import past Claude Code sessions from their transcripts.

    Reads the transcript files Claude Code keeps (default: every *.jsonl under
    ~/.claude/projects, or $CLAUDE_CONFIG_DIR/projects; PATHS may be files or directories) and
    queues each session's prompts, tool calls with their results and failures, and turn ends for
    the observer, exactly as the hooks would have captured them: <private> parts, secrets,
    skip_tools, excluded_projects and max_field_chars apply the same way. Sub-agent transcripts
    join their parent session.

    Safe to repeat: what is stored already (captured live by the hooks, or imported before) is not
    added again, and an interrupted import continues where it stopped. Damaged lines and lines of
    unknown type are reported and skipped (exit code 1); everything else is imported.
    """
    since_stamp = None
    if since:
        try:
            since_stamp = parse_time(since)
        except RecallError as exc:
            raise click.BadParameter(str(exc), param_hint="--since") from None
    roots = list(paths) or [transcripts.default_root(dict(os.environ))]
    sessions, missing = transcripts.find_sessions(roots)
    out = console()
    if not paths and missing:
        out.print(f"No Claude Code transcripts: {roots[0]} does not exist.", markup=False, soft_wrap=True)
        return
    data_dir = settings.data_dir()
    config = settings.load(data_dir)
    try:
        outcome = _run(sessions, data_dir, config, dry_run, since_stamp, project_filter(project) if project else None)
    except KeyboardInterrupt:
        out.print("Interrupted: the sessions imported so far are stored whole; run the same command again to "
                  "import the rest.", markup=False, soft_wrap=True)
        raise SystemExit(130) from None
    outcome.missing = missing
    report(out, outcome)
    raise SystemExit(1 if outcome.incomplete else 0)


def _run(sessions: list[transcripts.SessionFiles], data_dir: str, config: dict, dry_run: bool, since: str | None,
         wanted: Callable[[str], bool] | None) -> Outcome:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("sessions"),
               TextColumn("· {task.fields[events]} events"), TimeElapsedColumn())
    verb = "reading" if dry_run else "importing"
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(f"{verb} transcripts", total=len(sessions), events=0)

        def progress(outcome: Outcome) -> None:
            bar.update(task, completed=outcome.sessions_read, events=outcome.events_added)

        return transcript_import.run(sessions, data_dir=data_dir, config=config, dry_run=dry_run, since=since,
                                     wanted=wanted, progress=progress)


def report(out: Console, outcome: Outcome) -> None:
    """What was (or would be) imported, per project, then everything that was skipped."""
    names = projects.display_names(list(outcome.projects))
    added = {key: tally for key, tally in outcome.projects.items() if tally.sessions}
    if added:
        table = Table(show_header=True, header_style="bold")
        for column in ("project", "sessions", "events") + (("observer tokens (est.)",) if outcome.dry_run else ()):
            table.add_column(column, justify="left" if column == "project" else "right")
        for key, tally in sorted(added.items(), key=lambda item: names[item[0]]):
            row = [names[key], str(tally.sessions), str(tally.events)]
            table.add_row(*row, *((f"{tally.tokens:,}",) if outcome.dry_run else ()))
        out.print(table)
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(outcome.events.items()))
    if outcome.dry_run:
        out.print(f"Dry run, nothing written: {outcome.sessions_added} of {outcome.sessions_total} sessions would "
                  f"add {outcome.events_added} events ({kinds or 'none'}) for the observer, about "
                  f"{outcome.tokens:,} observer input tokens (characters / 4; a stateless API provider is "
                  "re-sent some history and costs more).", markup=False, soft_wrap=True)
    else:
        out.print(f"Imported {outcome.sessions_added} of {outcome.sessions_total} sessions: {outcome.events_added} "
                  f"events queued for the observer ({kinds or 'none'}); the worker processes them when it runs.",
                  markup=False, soft_wrap=True)
    for line in details(outcome):
        out.print(line, markup=False, soft_wrap=True)  # paths whole, for copying


def details(outcome: Outcome) -> list[str]:
    """One line per kind of thing left out."""
    notes = outcome.notes
    found = []
    counted = [(outcome.sessions_present, "sessions already stored (captured live or imported before)"),
               (outcome.present, "events already stored"),
               (outcome.sessions_filtered, "sessions left out by --since/--project"),
               (outcome.sessions_excluded, "sessions of excluded_projects"),
               (outcome.sessions_empty, "transcripts with no prompt or tool call"),
               (outcome.skipped, "tool calls of skip_tools"),
               (outcome.private, "tool calls and turn ends of <private> turns")]
    found += [f"{count} {what}" for count, what in counted if count]
    for path in outcome.missing:
        found.append(f"not found: {path}")
    found += [f"cannot read {problem}" for problem in outcome.unreadable]
    if notes.damaged_count:
        found.append(f"{notes.damaged_count} damaged line(s) skipped:")
        found += [f"  {place}" for place in notes.damaged]
        if notes.damaged_count > len(notes.damaged):
            found.append(f"  … and {notes.damaged_count - len(notes.damaged)} more")
    for name, count in notes.unknown.most_common():
        found.append(f"{count} line(s) of unknown type {name!r} skipped (first at {notes.unknown_first[name]})")
    found += [f"not stored: {problem}" for problem in outcome.bad_records]
    return found
