"""Docs that cannot drift: every CLI command is documented in the README."""

import os
import re

import click

from claude_mem.cli import cli
from conftest import REPO

README = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()


def command_paths(group: click.Group, prefix: str = "claude-mem") -> list[str]:
    paths = []
    for name, command in group.commands.items():
        if command.hidden:
            continue
        path = f"{prefix} {name}"
        paths.append(path)
        if isinstance(command, click.Group):
            paths.extend(command_paths(command, path))
    return paths


def test_readme_starts_with_the_two_commands():
    first_block = re.search(r"```bash\n(.*?)```", README, flags=re.S).group(1)
    lines = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert lines[:2] == ["make demo", "make test"]


def test_every_cli_command_is_documented():
    for path in command_paths(cli):
        assert f"`{path}" in README, f"README does not document `{path}`"


def test_ci_runs_the_readme_test_command():
    script = open(os.path.join(REPO, ".ci", "run"), encoding="utf-8").read()
    assert "make test" in script
