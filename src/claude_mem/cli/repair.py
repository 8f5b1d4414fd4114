"""`claude-mem repair`: fix what `doctor` finds and can be fixed, say each step, then run `doctor`."""

from __future__ import annotations

import logging
import os
import shutil
import stat
import subprocess
import sys
import time

import click
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from claude_mem import __version__, paths, store
from claude_mem.cli.checks import Context, gather, newest_good_backup
from claude_mem.cli.doctor import has_problem, render, run_checks
from claude_mem.cli.output import console
from claude_mem.cli.registration import PLUGIN
from claude_mem.runtime import control, discovery, environment, launch
from claude_mem.store import DatabaseError, backup, checkup, integrity

BUILD_CODE = ("import sys; sys.path.insert(0, sys.argv[1]); from claude_mem.runtime import environment; "
              "sys.exit(0 if environment.build(sys.argv[2]) else 1)")
POLL_SECONDS = 0.5


def say(message: str, style: str = "") -> None:
    """One step's line, never wrapped (paths stay whole)."""
    console().print(Text(message, style=style), soft_wrap=True)


class Repairs:
    """The steps, in order; each says what it does. `restart` collects why the worker must start again."""

    def __init__(self, ctx: Context, yes: bool) -> None:
        self.ctx = ctx
        self.yes = yes
        self.done = False
        self.restart = False
        self.started = False
        self.held_back = False  # a step the user did not confirm: leave the worker alone

    @property
    def data_dir(self) -> str:
        return self.ctx.data_dir

    def permissions(self) -> None:
        directory = self.data_dir
        if not os.path.isdir(directory):
            return
        mode = stat.S_IMODE(os.stat(directory).st_mode)
        if mode & 0o077:
            os.chmod(directory, 0o700)
            say(f"data dir: permissions {mode:04o} → 0700 ({directory})")
            self.done = True

    def database(self) -> None:
        report = self.ctx.database
        if not report.exists or not report.problem:
            return
        good = newest_good_backup(self.data_dir)
        action = f"restore {os.path.basename(good)}" if good else "start an empty one (no usable backup)"
        question = (f"The database is damaged ({report.problem}). Move it aside and {action}? Sessions, prompts and "
                    "events still readable in it are carried over")
        if not self.confirmed(question):
            say("database: damaged, NOT restored: that needs your confirmation (`claude-mem repair --yes`, or run it "
                "in a terminal)", "bold red")
            self.held_back = True
            return
        fd = self.take_lock("database: not restored", "to restore the database")
        if fd is None:
            return
        try:
            record = backup.recover_if_corrupt(self.data_dir)
        finally:
            os.close(fd)
        if record:
            say(f"database: moved aside to {record['corrupt_copy']}; {record['note']}")
        self.done = True
        self.restart = self.restart or bool(self.ctx.values.get("autostart", True))
        self.ctx.database = checkup.inspect_database(paths.db_path(self.data_dir))

    def confirmed(self, question: str) -> bool:
        if self.yes:
            return True
        if not sys.stdin.isatty():
            return False
        return click.confirm(question, default=False)

    def indexes(self) -> None:
        report = self.ctx.database
        if not report.exists or report.problem or report.schema_version > report.latest_version:
            return
        if not report.indexes_checked:  # too large to check in a copy: check in place
            report = checkup.inspect_database(report.path, fts_limit=report.size)
        if not report.broken_indexes:
            return
        conn = store.open(path=report.path)
        try:
            integrity.rebuild(conn, report.broken_indexes)
            error = ""
        except (DatabaseError, MemoryError) as exc:
            error = f"{type(exc).__name__}: {exc}"
        finally:
            conn.close()
        self.done = True
        still = checkup.inspect_database(report.path).broken_indexes
        if still:
            say(f"full-text indexes: {', '.join(still)} still broken after a rebuild ({error or 'check failed'})",
                "red")
        else:
            say(f"full-text indexes: rebuilt {', '.join(report.broken_indexes)} from their tables")

    def environment(self) -> None:
        found = self.ctx.environment
        if found["state"] == "building":
            say(f"plugin environment: being built by pid {found['pid']}; `claude-mem doctor` shows its progress")
            return
        if found["state"] not in ("failed", "interrupted", "stale") or (found["recorded"] and not found["recorded_problem"]):
            return  # nothing to rebuild, or not needed: the worker runs with the interpreter `claude-mem install` recorded
        source = self.build_source()
        if source is None:
            say("plugin environment: cannot rebuild it from here (no plugin folder found); the plugin's next session "
                "start does", "yellow")
            return
        fd = self.take_lock("plugin environment: not rebuilt", "to rebuild its environment")
        if fd is None:
            return
        try:
            environment.clear_failure(self.data_dir)
            say(f"plugin environment: rebuilding {environment.venv_dir(self.data_dir)} from {source} "
                f"(pip's output: {os.path.join(self.data_dir, environment.BUILD_LOG)})")
            built = self.build(source)
            self.done = True
            if not built:
                failed = environment.state(self.data_dir)
                say(f"plugin environment: {environment.describe(failed)}", "bold red")
                return
            say("plugin environment: built")
            if self.held_back:
                say("worker: not started: it would restore the backup over the damaged database as it starts, "
                    "which waits for your confirmation", "yellow")
            elif self.restart or self.ctx.values.get("autostart", True):
                self.spawn_worker(fd)
        finally:
            os.close(fd)

    def build_source(self) -> str | None:
        """The plugin folder to build from: the installed plugin's, else the one the venv came from,
        else this checkout."""
        plugins = [install.folder for install in self.ctx.registration.plugin(PLUGIN)]
        recorded = environment.read_progress(self.data_dir).get("source")
        for folder in [*plugins, recorded, environment.CHECKOUT]:
            if isinstance(folder, str) and os.path.isfile(os.path.join(folder, "pyproject.toml")):
                return folder
        return None

    def build(self, source: str) -> bool:
        """Run the build in the foreground (a child holding nothing but our lock's protection) and show
        its progress from `venv-progress.json`."""
        python = shutil.which("python3") if self.ctx.plugin_runs_hooks else None
        argv = [python or sys.executable, "-I", "-S", "-c", BUILD_CODE, os.path.join(source, "src"), self.data_dir]
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env=launch.scrubbed_env(dict(os.environ)))
        out = console()
        columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
        shown = ""
        with Progress(*columns, console=out, transient=True, disable=not out.is_terminal) as progress:
            task = progress.add_task("starting", total=100)
            while child.poll() is None:
                found = environment.state(self.data_dir)
                if found["state"] == "building":
                    elapsed, left = found["elapsed"] or 0, found["remaining"] or 0
                    progress.update(task, description=f"{found['label']} (about {left:.0f} s left)",
                                    completed=100 * elapsed / max(elapsed + left, 1))
                    if found["label"] != shown:
                        shown = found["label"]
                        if not out.is_terminal:
                            say(f"  {shown}")
                time.sleep(POLL_SECONDS)
        return child.returncode == 0 and environment.venv_ready(self.data_dir)

    def take_lock(self, refused: str, why: str) -> int | None:
        """Stop the worker and hold its lock, for a step that needs both; None (said why) when not possible."""
        if not self.stop_worker(why):
            return None
        fd = discovery.try_lock(self.data_dir)
        if fd is None:
            say(f"{refused}: another process holds the worker lock", "red")
        return fd

    def stop_worker(self, why: str) -> bool:
        """Stop the worker before a step that needs it gone; it is started again at the end."""
        try:
            stopped = control.stop(self.data_dir)
        except OSError as exc:
            say(f"worker: could not stop it ({exc})", "red")
            return False
        if stopped:
            say(f"worker: stopped (pid {stopped}) {why}")
            self.restart = True
        return True

    def spawn_worker(self, fd: int) -> None:
        """Start the worker from the venv, handing it the lock we hold (as the hooks' bootstrap does)."""
        env = launch.scrubbed_env(dict(os.environ), str(self.ctx.values.get("anthropic_base_url") or ""))
        pid = launch.spawn(launch.worker_argv(environment.venv_python(self.data_dir), fd), self.data_dir, env,
                           pass_fd=fd)
        self.started, self.done = True, True
        deadline = time.monotonic() + control.START_TIMEOUT
        while time.monotonic() < deadline and not control.gone(pid):
            current = control.state(self.data_dir, timeout=1.0)
            if current.running:
                say(f"worker: started from the plugin environment, pid {pid}, {current.url}")
                return
            time.sleep(0.1)
        say(f"worker: started from the plugin environment (pid {pid}) but it does not answer yet; see "
            f"{os.path.join(self.data_dir, 'logs', 'worker.log')}", "yellow")

    def worker(self) -> None:
        state = self.ctx.worker
        broken = state.running and not control.version_matches(state) or "does not answer" in state.reason
        if self.held_back or self.started or not (broken or self.restart):
            return
        why = state.reason or f"it runs version {(state.health or {}).get('version')}, this is {__version__}"
        if broken and not self.stop_worker(f"because {why}"):
            return
        try:
            self.start_worker()
        except control.WorkerError as exc:
            say(f"worker: {exc}", "red")

    def start_worker(self) -> None:
        """With this interpreter when it has the worker's packages (as the hooks choose), else from the venv."""
        if environment.has_worker_packages():
            current, _ = control.start(self.data_dir)
            self.started, self.done = True, True
            say(f"worker: running, pid {current.pid}, {current.url}")
            return
        if not environment.venv_ready(self.data_dir):
            say("worker: not started: the plugin's environment is not built yet", "yellow")
            return
        fd = discovery.try_lock(self.data_dir)
        if fd is None:
            say("worker: not started: another process holds the worker lock", "yellow")
            return
        try:
            self.spawn_worker(fd)
        finally:
            os.close(fd)


@click.command()
@click.option("--yes", is_flag=True, help="Restore a backup over a damaged database without asking.")
def repair(yes: bool) -> None:
    """Fix what `claude-mem doctor` finds, saying each step, then run doctor again.

    Stops a worker whose plugin was uninstalled; makes the data dir private again; moves a damaged
    database aside and restores the newest good backup (only after you confirm: --yes, or answer in a
    terminal; without either that step is refused); rebuilds damaged full-text indexes; rebuilds the
    plugin's environment when its build failed, was interrupted or is of another version (stopping the
    worker first, showing the build's progress); restarts a worker that does not answer or runs another
    version. Exit code 1 when doctor still finds a problem.
    """
    logging.getLogger("claude_mem").addHandler(logging.NullHandler())  # each step says what it did
    ctx = gather()
    for note in ctx.stopped:
        say(note)
    steps = Repairs(ctx, yes)
    steps.permissions()
    steps.database()
    steps.indexes()
    steps.environment()
    steps.worker()
    if not (steps.done or ctx.stopped or steps.held_back):
        say("nothing to repair")
    say("")
    say("claude-mem doctor:", "bold")
    found = run_checks()
    render(found)
    raise SystemExit(1 if has_problem(found) else 0)
