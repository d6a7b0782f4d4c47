"""Parsing command-line values that click has no type for."""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from typing import Any

import click

from aqless import rules
from aqless.errors import InvalidValueError


def parse_json(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    """An option's or argument's JSON text, decoded (a usage error if it is not JSON)."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except ValueError as error:
        raise click.BadParameter(f"not JSON: {error}", ctx, param) from error


def rule_checked(rule: str) -> Callable[[click.Context, click.Parameter, str | None], Any]:
    """A click callback parsing an option's text with `rule` (aqless.rules): a usage error
    naming the option and the rule, before anything is sent."""

    def parse(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
        if value is None:
            return None
        try:
            return rules.parse(rule, value, ctx.command_path)
        except InvalidValueError as error:
            raise click.BadParameter(f"{rule} must be {error.expected}", ctx, param) from None

    return parse


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
