"""Parsing command-line values that click has no type for."""

from __future__ import annotations

import json
from typing import Any

import click


def parse_json(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    """An option's or argument's JSON text, decoded (a usage error if it is not JSON)."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except ValueError as error:
        raise click.BadParameter(f"not JSON: {error}", ctx, param) from error


def names(values: tuple[str, ...]) -> list[str] | None:
    """Repeated options, each possibly comma-separated; None when not given."""
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    return names or None
