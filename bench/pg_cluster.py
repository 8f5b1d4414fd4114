"""A throwaway PostgreSQL cluster for the tests and benchmarks of team memory.

Debian's `postgresql` package (installed by `make test`), started in a temp dir: `initdb` refuses to
run as root, so as root the cluster belongs to the `postgres` user (`runuser`). It listens on
127.0.0.1 only (and a unix socket in its own dir), trusts local socket connections, and asks a
password (SCRAM) over TCP, so tests can use a wrong one. `stop()` removes everything.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from urllib.parse import quote

SUPERUSER = "postgres"


def bin_dir() -> str | None:
    """Where Debian keeps the server programs (newest version), or None when it is not installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(os.path.realpath(initdb)) if initdb else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Cluster:
    def __init__(self) -> None:
        found = bin_dir()
        if found is None:
            raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
        self.bin = found
        self.root = tempfile.mkdtemp(prefix="claude-mem-pg-")
        self.data = os.path.join(self.root, "data")
        self.socket_dir = os.path.join(self.root, "socket")
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        self.running = False

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        command = [os.path.join(self.bin, args[0]), *args[1:]]
        if self.as_root:
            command = ["runuser", "-u", SUPERUSER, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=check, timeout=120)

    def start(self) -> Cluster:
        os.makedirs(self.socket_dir)
        if self.as_root:
            shutil.chown(self.root, SUPERUSER)
            shutil.chown(self.socket_dir, SUPERUSER)
        os.chmod(self.root, 0o755)
        self._run("initdb", "-D", self.data, "-U", SUPERUSER, "-A", "trust", "--no-sync", "-E", "UTF8",
                  "--locale=C.UTF-8")
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as handle:
            handle.write("local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n")
        with open(os.path.join(self.data, "postgresql.conf"), "a") as handle:
            handle.write(f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
                         f"unix_socket_directories = '{self.socket_dir}'\nfsync = off\n"
                         "synchronous_commit = off\nfull_page_writes = off\nmax_connections = 100\n")
        self.resume()
        return self

    def resume(self) -> None:
        """Start (or start again after `pause`) the server and wait until it accepts connections."""
        self._run("pg_ctl", "-D", self.data, "-l", os.path.join(self.root, "server.log"), "-w", "-t", "60", "start")
        self.running = True

    def pause(self) -> None:
        """Stop the server (fast shutdown: connections are cut), keeping its data."""
        self._run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop", check=False)
        self.running = False

    def stop(self) -> None:
        if self.running:
            self.pause()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- access ---------------------------------------------------------------------------------

    def admin_url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@/{database}?host={quote(self.socket_dir, safe='')}&port={self.port}"

    def url(self, user: str, password: str, database: str) -> str:
        """A TCP URL on 127.0.0.1 with a password (what a user puts in `team_database_url`)."""
        return f"postgresql://{quote(user)}:{quote(password, safe='')}@127.0.0.1:{self.port}/{database}"

    def sql(self, statement: str, database: str = "postgres") -> list[tuple]:
        import psycopg

        with psycopg.connect(self.admin_url(database), autocommit=True) as conn:
            cursor = conn.execute(statement)
            return cursor.fetchall() if cursor.description else []

    def create_database(self, name: str, owner: str, password: str) -> str:
        """A role (with `password`) and a database it owns; returns its URL."""
        self.sql(f"CREATE ROLE {owner} LOGIN PASSWORD '{password}'")
        self.sql(f"CREATE DATABASE {name} OWNER {owner}")
        return self.url(owner, password, name)

    def wait_gone(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
            except OSError:
                return
            time.sleep(0.1)
