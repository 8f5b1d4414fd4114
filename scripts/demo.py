"""`make demo`: claude-mem end to end in a throwaway data dir, the way a user would see it."""

import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.path.dirname(sys.executable)


def step(title: str) -> None:
    print(f"\n\033[1m== {title}\033[0m", flush=True)


def run(*args: str, env: dict[str, str]) -> None:
    print(f"$ {' '.join(args)}", flush=True)
    subprocess.run([os.path.join(BIN, args[0]), *args[1:]], env=env, check=True)


def main() -> None:
    data_dir = tempfile.mkdtemp(prefix="claude-mem-demo-")
    env = {**os.environ, "CLAUDE_MEM_DATA_DIR": data_dir}
    try:
        step(f"A fresh data dir: {data_dir}")
        run("claude-mem", "status", env=env)
        step("Creating the store")
        run("claude-mem", "migrate", env=env)
        run("claude-mem", "status", env=env)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    print("\ndemo finished; the throwaway data dir was removed.")


if __name__ == "__main__":
    main()
