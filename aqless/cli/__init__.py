"""The ``aqless`` admin command: one module per command group, each imported when its
command runs (`aqless.cli.catalog` lists them)."""

from __future__ import annotations

from aqless.cli.app import cli


def main() -> None:
    """The console script's entry point."""
    cli(prog_name="aqless")


__all__ = ["cli", "main"]
