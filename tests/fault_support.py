"""Shared by the fault tests (`tests/test_faults_*.py`): a small real filesystem for the data dir."""

import os
import subprocess
from collections.abc import Iterator

from conftest import require


def tmpfs_data_dir(tmp_path, monkeypatch, size: str) -> Iterator[str]:
    """A tmpfs of `size` mounted at `tmp_path/disk` (its data dir: `disk/data`), and a private runtime dir on
    another filesystem as `$XDG_RUNTIME_DIR` (where a hook keeps events the data dir cannot take); yields the
    mount point and unmounts it at the end. Mounting needs root: under CI=true its absence fails the test."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    require(done.returncode == 0, f"cannot mount a tmpfs (needs root): {done.stderr.strip()}")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("CLAUDE_MEM_DATA_DIR", os.path.join(str(mount), "data"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    try:
        yield str(mount)
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
