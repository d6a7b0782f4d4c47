"""events: tail the deployment's events, one line each, until Ctrl-C (or SIGTERM)."""

from __future__ import annotations

import dataclasses
import signal
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import click
from rich.console import Console
from rich.text import Text

from aqless.cli.runtime import AnyClient, console, note, run_any, settings, to_json
from aqless.events import TRACKED_CHANNELS, Event

CHANNELS = ("log", *TRACKED_CHANNELS)
_SHOWN = ("queue", "to", "worker", "group", "message", "option", "value")
_STYLES = {
    "put": "cyan",
    "popped": "green",
    "completed": "bright_black",
    "advanced": "blue",
    "failed": "bold red",
    "canceled": "yellow",
    "stalled": "yellow",
    "lock_lost": "yellow",
    "reconnected": "magenta",
}


def event_document(event: Event, received: float) -> dict[str, Any]:
    """The event's non-empty fields, and when it arrived (epoch seconds)."""
    fields = dataclasses.asdict(event)
    return {"time": received, **{name: value for name, value in fields.items() if value}}


def event_line(event: Event, received: float) -> Text:
    line = Text(time.strftime("%H:%M:%S", time.localtime(received)) + "  ", style="dim")
    line.append(f"{event.kind:<10}", style=_STYLES.get(event.kind, ""))
    line.append(f" {event.jid or '-'}")
    for name in _SHOWN:
        value = getattr(event, name)
        if value:
            line.append(f"  {name}=", style="dim")
            line.append(" ".join(value.split())[:120])
    return line


async def _tail(client: AnyClient, channels: tuple[str, ...], workers: tuple[str, ...]) -> None:
    as_json = settings().json
    out: Console = console()
    async with client.events(*channels, workers=workers) as stream:
        note(f"listening on {', '.join(stream.channels)} (Ctrl-C to stop)")
        async with _until_signal():
            async for event in stream:
                received = time.time()
                if as_json:
                    click.echo(to_json(event_document(event, received), indent=None))
                else:
                    out.print(event_line(event, received))


@asynccontextmanager
async def _until_signal() -> AsyncIterator[None]:
    """Cancel the block on SIGINT or SIGTERM, so that the stream unsubscribes and the
    command exits 0. Signals can only be caught in the main thread; elsewhere (tests),
    nothing is installed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    async with anyio.create_task_group() as group:

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _ in signals:
                    group.cancel_scope.cancel()

        group.start_soon(stop_on_signal)
        yield
        group.cancel_scope.cancel()


@click.command()
@click.argument("channels", nargs=-1, type=click.Choice(CHANNELS))
@click.option("--worker", "workers", multiple=True, help="Also a worker's channel (repeat).")
def events(channels: tuple[str, ...], workers: tuple[str, ...]) -> None:
    """Print events as they happen, one line each, until Ctrl-C.

    By default every job's events (the `log` channel) and the tracked jobs' channels; name
    CHANNELS to choose. With --json, one JSON object per line: the event's kind, jid,
    channel, raw payload, its other fields, and `time` (when it arrived).

    \b
    Examples:
      aqless events
      aqless events completed failed
      aqless --json events log | jq -c 'select(.kind == "failed")'
    """
    run_any(lambda client: _tail(client, channels, workers))


COMMANDS = (events,)
