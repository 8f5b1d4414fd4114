"""Issue 33 item 3: backups under a wrong clock. Rotation and "is a snapshot due" go by what each snapshot
records inside itself (a sequence and its time), never by names or mtimes a wrong clock wrote: a clock
+10 years and back deletes no fresh snapshot, `claude-mem backup` never fails, a worker makes no storm."""

import asyncio
import os
import sqlite3
import threading
import time

import pytest
from click.testing import CliRunner

from claude_mem.cli import cli
from claude_mem.store import backup, db
from claude_mem.worker.backup_service import BackupService
from claude_mem.worker.context import WorkerContext
from test_worker_backup import make_db, session_ids
from test_worker_lifecycle import cli as run_cli
from test_worker_lifecycle import wait_for, worker_env  # noqa: F401  (worker_env: a fixture)

TEN_YEARS = 10 * 365.25 * 86400


def legacy_snapshot(data_dir, stamp, mtime=None):
    """A snapshot as older builds wrote it (no record inside), named `stamp`, its mtime set to `mtime`."""
    path = os.path.join(backup.backups_dir(str(data_dir)), f"claude-mem-{stamp}.db")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    conn = sqlite3.connect(db.db_path(str(data_dir)))
    conn.execute("VACUUM INTO ?", (path,))
    conn.close()
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def clock(monkeypatch):
    """The wall clock backups read, set by the test: `clock.offset` seconds from the real one."""
    class Clock:
        offset = 0.0

        def __call__(self):
            return time.time() + self.offset

    fake = Clock()
    monkeypatch.setattr(backup, "wall_clock", fake)
    return fake


def test_clock_ten_years_ahead_and_back_keeps_the_fresh_snapshots(data_dir, clock):
    make_db(data_dir, sessions=3)
    first = backup.snapshot(str(data_dir), keep=2)
    clock.offset = TEN_YEARS
    future = backup.snapshot(str(data_dir), keep=2)
    assert os.path.basename(future) > os.path.basename(first)  # named ten years ahead
    assert backup.newest_age(str(data_dir)) is not None  # made in this boot: timed by the boot clock
    clock.offset = 0.0
    made = [backup.snapshot(str(data_dir), keep=2) for _ in range(3)]
    # by name the future one is the newest; by what the files record the last two made are
    assert backup.list_backups(str(data_dir)) == made[-2:]
    assert not os.path.exists(future)  # rotated out by sequence (its name is free for reuse: no check on `first`)
    assert all(backup.check_database(path) is None for path in made[-2:])
    assert [backup.read_made(path).seq for path in made[-2:]] == [4, 5]  # same second, none overwritten


def test_a_future_dated_snapshot_is_kept_but_not_recent(data_dir, clock):
    make_db(data_dir, sessions=3)
    far = time.time() + TEN_YEARS
    legacy = legacy_snapshot(data_dir, "20361231T000000Z", mtime=far)
    assert backup.newest_age(str(data_dir)) is None  # dated in the future: a snapshot is due
    made = backup.snapshot(str(data_dir), keep=5)
    assert backup.list_backups(str(data_dir)) == [legacy, made]  # kept, but older than what was made now
    assert 0 <= backup.newest_age(str(data_dir)) < 60


def test_cli_backup_beside_snapshots_named_in_the_future_never_fails(data_dir):
    """The reproduction: with keep = 1 the old rotation kept the future *name* and deleted the snapshot it
    had just made, then `claude-mem backup` failed with ENOENT."""
    make_db(data_dir, sessions=4)
    for stamp in ("20361231T000000Z", "29990101T000000Z"):
        legacy_snapshot(data_dir, stamp, mtime=time.time() + TEN_YEARS)
    runner = CliRunner()
    for _ in range(3):
        result = runner.invoke(cli, ["backup"], env={"CLAUDE_MEM_BACKUPS_KEEP": "1"})
        assert result.exit_code == 0, result.output
        path = result.output.split(" (")[0].strip()
        assert os.path.exists(path) and session_ids(path) == {f"s{n}" for n in range(4)}
        assert backup.list_backups(str(data_dir)) == [path]


def test_concurrent_snapshots_never_rotate_out_their_own(data_dir):
    make_db(data_dir, sessions=2)
    errors, made = [], []

    def snap():
        for _ in range(4):
            try:
                made.append(backup.snapshot(str(data_dir), keep=1))
            except Exception as exc:  # noqa: BLE001  (the test reports any)
                errors.append(exc)

    threads = [threading.Thread(target=snap) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors and len(made) == 12
    survivors = backup.list_backups(str(data_dir))
    assert len(survivors) == 1 and backup.read_made(survivors[0]).seq == 12


def run_service(data_dir, interval, seconds, clock=None, jump=None):
    """Run the real backup loop in process for `seconds`; `jump(elapsed)` may move the clock meanwhile."""
    service = BackupService()
    service._ctx = WorkerContext(settings={"backups_keep": 100}, data_dir=str(data_dir))

    async def main():
        task = asyncio.create_task(service._loop(interval))
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            if jump is not None:
                clock.offset = jump(time.monotonic() - started)
            await asyncio.sleep(0.1)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    asyncio.run(main())
    return service


def test_a_worker_under_a_clock_ten_years_ahead_makes_one_snapshot_not_one_a_second(data_dir, clock):
    make_db(data_dir, sessions=2)
    legacy_snapshot(data_dir, backup.utc_stamp())  # made now by an older build: no record inside
    clock.offset = TEN_YEARS  # to this clock it is ten years old: one snapshot is due, then none for an hour
    service = run_service(data_dir, interval=3600.0, seconds=4.0)
    assert service.last_error is None
    made = backup.list_backups(str(data_dir))
    assert len(made) == 2 and backup.read_made(made[1]).seq == 1
    assert os.path.basename(made[1]) > "claude-mem-2035"  # named by the clock it ran under
    # a restarted worker under the same clock: the newest snapshot was made seconds ago in this boot
    assert run_service(data_dir, interval=3600.0, seconds=2.0).last_error is None
    assert len(backup.list_backups(str(data_dir))) == 2


def test_after_a_reboot_a_snapshot_dated_ahead_is_not_recent(data_dir, clock):
    make_db(data_dir, sessions=2)
    clock.offset = TEN_YEARS
    ahead = backup.snapshot(str(data_dir), keep=5)
    conn = sqlite3.connect(ahead)
    conn.execute(f"UPDATE {backup.META_TABLE} SET boot_id = 'an-earlier-boot'")
    conn.commit()
    conn.close()
    clock.offset = 0.0  # the clock is put right, the machine rebooted: the boot clock cannot tell its age
    assert backup.newest_age(str(data_dir)) is None
    run_service(data_dir, interval=3600.0, seconds=3.0)
    made = backup.list_backups(str(data_dir))
    assert made[0] == ahead and len(made) == 2 and backup.read_made(made[1]).seq == 2
    assert 0 <= backup.newest_age(str(data_dir)) < 60


def test_clock_jumping_ahead_and_back_makes_at_most_one_snapshot_per_interval(data_dir, clock):
    make_db(data_dir, sessions=2)
    service = run_service(data_dir, interval=2.0, seconds=7.0, clock=clock,
                          jump=lambda elapsed: TEN_YEARS if int(elapsed * 2) % 2 else 0.0)
    assert service.last_error is None
    made = backup.list_backups(str(data_dir))
    # one at start (none existed), then at most one per 2 s interval: 4 at most in 7 s, never one a second
    assert 2 <= len(made) <= 4, [os.path.basename(path) for path in made]
    assert [backup.read_made(path).seq for path in made] == list(range(1, len(made) + 1))


def test_a_real_worker_snapshots_once_beside_a_future_dated_snapshot(worker_env, monkeypatch):  # noqa: F811
    """Started beside a snapshot whose name and mtime are 10 years ahead: the old code read its mtime as
    "made in the future" and waited ten years; now it does not count as recent, so one snapshot is made at
    start, and only one."""
    monkeypatch.setenv("CLAUDE_MEM_BACKUP_INTERVAL_HOURS", "1")
    make_db(worker_env, sessions=2)
    legacy = legacy_snapshot(worker_env, "20361231T000000Z", mtime=time.time() + TEN_YEARS)
    run_cli("worker", "start")
    wait_for(lambda: len(backup.list_backups(str(worker_env))) == 2, 20, "a snapshot at start")
    time.sleep(3)
    listed = backup.list_backups(str(worker_env))
    assert len(listed) == 2 and listed[0] == legacy and backup.read_made(listed[1]).seq == 1
    assert "dated in the future" not in run_cli("doctor", check=False).stdout  # the newest is the fresh one


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_restore_from_a_fifo_or_device_is_refused_at_once(data_dir, tmp_path, kind):
    make_db(data_dir, sessions=2)
    if kind == "fifo":
        target = str(tmp_path / "snapshot.db")
        os.mkfifo(target)
    else:
        target = "/dev/zero"
    started = time.monotonic()
    result = run_cli("restore", target, check=False, timeout=5)
    assert result.returncode == 1 and "cannot be restored: not a regular file" in result.stderr, result.stderr
    assert time.monotonic() - started < 5 and "Traceback" not in result.stderr
    assert session_ids(db.db_path(str(data_dir))) == {"s0", "s1"}


def test_rotation_never_deletes_the_newest_good_snapshot(data_dir):
    make_db(data_dir, sessions=2)
    good = backup.snapshot(str(data_dir), keep=5)
    damaged = backup.snapshot(str(data_dir), keep=5)
    with open(damaged, "r+b") as handle:  # the newest by sequence, its pages scribbled over
        handle.seek(4096)
        handle.write(b"\xff" * 4096 * 3)
    assert backup.check_database(damaged) is not None
    assert backup.rotate(str(data_dir), keep=1) == []
    assert backup.list_backups(str(data_dir)) == [good, damaged]
