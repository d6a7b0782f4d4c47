"""server: the embedded Valkey that ``Client()`` and the demo start when given no URL.

It keeps running after they exit (so the data persists); these commands show where it runs,
stop or start it, and wipe its data to start over. They need no URL and ignore ``--url``.
"""

from __future__ import annotations

from pathlib import Path

import click
import redis

from aqless import embedded
from aqless.cli.render import duration, fields, plural
from aqless.cli.runtime import NotFound, emit, note, settings

_FOLDER = click.option(
    "--folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The data folder (default: $AQLESS_HOME, else ~/.local/share/aqless/valkey).",
)


@click.group(short_help="See, start, stop or reset the embedded Valkey server.")
def server() -> None:
    """The embedded Valkey server that `Client()` and the demo start when given no URL.

    \b
    Examples:
      aqless server status
      aqless server stop
      aqless server reset
    """


@server.command(short_help="Where the embedded server runs, its memory and uptime.")
@_FOLDER
def status(folder: Path | None) -> None:
    """Where the embedded server runs (folder, socket, pid) and how it is doing; exit 1
    when none runs in the folder.

    \b
    Examples:
      aqless server status
      aqless --json server status --folder /srv/aqless
    """
    where = folder or embedded.default_folder()
    found = embedded.status(where)
    if found is None:
        raise NotFound(f"no embedded server runs in {where}")
    document = {
        "folder": str(found.server.folder),
        "url": found.server.url,
        "pid": found.server.pid,
        "version": found.version,
        "uptime_seconds": found.uptime_seconds,
        "used_memory": found.used_memory,
        "keys": found.keys,
        "clients": found.clients,
        "data_bytes": found.data_bytes,
    }
    view = fields(
        (
            ("folder", found.server.folder),
            ("url", found.server.url),
            ("pid", found.server.pid),
            ("version", f"Valkey {found.version}"),
            ("up", duration(found.uptime_seconds)),
            ("memory", _size(found.used_memory)),
            ("keys", found.keys),
            ("clients", found.clients),
            ("data on disk", _size(found.data_bytes)),
        )
    )
    emit(document, view)


@server.command(short_help="Start the embedded server (or find it running).")
@_FOLDER
def start(folder: Path | None) -> None:
    """Start the embedded server on the folder, or find the one already running there;
    prints its URL.

    \b
    Examples:
      aqless server start
      AQLESS_URL=$(aqless server start --folder /srv/aqless) aqless-run -q default
    """
    running = embedded.start(folder)
    emit({"url": running.url, "pid": running.pid}, running.url)


@server.command(short_help="Stop the embedded server (its data stays).")
@_FOLDER
def stop(folder: Path | None) -> None:
    """Shut the embedded server down, writing its data first; the next `Client()` starts
    it again on the same data. With --json: `{"folder": ..., "stopped": true|false}`.

    \b
    Examples:
      aqless server stop
    """
    where = folder or embedded.default_folder()
    stopped = embedded.stop(where)
    if settings().json:
        emit({"folder": str(where), "stopped": stopped})
    elif stopped:
        note(f"stopped the embedded server in {where}")
    else:
        note(f"no embedded server runs in {where}")


@server.command(short_help="Delete everything the embedded server keeps (asks first).")
@_FOLDER
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
def reset(folder: Path | None, yes: bool) -> None:
    """Delete every key of the embedded server, in every database: its jobs, queues,
    settings and limits. Use it to start over on a clean server.

    You are asked to confirm (--yes does not ask; without a terminal, --yes is needed). A
    stopped server is started for the reset and stopped again. With --json:
    `{"folder": ..., "deleted_keys": N}`.

    \b
    Examples:
      aqless server reset
      aqless server reset --yes --folder /srv/aqless
    """
    where = folder or embedded.default_folder()
    running = embedded.find(where)
    if running is None and not where.is_dir():
        emit({"folder": str(where), "deleted_keys": 0}, f"no embedded server data in {where}")
        return
    was_stopped = running is None
    running = running or embedded.start(where)
    try:
        found = embedded.status(where)
        keys = found.keys if found is not None else 0
        if not yes:
            question = f"delete every key ({keys}) of the embedded server in {where}?"
            click.confirm(question, abort=True, err=True)
        with redis.Redis(unix_socket_path=str(running.socket_path)) as connection:
            connection.flushall()
    finally:
        if was_stopped:
            embedded.stop(where)
    text = f"deleted {plural(keys, 'key')} of the embedded server in {where}"
    emit({"folder": str(where), "deleted_keys": keys}, text)


def _size(count: int) -> str:
    """``512 B``, ``1.5 MB``..."""
    if count < 1024:
        return f"{count} B"
    size = float(count)
    for unit in ("KB", "MB", "GB"):
        size /= 1024
        if size < 1024 or unit == "GB":
            break
    return f"{size:.1f} {unit}"


COMMANDS = (server,)
