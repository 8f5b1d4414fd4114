"""Recall on the command line: `search`, `show`, `timeline`, `context`, `remember`, `forget`.

Each command imports what only it needs inside its body: loading this module for `search` must not pay
for forgetting, remembering or building a session's context.
"""

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click
from rich.text import Text

from claude_mem import settings, store
from claude_mem.cli.group import cli
from claude_mem.cli.options import json_option, project_option
from claude_mem.cli.output import console, emit_json
from claude_mem.domain import MAX_ID, OBSERVATION_TYPES, ref
from claude_mem.index.query import DEFAULT_KINDS, KINDS, MAX_LIMIT, MODES, ORDERS, SearchQuery
from claude_mem.recall import by_meaning, freshness
from claude_mem.recall.common import RecallError, display_map, resolve_project
from claude_mem.recall.present import RECORD_FIELDS, freshness_line, supersession, total_text, when
from claude_mem.store import Store
from claude_mem.store import projects as store_projects

if TYPE_CHECKING:
    from rich.table import Table


def opened() -> Store:
    """This data dir's database: `with opened() as db:` closes it at the end."""
    return store.open(settings.data_dir())


def one_line(value: object, limit: int = 90) -> Text:
    text = " ".join(str(value or "").split())
    return Text(text if len(text) <= limit else text[: limit - 1] + "…")


def current_project(conn: Store, value: str | None, register: bool = False) -> str:
    """--project resolved, else the project of the current directory. With `register`, a checkout is
    recorded (with its remote) as a session start records it, so a note made before any session stays
    with its checkout (issue 26)."""
    if value:
        try:
            return resolve_project(conn, value) or value
        except RecallError:
            if os.path.isdir(value):
                return (store_projects.register_path if register else store_projects.project_of_path)(conn, value)
            raise
    return (store_projects.register_here if register else store_projects.project_here)(conn, os.getcwd())


def items_table(items: Sequence[Mapping[str, Any]], names: dict[str, str],
                anchor_column: bool = False) -> "Table":
    from rich.table import Table

    table = Table(show_header=True, header_style="bold", expand=False)
    for column in (["", "id"] if anchor_column else ["id"]) + ["when", "project", "type", "title"]:
        table.add_column(column, no_wrap=column != "title")
    for item in items:
        cells = [Text(item["ref"]), Text(when(item["created_at"])),
                 Text(names.get(item["project"], item["project"] or "")), Text(item["type"] or ""),
                 one_line(item["title"] + (f" (by {item['author']})" if item.get("author") else "")
                          + freshness.marker(item)
                          + (f" ({note})" if (note := supersession(item)) else ""))]
        if anchor_column:
            cells.insert(0, Text("▶" if item.get("anchor") else ""))
        table.add_row(*cells)
    return table


@cli.command()
@click.argument("query")
@project_option()
@click.option("--type", "types",
              help=f"Only these observation types, comma-separated ({', '.join(OBSERVATION_TYPES)}).")
@click.option("--since", help="Happened at or after (its events, not its processing): 2026-11-20,"
              " 2026-11-20T14:30, or 7d / 12h / 2w.")
@click.option("--until", help="Happened before (a bare date includes that day).")
@click.option("--file", "file", help="Only observations that read or modified a file whose path contains this.")
@click.option("--concept", help="Only observations tagged with this concept (e.g. gotcha, trade-off).")
@click.option("--author", help="Team memory: only observations pulled from this teammate (as team status names them).")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KINDS),
              help="What to search (repeatable); default observation and auto-memory (Claude Code's own notes).")
@click.option("--mode", type=click.Choice(MODES),
              help="How to match: keyword (full-text BM25), semantic (by meaning), hybrid (both fused). "
                   "Default: hybrid where embeddings exist, else keyword.")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, MAX_LIMIT), help="Results per page.")
@click.option("--offset", default=0, show_default=True, type=click.IntRange(0), help="Results to skip (paging).")
@click.option("--order", default="relevance", show_default=True, type=click.Choice(ORDERS), help="Ranking.")
@json_option()
def search(query: str, project: str | None, types: str | None, since: str | None, until: str | None,
           file: str | None, concept: str | None, author: str | None, kinds: tuple[str, ...], mode: str, limit: int,
           offset: int, order: str, as_json: bool) -> None:
    """Search memory by words and by meaning.

    The default `--mode hybrid` (where embeddings exist) ranks by both: full-text BM25 over the
    query's content words and closeness of meaning. `--mode keyword`: words only ("quoted words"
    match as a phrase, a trailing * matches a prefix: auth*); `--mode semantic`: meaning only.
    Then `claude-mem show ID` prints one in full.

    Claude Code's own auto memory notes of the current project (its memory directory) are indexed
    first and found too, listed as `auto-memory:FILE`; `claude-mem show auto-memory:FILE` prints one.

    A search by meaning is answered by the worker, which holds the model (started as the hooks start
    it, unless the autostart setting is off); without one it runs in this process, or by keyword
    where this environment cannot embed, and a note on stderr says so.
    """
    if not query.strip():
        raise RecallError("empty query: give one or more words to search for")
    with opened() as conn:
        key = resolve_project(conn, project)
        wanted = SearchQuery.build(query, mode=mode, project=key, types=types,
                                   since=since, until=until, file=file, concept=concept, author=author,
                                   kinds=kinds or DEFAULT_KINDS, limit=limit, offset=offset, order=order,
                                   snippets=as_json)  # the table shows none
        if "auto-memory" in wanted.kinds:
            sync_notes(conn, key)
        result = by_meaning.search(conn, wanted)
        names = display_map(conn)
    if as_json:
        emit_json({**result.as_dict(), "limit": limit, "offset": offset})
        return
    if result.note:
        click.echo(result.note, err=True)
    out = console()
    if not result.items:
        out.print(Text(f"No match for {query!r} ({result.total} in total)."))
        return
    out.print(items_table(result.items, names))
    shown_to = offset + len(result.items)
    out.print(Text(f"{offset + 1}–{shown_to} of {total_text(result.total, result.total_capped)}"
                   + (f"; next page: --offset {shown_to}" if shown_to < result.total or result.total_capped else "")))


def sync_notes(conn: Store, key: str | None) -> None:
    """Bring the searched project's (else the current directory's) auto memory notes up to date here, so a
    note just written is found without a worker; a problem is one line on stderr, the search goes on."""
    from claude_mem import project as identity
    from claude_mem.recall import auto_memory

    root = None if key else identity.project_root(os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd())
    try:
        report = auto_memory.sync(conn, key or store_projects.project_here(conn, os.getcwd()), root=root)
    except (OSError, store.DatabaseError) as exc:
        click.echo(f"auto memory notes not refreshed: {exc}", err=True)
        return
    problems = report["problems"]
    if problems:  # one line, not one per damaged file on every search: `doctor` and `status` list them
        more = f" (and {len(problems) - 1} more: `claude-mem doctor` lists them)" if len(problems) > 1 else ""
        click.echo(f"auto memory: {problems[0]}{more}", err=True)


def render_record(item: dict[str, Any], names: dict[str, str]) -> None:
    out = console()
    kind = item["kind"]
    out.print(Text(f"{ref(kind, item['id'])} {item.get('type', kind)} · {when(item['created_at'])} · "
                   f"{names.get(str(item.get('project')), item.get('project'))}"
                   + (f" · by {item['author']}" if item.get("author") else ""), style="bold"))
    if freshness_line(item):
        out.print(Text(freshness_line(item), style="yellow"))
    if note := supersession(item):
        out.print(Text(note, style="yellow"))
    for name in RECORD_FIELDS[kind]:
        value = item.get(name)
        if value in (None, "", []):
            continue
        shown = "\n".join(f"  - {entry}" for entry in value) if isinstance(value, list) else str(value)
        out.print(Text(f"{name}:", style="bold"), Text(("\n" if isinstance(value, list) else "") + shown))
    if item.get("use"):
        use = item["use"]
        last = f", last used {when(use['last_used'])}" if use["last_used"] else ""
        out.print(Text("use:", style="bold"), Text(f"shown in {use['shown']} session(s), used in {use['used']}{last}"))
    out.print()


@cli.command()
@click.argument("ids", nargs=-1, required=True)
@json_option()
def show(ids: tuple[str, ...], as_json: bool) -> None:
    """Print observations in full: `12` or `#12`; also summaries `S3` and prompts `P7`.

    Claude Code's auto memory notes too, as search lists them: `auto-memory:FILE` (the current
    project's first; shown as indexed, secrets redacted).

    Each observation shown counts as one fetch (its fetch_count grows), which tells which
    memories are actually used.
    """
    from claude_mem.recall.records import get_many

    notes = [value for value in ids if value.startswith(NOTE_PREFIX)]
    with opened() as conn:
        records: list[dict[str, Any]] = get_many(conn, [value for value in ids if value not in notes]) \
            if len(notes) < len(ids) else []
        found = [note_record(conn, value[len(NOTE_PREFIX):]) for value in notes]
        names = display_map(conn)
    if as_json:
        emit_json(records + found)
        return
    for record in records:
        render_record(record, names)
    for note in found:
        render_note(note, names)


NOTE_PREFIX = "auto-memory:"


def note_record(conn: Store, path: str) -> dict[str, Any]:
    """The auto memory note `path` (the current project's, else the only one of that name)."""
    from claude_mem.store import auto_memory as notes

    rows = notes.note(conn, path, store_projects.project_here(conn, os.getcwd())) or notes.note(conn, path, None)
    if not rows:
        raise RecallError(f"no auto memory note {path!r} is indexed (`claude-mem search` indexes the current"
                          " project's; the worker those of recent sessions)")
    if len(rows) > 1:
        raise RecallError(f"auto memory note {path!r} exists in {len(rows)} projects; run this inside the project")
    return {"kind": "auto-memory", "ref": NOTE_PREFIX + str(rows[0]["path"]), **rows[0]}


def render_note(note: dict[str, Any], names: dict[str, str]) -> None:
    out = console()
    out.print(Text(f"{note['ref']} {note['type'] or 'note'} · {when(note['modified_at'])} · "
                   f"{names.get(str(note['project']), note['project'])} · Claude Code auto memory", style="bold"))
    for name in ("name", "description", "problem"):
        if note.get(name):
            out.print(Text(f"{name}:", style="bold"), Text(str(note[name])))
    out.print(Text(str(note["body"])))
    out.print()


@cli.command()
@click.argument("anchor")
@click.option("--before", default=5, show_default=True, type=click.IntRange(0, 200), help="Rows before the anchor.")
@click.option("--after", default=5, show_default=True, type=click.IntRange(0, 200), help="Rows after the anchor.")
@project_option("Only this project (default: the anchor's project).")
@json_option()
def timeline(anchor: str, before: int, after: int, project: str | None, as_json: bool) -> None:
    """Show what happened around ANCHOR, in time order.

    ANCHOR is an observation id (12), a summary (S3), a prompt (P7), a time (2026-11-20T14:30)
    or search words (their best match). Observations, summaries and prompts are interleaved.
    """
    from claude_mem.recall.timeline import timeline as run_timeline

    with opened() as conn:
        result = run_timeline(conn, anchor, before, after, resolve_project(conn, project))
        names = display_map(conn)
    if as_json:
        emit_json(result)
        return
    if not result["items"]:
        console().print(Text("Nothing stored around that point."))
        return
    console().print(items_table(result["items"], names, anchor_column=True))


@cli.command()
@project_option("Project (key, display name or path); default: the current directory's.")
@click.option("--source", default="startup", show_default=True,
              type=click.Choice(["startup", "resume", "clear", "compact"]), help="How the session starts.")
@click.option("--session", "session_id", help="Claude Code session id (with --source resume: only what is new to it).")
@json_option("Print the hook's JSON output instead of the text.")
def context(project: str | None, source: str, session_id: str | None, as_json: bool) -> None:
    """Print exactly the context a Claude Code session starting here would receive.

    The session-start hook injects this text; budgets come from the context_* settings.
    Nothing is recorded (unlike a real session start).
    """
    from claude_mem.recall import context as session_context

    values = settings.load()
    with opened() as conn:
        key = current_project(conn, project)
        result = session_context.for_session(conn, key, source, session_id, values, settings.data_dir())
    if as_json:
        emit_json(session_context.hook_output(result))
        return
    click.echo(result["text"])


@cli.command()
@click.argument("text")
@click.option("--type", "kind", default="discovery", show_default=True, type=click.Choice(OBSERVATION_TYPES),
              help="Observation type.")
@click.option("--title", help="One-line title (default: the first sentence of TEXT).")
@click.option("--file", "files", multiple=True, metavar="PATH",
              help="A file the note is about (repeatable): fingerprinted now, so the note shows as changed once it is.")
@project_option("Project (key, display name or path); default: the current directory's.")
@click.option("--supersedes", type=click.IntRange(1, MAX_ID), metavar="ID",
              help="An earlier observation this note replaces: it leaves the index and ranks below this one.")
@json_option("Print the stored observation as JSON.")
def remember(text: str, kind: str, title: str | None, files: tuple[str, ...], project: str | None,
             supersedes: int | None,
             as_json: bool) -> None:
    """Store a note by hand; it shows in the session-start index and in search like any other.

    Example: claude-mem remember "Deploys need VPN access" --type decision
    """
    from claude_mem.recall.remember import remember as store_note

    with opened() as conn:
        stored = store_note(conn, text, current_project(conn, project, register=True), kind, title, supersedes, files=files)
    if as_json:
        emit_json(stored)
        return
    verb = "Remembered" if stored["created"] else "Already remembered"
    console().print(Text(f"{verb} #{stored['id']} ({stored['type']}): {stored['title']}"
                         + (f" (supersedes #{supersedes})" if supersedes else "")))


@cli.command()
@click.argument("ids", nargs=-1, type=click.IntRange(1, MAX_ID))
@click.option("--session", help="Forget one Claude Code session (its id) with everything captured in it.")
@project_option("Forget everything stored for a project (key, display name or path).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@json_option("Print what was removed as JSON.")
def forget(ids: tuple[int, ...], session: str | None, project: str | None, yes: bool, as_json: bool) -> None:
    """Delete observations by id, a whole session, or a whole project — for good.

    Rows, their full-text entries and their bytes on disk are removed (secure delete, FTS
    optimize, VACUUM), and every backup in the data dir is rewritten the same way.
    """
    from claude_mem.recall import forget as forgetting

    data_dir = settings.data_dir()
    with opened() as conn:
        planned = forgetting.plan(conn, ids, session, resolve_project(conn, project) if project else None)
        counts = ", ".join(f"{count} {name}" for name, count in planned["counts"].items() if count)
        if not yes:
            click.confirm(f"Forget {planned['describe']} ({counts})? This cannot be undone", abort=True, err=True)
        report = forgetting.carry_out(conn, data_dir, planned)
    if as_json:
        emit_json(report)
        return
    backups = report["backups"]
    click.echo(f"Forgot {planned['describe']} ({counts}); backups rewritten: {len(backups['rewritten'])},"
               f" pruned: {len(backups['pruned'])}.")

