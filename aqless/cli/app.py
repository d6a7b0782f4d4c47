"""The ``aqless`` group: global options, and the one place where errors become exit codes."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

import aqless
from aqless.cli import catalog
from aqless.cli.basics import NotFound, Settings, to_json

EXIT_CODES = """\b
Exit codes:
  0  done
  1  what was asked for does not exist (an unknown jid, queue, failure group, worker...;
     the closest known names are suggested)
  2  usage or setup error (a bad option, URL, JSON or value; a missing package)
  3  the server refused the command (its reason is printed)
  4  cannot connect to the server"""


class ServerRefused(click.ClickException):
    exit_code = 3


class CannotConnect(click.ClickException):
    exit_code = 4


class SetupError(click.ClickException):
    exit_code = 2


def translated(error: BaseException) -> click.ClickException | None:
    """The click exception (with its exit code) for an error of the client or server; for
    a task group's ExceptionGroup, that of the first error it holds that has one."""
    from redis import exceptions as redis_errors  # here: the start-up stays fast

    from aqless.ops.known import UnknownNameError

    if isinstance(error, BaseExceptionGroup):
        found = (translated(inner) for inner in error.exceptions)
        return next((mapped for mapped in found if mapped is not None), None)
    if isinstance(error, aqless.JobNotFoundError):
        return NotFound(error.detail)
    if isinstance(error, UnknownNameError):
        return NotFound(str(error))
    if isinstance(error, aqless.InvalidValueError):  # refused by aqless.rules, not the server
        return SetupError(error.detail)
    if isinstance(error, aqless.InvalidValueError):  # a bad input, named: a usage error
        return SetupError(str(error))
    if isinstance(error, aqless.ScriptError):
        return ServerRefused(f"the server refused {error.command}: {error.detail}")
    if isinstance(error, aqless.ConnectionLostError | redis_errors.ConnectionError):
        return CannotConnect(f"cannot connect to the server: {error}")
    if isinstance(error, aqless.ShardNotEmptyError):
        return ServerRefused(str(error))
    if isinstance(error, aqless.ConfigurationError | aqless.PayloadError):
        return SetupError(str(error))
    if isinstance(error, click.ClickException):
        return error
    return None


@contextmanager
def exit_codes() -> Iterator[None]:
    """Raises the click exception (with its documented exit code) for an aqless error."""
    try:
        yield
    except Exception as error:
        mapped = translated(error)
        if mapped is None or mapped is error:
            raise
        raise mapped from error


#: The error types of `--json`'s error document, by exit code (an `aborted` confirmation and
#: an `internal` crash exit 1 too).
ERROR_TYPES = {1: "not_found", 2: "usage", 3: "server_refused", 4: "cannot_connect"}


def error_document(error: BaseException) -> dict[str, dict[str, object]]:
    """What `--json` prints on stdout when a command fails: the error's type (one of
    ERROR_TYPES' or `aborted`, `internal`), its message and the exit code; `cause`: the
    aqless error class behind it, if any."""
    if isinstance(error, click.Abort):
        kind, message, code = "aborted", "aborted", 1
    elif isinstance(error, click.ClickException):
        code = error.exit_code
        kind, message = ERROR_TYPES.get(code, "usage"), error.format_message()
    else:
        kind, message, code = "internal", f"{type(error).__name__}: {error}", 1
    described: dict[str, object] = {"type": kind, "message": message, "exit_code": code}
    cause = error.__cause__
    if isinstance(cause, aqless.AqlessError):
        described["cause"] = type(cause).__name__
    return {"error": described}


def json_first(args: list[str]) -> list[str]:
    """`args` with `--json` moved to the front (the group's option), from wherever it
    stands before a `--`, so that `aqless peek emails --json` works."""
    end = args.index("--") if "--" in args else len(args)
    found = [arg for arg in args[:end] if arg == "--json"]
    return [*found, *(arg for arg in args[:end] if arg != "--json"), *args[end:]]


@contextmanager
def json_errors(wanted: bool) -> Iterator[None]:
    """With `wanted` (--json), a failure's error document on stdout; the error goes on (its
    message on stderr, its exit code)."""
    try:
        yield
    except click.exceptions.Exit:
        raise
    except (Exception, click.Abort) as error:
        if wanted:
            click.echo(to_json(error_document(error)))
        raise


class AqlessGroup(click.Group):
    """A click group that maps aqless errors to the documented exit codes, takes --json
    anywhere, and with it prints a failure's error document on stdout. Its commands are
    those of `aqless.cli.catalog`, each imported when it runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*catalog.BY_NAME, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = catalog.BY_NAME.get(cmd_name)
        if cmd_name in self.commands or entry is None:
            return super().get_command(ctx, cmd_name)
        module = importlib.import_module(f"aqless.cli.{entry.module}")
        command: click.Command = getattr(module, entry.attribute)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their short help, from the catalog (no command imported)."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            entry = catalog.BY_NAME.get(name)
            if entry is None:
                command = self.commands[name]
                if not command.hidden:
                    rows.append((name, command.get_short_help_str(limit)))
            else:
                short = click.Command(name, short_help=entry.short_help)
                rows.append((name, short.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.parent is None:
            args = json_first(args)
        with json_errors("--json" in args):
            return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        with json_errors(bool(ctx.params.get("as_json"))), exit_codes():
            return super().invoke(ctx)


@click.group(cls=AqlessGroup, epilog=EXIT_CODES, context_settings={"max_content_width": 100})
@click.option(
    "--url",
    envvar="AQLESS_URL",
    metavar="URL",
    help="The server: redis://, rediss://, unix://, redis+sentinel://h:p,h:p/service or "
    "redis+cluster://h:p,h:p (env AQLESS_URL; default: the embedded Valkey server).",
)
@click.option(
    "--namespace",
    envvar="AQLESS_NAMESPACE",
    metavar="NAME",
    help="Use the deployment whose keys are under NAME:ql: (env AQLESS_NAMESPACE).",
)
@click.option(
    "--deployment",
    envvar="AQLESS_DEPLOYMENT",
    metavar="NAME",
    help="Use the sharded deployment NAME on the --url Cluster (redis+cluster://...; "
    "env AQLESS_DEPLOYMENT): reads show every shard, `aqless shards` each one.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON document (JSON lines for `events`) instead of tables; on a "
    "failure, an error document. Accepted anywhere on the command line.",
)
@click.version_option(aqless.__version__, prog_name="aqless")
@click.pass_context
def cli(
    ctx: click.Context,
    url: str | None,
    namespace: str | None,
    deployment: str | None,
    as_json: bool,
) -> None:
    """Look at and operate a qless deployment: jobs, queues, workers, failures, stats.

    \b
    Examples:
      aqless queues                         every queue's counts
      aqless put emails app.Send '{"to": "ann"}' --priority 5
      aqless get 3f2a...                    a job: fields, data, history, failure
      aqless failed                         failure groups; `aqless failed GROUP` its jobs
      aqless retry GROUP                    requeue a group's failed jobs
      aqless --json queues | jq .           machine-readable output
      aqless events                         tail the events until Ctrl-C
      aqless --url redis+cluster://h:7000 --deployment billing shards
    """
    ctx.obj = Settings(
        url=url or None,
        namespace=namespace or None,
        json=as_json,
        deployment=deployment or None,
    )
