"""Options many commands share, declared once: `--json` and `--project`."""

from collections.abc import Callable
from typing import TypeVar

import click

F = TypeVar("F", bound=Callable[..., object])

JSON_HELP = "Print machine-readable JSON."
PROJECT_HELP = "Only this project (key, display name or a path inside it)."


def json_option(help: str = JSON_HELP) -> Callable[[F], F]:  # noqa: A002 - click's own word
    """`--json` (a flag, passed as `as_json`): print JSON for scripts instead of text for people."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def project_option(help: str = PROJECT_HELP) -> Callable[[F], F]:  # noqa: A002
    """`--project KEY|NAME|PATH` (passed as `project`), resolved by the command against the store."""
    return click.option("--project", help=help)
