"""Shared output helpers: JSON for scripts, rich for people."""

import json

import click
from rich.console import Console


def console() -> Console:
    return Console(highlight=False, soft_wrap=False, emoji=False)  # `:name:` in stored text stays as written


def emit_json(value: object) -> None:
    click.echo(json.dumps(value, indent=2, sort_keys=True, default=str))


def echo_problems(problems: list[str], shown: int = 20) -> None:
    """Each problem on stderr: the first `shown`, then how many more."""
    for problem in problems[:shown]:
        click.echo(problem, err=True)
    if len(problems) > shown:
        click.echo(f"… and {len(problems) - shown} more", err=True)


def human_bytes(size: int) -> str:
    amount = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if amount < 1024 or unit == "GB":
            return f"{amount:.0f} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{size} B"
