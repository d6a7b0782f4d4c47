"""script: print the Lua that other qless clients and tools can load."""

from __future__ import annotations

import click

from aqless import scripts


@click.command(short_help="Print the Lua script, or the function library.")
@click.option(
    "--library", is_flag=True, help="The Redis 7 / Valkey function library (FUNCTION LOAD)."
)
def script(library: bool) -> None:
    """Print the qless script (for SCRIPT LOAD / EVALSHA), or the function library.

    The script answers both the qless-core and the reqless-core commands; see
    docs/guides/other-clients.md.
    Needs no server.

    \b
    Examples:
      aqless script > qless.lua
      aqless script --library | redis-cli -x FUNCTION LOAD REPLACE
    """
    click.echo(scripts.build_library() if library else scripts.build(), nl=False)


COMMANDS = (script,)
