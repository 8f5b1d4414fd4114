"""`claude-mem export` and `claude-mem import jsonl` (issue 14, item 3): the round trip is lossless
and reproducible, filters and forget are honoured, a re-import adds nothing, and bad input is
reported line by line while everything else goes in — redacted like any capture."""

import asyncio
import json
import os
import re
import sqlite3

import jsonschema
import pytest
from click.testing import CliRunner

from claude_mem import paths, store
from claude_mem import settings as settings_module
from claude_mem.cli import cli
from claude_mem.importers import export_format, jsonl
from claude_mem.importers.jsonl import JsonlSource, export_lines
from claude_mem.observer.pipeline import Pipeline
from claude_mem.recall import forget as forgetting
from claude_mem.recall.remember import remember
from claude_mem.store import memory, portable, vectors
from conftest import REPO
from fakes.observer_provider import FakeProvider
from observer_support import drain, load_session_edit
from recall_seed import add_observation, add_prompt, add_session, add_summary, stamp
from secret_corpus import SECRETS

PROJECT = "/home/dev/proj"
OTHER = "/home/dev/other"
SCHEMA = json.load(open(os.path.join(REPO, "docs", "export-format.schema.json"), encoding="utf-8"))
DOC = open(os.path.join(REPO, "docs", "export-format.md"), encoding="utf-8").read()
HOSTILE = ["'); DROP TABLE observations; --", "<script>alert(1)</script>", "line\u2028separator\u2029para",
           "rtl \u202egnp.exe", "emoji 🧠 and CJK 記憶", "tab\tand\r\nnewlines", "nul \x00 byte", "x" * 100_000,
           "\\u0000 literally", '{"type": "header"}']
TABLES = ("sessions", "prompts", "observations", "summaries")


def build_store(data_dir: str) -> sqlite3.Connection:
    """Memory written by the real writers: two recorded sessions through the fake observer, a session
    of another project with dated rows and a private prompt, manual notes, and odd but harmless text."""
    conn = store.open(data_dir)
    load_session_edit(conn, "sess-edit-1")
    load_session_edit(conn, "sess-edit-2")
    values = settings_module.load(data_dir)
    values.update(provider="fake", retry_backoff_seconds=0.0)
    asyncio.run(drain(Pipeline(conn, values, FakeProvider())))
    old = add_session(conn, "sess-other", OTHER, stamp(100))
    add_prompt(conn, old, 1, "why is the viewer slow", stamp(100))
    add_prompt(conn, old, 2, "", stamp(99), private=True)
    add_prompt(conn, old, 3, "and the worker? " + HOSTILE[4], stamp(2))
    add_observation(conn, OTHER, "Viewer renders every row", kind="bugfix", session_id=old, created_at=stamp(99),
                    facts=("one", "two"), concepts=("gotcha",), files_read=("app.js",), files_modified=("render.js",))
    for number, text in enumerate(HOSTILE):
        add_observation(conn, OTHER, f"hostile text {number}", narrative=text, session_id=old, created_at=stamp(3),
                        subtitle=text[:50])
    add_summary(conn, old, OTHER, stamp(1), request="speed up the viewer", learned="virtual scrolling",
                notes=HOSTILE[2])
    conn.execute("UPDATE sessions SET last_injected_at = ?, title = 'viewer speed' WHERE id = ?", (stamp(50), old))
    remember(conn, "The deploy key lives in vault, never in the repo.", PROJECT)
    remember(conn, "Other project's note: run make bench before merging.", OTHER, kind="decision", title="bench first")
    first = conn.execute("SELECT id FROM observations ORDER BY id LIMIT 1").fetchone()[0]
    memory.observations_by_id(conn, [first, first])  # fetch_count 2
    true_hashes(conn)
    return conn


def true_hashes(conn: sqlite3.Connection) -> None:
    """recall_seed writes made-up content hashes; the real writers hash the content, and so does an import
    (it never trusts a record's hash), so the seeded rows get the hash the real writers would give them."""
    for row_id, session_id, kind, title, narrative, facts in conn.execute(
            "SELECT id, session_id, type, title, narrative, facts FROM observations").fetchall():
        row = {"session_uid": session_id, "type": kind, "title": title, "narrative": narrative,
               "facts": json.loads(facts or "[]")}
        digest = export_format.rehashed(row)["content_hash"]
        conn.execute("UPDATE observations SET content_hash = ? WHERE id = ?", (digest, row_id))


@pytest.fixture
def store_a(data_dir):
    conn = build_store(str(data_dir))
    yield conn
    conn.close()


@pytest.fixture
def dir_b(tmp_path):
    path = tmp_path / "b"
    path.mkdir()
    return str(path)


def open_b(dir_b: str) -> sqlite3.Connection:
    return store.open(dir_b)


def run(args: list[str], data_dir: str | None = None):
    env = {"CLAUDE_MEM_DATA_DIR": data_dir} if data_dir else {}
    return CliRunner().invoke(cli, args, env=env, catch_exceptions=False)


def export_text(conn: sqlite3.Connection, **filters: str | None) -> str:
    return "".join(line + "\n" for line in export_lines(conn, **filters))


def rows(conn: sqlite3.Connection) -> dict[str, dict[str, dict]]:
    """Every row of every exported table by uid, every column but local integer ids; references by uid."""
    found: dict[str, dict[str, dict]] = {}
    for table in TABLES:
        join = "" if table == "sessions" else " LEFT JOIN sessions s ON s.id = t.session_id"
        session = "" if table == "sessions" else ", s.uid AS session_uid"
        cursor = conn.execute(f"SELECT t.*{session} FROM {table} t{join}")
        names = [column[0] for column in cursor.description]
        found[table] = {}
        for values in cursor:
            row = dict(zip(names, values))
            for local in ("id", "session_id", "event_id"):
                row.pop(local, None)
            found[table][row["uid"]] = row
    return found


def records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def write(path, lines: list) -> str:
    with open(path, "w", encoding="utf-8") as handle:
        for line in lines:
            handle.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    return str(path)


# -- the round trip ---------------------------------------------------------------------------------------


def test_round_trip_is_lossless_and_a_second_export_is_byte_identical(store_a, data_dir, dir_b, tmp_path):
    file_a, file_b = str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")
    result = run(["export", "-o", file_a])
    assert result.exit_code == 0, result.output
    counts = {table: store_a.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in TABLES}
    assert f"exported {sum(counts.values())} records" in result.stderr
    imported = run(["import", "jsonl", file_a], dir_b)
    assert imported.exit_code == 0, imported.output
    conn_b = open_b(dir_b)
    assert rows(conn_b) == rows(store_a)
    assert run(["export", "-o", file_b], dir_b).exit_code == 0
    with open(file_a, "rb") as a, open(file_b, "rb") as b:
        assert a.read() == b.read()
    assert oct(os.stat(file_a).st_mode & 0o777) == "0o600"
    header = records(open(file_a, encoding="utf-8").read())[0]
    assert header["counts"] == counts and header["filters"] == {"project": None, "since": None}
    # imported rows are searchable at once and queued for embedding like any other
    assert conn_b.execute("SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH 'virtual OR viewer'"
                          ).fetchone()[0] >= 1
    assert conn_b.execute("SELECT COUNT(*) FROM prompts_fts WHERE prompts_fts MATCH '- {context} : viewer'"
                          ).fetchone()[0] == 1  # in its own text (a neighbour's `context` holds it too)
    missing = vectors.queued(conn_b, 10_000)
    assert len(missing) == counts["observations"] + counts["summaries"] + counts["prompts"] - 1  # one private prompt
    conn_b.close()


def test_stdout_export_is_the_file_export(store_a, tmp_path):
    path = str(tmp_path / "x.jsonl")
    assert run(["export", "-o", path]).exit_code == 0
    result = CliRunner().invoke(cli, ["export"])
    assert result.exit_code == 0 and result.stdout_bytes == open(path, "rb").read()


def test_every_line_validates_against_the_schema(store_a):
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    lines = records(export_text(store_a))
    assert [line["type"] for line in lines[:2]] == ["header", "session"]
    assert {line["type"] for line in lines} == {"header", "session", "prompt", "observation", "summary"}
    for line in lines:
        validator.validate(line)
    example = re.search(r"## Example\n\n```json\n(.*?)```", DOC, re.S).group(1)
    for line in records(example):
        validator.validate(line)
    session, prompt, observation = (next(line for line in lines if line["type"] == kind)
                                    for kind in ("session", "prompt", "observation"))
    for bad in ({**session, "uid": "ABC"}, {**session, "extra": 1}, {**prompt, "prompt_number": "1"},
                {key: value for key, value in observation.items() if key != "narrative"},
                {**observation, "created_at": "2026-11-20 14:30:05"}, {**observation, "session": 7}):
        assert not validator.is_valid(bad)


def test_schema_and_reader_know_the_same_fields():
    for kind, fields in export_format.FIELDS.items():
        definition = SCHEMA["$defs"][kind]
        assert definition["required"] == ["type", *(spec.name for spec in fields)], kind
        assert list(definition["properties"]) == ["type", *(spec.name for spec in fields)], kind
        documented = re.search(rf"### `{kind}`\n\n(.*?)\n\n", DOC, re.S).group(1)
        for spec in fields:
            assert f"`{spec.name}`" in documented, f"docs/export-format.md does not describe {kind}.{spec.name}"
    assert SCHEMA["$defs"]["header"]["properties"]["version"]["const"] == export_format.VERSION


def schema_of(spec: export_format.Field) -> dict:
    """What the schema must say of a field the reader checks this way (its description aside)."""
    if spec.kind == "key":
        value = {"type": "string", "maxLength": spec.max_length} | ({"minLength": spec.min_length} if spec.min_length else {})
    else:
        value = {"uid": {"$ref": "#/$defs/uid"}, "time": {"$ref": "#/$defs/time"}, "int": {"$ref": "#/$defs/count"},
                 "list": {"$ref": "#/$defs/strings"}, "bool": {"type": "boolean"}, "text": {"type": "string"},
                 "enum": {"enum": list(spec.choices)}}[spec.kind]
    return {"anyOf": [value, {"type": "null"}]} if spec.nullable else value


def test_schema_says_what_the_reader_checks():
    """The fields come from the typed rows (a new column is a new field); the schema, which is the
    format's promise, must describe each one as the reader checks it."""
    for kind, fields in export_format.FIELDS.items():
        properties = SCHEMA["$defs"][kind]["properties"]
        for spec in fields:
            described = {key: value for key, value in properties[spec.name].items() if key != "description"}
            assert described == schema_of(spec), f"{kind}.{spec.name}"


def test_export_order_is_by_session_then_time(store_a):
    lines = records(export_text(store_a))[1:]
    sessions = [line for line in lines if line["type"] == "session"]
    assert [s["started_at"] for s in sessions] == sorted(s["started_at"] for s in sessions)
    current = None
    for line in lines:
        if line["type"] == "session":
            current = line["uid"]
        elif line["session"] is not None:
            assert line["session"] == current
    notes = [line for line in lines if line["type"] == "observation" and line["session"] is None]
    assert len(notes) == 2 and lines[-2:] == notes


# -- filters and forget -----------------------------------------------------------------------------------


def test_project_filter_takes_one_project_and_its_notes(store_a):
    lines = records(export_text(store_a, project=OTHER))
    assert lines[0]["filters"]["project"] == OTHER
    assert {line["project"] for line in lines[1:] if line["type"] != "prompt"} == {OTHER}
    assert [line["content_session_id"] for line in lines if line["type"] == "session"] == ["sess-other"]
    assert sum(1 for line in lines if line["type"] == "observation" and line["session"] is None) == 1
    assert lines[0]["counts"]["observations"] == len(HOSTILE) + 2


def test_project_filter_on_the_command_line_accepts_a_display_name(store_a):
    result = CliRunner().invoke(cli, ["export", "--project", "other"])
    assert result.exit_code == 0 and records(result.stdout)[0]["filters"]["project"] == OTHER
    unknown = CliRunner().invoke(cli, ["export", "--project", "nope"])
    assert unknown.exit_code == 1 and "unknown project" in unknown.output


def test_since_filter_takes_newer_rows_and_their_sessions(store_a):
    since = stamp(2.5)
    lines = records(export_text(store_a, since=since))
    assert lines[0]["filters"]["since"] == since
    other = [line for line in lines if line.get("session") == lines_uid(lines, "sess-other")]
    assert {line["type"] for line in other} == {"prompt", "summary"}  # the prompt 2 h ago, the summary 1 h ago
    assert all(line["created_at"] >= since for line in lines[1:] if "created_at" in line)
    assert lines[0]["counts"]["prompts"] == sum(1 for line in lines if line["type"] == "prompt")
    bad = CliRunner().invoke(cli, ["export", "--since", "yesterday-ish"])
    assert bad.exit_code == 1 and "not a date" in bad.output


def lines_uid(lines: list[dict], content_session_id: str) -> str:
    return next(line["uid"] for line in lines if line.get("content_session_id") == content_session_id)


def test_forgotten_rows_are_not_exported(store_a, data_dir):
    victim = store_a.execute("SELECT id, uid FROM observations WHERE title = 'Viewer renders every row'").fetchone()
    forgetting.forget(store_a, str(data_dir), ids=[victim[0]])
    forgetting.forget(store_a, str(data_dir), session="sess-edit-1")
    text = export_text(store_a)
    assert victim[1] not in text and "Viewer renders every row" not in text and "sess-edit-1" not in text
    assert records(text)[0]["counts"]["sessions"] == 2


# -- importing ----------------------------------------------------------------------------------------------


def test_reimport_adds_nothing(store_a, dir_b, tmp_path):
    path = write(tmp_path / "a.jsonl", export_text(store_a).splitlines())
    conn_b = open_b(dir_b)
    first = JsonlSource(path).run(conn_b)
    before = rows(conn_b)
    second = JsonlSource(path).run(conn_b)
    assert sum(first.added.values()) == sum(second.present.values()) > 0
    assert not any(second.added.values()) and not second.incomplete and rows(conn_b) == before
    result = run(["import", "jsonl", path], dir_b)
    assert result.exit_code == 0 and "already here" in result.stdout


def test_dry_run_counts_and_writes_nothing(store_a, dir_b, tmp_path):
    path = write(tmp_path / "a.jsonl", export_text(store_a).splitlines())
    result = run(["import", "jsonl", path, "--dry-run"], dir_b)
    assert result.exit_code == 0 and "dry run" in result.stdout
    assert not os.path.exists(paths.db_path(dir_b))  # not even an empty database
    conn_b = open_b(dir_b)
    assert all(not conn_b.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in TABLES)
    report = JsonlSource(path).run(conn_b, dry_run=True)
    assert report.added["observations"] == store_a.execute("SELECT COUNT(*) FROM observations").fetchone()[0]
    again = run(["import", "jsonl", path, "--dry-run"], dir_b)  # into a database that exists: rolled back
    assert again.exit_code == 0 and all(not conn_b.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                                        for table in TABLES)


def test_an_interrupted_import_keeps_whole_sessions(store_a, dir_b, tmp_path, monkeypatch):
    path = write(tmp_path / "a.jsonl", export_text(store_a).splitlines())
    real = portable.write_group
    calls = {"n": 0}

    def dies_in_the_third_group(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(portable, "write_group", dies_in_the_third_group)
    result = run(["import", "jsonl", path], dir_b)
    assert result.exit_code == 130 and "run the same command again" in result.stderr
    assert open_b(dir_b).execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 2
    monkeypatch.setattr(portable, "write_group", real)
    assert run(["import", "jsonl", path], dir_b).exit_code == 0
    assert rows(open_b(dir_b)) == rows(store_a)


def test_import_into_a_store_with_other_memory(store_a, dir_b, tmp_path):
    conn_b = open_b(dir_b)
    build_store(dir_b).close()  # the same recorded sessions, captured here too (other uids), and more
    mine = add_session(conn_b, "sess-b-only", "/home/dev/b", stamp(5))
    add_observation(conn_b, "/home/dev/b", "Only in B", session_id=mine, created_at=stamp(5))
    before = rows(conn_b)
    path = write(tmp_path / "a.jsonl", export_text(store_a).splitlines())
    report = JsonlSource(path).run(conn_b)
    assert not report.incomplete
    after = rows(conn_b)
    for table in TABLES:  # nothing of B changed
        assert {uid: after[table][uid] for uid in before[table]} == before[table]
    # a session captured here too is the same session: its rows are not doubled
    assert conn_b.execute("SELECT COUNT(*) FROM sessions WHERE content_session_id = 'sess-edit-1'").fetchone()[0] == 1
    assert report.present["sessions"] == 3 and report.added["sessions"] == 0
    # the manual notes are the same notes; observations equal in content are not stored twice
    assert report.present["observations"] >= 2
    assert conn_b.execute("SELECT COUNT(*) FROM observations WHERE session_id IS NULL").fetchone()[0] == 2


def test_a_newer_format_version_is_refused_whole(store_a, dir_b, tmp_path):
    lines = records(export_text(store_a))
    lines[0]["version"] = export_format.VERSION + 1
    path = write(tmp_path / "future.jsonl", lines)
    result = run(["import", "jsonl", path], dir_b)
    assert result.exit_code == 1
    assert f"format version {export_format.VERSION + 1}" in result.output and "upgrade" in result.output
    assert "nothing imported" in result.output
    assert not open_b(dir_b).execute("SELECT COUNT(*) FROM sessions").fetchone()[0]


@pytest.mark.parametrize("first", ["", "not json", '{"type": "session"}', '{"type": "header", "format": "other"}',
                                   '{"type": "header", "format": "claude-mem-export", "version": "1"}', "[1, 2]"])
def test_a_file_that_is_not_an_export_is_refused(first, dir_b, tmp_path):
    path = write(tmp_path / "x.jsonl", [first, '{"type": "session"}'])
    result = run(["import", "jsonl", path], dir_b)
    assert result.exit_code == 1 and path in result.output and "nothing imported" in result.output


def bad_lines(lines: list[dict]) -> dict[str, str]:
    """Damaged versions of real records (what each one is, as a line of text)."""
    session, prompt, observation = (next(line for line in lines if line["type"] == kind)
                                    for kind in ("session", "prompt", "observation"))
    return {
        "truncated": json.dumps(observation)[:120],
        "garbage": "\x7fELF\x02\x01 definitely not json",
        "wrong type": json.dumps({**observation, "uid": "0" * 32, "prompt_number": "3"}),
        "title not a string": json.dumps({**observation, "uid": "1" * 32, "title": 5}),
        "bad uid": json.dumps({**prompt, "uid": "not-a-uid"}),
        "unknown observation type": json.dumps({**observation, "uid": "2" * 32, "observation_type": "rant"}),
        "missing field": json.dumps({k: v for k, v in observation.items() if k != "narrative"} | {"uid": "3" * 32}),
        "negative number": json.dumps({**observation, "uid": "4" * 32, "input_tokens": -1}),
        "huge number": json.dumps({**observation, "uid": "5" * 32, "fetch_count": 2**64}),
        "bool as number": json.dumps({**observation, "uid": "6" * 32, "fetch_count": True}),
        "bad time": json.dumps({**observation, "uid": "7" * 32, "created_at": "yesterday"}),
        "unknown record type": json.dumps({"type": "embedding", "uid": "8" * 32}),
        "second header": json.dumps(lines[0]),
        "not an object": "[1, 2, 3]",
        "lone surrogate": json.dumps({**observation, "uid": "9" * 32, "title": "\ud800"}),
        "unknown session": json.dumps({**prompt, "uid": "a" * 32, "session": "b" * 32}),
        "session list": json.dumps({**session, "uid": "c" * 32, "content_session_id": ["x"]}),
    }


def test_bad_lines_are_named_and_skipped_and_the_rest_imported(store_a, dir_b, tmp_path):
    lines = export_text(store_a).splitlines()
    damaged = bad_lines(records("\n".join(lines)))
    # bad lines spread through the file: after the header, between sessions, at the end
    mixed = lines[:1] + list(damaged.values())[:5] + lines[1:6] + list(damaged.values())[5:] + lines[6:]
    path = write(tmp_path / "bad.jsonl", mixed)
    with open(path, "ab") as handle:
        handle.write(b'{"type": "prompt", "text": "\xff\xfe not utf-8"}\n')
    result = run(["import", "jsonl", path], dir_b)
    assert result.exit_code == 1
    numbers = {number for number, line in enumerate(mixed, start=1) if line in damaged.values()}
    numbers.add(len(mixed) + 1)
    reported = {int(n) for n in re.findall(rf"^{re.escape(path)}:(\d+): ", result.stderr, re.M)}
    assert reported == numbers, result.stderr
    assert "not valid JSON" in result.stderr and "cut short" in result.stderr and "not UTF-8" in result.stderr
    assert "`title` must be a string" in result.stderr and "unknown record type 'embedding'" in result.stderr
    assert "a second header" in result.stderr and "must be one of" in result.stderr
    assert "neither in this file before it nor stored here" in result.stderr
    assert f"{len(numbers)} line(s) skipped" in result.stderr
    assert rows(open_b(dir_b)) == rows(store_a)  # every good line went in


def test_a_huge_line_is_skipped_without_reading_it_whole(store_a, dir_b, tmp_path):
    lines = export_text(store_a).splitlines()
    huge = json.dumps({"type": "observation", "narrative": "x" * (jsonl.MAX_LINE_BYTES + 10)})
    path = write(tmp_path / "huge.jsonl", lines[:3] + [huge] + lines[3:])
    conn_b = open_b(dir_b)
    report = JsonlSource(path).run(conn_b)
    assert report.skipped == {"line(s) skipped": 1} and report.problems == [f"{path}:4: longer than 16 MiB; skipped"]
    assert rows(conn_b) == rows(store_a)


def test_a_file_cut_short_imports_what_is_there_and_says_so(store_a, dir_b, tmp_path):
    text = export_text(store_a)
    cut = text[: len(text) * 2 // 3]
    path = tmp_path / "cut.jsonl"
    path.write_text(cut, encoding="utf-8")
    result = run(["import", "jsonl", str(path)], dir_b)
    assert result.exit_code == 1
    assert "the header announces" in result.stderr and "cut short" in result.stderr
    complete = records(cut.rsplit("\n", 1)[0])
    stored = rows(open_b(dir_b))
    assert sum(len(stored[table]) for table in TABLES) == len(complete) - 1
    # the rest follows when the whole file comes: nothing twice
    full = write(tmp_path / "full.jsonl", text.splitlines())
    assert run(["import", "jsonl", full], dir_b).exit_code == 0
    assert rows(open_b(dir_b)) == rows(store_a)


def test_secrets_in_imported_text_are_redacted(store_a, dir_b, tmp_path):
    lines = records(export_text(store_a))
    observation = next(line for line in lines if line["type"] == "observation" and line["session"])
    prompt = next(line for line in lines if line["type"] == "prompt" and line["text"])
    planted = []
    for number, (name, text, _secret) in enumerate(SECRETS):
        uid = f"{number:032x}"
        planted.append({**observation, "uid": uid, "content_hash": uid, "narrative": f"while debugging:\n{text}",
                        "facts": [text], "title": f"credential {name}"})
        planted.append({**prompt, "uid": f"{number + 10_000:032x}", "prompt_number": 100 + number, "text": text})
    planted.append({**observation, "uid": "e" * 32, "content_hash": "e", "narrative": "a <private>hidden</private> x"})
    path = write(tmp_path / "secrets.jsonl", lines[:2] + planted)
    conn_b = open_b(dir_b)
    report = JsonlSource(path).run(conn_b)
    assert not report.incomplete and report.added["observations"] == len(SECRETS) + 1
    stored = json.dumps([conn_b.execute(f"SELECT * FROM {table}").fetchall() for table in TABLES])
    leaked = [name for name, _text, secret in SECRETS if secret in stored or json.dumps(secret)[1:-1] in stored]
    assert not leaked
    assert "[REDACTED:" in stored and "hidden" not in stored


def test_hostile_strings_survive_the_round_trip(store_a, dir_b, tmp_path):
    path = write(tmp_path / "a.jsonl", export_text(store_a).splitlines())
    conn_b = open_b(dir_b)
    JsonlSource(path).run(conn_b)
    narratives = {row[0] for row in conn_b.execute("SELECT narrative FROM observations")}
    assert set(HOSTILE) <= narratives
    assert conn_b.execute("SELECT COUNT(*) FROM observations").fetchone()[0] == store_a.execute(
        "SELECT COUNT(*) FROM observations").fetchone()[0]


def test_export_to_a_file_is_atomic(store_a, tmp_path, monkeypatch):
    path = tmp_path / "keep.jsonl"
    path.write_text("the previous export\n")

    def broken(*args, **kwargs):
        yield '{"type": "header"}'
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr("claude_mem.cli.exporting.export_lines", broken)
    result = CliRunner().invoke(cli, ["export", "-o", str(path)])
    assert result.exit_code == 1 and "disk I/O error" in result.output
    assert path.read_text() == "the previous export\n"
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_import_is_a_group_for_every_source():
    result = CliRunner().invoke(cli, ["import", "--help"])
    assert result.exit_code == 0 and "jsonl" in result.output


def test_import_rehashes_records_instead_of_trusting_their_hash(store_a, dir_b, tmp_path):
    """Issue 33: an edited record that kept its old `content_hash` is new memory, not "already here"; a
    record whose hash was changed but whose content is stored already is that row."""
    lines = records(export_text(store_a))
    path = write(tmp_path / "a.jsonl", lines)
    conn_b = open_b(dir_b)
    JsonlSource(path).run(conn_b)
    observation = next(line for line in lines if line["type"] == "observation" and line["session"])
    edited = {**observation, "uid": "e" * 32, "narrative": observation["narrative"] + " (edited on the other machine)"}
    liar = {**observation, "uid": "f" * 32, "content_hash": "0" * 32}
    report = JsonlSource(write(tmp_path / "b.jsonl", [lines[0], edited, liar])).run(conn_b)
    assert report.added["observations"] == 1 and report.present["observations"] == 1, report
    stored = conn_b.execute("SELECT narrative, content_hash FROM observations WHERE uid = ?", ("e" * 32,)).fetchone()
    assert stored[0].endswith("(edited on the other machine)") and stored[1] != observation["content_hash"]
    assert conn_b.execute("SELECT 1 FROM observations WHERE uid = ?", ("f" * 32,)).fetchone() is None


def report_counts(report):
    return dict(report.added), dict(report.present), dict(report.skipped), report.problems


def test_a_dry_run_says_exactly_what_the_import_then_does_and_writes_nothing(store_a, dir_b, tmp_path):
    """The dry run decides by reads alone (no write, not even rolled back): its report must equal the real
    import's, into an empty store, one that holds part of the file, and one that holds all of it; a file
    with a row twice, a note stored already under another uid and a row of no session included."""
    lines = records(export_text(store_a))
    observation = next(line for line in lines if line["type"] == "observation" and line["session"])
    note = next(line for line in lines if line["type"] == "observation" and not line["session"])
    orphan = {**observation, "uid": "a" * 32, "session": "b" * 32}
    twice = {**note, "uid": "c" * 32}  # the same note under another uid: already here once the first is
    edited = {**observation, "uid": "d" * 32, "narrative": "edited"}
    full = write(tmp_path / "full.jsonl", lines + [lines[1], orphan, twice, edited])
    part = write(tmp_path / "part.jsonl", lines[: len(lines) // 2])
    conn_b = open_b(dir_b)
    for path in (part, full, full):
        before = os.stat(paths.db_path(dir_b))
        planned = JsonlSource(path).run(store.open(dir_b, readonly=True), dry_run=True)
        assert os.stat(paths.db_path(dir_b)).st_mtime_ns == before.st_mtime_ns
        done = JsonlSource(path).run(conn_b)
        assert report_counts(planned) == report_counts(done), path
    assert done.present["observations"] and not any(done.added.values())


def test_a_dry_run_runs_at_read_speed(store_a, tmp_path):
    """Not a timing (see bench export): the dry run of a file issues no INSERT at all."""
    path = write(tmp_path / "a.jsonl", export_text(store_a).splitlines())
    target = store.open(str(tmp_path / "c"))
    statements: list[str] = []
    target.set_trace_callback(statements.append)
    JsonlSource(path).run(target, dry_run=True)
    assert statements and not [s for s in statements if s.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))]
