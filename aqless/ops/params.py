"""Command-line values checked by their rule (`aqless.rules`), for aqless-run's options and
the admin command's: a value typed is refused in the same words as the same value given to
the client (``--prefetch 1.5`` and ``Worker(prefetch=1.5)``: "prefetch must be a whole
number from 0, not 1.5"), as a usage error (exit status 2)."""

from __future__ import annotations

import datetime
from typing import Any, Final

import click

from aqless import rules
from aqless.errors import InvalidValueError

#: The context of a command whose arguments may be negative numbers (``config set heartbeat
#: -5``): a word starting with a dash that names no option is an argument, so that its rule,
#: not "no such option", refuses it.
NUMBERS_MAY_BE_NEGATIVE: Final = {"ignore_unknown_options": True}


class Ruled(click.ParamType[Any, Any]):
    """A value parsed and checked by the rule named `rule` (``count``, ``worker.prefetch``)."""

    def __init__(self, rule: str) -> None:
        self.rule = rule
        kind = rules.RULES[rule].kind
        self.name = {"whole": "integer", "number": "number"}.get(kind, "text")
        self._choices = rules.RULES[rule].choices

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str | None:
        """A choice's values, as ``--help`` shows them: ``[ordered|round-robin|shuffled]``."""
        return f"[{'|'.join(self._choices)}]" if self._choices else None

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            if not isinstance(value, str):  # a default, or a value given in code
                return rules.check(self.rule, value, "aqless")
            return rules.parse(self.rule, value, "aqless")
        except InvalidValueError as refused:
            self.fail(refused.detail, param, ctx)

    def __repr__(self) -> str:
        return f"Ruled({self.rule!r})"


def parse_moment(text: str) -> datetime.datetime | float:
    """A moment typed by an operator (``aqless recurring backfill``, the dashboard's backfill
    form): a unix time, or an ISO date or time (naive: the reader decides its zone);
    ValueError for anything else."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{text!r} is neither an ISO date or time nor a unix time") from None
