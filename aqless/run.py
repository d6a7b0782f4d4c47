"""``aqless-run``: the worker command.

Every option can also come from an environment variable (``AQLESS_URL``, ``AQLESS_QUEUES``,
``AQLESS_CONCURRENCY``...; shown in ``--help``). With ``--processes`` (even 1), or with
``--max-jobs``/``--max-memory``, a supervisor runs the worker processes and replaces each one
that exits (see aqless._worker.supervisor); a worker that reached one of those limits exits with
``_process.EXIT_RECYCLE`` to be replaced at once, one that was stopped or (``--burst``) found
no more work exits 0. Its other exit statuses are those of the ``aqless`` command (EXIT_CODES).
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import logging
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import click
from anyio.abc import TaskStatus

from aqless._connection.server_checks import EvictingServerError
from aqless._version import __version__
from aqless._worker import defaults
from aqless._worker import logs as _logs
from aqless._worker import process as _process
from aqless._worker.middleware import Middleware
from aqless._worker.outage import reason
from aqless._worker.outcomes import Backoff
from aqless._worker.reach import reach_server
from aqless._worker.settings import Setting, WorkerSettings, setting_of
from aqless.client import Client
from aqless.errors import (
    AqlessError,
    ConfigurationError,
    ConnectionLostError,
    ScriptError,
    needs_extra,
)
from aqless.handlers import Handlers
from aqless.ops.params import Ruled
from aqless.worker import Worker

if TYPE_CHECKING:
    from aqless.outbox import Relay

__all__ = ["RunOptions", "main"]

# named by hand, not __name__: run as `python -m aqless.run`, this module is `__main__`
logger = logging.getLogger("aqless.run")

# the same exit statuses as the ``aqless`` command's (aqless.cli.app; a test compares them)
EXIT_USAGE = 2  # a bad option or argument, job code that cannot be imported, a bad URL
EXIT_SERVER_REFUSED = 3  # the server refused a call (its ACL, a script's refusal)
EXIT_UNREACHABLE = 4  # the server cannot be reached (within --wait-for-server)
#: aqless-run's exit statuses, for --help
EXIT_CODES = f"""\b
Exit codes:
  0   stopped by a signal, or --burst found no more work
  1   the worker crashed (a bug: its traceback is logged)
  {EXIT_USAGE}   usage or setup error (a bad option, URL or module; a server that evicts keys)
  {EXIT_SERVER_REFUSED}   the server refused a call (its reason is printed)
  {EXIT_UNREACHABLE}   cannot connect to the server (within --wait-for-server)
  {_process.EXIT_RECYCLE}  reached --max-jobs or --max-memory (its supervisor replaces it)
  130 interrupted before it could stop (Ctrl-C at start)"""


@dataclass(frozen=True, slots=True)
class RunOptions:
    """The worker's configuration, as the command line gives it."""

    queues: tuple[str, ...]
    #: the worker's settings (each an option of its own, made from WorkerSettings' fields)
    settings: WorkerSettings = dataclasses.field(default_factory=WorkerSettings)
    url: str | None = None
    namespace: str | None = None
    name: str | None = None
    imports: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    registries: tuple[str, ...] = ()
    middleware: tuple[str, ...] = ()
    backoff: float | None = None
    backoff_cap: float = defaults.BACKOFF_CAP
    allow_eviction: bool = False
    wait_for_server: float = 0.0
    supervised: bool = False
    outbox_url: str | None = None

    def handlers(self) -> Handlers:
        """The registry: the named Handlers objects merged, plus the allowed modules.
        Imports what the command line names (the operator's choice, never a payload's)."""
        handlers = Handlers(allow=(*self.imports, *self.allow))
        for module in self.imports:
            importlib.import_module(module)
        for reference in self.registries:
            registry = load_reference(reference)
            if not isinstance(registry, Handlers):
                raise ConfigurationError(f"{reference} is not an aqless.Handlers")
            handlers.merge(registry)
        return handlers

    def relay(self, client: Client) -> Relay | None:
        """The relay of --outbox-url (None without it), made now: the outbox's extra and
        the database's driver are imported here, so a missing one stops the start (and
        --check) with the ConfigurationError naming the extra."""
        if self.outbox_url is None:
            return None
        with needs_extra("outbox", "--outbox-url"):
            from aqless.outbox import Relay
        return Relay(client, self.outbox_url)

    def client(self, name: str | None = None) -> Client:
        """The client, strict about the server's eviction policy unless --allow-eviction."""
        return Client(
            self.url, namespace=self.namespace, worker_name=name, strict=not self.allow_eviction
        )

    def worker(self, client: Client, handlers: Handlers | None = None) -> Worker:
        """The worker, with `handlers` if already made (else they are made now)."""
        return Worker(
            client,
            self.queues,
            self.settings,
            handlers=handlers if handlers is not None else self.handlers(),
            backoff=None if self.backoff is None else Backoff(self.backoff, cap=self.backoff_cap),
            middleware=[self._hook(reference) for reference in self.middleware],
        )

    @staticmethod
    def _hook(reference: str) -> Middleware:
        hook = load_reference(reference)
        if not callable(hook):
            raise ConfigurationError(f"middleware {reference} is not callable")
        return hook  # type: ignore[no-any-return]


def load_reference(reference: str) -> Any:
    """The object ``module:attribute`` names (command-line configuration only)."""
    module, _, attribute = reference.partition(":")
    if not module or not attribute:
        raise ConfigurationError(f"expected module:attribute, got {reference!r}")
    try:
        value = importlib.import_module(module)
    except ImportError as error:
        raise ConfigurationError(f"cannot import {module!r}: {error}") from error
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise ConfigurationError(f"{module!r} has no attribute {attribute!r}")
        value = getattr(value, part)
    return value


# -- running ----------------------------------------------------------------------------------


async def serve(options: RunOptions) -> int:
    """Run one worker until a signal stops it; the process's exit status."""
    async with options.client(options.name) as client:
        worker = options.worker(client)
        relay = options.relay(client)
        waiting = anyio.CancelScope()  # for the server, ended by a stop meanwhile
        async with anyio.create_task_group() as group:
            await group.start(_obey_signals, worker, waiting.cancel)  # before anything serves
            if options.supervised:
                group.start_soon(_stop_when_orphaned, worker)
            with waiting:  # an unreachable server: one clear error (after --wait-for-server)
                await reach_server(client, wait=options.wait_for_server)
            if waiting.cancelled_caught:
                group.cancel_scope.cancel()
                return 0
            if relay is not None:
                group.start_soon(_relay_outbox, relay)
            # the heap built so far (modules, job code, connections) lives as long as the
            # process: out of the cyclic collector's full passes, whose pauses (tens of ms)
            # would hold up the pickups and heartbeats behind them
            gc.freeze()
            await worker.run()
            group.cancel_scope.cancel()
    return _process.EXIT_RECYCLE if worker.limit_reached else 0


async def _relay_outbox(relay: Relay) -> None:
    """Relay the transactional outbox beside the worker (aqless.outbox)."""
    async with relay:
        await relay.run()


async def _obey_signals(
    worker: Worker,
    stopped: Callable[[], None] = lambda: None,
    *,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Obey the control signals for ever; call `stopped` on a stop (TERM, INT, QUIT)."""
    from aqless._worker import stacks as _stacks

    with anyio.open_signal_receiver(*_process.CONTROL_SIGNALS) as received:
        _process.obey_control_signals()
        task_status.started()
        async for number in received:
            if number == signal.SIGHUP:  # the log file first, so that it has this line
                reopened = _logs.reopen_files()
                logger.warning(
                    "worker %s: SIGHUP: %s",
                    worker.name,
                    f"reopened {', '.join(reopened)}" if reopened else "nothing to do",
                )
                continue
            logger.warning("worker %s: %s", worker.name, signal.Signals(number).name)
            if number in (signal.SIGTERM, signal.SIGINT):
                worker.stop()
                stopped()
            elif number == signal.SIGQUIT:
                worker.finish()
                stopped()
            elif number == signal.SIGUSR1:
                worker.hand_back_running("operator")
            elif number == signal.SIGUSR2:
                worker.pause()
                _stacks.log_all(logger)
            else:
                worker.resume_popping()


async def _stop_when_orphaned(worker: Worker) -> None:
    """A supervised worker whose supervisor died (even by SIGKILL) stops on its own."""
    parent = os.getppid()
    while os.getppid() == parent:  # noqa: ASYNC110  # no event tells of a parent's death
        await anyio.sleep(1.0)
    logger.warning("worker %s: the supervisor is gone; stopping", worker.name)
    worker.stop()


async def preflight(options: RunOptions) -> int:
    """Before a supervisor starts workers: reach the server, and refuse one that evicts
    keys (or an outbox whose extra or driver is missing), once, rather than in every worker
    it would replace."""
    async with options.client() as client:
        relay = options.relay(client)  # a missing extra or driver: once, not in every worker
        if relay is not None:
            await relay.aclose()
        await reach_server(client, wait=options.wait_for_server)
        return 0


async def check(options: RunOptions) -> int:
    """Validate the configuration and reach the server; print what was found."""
    try:
        handlers = options.handlers()
        async with options.client() as client:
            worker = options.worker(client, handlers)
            relay = options.relay(client)
            await reach_server(client, wait=options.wait_for_server)
            config = await client.config.all()
            queues = await worker.selection.resolve(client)
            outbox = None if relay is None else await _outbox_waiting(relay)
    except (AqlessError, ImportError) as error:
        click.echo(f"check failed: {error}", err=True)
        return exit_code_of(error)
    click.echo(f"server      {client.url}  (heartbeat {config.get('heartbeat', '?')} s)")
    if outbox is not None:
        click.echo(f"outbox      {outbox}")
    isolated = ", sync code in child processes" if options.settings.isolate else ""
    slots = options.settings.concurrency
    click.echo(f"worker      {client.worker_name}, {slots} slots{isolated}")
    click.echo(f"queues      {', '.join(queues) or '(none exist yet)'}")
    click.echo(f"registered  {', '.join(handlers.registered) or '(none)'}")
    click.echo(f"allowed     {', '.join(handlers.allowed) or '(none)'}")
    return 0


async def _outbox_waiting(relay: Relay) -> str:
    """The outbox's database (its password hidden) and what waits in its table, read as
    the relay will; a database that cannot be read is a ConfigurationError."""
    from sqlalchemy.exc import SQLAlchemyError

    database = relay.engine.url.render_as_string(hide_password=True)
    try:
        async with relay:
            stats = await relay.stats()
    except SQLAlchemyError as error:
        raise ConfigurationError(f"the outbox database {database}: {error}") from error
    return f"{database}  ({stats.pending} puts waiting)"


def run_async(function: Any, options: RunOptions) -> int:
    """anyio.run with uvloop when it is installed."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return int(anyio.run(function, options))
    return int(anyio.run(function, options, backend_options={"use_uvloop": True}))


def exit_code_of(error: BaseException) -> int:
    """The exit status for an error that stopped aqless-run (see EXIT_CODES); for a task
    group's ExceptionGroup, that of the first error it holds that has one."""
    if isinstance(error, BaseExceptionGroup):
        codes = (exit_code_of(inner) for inner in error.exceptions)
        return next((code for code in codes if code != 1), 1)
    if isinstance(error, ConfigurationError | ImportError):  # an evicting server included
        return EXIT_USAGE
    if isinstance(error, ConnectionLostError):
        return EXIT_UNREACHABLE
    if isinstance(error, ScriptError):
        return EXIT_SERVER_REFUSED
    return 1


def _stopped_by(error: BaseException) -> click.ClickException:
    """The click exception that prints `error` and exits with its status."""
    if isinstance(error, BaseExceptionGroup):
        inner = next((e for e in error.exceptions if exit_code_of(e) != 1), error.exceptions[0])
        return _stopped_by(inner)
    message = str(error)
    if isinstance(error, EvictingServerError):
        message = f"{error}, or start with --allow-eviction"
    elif isinstance(error, ScriptError):
        message = f"the server refused the call: {error.detail}"
    elif isinstance(error, ConnectionLostError) and not message.startswith("cannot connect"):
        message = f"lost the server: {reason(error)}"  # not the name of the call
    code = exit_code_of(error)
    stopped = next(kind for kind in _STOPPED if kind.exit_code == code)
    return stopped(message)


class SetupError(click.ClickException):
    exit_code = EXIT_USAGE


class ServerRefused(click.ClickException):
    exit_code = EXIT_SERVER_REFUSED


class CannotConnect(click.ClickException):
    exit_code = EXIT_UNREACHABLE


_STOPPED: tuple[type[click.ClickException], ...] = (SetupError, ServerRefused, CannotConnect)


# -- the command --------------------------------------------------------------------------------


Command = TypeVar("Command", bound=Callable[..., Any])


def option(*declarations: str, **settings: Any) -> Callable[[Command], Command]:
    """click.option, with its environment variable shown in --help."""
    return click.option(*declarations, show_envvar=True, **settings)


def setting_options(command: Command) -> Command:
    """One option for each field of WorkerSettings (its flags, environment variable, help,
    default and rule are the field's: aqless._worker.settings), in their order."""
    for each in reversed(dataclasses.fields(WorkerSettings)):
        command = _setting_option(each.name, setting_of(each), each.default)(command)
    return command


def _setting_option(name: str, how: Setting, default: Any) -> Callable[[Command], Command]:
    declared: dict[str, Any] = {"envvar": how.env(name), "help": how.help}
    if how.is_flag():
        declared["is_flag"] = True
    elif how.folder:
        declared["type"] = click.Path(file_okay=False, resolve_path=True, path_type=Path)
    else:
        declared["type"] = Ruled(how.rule or "")
    if default is not None and not how.is_flag():
        declared.update(default=default, show_default=True)
    if how.metavar:
        declared["metavar"] = how.metavar
    if how.scale != 1:  # the option's unit (MB) in the setting's (bytes)
        declared["callback"] = lambda _ctx, _param, given: (
            None if given is None else given * how.scale
        )
    return option(*how.flags(name), name, **declared)


def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    """Values given repeatedly or comma/space separated (as environment variables are)."""
    return tuple(part for value in values for part in value.replace(",", " ").split())


@click.command(
    epilog=EXIT_CODES,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.argument("queue_args", metavar="[QUEUE]...", nargs=-1)
@option(
    "-q",
    "--queue",
    "queues",
    multiple=True,
    envvar="AQLESS_QUEUES",
    help="A queue to serve: a name, a glob (mail-*), a negation (!mail-spam) or "
    "@identifier. Repeatable; AQLESS_QUEUES takes a comma-separated list.",
)
@option(
    "--url",
    envvar="AQLESS_URL",
    help="redis://, rediss://, unix://, redis+sentinel://h:p,h:p/service or "
    "redis+cluster://h:p,h:p server URL (default: the embedded Valkey).",
)
@option("--namespace", envvar="AQLESS_NAMESPACE", help="Key namespace (<ns>:ql:).")
@option(
    "-n",
    "--name",
    envvar="AQLESS_WORKER_NAME",
    help="Worker name (default: <host>-<pid>; with --processes, <name>-<i>).",
)
@setting_options
@option(
    "-i",
    "--import",
    "imports",
    multiple=True,
    envvar="AQLESS_IMPORT",
    help="Import this module at start and allow jobs to name its classes "
    "(and its submodules'). Repeatable.",
)
@option(
    "--allow",
    multiple=True,
    envvar="AQLESS_ALLOW",
    help="Allow jobs to name classes of this module and its submodules, imported "
    "when first needed. Repeatable. Nothing else is ever imported.",
)
@option(
    "--handlers",
    "registries",
    multiple=True,
    envvar="AQLESS_HANDLERS",
    help="An aqless.Handlers registry as module:attribute. Repeatable.",
)
@option(
    "--middleware",
    multiple=True,
    envvar="AQLESS_MIDDLEWARE",
    help="An around_perform hook as module:attribute, outermost first. Repeatable.",
)
@option(
    "--backoff",
    type=click.FloatRange(min=0, min_open=True),
    envvar="AQLESS_BACKOFF",
    help="Retry failing jobs after BACKOFF, 2xBACKOFF, 4xBACKOFF... seconds "
    "(with jitter) while they have retries left, instead of failing them.",
)
@option(
    "--backoff-cap",
    type=click.FloatRange(min=0),
    default=defaults.BACKOFF_CAP,
    show_default=True,
    envvar="AQLESS_BACKOFF_CAP",
    help="The longest backoff delay.",
)
@option(
    "-p",
    "--processes",
    type=click.IntRange(min=1),
    show_default="1, without a supervisor",
    envvar="AQLESS_PROCESSES",
    help="Worker processes, under a supervisor (which replaces any that dies, even with -p 1).",
)
@option(
    "--path",
    "paths",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, resolve_path=True, path_type=Path),
    envvar="AQLESS_PATH",
    help="Put this folder first on the module path before importing the job code and "
    "middleware (like PYTHONPATH). Repeatable; AQLESS_PATH takes a "
    f"{os.pathsep!r}-separated list.",
)
@option(
    "--wait-for-server",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    metavar="SECONDS",
    envvar="AQLESS_WAIT_FOR_SERVER",
    help="At start, try to reach the server for up to SECONDS (a pause growing to 10 s "
    "between attempts, each one logged) before giving up with exit status 4.",
)
@option(
    "--allow-eviction",
    is_flag=True,
    envvar="AQLESS_ALLOW_EVICTION",
    help="Start even though the server's maxmemory-policy evicts keys (which may delete "
    "jobs): a warning instead of a refusal.",
)
@option(
    "--outbox-url",
    envvar="AQLESS_OUTBOX_URL",
    help="Also relay the transactional outbox (aqless.outbox) of this database, as "
    "SQLAlchemy names it (postgresql+psycopg://..., sqlite:///app.db).",
)
@option("-v", "--verbose", count=True, help="-v: info, -vv: debug.")
@option("--log-json", is_flag=True, envvar="AQLESS_LOG_JSON", help="Log JSON lines.")
@option(
    "--log-file",
    type=click.Path(dir_okay=False, resolve_path=True, path_type=Path),
    envvar="AQLESS_LOG_FILE",
    help="Append the log to this file instead of stderr (every process of --processes "
    "to the same file; SIGHUP reopens it after a rotation).",
)
@option(
    "--check",
    "check_only",
    is_flag=True,
    help="Validate the configuration and the connection (with --outbox-url, the outbox's "
    "extra, database driver and table too), then exit.",
)
@option("--child", is_flag=True, hidden=True)
@click.version_option(__version__, prog_name="aqless-run")
def main(
    queue_args: tuple[str, ...],
    queues: tuple[str, ...],
    processes: int | None,
    paths: tuple[Path, ...],
    verbose: int,
    log_json: bool,
    log_file: Path | None,
    check_only: bool,
    child: bool,
    **settings: Any,
) -> None:
    """Run aqless workers: pop jobs from QUEUEs and run them, CONCURRENCY at a time.

    \b
    Signals: TERM/INT  stop popping, give running jobs --grace seconds, hand back the rest
             QUIT      stop popping, finish the running jobs, exit
             USR1      cancel running jobs (handed back) and go on
             USR2      pause popping and log every task's stack;  CONT: resume
             HUP       reopen --log-file (nothing else)
    \b
    Example: aqless-run -c 50 -i app.jobs emails 'reports-*'
    """
    _logs.configure(verbose, structured=log_json, file=log_file)
    if os.getcwd() not in sys.path:  # modules of the project being run, as python -m does
        sys.path.insert(0, os.getcwd())
    sys.path[:0] = [str(path) for path in paths]
    names = _split((*queue_args, *queues))
    settings.update(
        imports=_split(settings["imports"]),
        allow=_split(settings["allow"]),
        registries=_split(settings["registries"]),
        middleware=_split(settings["middleware"]),
    )
    if not names:
        raise click.UsageError("name at least one queue (argument, -q or AQLESS_QUEUES)")
    worker_settings = {f.name: settings.pop(f.name) for f in dataclasses.fields(WorkerSettings)}
    try:
        options = RunOptions(
            queues=names, settings=WorkerSettings(**worker_settings), supervised=child, **settings
        )
        if check_only:
            sys.exit(run_async(check, options))
        recycling = options.settings.max_jobs is not None or options.settings.max_memory is not None
        if not child and (processes is not None or recycling):
            from aqless._worker import supervisor

            run_async(preflight, options)
            sys.exit(
                supervisor.run(
                    sys.argv[1:],
                    processes=processes or 1,
                    name=options.name,
                    burst=options.settings.burst,
                )
            )
        sys.exit(run_async(serve, options))
    except (AqlessError, ImportError, BaseExceptionGroup) as error:
        if exit_code_of(error) == 1:  # a bug: its traceback
            raise
        raise _stopped_by(error) from error
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
