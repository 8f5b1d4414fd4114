"""What leaves a machine for the team server follows the settings field by field (issue 32 item 1),
checked on a real PostgreSQL by dumping every column of every table of schema claude_mem."""

from __future__ import annotations

import secrets

import psycopg

from claude_mem.team import outgoing
from recall_seed import add_observation, add_prompt, add_session, add_summary, stamp
from team_support import machine, pg, team_url  # noqa: F401  (fixtures)

SECRET = "ghp_" + "Q7fz2LmX9pRt4VbN8sKw1YcJ6hDg3AeU0oIi"


def server_dump(pg, url: str) -> str:
    """Every column of every row of every table in schema claude_mem, as text."""
    database = url.rsplit("/", 1)[1]
    tables = [name for (name,) in pg.sql(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'claude_mem'", database)]
    assert "rows" in tables and "projects" in tables
    with psycopg.connect(pg.admin_url(database)) as conn:
        return "\n".join(str(row[0]) for table in tables
                         for row in conn.execute(f"SELECT t::text FROM claude_mem.{table} t").fetchall())


def session_with_prompt(m, canary: str) -> str:
    """A session whose prompt holds `canary`, its title and summary request made from the prompt, an
    observation quoting part of it, one holding a secret; returns the prompt."""
    prompt = f"Please make the lease renewal sweeper safe against {canary} races when two workers overlap"
    conn = m.connect()
    try:
        session = add_session(conn, "sess-private", m.project, stamp(2))
        add_prompt(conn, session, 1, prompt, stamp(1.9))
        conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (prompt, session))
        add_observation(conn, m.project, "Sweeper renews leases before expiry", session_id=session,
                        narrative=f"The user asked: {prompt.lower()}. Renewal now takes the lease lock first.",
                        facts=(f"asked to make the lease renewal sweeper safe against {canary} races",
                               "renewals take the lock"))
        add_observation(conn, m.project, "Deploy token found in the CI config", session_id=session,
                        narrative=f"The CI config held {SECRET} in plain text; it was moved to a secret store.")
        add_summary(conn, session, m.project, stamp(1), request=prompt, learned="Renewal takes the lock first")
    finally:
        conn.close()
    return prompt


def test_with_sharing_off_no_prompt_text_reaches_any_server_table(tmp_path, team_url, pg):
    canary = f"canary{secrets.token_hex(6)}"
    a = machine(tmp_path, "alice", team_url)  # team_share_prompts is off by default
    b = machine(tmp_path, "bob", team_url)
    session_with_prompt(a, canary)
    assert a.sync().pushed == 4  # session, two observations, summary
    dump = server_dump(pg, team_url)
    assert canary not in dump
    assert "lease renewal sweeper safe against" not in dump.lower()
    assert outgoing.STAND_IN in dump
    assert SECRET not in dump and "[REDACTED" in dump
    # what is not prompt text still travels
    assert "Renewal now takes the lease lock first" in dump and "renewals take the lock" in dump
    b.sync()
    pulled = b.rows()
    assert canary not in str(pulled)
    sessions = [row for row in pulled.values() if row["kind"] == "session"]
    assert [row["title"] for row in sessions] == [outgoing.STAND_IN]
    summaries = [row for row in pulled.values() if row["kind"] == "summary"]
    assert [row["request"] for row in summaries] == [outgoing.STAND_IN]
    assert summaries[0]["learned"] == "Renewal takes the lock first"
    # the origin keeps its own text untouched
    assert canary in str(a.rows())


def test_with_sharing_on_prompts_travel_and_secrets_still_do_not(tmp_path, team_url, pg):
    canary = f"canary{secrets.token_hex(6)}"
    a = machine(tmp_path, "alice", team_url, team_share_prompts=True)
    b = machine(tmp_path, "bob", team_url)
    prompt = session_with_prompt(a, canary)
    assert a.sync().pushed == 5  # the prompt too
    dump = server_dump(pg, team_url)
    assert canary in dump and SECRET not in dump
    b.sync()
    pulled = b.rows()
    assert [row["text"] for row in pulled.values() if row["kind"] == "prompt"] == [prompt]
    assert [row["request"] for row in pulled.values() if row["kind"] == "summary"] == [prompt]


def test_payload_is_an_allow_list_and_quotes_are_cut_where_they_stand():
    prompt = "Why does the sweeper drop leases that were renewed in the same second as the tick?"
    row = {"uid": "u", "session_uid": "s", "title": "Sweeper drops leases", "narrative":
           "Asked why does the sweeper drop leases that were renewed in the same second; the tick compares <=.",
           "facts": ["WHY DOES THE SWEEPER DROP LEASES THAT WERE RENEWED", "the tick compares <="],
           "cwd": "/home/alice/app", "fetch_count": 3, "some_future_column": "local only", "type": "bugfix"}
    sent = outgoing.payload("observation", row, False, [prompt])
    assert set(sent) == {"session_uid", "title", "narrative", "facts", "type"}
    assert sent["title"] == "Sweeper drops leases"
    assert sent["narrative"] == f"Asked {outgoing.STAND_IN}; the tick compares <=."
    assert sent["facts"] == [outgoing.STAND_IN, "the tick compares <="]
    # a short everyday prompt does not blank every text that happens to hold its words
    assert outgoing.payload("observation", {"title": "fix it now"}, False, ["fix it"])["title"] == "fix it now"
    # with sharing on, nothing but secrets is touched
    assert outgoing.payload("observation", row, True, [prompt])["narrative"] == row["narrative"]


def test_what_is_sent_is_what_a_puller_reads():
    """The push allow-list and the pull's known fields name the same fields per kind: a field sent
    that a puller does not know would be counted as a newer client's, one it knows but is never sent
    would always be empty."""
    from claude_mem.store import team_bulk

    assert {kind: set(fields) for kind, fields in outgoing.SHARED.items()} == {
        kind: set(fields) for kind, fields in team_bulk.FIELDS.items()}
