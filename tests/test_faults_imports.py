"""Issue 33 item 4: every importer on hostile files. A device (/dev/zero), a FIFO with no writer, a
socket, or a symlink to one of them is refused at once with a clear line, never read (a FIFO would block
forever, /dev/zero never ends); a 200,000-deep JSON line is a skip line; an original database with odd
types (a BLOB project name) is imported with the value decoded; no traceback anywhere."""

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time

import pytest

from claude_mem import store
from claude_mem.importers import export_format
from conftest import FIXTURES

LIMIT_S = 5.0  # issue 33: every importer on /dev/zero, a FIFO and a symlink to either ends in <= 5 s
ORIGINAL = os.path.join(FIXTURES, "claude-mem-13.25.3", "claude-mem.db")
TIMES: dict[str, float] = {}


@pytest.fixture(autouse=True, scope="module")
def report_times():
    """Prints the time of every import run here (pytest -s), for the issue's note."""
    yield
    for name, elapsed in sorted(TIMES.items()):
        print(f"{elapsed:6.2f} s  claude-mem import {name}")


def importer(*args, timeout=LIMIT_S):
    """`claude-mem import ARGS` as a user runs it; fails the test when it does not end within `timeout`."""
    started = time.monotonic()
    try:
        result = subprocess.run([sys.executable, "-m", "claude_mem", "import", *args], capture_output=True,
                                text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`claude-mem import {' '.join(args)}` did not end within {timeout} s")
    elapsed = time.monotonic() - started
    TIMES[" ".join(args)] = elapsed
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    return result, elapsed


@pytest.fixture
def hostile(tmp_path):
    """Hostile files: a FIFO nobody writes to, a unix socket, and symlinks to them and to /dev/zero."""
    folder = tmp_path / "hostile"
    folder.mkdir()
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "sock"))
    (folder / "to-zero").symlink_to("/dev/zero")
    (folder / "to-fifo").symlink_to(fifo)
    yield folder
    sock.close()


KINDS = {"/dev/zero": "a character device", "fifo": "a FIFO", "sock": "a socket", "to-zero": "a character device",
         "to-fifo": "a FIFO"}


def target(hostile, name):
    return name if name.startswith("/") else str(hostile / name)


@pytest.mark.parametrize("name", list(KINDS))
def test_import_jsonl_refuses_what_is_not_a_regular_file(hostile, data_dir, name):
    result, elapsed = importer("jsonl", target(hostile, name))
    assert result.returncode == 1 and elapsed <= LIMIT_S
    assert f"not a regular file ({KINDS[name]})" in result.stderr, result.stderr
    assert not os.path.exists(data_dir / "claude-mem.db")  # refused before the store was even opened


@pytest.mark.parametrize("name", list(KINDS))
def test_import_claude_mem_refuses_what_is_not_a_regular_file(hostile, data_dir, name):
    result, elapsed = importer("claude-mem", target(hostile, name))
    assert result.returncode == 1 and elapsed <= LIMIT_S
    assert f"not a regular file ({KINDS[name]})" in result.stderr, result.stderr


@pytest.mark.parametrize("name", list(KINDS))
def test_import_transcripts_refuses_a_path_that_is_not_a_regular_file(hostile, data_dir, name):
    result, elapsed = importer("transcripts", target(hostile, name))
    assert result.returncode == 1 and elapsed <= LIMIT_S
    assert f"not a regular file ({KINDS[name]})" in result.stderr, result.stderr


def transcript_line(session, kind="user", text="hello", second=0):
    return json.dumps({"type": kind, "sessionId": session, "timestamp": f"2026-01-01T00:00:{second:02d}Z",
                       "message": {"role": kind, "content": text}}) + "\n"


def test_import_transcripts_of_a_folder_with_hostile_jsonl_files_imports_the_rest(hostile, tmp_path, data_dir):
    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    (folder / "good.jsonl").write_text(transcript_line("good") + transcript_line("good", "user", "bye", 1))
    (folder / "zero.jsonl").symlink_to("/dev/zero")
    (folder / "fifo-link.jsonl").symlink_to(hostile / "fifo")
    os.mkfifo(folder / "fifo.jsonl")
    result, elapsed = importer("transcripts", str(tmp_path / "projects"))
    assert result.returncode == 1 and elapsed <= LIMIT_S
    for name, kind in (("zero", "a character device"), ("fifo-link", "a FIFO"), ("fifo", "a FIFO")):
        assert f"{folder / name}.jsonl: not a regular file ({kind})" in result.stderr, result.stderr
    conn = store.open(str(data_dir))
    try:
        assert conn.execute("SELECT count(*) FROM pending_events").fetchone()[0] >= 2  # the good one came in
    finally:
        conn.close()


def test_a_200000_deep_json_line_is_a_skip_line(tmp_path, data_dir):
    deep = "[" * 200_000 + "]" * 200_000
    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    (folder / "s.jsonl").write_text(transcript_line("s") + '{"type":"user","sessionId":"s","message":{"content":'
                                    + deep + "}}\n" + transcript_line("s", "user", "after", 2))
    result, _ = importer("transcripts", str(folder), timeout=30)
    assert result.returncode == 1 and f"{folder / 's.jsonl'}:2: JSON nested too deeply, skipped" in result.stderr
    export = tmp_path / "export.jsonl"
    header = {"type": "header", "format": export_format.FORMAT, "version": export_format.VERSION}
    export.write_text(json.dumps(header) + "\n" + '{"type":"session","uid":' + deep + "}\n")
    result, _ = importer("jsonl", str(export), timeout=30)
    assert result.returncode == 1 and f"{export}:2: not valid JSON (nested too deeply); skipped" in result.stderr


def blob_original(tmp_path):
    """A copy of the original's fixture with odd types: BLOB project names (one not UTF-8), a number as a
    title, text where numbers belong."""
    path = str(tmp_path / "theirs.db")
    conn = sqlite3.connect(ORIGINAL)
    conn.execute("VACUUM INTO ?", (path,))
    conn.close()
    conn = sqlite3.connect(path, isolation_level=None)
    first, last = conn.execute("SELECT min(id), max(id) FROM sdk_sessions").fetchone()
    conn.execute("UPDATE sdk_sessions SET project = CAST(project AS BLOB) WHERE id = ?", (first,))
    conn.execute("UPDATE sdk_sessions SET project = X'ff00fe6a756e6b' WHERE id = ?", (last,))
    conn.execute("UPDATE observations SET project = CAST(project AS BLOB), title = 12345"
                 " WHERE id IN (SELECT id FROM observations ORDER BY id LIMIT 5)")
    conn.execute("UPDATE observations SET prompt_number = 'three' WHERE id = (SELECT max(id) FROM observations)")
    conn.execute("UPDATE session_summaries SET project = 42 WHERE id = (SELECT min(id) FROM session_summaries)")
    conn.close()
    return path


def test_an_original_with_blob_project_names_imports_with_them_decoded(tmp_path, data_dir):
    path = blob_original(tmp_path)
    result, _ = importer("claude-mem", path, timeout=120)
    assert result.returncode in (0, 1), result.stderr
    theirs = sqlite3.connect(path)
    sessions = theirs.execute("SELECT count(*) FROM sdk_sessions").fetchone()[0]
    theirs.close()
    conn = store.open(str(data_dir))
    try:
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == sessions
        assert conn.execute("SELECT count(*) FROM sessions WHERE typeof(project) != 'text'").fetchone()[0] == 0
    finally:
        conn.close()


def test_the_original_database_is_opened_read_only(tmp_path, data_dir):
    path = blob_original(tmp_path)
    os.chmod(path, 0o444)
    os.chmod(tmp_path, 0o555)  # not even a -wal or -shm could be made beside it
    try:
        before = os.stat(path)
        result, _ = importer("claude-mem", path, timeout=120)
        assert result.returncode in (0, 1) and "Traceback" not in result.stderr, result.stderr
        assert os.stat(path).st_mtime_ns == before.st_mtime_ns and os.stat(path).st_size == before.st_size
    finally:
        os.chmod(tmp_path, 0o755)
