"""Test-only worker services, which tests install as plugins (the `install_plugin` fixture: an entry
point of `claude_mem.worker_services`) for real worker processes to load (this module holds no
tests; it must stay stdlib-only)."""

import asyncio
import json
import os
import subprocess


class LeakyChildrenService:
    """Spawns a direct `sleep` child and an orphaned `sleep` grandchild, and never stops them:
    the worker itself must reap both on shutdown."""

    name = "test-children"

    async def start(self, ctx) -> None:
        self.child = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shell = subprocess.run(["sh", "-c", "sleep 301 >/dev/null 2>&1 & echo $!"], capture_output=True,
                               text=True, timeout=10, check=True)
        pids = {"child": self.child.pid, "orphan": int(shell.stdout.strip())}
        with open(os.path.join(ctx.data_dir, "test-children.json"), "w", encoding="utf-8") as handle:
            json.dump(pids, handle)

    async def stop(self) -> None:
        await asyncio.sleep(0)


class EnvRecorderService:
    """Writes the worker's environment to a file so tests can check the spawn scrubbed it."""

    name = "test-env"

    async def start(self, ctx) -> None:
        with open(os.path.join(ctx.data_dir, "test-env.json"), "w", encoding="utf-8") as handle:
            json.dump(dict(os.environ), handle)

    async def stop(self) -> None:
        return None


def leaky_children() -> LeakyChildrenService:
    return LeakyChildrenService()


def env_recorder() -> EnvRecorderService:
    return EnvRecorderService()
