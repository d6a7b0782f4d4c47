"""What every command shares: the global settings, running async code with a client, and
writing results (a rich view in a terminal, one JSON document with ``--json``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TextIO, TypeVar

import anyio
import click
from rich.console import Console, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

import aqless
from aqless.cli.audited import recorded
from aqless.cli.basics import NotFound as NotFound
from aqless.cli.basics import Settings as Settings
from aqless.cli.basics import to_json as to_json
from aqless.sharding.client import AnyClient as AnyClient

T = TypeVar("T")

# Wide enough that a piped table is not wrapped; a table is only as wide as its content.
_PIPE_WIDTH = 200


def settings() -> Settings:
    found = click.get_current_context().find_object(Settings)
    return found if found is not None else Settings(url=None, namespace=None, json=False)


class NotSharded(click.ClickException):
    """The command does not work on a sharded deployment (--deployment): exit 2."""

    exit_code = 2


def run(action: Callable[[aqless.Client], Awaitable[T]]) -> T:
    """Open a client for the global --url/--namespace, run `action` with it, close it;
    NotSharded for a sharded deployment (see `run_any`)."""
    current = settings()
    if current.deployment is not None:
        command = click.get_current_context().command_path
        raise NotSharded(f"`{command}` does not support a sharded deployment (--deployment) yet")

    async def main() -> T:
        async with aqless.Client(current.url, namespace=current.namespace) as client:
            return await recorded(client, action)

    return anyio.run(main)


def run_any(action: Callable[[AnyClient], Awaitable[T]]) -> T:
    """As `run`, but with --deployment, `action` gets the ShardedClient of that sharded
    deployment on the --url Cluster, whose reads show the whole deployment."""
    current = settings()
    if current.deployment is None:
        return run(action)
    if current.namespace is not None:
        raise click.UsageError("give --deployment or --namespace, not both")
    if current.url is None:
        raise click.UsageError("--deployment needs --url redis+cluster://host:port,...")
    deployment = current.deployment

    async def main() -> T:
        async with aqless.ShardedClient(current.url or "", deployment=deployment) as client:
            return await recorded(client, action)

    return anyio.run(main)


def _width(stream: TextIO) -> int | None:
    return None if stream.isatty() or "COLUMNS" in os.environ else _PIPE_WIDTH


def console() -> Console:
    """Standard output as rich sees it (colours only in a terminal)."""
    return Console(width=_width(sys.stdout), highlight=False)


def error_console() -> Console:
    return Console(stderr=True, width=_width(sys.stderr), highlight=False)


def emit(document: object, *views: RenderableType) -> None:
    """Print `document` as JSON with --json, else the rich `views`."""
    if settings().json:
        click.echo(to_json(document))
    else:
        out = console()
        for view in views:
            out.print(view)


def note(message: str) -> None:
    """A remark for the person at the terminal; on stderr, so stdout stays clean."""
    error_console().print(message)


@contextmanager
def progress(description: str, total: int) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr, drawn only when stderr is a terminal; yields `advance(n)`."""
    err = error_console()
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err, disable=not err.is_terminal) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)


def chunks(items: list[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
