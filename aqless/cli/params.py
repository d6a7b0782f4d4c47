"""Parsing command-line values that click has no type for."""

from __future__ import annotations

import datetime
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


def aware_time(text: str) -> datetime.datetime:
    """An ISO 8601 time with its UTC offset (ValueError without one: its moment is unknown)."""
    moment = datetime.datetime.fromisoformat(text)
    if moment.utcoffset() is None:
        raise ValueError(
            f"{text!r} has no UTC offset, so its moment is unknown: add one"
            " (2030-01-01T09:00:00+01:00, or Z for UTC)"
        )
    return moment


def parse_time(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> datetime.datetime | None:
    """An option's ISO 8601 time with its UTC offset (a usage error without one)."""
    if value is None:
        return None
    try:
        return aware_time(value)
    except ValueError as error:
        raise click.BadParameter(str(error), ctx, param) from error
