"""Team memory under test: a real throwaway PostgreSQL cluster (Debian's package) and machines, each a
data dir of its own with team settings."""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
from dataclasses import dataclass

import pytest
from bench.pg_cluster import Cluster, bin_dir

from claude_mem import settings
from claude_mem.store import db
from claude_mem.team.config import from_settings
from claude_mem.team.sync import Replicator
from conftest import require

REMOTE = "github.com/acme/app"
_names = itertools.count(1)


@pytest.fixture(scope="session")
def pg():
    require(bin_dir() is not None, "PostgreSQL is not installed (apt-get install postgresql; make test does)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        require(False, "psycopg is not installed (pip install -e '.[dev]')")
    cluster = Cluster().start()
    yield cluster
    cluster.stop()


@pytest.fixture
def team_url(pg):
    """A fresh database with its own role and password: one team server per test."""
    n = next(_names)
    return pg.create_database(f"team{n}_{os.getpid()}", f"member{n}_{os.getpid()}", f"pw-{n}-Zq7x!")


@dataclass
class Machine:
    data_dir: str
    project: str  # the local key of the shared project

    def connect(self) -> sqlite3.Connection:
        return db.connect(db.db_path(self.data_dir))

    def replicator(self) -> Replicator:
        return Replicator(from_settings(settings.load(self.data_dir)), self.connect)

    def sync(self):
        replicator = self.replicator()
        try:
            return replicator.sync_once()
        finally:
            replicator.close()

    def rows(self, project: str | None = None) -> dict[str, dict]:
        from claude_mem.store import team

        conn = self.connect()
        try:
            return team.team_rows(conn, [project or self.project])
        finally:
            conn.close()


def machine(root, name: str, url: str, patterns=(REMOTE,), author: str | None = None, remote: str = REMOTE,
            **extra) -> Machine:
    """A data dir under `root/name` whose project `/home/<name>/app` has `remote`, sharing `patterns`."""
    data_dir = os.path.join(str(root), name)
    os.makedirs(data_dir, exist_ok=True)
    values = {"team_database_url": url, "team_projects": list(patterns), "team_author": author or name,
              "autostart": False, **extra}
    with open(settings.settings_path(data_dir), "w") as handle:
        json.dump(values, handle)
    key = f"/home/{name}/app"
    conn = db.connect(db.db_path(data_dir))
    conn.execute("INSERT INTO projects (key, remote) VALUES (?, ?)", (key, remote))
    conn.close()
    return Machine(data_dir, key)


def server_rows(pg: Cluster, url: str) -> list[tuple]:
    database = url.rsplit("/", 1)[1]
    return pg.sql("SELECT uid, kind, project, author, deleted, rev FROM claude_mem.rows ORDER BY rev", database)
