"""Docs that cannot drift: every CLI command and setting is documented in the README."""

import json
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


def test_readme_settings_table_matches_the_settings_spec():
    """Every row's meaning is the SPEC's description (the `provider` one is written from domain.PROVIDERS)."""
    from claude_mem import settings
    from claude_mem.domain import PROVIDERS

    section = README.split("## Settings", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| `[^`]*` \| (.*) \|$", section, flags=re.M))
    assert set(rows) == set(settings.SPEC)
    for key, (_, meaning) in settings.SPEC.items():
        assert rows[key] == meaning, f"README meaning of {key} is stale; use: {meaning}"
    assert all(f"{name} — " in rows["provider"] for name in PROVIDERS)


def test_settings_command_lists_the_generated_provider_description():
    from click.testing import CliRunner

    from claude_mem import settings

    result = CliRunner().invoke(cli, ["settings", "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["provider"] == "auto"
    table = CliRunner().invoke(cli, ["settings"], env={"COLUMNS": "1000"})
    listed = " ".join(table.output.split())
    assert "offline — no LLM: observations extracted mechanically from the events" in listed
    assert "fake" not in listed  # the test suite's provider is a plugin: valid in its settings, never listed
    assert settings.SPEC["provider"][1].startswith("Observer, one of: auto — ")
