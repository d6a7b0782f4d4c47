"""web: serve the dashboard (``aqless[web]``)."""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import TYPE_CHECKING

import anyio
import click

from aqless.cli.runtime import settings
from aqless.errors import needs_extra
from aqless.ops import audit

if TYPE_CHECKING:
    from aqless.web.auth import Users


def dashboard() -> ModuleType:
    """``aqless.web``, imported only when asked for: it needs the `web` extra."""
    with needs_extra("web", "the dashboard"):
        return importlib.import_module("aqless.web")


@click.command(short_help="Serve the web dashboard.")
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
@click.option(
    "--user",
    "users",
    multiple=True,
    metavar="NAME:SECRET[:ROLE]",
    envvar="AQLESS_WEB_USERS",
    help="Let only these users in (repeat; env AQLESS_WEB_USERS, separated by spaces): HTTP "
    "basic auth with NAME and SECRET, or a bearer token SECRET. ROLE: admin (default) or "
    "read-only. A command line is visible in `ps`: prefer --users-file or the env.",
)
@click.option(
    "--users-file",
    type=click.Path(dir_okay=False),
    envvar="AQLESS_WEB_USERS_FILE",
    help="Read users from this file, one NAME:SECRET[:ROLE] a line (# comments).",
)
@click.option(
    "--audit-length",
    type=click.IntRange(min=1),
    envvar="AQLESS_AUDIT_LENGTH",
    default=audit.DEFAULT_LENGTH,
    show_default=True,
    help="Entries the audit log of actions keeps (env AQLESS_AUDIT_LENGTH).",
)
@click.option(
    "--trusted-origin",
    "trusted_origins",
    multiple=True,
    metavar="URL",
    envvar="AQLESS_WEB_TRUSTED_ORIGINS",
    help="Accept actions from pages of this origin too, scheme://host[:port] (repeat; env "
    "AQLESS_WEB_TRUSTED_ORIGINS, separated by spaces): the address people use when a proxy "
    "in front changes the scheme or the host. Other sites' pages are refused.",
)
def web(
    url: str | None,
    namespace: str | None,
    deployment: str | None,
    host: str,
    port: int,
    read_only: bool,
    users: tuple[str, ...],
    users_file: str | None,
    audit_length: int,
    trusted_origins: tuple[str, ...],
) -> None:
    """Serve the web dashboard of a deployment until Ctrl-C or SIGTERM.

    \b
    Examples:
      aqless web                                 http://127.0.0.1:8000
      aqless web --url redis://db:6379 --host 0.0.0.0 --port 9000 --read-only
      aqless web --url redis://db:6379 --namespace billing
      aqless web --url redis+cluster://db:7000 --deployment billing
      aqless web --users-file /etc/aqless/users    ann:s3cret, bob:pw:read-only
    """
    module = dashboard()
    current = settings()
    known = dashboard_users(users, users_file)
    checked_origins(trusted_origins)
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
            users=known,
            audit_length=audit_length,
            trusted_origins=trusted_origins,
        )
    )


def dashboard_users(given: tuple[str, ...], path: str | None) -> Users | None:
    """The users of --user and --users-file; None (no authentication) for neither."""
    from aqless.web.auth import Users, parse_user, read_users  # the `web` extra: imported late

    credentials = [parse_user(text) for text in given]
    if path is not None:
        credentials += read_users(path)
        if not credentials:
            raise click.BadParameter(f"{path} names no user", param_hint="--users-file")
    return Users(credentials) if credentials else None


def checked_origins(given: tuple[str, ...]) -> None:
    """Refuse a --trusted-origin that names no origin before anything is served."""
    from aqless.web.security import Origins  # the `web` extra: imported late

    Origins(given)


COMMANDS = (web,)
