"""config: the deployment's settings (heartbeat, grace-period, jobs-history...)."""

from __future__ import annotations

import click

import aqless
from aqless.cli.render import table
from aqless.cli.runtime import NotFound, emit, run


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
    """


@config.command("list")
def list_options() -> None:
    """Every setting: the defaults overlaid with what was set.

    \b
    Example:
      aqless config list
    """
    options = run(lambda client: client.config.all())
    emit(options, table(None, ("option", "value"), sorted(options.items())))


@config.command(short_help="One setting's value.")
@click.argument("option")
def get(option: str) -> None:
    """One setting's value (its default when not set); exit 1 for an unknown one.

    \b
    Example:
      aqless config get grace-period
    """
    value = run(lambda client: client.config.get(option))
    if value is None:
        raise NotFound(f"no setting {option!r}")
    emit({option: value}, value)


@config.command("set", short_help="Set OPTION to VALUE.")
@click.argument("option")
@click.argument("value")
def set_option(option: str, value: str) -> None:
    """Set OPTION to VALUE, for every client and worker of the deployment.

    \b
    Examples:
      aqless config set heartbeat 120
      aqless config set emails-heartbeat 30
    """
    run(lambda client: client.config.set(option, value))
    emit({option: value}, f"{option} = {value}")


@config.command()
@click.argument("option")
def unset(option: str) -> None:
    """Forget OPTION's value: it goes back to its default.

    \b
    Example:
      aqless config unset heartbeat
    """

    async def act(client: aqless.Client) -> str | None:
        await client.config.unset(option)
        return await client.config.get(option)

    value = run(act)
    emit({option: value}, f"{option} unset" + ("" if value is None else f" (default {value})"))


COMMANDS = (config,)
