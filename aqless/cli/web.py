"""web: serve the dashboard (``aqless[web]``); ``python -m aqless.web`` runs this command too."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import anyio
import click

from aqless.cli.app import AqlessCommand
from aqless.cli.runtime import settings


class MissingExtra(click.ClickException):
    exit_code = 2


def dashboard() -> ModuleType:
    """``aqless.web``, imported only when asked for: it needs the `web` extra."""
    try:
        return importlib.import_module("aqless.web")
    except ImportError as error:
        raise MissingExtra("the dashboard needs: pip install 'aqless[web]'") from error


@click.command(cls=AqlessCommand, short_help="Serve the web dashboard.")
@click.option(
    "--url",
    metavar="URL",
    help="The server (default: aqless's --url, else AQLESS_URL, REDIS_URL, else the embedded "
    "Valkey server).",
)
@click.option(
    "--namespace",
    metavar="NAME",
    help="The deployment whose keys are under NAME:ql: (default: aqless's --namespace, else "
    "AQLESS_NAMESPACE).",
)
@click.option(
    "--deployment",
    metavar="NAME",
    help="The sharded deployment NAME on the --url Cluster (default: aqless's --deployment, "
    "else AQLESS_DEPLOYMENT).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to bind.")
@click.option("--port", default=8000, show_default=True, help="The port to listen on.")
@click.option("--read-only", is_flag=True, help="Show everything, change nothing.")
def web(
    url: str | None,
    namespace: str | None,
    deployment: str | None,
    host: str,
    port: int,
    read_only: bool,
) -> None:
    """Serve the web dashboard of a deployment until Ctrl-C or SIGTERM.

    `aqless web` and `python -m aqless.web` are the same command.

    \b
    Examples:
      aqless web                                 http://127.0.0.1:8000
      aqless web --url redis://db:6379 --host 0.0.0.0 --port 9000 --read-only
      python -m aqless.web --url redis://db:6379 --namespace billing
      aqless web --url redis+cluster://db:7000 --deployment billing
    """
    module = dashboard()
    current = settings()
    anyio.run(
        lambda: module.serve(
            url or current.url,
            host=host,
            port=port,
            read_only=read_only,
            namespace=namespace or current.namespace or os.environ.get("AQLESS_NAMESPACE") or None,
            deployment=deployment
            or current.deployment
            or os.environ.get("AQLESS_DEPLOYMENT")
            or None,
        )
    )


COMMANDS = (web,)
