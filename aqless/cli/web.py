"""web: serve the dashboard (``aqless[web]``)."""

from __future__ import annotations

import importlib
from types import ModuleType

import anyio
import click

from aqless.cli.runtime import settings


class MissingExtra(click.ClickException):
    exit_code = 2


def dashboard() -> ModuleType:
    """``aqless.web``, imported only when asked for: it needs the `web` extra."""
    try:
        return importlib.import_module("aqless.web")
    except ImportError as error:
        raise MissingExtra("the dashboard needs: pip install 'aqless[web]'") from error


@click.command(short_help="Serve the web dashboard.")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to bind.")
@click.option("--port", default=8000, show_default=True, help="The port to listen on.")
@click.option("--read-only", is_flag=True, help="Show everything, change nothing.")
def web(host: str, port: int, read_only: bool) -> None:
    """Serve the web dashboard for the deployment of --url/--namespace.

    \b
    Examples:
      aqless web                                 http://127.0.0.1:8000
      aqless --url redis://db:6379 web --host 0.0.0.0 --port 9000 --read-only
    """
    module = dashboard()
    current = settings()
    anyio.run(
        lambda: module.serve(
            current.url, host=host, port=port, read_only=read_only, namespace=current.namespace
        )
    )


COMMANDS = (web,)
