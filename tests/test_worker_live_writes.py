"""Every write seen live (issue 25, item 3): what any process writes — a hook, `remember`, `forget`, an
import or a projects merge from the CLI — reaches an open `/stream` within a second. Triggers log each
write in the `changes` table; the worker's change feed reads it and publishes. First the feed over a
real database written through another connection, then a real worker process driven by the real CLI."""

import json
import os
import threading
import time

import httpx
import pytest

from claude_mem.importers.jsonl import export_lines
from claude_mem.recall import forget as forgetting
from claude_mem.recall.remember import remember
from claude_mem.store import db, memory
from claude_mem.worker import change_feed
from claude_mem.worker.change_feed import Feed
from recall_seed import add_observation, add_prompt, add_session, add_summary, stamp
from test_observer_worker import cli, wait_for, worker_env
from test_worker_api_stream import sse

ALPHA, BETA = "/home/dev/alpha", "/home/dev/beta"
LIVE_SECONDS = 1.0


@pytest.fixture
def writer_and_feed(data_dir):
    """A connection that writes (another process, as far as SQLite can tell) and a feed on its own one."""
    path = db.db_path(str(data_dir))
    writer, reader = db.connect(path), db.connect(path)
    yield writer, Feed(reader)
    writer.close()
    reader.close()


def test_the_feed_publishes_what_another_connection_writes_in_the_streams_shapes(writer_and_feed, data_dir):
    writer, feed = writer_and_feed
    assert feed.poll(True) == []  # nothing written
    session = add_session(writer, "sess-1", ALPHA)
    add_prompt(writer, session, 1, "why is the sync slow")
    add_prompt(writer, session, 2, "", private=True)
    observation = add_observation(writer, ALPHA, "The sync reads every row twice", session_id=session,
                                  files_read=("sync.py",))
    summary = add_summary(writer, session, ALPHA, request="why is the sync slow", learned="two reads per row")
    note = remember(writer, "Deploys need the VPN.", BETA)["id"]
    events = feed.poll(True)
    assert [(kind, data["id"]) for kind, data in events] == [
        ("prompt", 1), ("observation", observation), ("summary", summary), ("observation", note)]  # never the private one
    prompt, first, turn, manual = (data for _, data in events)
    assert prompt == {"kind": "prompt", "ref": "P1", "id": 1, "session_id": session, "prompt_number": 1,
                      "text": "why is the sync slow", "created_at": prompt["created_at"], "project": ALPHA,
                      "content_session_id": "sess-1", "author": None, "op": "insert"}
    assert first["ref"] == f"#{observation}" and first["files_read"] == ["sync.py"] and first["type"] == "discovery"
    assert first["content_session_id"] == "sess-1" and first["project"] == ALPHA and first["created_at"]
    assert turn["ref"] == f"S{summary}" and turn["learned"] == "two reads per row" and turn["kind"] == "summary"
    assert manual["content_session_id"] is None and manual["project"] == BETA and manual["title"] == "Deploys need the VPN."
    assert feed.poll(True) == []
    memory.observations_by_id(writer, [observation])  # a fetch counts, but changes no memory
    assert feed.poll(True) == []
    writer.execute("UPDATE prompts SET text = '[REDACTED]' WHERE id = 1")  # a secret caught late
    assert [(kind, data["text"], data["op"]) for kind, data in feed.poll(True)] == [("prompt", "[REDACTED]", "update")]
    forgetting.forget(writer, str(data_dir), session="sess-1")
    assert feed.poll(True) == [("forget", {"observations": [observation], "summaries": [summary], "prompts": [1, 2],
                                           "sessions": ["sess-1"], "project": None})]


def test_the_feed_only_moves_its_mark_while_nobody_listens_and_reads_a_backlog_in_steps(writer_and_feed,
                                                                                         monkeypatch):
    writer, feed = writer_and_feed
    session = add_session(writer, "sess-1", ALPHA)
    add_prompt(writer, session, 1, "before anyone listened")
    assert feed.poll(False) == []
    assert feed.poll(True) == []  # a new listener hears what is written from then on
    monkeypatch.setattr(change_feed, "MAX_PER_POLL", 50)
    with db.transaction(writer):
        for number in range(2, 122):
            add_prompt(writer, session, number, f"prompt {number}")
    steps = [[data["prompt_number"] for _, data in feed.poll(True)] for _ in range(4)]
    assert steps == [list(range(2, 52)), list(range(52, 102)), list(range(102, 122)), []]
    writer.execute("DELETE FROM changes WHERE seq > 3")  # as after a restore of an older backup: behind the mark
    assert feed.poll(True) == []
    add_prompt(writer, session, 200, "after the restore")
    assert [data["text"] for _, data in feed.poll(True)] == ["after the restore"]


# -- a real worker, the real CLI --------------------------------------------------------------------------


class Stream:
    """`GET /stream` of a worker, read in a thread: (arrival time, kind, data) of each event."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.events: list[tuple[float, str, object]] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            with httpx.stream("GET", f"http://127.0.0.1:{self.port}/stream", timeout=httpx.Timeout(60.0)) as response:
                for kind, data in sse(response.iter_lines()):
                    if kind != "comment":
                        self.events.append((time.monotonic(), kind, data))
        except httpx.HTTPError:
            pass

    def next(self, kind: str, since: int, test=lambda data: True, timeout: float = 10.0) -> tuple[float, dict]:
        """(arrival, data) of the first `kind` event from index `since` on that passes `test`."""
        found: list[tuple[float, dict]] = []

        def seen() -> bool:
            found[:] = [(at, data) for at, k, data in self.events[since:] if k == kind and test(data)][:1]
            return bool(found)

        wait_for(seen, timeout, f"a {kind} event")
        return found[0]


@pytest.fixture
def live(data_dir):
    """A real worker (offline observer) with a client on its stream; yields (run the CLI, the stream)."""
    env = worker_env(data_dir, CLAUDE_MEM_PROVIDER="offline")
    started = cli("worker", "start", env=env)
    assert started.returncode == 0, started.stderr + started.stdout
    with open(os.path.join(data_dir, "worker.json"), encoding="utf-8") as handle:
        stream = Stream(json.load(handle)["port"])

    def run(*args: str) -> tuple[float, int]:
        """Run the CLI in its own process; (when it exited, how many events had arrived when it started)."""
        before = len(stream.events)
        result = cli(*args, env=env)
        assert result.returncode == 0, result.stderr + result.stdout
        return time.monotonic(), before

    try:
        stream.next("health", 0, timeout=30)
        yield run, stream
    finally:
        cli("worker", "stop", env=env, timeout=30)


def test_remember_and_forget_from_the_cli_reach_an_open_stream_within_a_second(live, tmp_path):
    run, stream = live
    project = tmp_path / "alpha"
    project.mkdir()
    done, before = run("remember", "The staging database is rebuilt every night at 02:00.", "--project", str(project))
    at, note = stream.next("observation", before, lambda data: "staging database" in data["title"])
    assert at - done < LIVE_SECONDS, f"the observation arrived {at - done:.2f} s after `remember` exited"
    assert note["project"] == os.path.realpath(project) and note["ref"] == f"#{note['id']}" and note["op"] == "insert"
    assert note["content_session_id"] is None and note["narrative"].startswith("The staging database")
    print(f"remember seen {at - done:.2f} s after the CLI exited")
    done, before = run("forget", str(note["id"]), "--yes")
    at, removed = stream.next("forget", before)
    assert at - done < LIVE_SECONDS, f"the forget arrived {at - done:.2f} s after `forget` exited"
    assert removed == {"observations": [note["id"]], "summaries": [], "prompts": [], "sessions": [], "project": None}
    print(f"forget seen {at - done:.2f} s after the CLI exited")


def test_an_import_and_a_projects_merge_from_the_cli_reach_an_open_stream_within_a_second(live, tmp_path):
    run, stream = live
    elsewhere = db.connect(db.db_path(str(tmp_path / "elsewhere")))  # another machine's memory, exported
    session = add_session(elsewhere, "sess-elsewhere", ALPHA, stamp(5))
    add_prompt(elsewhere, session, 1, "make the export resumable", stamp(5))
    add_observation(elsewhere, ALPHA, "Exports write a checkpoint every 1000 rows", session_id=session,
                    created_at=stamp(4))
    add_summary(elsewhere, session, ALPHA, stamp(4), request="make the export resumable", learned="checkpoints")
    remember(elsewhere, "The beta project deploys from the release branch only.", BETA)
    exported = tmp_path / "memory.jsonl"
    exported.write_text("".join(line + "\n" for line in export_lines(elsewhere)), encoding="utf-8")
    elsewhere.close()

    done, before = run("import", "jsonl", str(exported))
    arrived = {kind: stream.next(kind, before) for kind in ("prompt", "observation", "summary")}
    for kind, (at, _) in arrived.items():
        assert at - done < LIVE_SECONDS, f"the imported {kind} arrived {at - done:.2f} s after the import exited"
    assert arrived["prompt"][1]["text"] == "make the export resumable"
    assert arrived["summary"][1]["learned"] == "checkpoints" and arrived["summary"][1]["project"] == ALPHA
    titles = {data["title"] for _, kind, data in stream.events[before:] if kind == "observation"}
    assert titles == {"Exports write a checkpoint every 1000 rows", "The beta project deploys from the release branch only."}

    done, before = run("projects", "merge", ALPHA, BETA, "--yes")
    at, moved = stream.next("observation", before, lambda data: data["op"] == "update")
    assert at - done < LIVE_SECONDS, f"the merge arrived {at - done:.2f} s after `projects merge` exited"
    assert moved["title"] == "Exports write a checkpoint every 1000 rows" and moved["project"] == BETA
    assert stream.next("summary", before, lambda data: data["op"] == "update")[1]["project"] == BETA
