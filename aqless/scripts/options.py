"""The configuration options the scripts read: each one's rule (its meaning, unit, type and
range) is `aqless.rules.CONFIG`'s, so the client's check (`checked_value`), the CLI, the
dashboard's config page and the reference read one table. A value outside its rule is
refused before anything is sent: stored, the scripts would read a value they cannot use
(``heartbeat`` = ``banana`` silently became 60 s, ``heartbeat`` = -5 lost every lock at
once).

Options named after a queue (``<queue>-heartbeat``...) are described by their suffix. A name
no rule knows is refused unless forced: other qless clients keep options of their own.
"""

from __future__ import annotations

from typing import Final

from aqless.errors import ConfigValueError, InvalidValueError
from aqless.rules import CONFIG, Rule
from aqless.rules import PER_QUEUE as QUEUE_PREFIX

#: The options every queue shares, by name.
OPTIONS: Final[dict[str, Rule]] = {
    name: rule for name, rule in CONFIG.items() if not name.startswith(QUEUE_PREFIX)
}

#: A queue's own options, by suffix: ``emails-heartbeat``...
PER_QUEUE: Final[dict[str, Rule]] = {
    name.removeprefix(QUEUE_PREFIX): rule
    for name, rule in CONFIG.items()
    if name.startswith(QUEUE_PREFIX)
}


#: What an option's name must be, unless forced.
UNKNOWN: Final = "an option the scripts read (force it to set another client's)"


def describe(option: str) -> Rule | None:
    """`option`'s rule, a global or per-queue one; None for one the scripts do not read."""
    known = OPTIONS.get(option)
    if known is not None:
        return known
    for suffix, described in PER_QUEUE.items():
        if option.endswith(suffix) and len(option) > len(suffix):
            return described
    return None


def checked_value(option: str, value: str | float, *, force: bool = False) -> str | float:
    """`value` if it keeps `option`'s rule (a number given as text stays text), else
    ConfigValueError naming the option and what it must be. An option no rule knows is
    refused unless `force`, and then any value goes."""
    rule = describe(option)
    if rule is None:
        if force:
            return value
        raise ConfigValueError("option", option, UNKNOWN)
    try:
        if isinstance(value, str) and rule.kind in ("number", "whole"):
            rule.parse(value, option, "config.set")
        else:
            rule.check(value, option, "config.set")
    except InvalidValueError as refused:
        raise ConfigValueError(option, refused.value, refused.expected) from None
    return value
