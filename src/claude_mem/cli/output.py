"""Shared output helpers: JSON for scripts, rich for people."""

import json

import click
from rich.console import Console


def console() -> Console:
    return Console(highlight=False, soft_wrap=False)


def emit_json(value: object) -> None:
    click.echo(json.dumps(value, indent=2, sort_keys=True, default=str))


def human_bytes(size: int) -> str:
    amount = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if amount < 1024 or unit == "GB":
            return f"{amount:.0f} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{size} B"
