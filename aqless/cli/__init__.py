"""The ``aqless`` admin command: one module per command group, assembled here."""

from __future__ import annotations

from aqless.cli import (
    audit,
    batches,
    cancel,
    config,
    emptying,
    events,
    failures,
    flows,
    groups,
    jobs,
    outbox,
    patterns,
    put,
    queues,
    ratelimit,
    recurring,
    script,
    server,
    shards,
    throttle,
    web,
    workers,
    workflows,
)
from aqless.cli.app import cli

GROUPS = (
    put,
    jobs,
    flows,
    cancel,
    workflows,
    batches,
    queues,
    groups,
    emptying,
    workers,
    failures,
    config,
    patterns,
    events,
    recurring,
    throttle,
    ratelimit,
    web,
    script,
    server,
    shards,
    outbox,
    audit,
)
for module in GROUPS:
    for command in module.COMMANDS:
        cli.add_command(command)
cli.add_command(failures.retry, name="unfail")  # qless's name for it


def main() -> None:
    """The console script's entry point."""
    cli(prog_name="aqless")


__all__ = ["cli", "main"]
