"""`claude-mem doctor`'s check of team memory: configured?, the driver, and a real connection to the
server (connect, our schema's version) within a few seconds. Never writes to the server."""

from __future__ import annotations

from claude_mem.cli.checks import INFO, OK, PROBLEM, WARNING, Check, Context
from claude_mem.store import team_server
from claude_mem.team import config as team_config

CONNECT_TIMEOUT = 3


def team_checks(ctx: Context) -> list[Check]:
    config = team_config.from_settings(ctx.values)
    if not config.enabled:
        return [Check("team", INFO, "team memory is off (set team_database_url and team_projects to share a project)")]
    problem = config.problem()
    if problem:
        fix = "pip install 'claude-mem-py[team]' (or `claude-mem repair`, which rebuilds the plugin's environment)" \
            if "driver" in problem else "`claude-mem settings set team_projects 'github.com/your-org/*'`"
        return [Check("team", PROBLEM if "driver" in problem else WARNING, problem, fix)]
    where = team_config.server_label(config.url)
    try:
        conn = team_server.connect(config.url, timeout=CONNECT_TIMEOUT)
    except Exception as exc:
        return [Check("team", PROBLEM, f"cannot connect to the team server {where}: "
                      f"{team_config.safe_error(exc, config.url)}",
                      "check team_database_url (host, port, user, password, sslmode) and that the server runs")]
    facts: dict[str, object] = {}
    try:
        version = team_server.server_version(conn)
        if version is not None and 2 <= version <= team_server.SCHEMA_VERSION:
            facts = team_server.facts(conn)
    except Exception as exc:
        return [Check("team", PROBLEM, f"team server {where}: {team_config.safe_error(exc, config.url)}")]
    finally:
        conn.close()
    shared = ", ".join(config.patterns)
    if version is None:
        return [Check("team", OK, f"team server {where} reachable; its schema is created by the worker's first"
                      f" exchange; sharing {shared}")]
    if version > team_server.SCHEMA_VERSION:
        return [Check("team", PROBLEM, f"team server {where} has schema version {version}, newer than this"
                      f" claude-mem's ({team_server.SCHEMA_VERSION})", "upgrade claude-mem on this machine")]
    if facts.get("verified"):
        who = f"authorship verified: role {facts['role']}" + (f" writes as {facts['name']}" if facts.get("name") else "")
    else:
        who = f"authorship unverified (one shared role), writing as {config.author}"
    return [Check("team", OK, f"team server {where} connected (schema {version}); sharing {shared}; {who}")]
