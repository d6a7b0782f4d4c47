"""config: the deployment's settings (heartbeat, grace-period, jobs-history...)."""

from __future__ import annotations

import json
from typing import Any, TextIO

import click

from aqless.cli.render import plural, table
from aqless.cli.runtime import AnyClient, NotFound, emit, run_any, to_json
from aqless.ops.params import NUMBERS_MAY_BE_NEGATIVE
from aqless.scripts.options import checked_value, describe


@click.group()
def config() -> None:
    """Read and change the deployment's settings.

    \b
    Examples:
      aqless config list
      aqless config get heartbeat
      aqless config set heartbeat 120
      aqless config set emails-heartbeat 30      one queue's lock duration
      aqless config unset heartbeat              back to the default
      aqless config dump > config.json           every setting, as JSON
      aqless config load config.json --clear     set them all (qless-config)
    """


@config.command("list", short_help="Every setting, with its unit and meaning.")
def list_options() -> None:
    """Every setting: the defaults overlaid with what was set, with its unit and meaning.

    \b
    Example:
      aqless config list
    """
    options = run_any(lambda client: client.config.all())
    rows = []
    for name, value in sorted(options.items()):
        described = describe(name)
        unit, meaning = (
            ("", "unknown to the scripts")
            if described is None
            else (described.unit, f"{described.meaning} ({described.expected()})")
        )
        rows.append((name, value, unit, meaning))
    emit(options, table(None, ("option", "value", "unit", "meaning"), rows))


@config.command(short_help="One setting's value.")
@click.argument("option")
def get(option: str) -> None:
    """One setting's value (its default when not set); exit 1 for an unknown one.

    \b
    Example:
      aqless config get grace-period
    """
    value = run_any(lambda client: client.config.get(option))
    if value is None:
        raise NotFound(f"no setting {option!r}")
    emit({option: value}, value)


FORCE = click.option(
    "--force",
    is_flag=True,
    help="Also set options the scripts do not read (another qless client's own).",
)


@config.command("set", short_help="Set OPTION to VALUE.", context_settings=NUMBERS_MAY_BE_NEGATIVE)
@click.argument("option")
@click.argument("value")
@FORCE
def set_option(option: str, value: str, force: bool) -> None:
    """Set OPTION to VALUE, for every client and worker of the deployment.

    A value outside its option's rule (heartbeat: a positive number of seconds;
    grace-period, jobs-history: seconds from 0; jobs-history-count, max-job-history: whole
    numbers from 0...; `aqless config list` shows each) is refused (exit 2), naming the
    option and what it must be; so is an option the scripts do not read, unless --force.

    \b
    Examples:
      aqless config set heartbeat 120
      aqless config set emails-heartbeat 30
      aqless config set my-client-option on --force
    """
    checked_value(option, value, force=force)
    run_any(lambda client: client.config.set(option, value, force=force))
    emit({option: value}, f"{option} = {value}")


@config.command()
@click.argument("option")
def unset(option: str) -> None:
    """Forget OPTION's value: it goes back to its default.

    \b
    Example:
      aqless config unset heartbeat
    """

    async def act(client: AnyClient) -> str | None:
        await client.config.unset(option)
        return await client.config.get(option)

    value = run_any(act)
    emit({option: value}, f"{option} unset" + ("" if value is None else f" (default {value})"))


@config.command(short_help="Every setting as one JSON object.")
def dump() -> None:
    """Print every setting (the defaults overlaid with what was set) as one JSON object,
    for `aqless config load` on this or another deployment.

    \b
    Example:
      aqless config dump > config.json
    """
    click.echo(to_json(dict(sorted(run_any(lambda client: client.config.all()).items()))))


def settings_file(ctx: click.Context, param: click.Parameter, file: TextIO) -> dict[str, str]:
    """The settings of a JSON object whose values are strings or numbers (a usage error
    otherwise: then nothing is set)."""
    try:
        document: Any = json.load(file)
    except ValueError as error:
        raise click.BadParameter(f"not JSON: {error}", ctx, param) from error
    finally:
        if getattr(file, "name", "-") not in ("-", "<stdin>"):
            file.close()  # read whole: closed now, also when it is refused below
    if not isinstance(document, dict):
        raise click.BadParameter("not a JSON object of settings", ctx, param)
    for option, value in document.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise click.BadParameter(
                f"{option!r} must be a string or a number, not {json.dumps(value)}", ctx, param
            )
    return {option: str(value) for option, value in document.items()}


@config.command(short_help="Set every setting of a JSON object (a file, or - for stdin).")
@click.argument("settings", type=click.File("r"), callback=settings_file, metavar="FILE|-")
@click.option("--clear", is_flag=True, help="First unset every setting the file does not name.")
@FORCE
def load(settings: dict[str, str], clear: bool, force: bool) -> None:
    """Set each setting of a JSON object such as `aqless config dump` prints (qless-config).

    With --clear, every setting the file does not name goes back to its default. The file
    is checked whole before anything is changed: each value by its option's rule, and an
    option the scripts do not read is refused unless --force.

    \b
    Examples:
      aqless config load config.json
      aqless --url redis://staging config dump | aqless config load - --clear
    """

    for option, value in settings.items():
        checked_value(option, value, force=force)

    async def act(client: AnyClient) -> list[str]:
        unset = sorted(set(await client.config.all()) - set(settings)) if clear else []
        for option in unset:
            await client.config.unset(option)
        for option, value in settings.items():
            await client.config.set(option, value, force=force)
        return unset

    unset = run_any(act)
    message = f"set {plural(len(settings), 'setting')}"
    emit({"set": settings, "unset": unset}, message + (f", unset {len(unset)}" if clear else ""))


COMMANDS = (config,)
