"""Team memory on a real PostgreSQL: two data dirs stand for two machines sharing one project."""

from __future__ import annotations

from claude_mem.index.search import SearchQuery, search
from claude_mem.recall import forget
from recall_seed import add_observation, add_prompt, add_session, add_summary, stamp
from team_support import REMOTE, machine, pg, server_rows, team_url  # noqa: F401  (fixtures)


def work(m, session_id: str, titles, prompt: str = "Make the lease renewal safe"):
    """A session on machine `m` with a prompt, observations and a summary."""
    conn = m.connect()
    try:
        session = add_session(conn, session_id, m.project, stamp(2))
        add_prompt(conn, session, 1, prompt, stamp(1.9))
        ids = [add_observation(conn, m.project, title, session_id=session, created_at=stamp(1.5 - n / 10),
                               concepts=("leases",), files_modified=("src/lease.py",))
               for n, title in enumerate(titles)]
        add_summary(conn, session, m.project, stamp(1), request=prompt, learned="Leases renew before expiry")
        return ids
    finally:
        conn.close()


def found(m, text: str) -> list[dict]:
    conn = m.connect()
    try:
        return search(conn, SearchQuery.build(text, project=m.project, mode="keyword")).items
    finally:
        conn.close()


def test_two_machines_see_each_others_memory_of_a_shared_project(tmp_path, team_url):
    a = machine(tmp_path, "alice", team_url)
    b = machine(tmp_path, "bob", team_url)
    work(a, "sess-a1", ["Lease renewal races with the sweeper", "Sweeper skips leases renewed this second"])
    # a private project of Alice's never leaves her machine
    conn = a.connect()
    other = add_session(conn, "sess-secret", "/home/alice/other", stamp(1))
    add_observation(conn, "/home/alice/other", "Salary spreadsheet formula", session_id=other)
    conn.close()

    pushed = a.sync()
    assert pushed.pushed == 4  # session, two observations, summary; the prompt is not shared by default
    assert b.sync().pulled == 4

    rows_b = b.rows()
    assert {row["kind"] for row in rows_b.values()} == {"session", "observation", "summary"}
    assert {row["author"] for row in rows_b.values()} == {"alice"}
    hits = found(b, "lease sweeper")
    assert [hit["title"] for hit in hits][:2] and all(hit["project"] == b.project for hit in hits)
    assert not any("Salary" in str(row) for row in server_rows_text(a, team_url))

    # Bob's own work goes the other way; nothing comes back to its author
    work(b, "sess-b1", ["Renewal jitter avoids thundering herd"], prompt="Spread renewals out")
    assert b.sync().pushed == 3
    assert a.sync().pulled == 3
    assert [hit["title"] for hit in found(a, "thundering herd")] == ["Renewal jitter avoids thundering herd"]
    assert a.sync().pulled == 0 and b.sync().pulled == 0  # replays change nothing

    assert same_content(a.rows()) == same_content(b.rows())


def same_content(rows: dict[str, dict]) -> dict[str, dict]:
    """The shared rows of a machine as the other machine must hold them: all but who holds them where."""
    # prompts are not shared by default, nor what is made of them (a summary's request, a session's title)
    return {uid: {k: v for k, v in row.items() if k not in ("author", "device", "project", "request", "title")
                  or (k == "title" and row["kind"] == "observation")}
            for uid, row in rows.items() if row["kind"] != "prompt"}


def server_rows_text(m, url):
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SELECT payload::text FROM claude_mem.rows").fetchall()


def test_forget_on_one_machine_removes_the_row_everywhere(tmp_path, team_url, pg):
    a = machine(tmp_path, "alice", team_url)
    b = machine(tmp_path, "bob", team_url)
    work(a, "sess-a1", ["Lease renewal races with the sweeper", "Wrong note pasted with a customer name"])
    a.sync()
    b.sync()
    conn = b.connect()
    wrong = conn.execute("SELECT id FROM observations WHERE title LIKE 'Wrong note%'").fetchone()[0]
    forget.forget(conn, b.data_dir, ids=[wrong])
    conn.close()
    totals = b.sync()
    assert totals.buried == 1
    assert a.sync().deleted == 1
    assert not any("Wrong note" in row["title"] for row in a.rows().values() if row["kind"] == "observation")
    assert not any("customer name" in str(row) for row in server_rows_text(a, team_url))
    # a later push of that row (a replay from a stale machine) does not bring it back
    a.sync()
    b.sync()
    assert sum(1 for row in server_rows(pg, team_url) if row[4]) == 1


def test_shared_prompts_only_when_asked(tmp_path, team_url):
    a = machine(tmp_path, "alice", team_url, team_share_prompts=True)
    b = machine(tmp_path, "bob", team_url)
    work(a, "sess-a1", ["Lease renewal races with the sweeper"], prompt="Why do leases expire early?")
    conn = a.connect()
    session = conn.execute("SELECT id FROM sessions").fetchone()[0]
    add_prompt(conn, session, 2, "a private prompt", private=True)
    conn.close()
    assert a.sync().pushed == 4
    b.sync()
    prompts = [row for row in b.rows().values() if row["kind"] == "prompt"]
    assert [row["text"] for row in prompts] == ["Why do leases expire early?"]


def test_a_project_matches_by_remote_in_any_spelling_or_by_path(tmp_path, team_url):
    a = machine(tmp_path, "alice", team_url, patterns=["git@github.com:Acme/App.git"])
    b = machine(tmp_path, "bob", team_url, patterns=["github.com/acme/*"])
    c = machine(tmp_path, "carol", team_url, patterns=["/home/elsewhere/*"])
    work(a, "sess-a1", ["Lease renewal races with the sweeper"])
    assert a.sync().pushed == 3
    assert b.sync().pulled == 3
    assert c.sync().pulled == 0 and c.sync().pushed == 0
    assert REMOTE  # the project on the server is the normalised remote
