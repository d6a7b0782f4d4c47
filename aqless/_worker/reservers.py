"""Which queues a worker serves, and in which order it pops from them.

A worker is given queue specs:

- ``"emails"``: that queue, whether or not it exists yet;
- ``"mail-*"``: every existing queue the glob matches (fnmatch, case-sensitive);
- ``"!mail-spam"``: none of the queues this glob matches, whatever else names them;
- ``"@batch"``: the patterns stored under the identifier ``batch`` (REQLESS 7.1, set with
  ``queueIdentifierPatterns.setAll``), which may be globs and negations themselves.

``QueueSelection`` turns specs into queue names, re-reading the queue list when they hold
patterns. With ``priorities=True`` the names are then ordered by the stored priority patterns
(REQLESS 7.2): queues matching an earlier pattern group come first, a ``fairly`` group is
shuffled, and the ``default`` group marks where the queues no group matches go.

A reserver takes the names and gives the order of one reservation:

- ``ordered``: always the given order: the first queue is drained before the second is tried;
- ``round-robin``: the first queue tried moves on by one every reservation;
- ``shuffled``: round-robin over an order shuffled once when the worker starts.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Final, Literal, cast

from aqless import rules
from aqless.errors import ConfigurationError
from aqless.models import PriorityPattern

if TYPE_CHECKING:
    from aqless.client import Client

__all__ = ["RESERVERS", "PriorityPattern", "QueueSelection", "Reserver"]

ReserverName = Literal["ordered", "round-robin", "shuffled"]
#: the reserver names, as their rule (``worker.reserver``) lists them
RESERVERS: Final = cast(tuple[ReserverName, ...], rules.RULES["worker.reserver"].choices)
_GLOB = frozenset("*?[")


def is_pattern(spec: str) -> bool:
    return spec.startswith(("@", "!")) or bool(_GLOB & set(spec))


class QueueSelection:
    """The queues a worker serves, from its specs.

    A spec is ``"emails"`` (that queue, whether or not it exists yet), ``"mail-*"`` (every
    existing queue the glob matches, case-sensitive), ``"!mail-spam"`` (none of the queues
    this glob matches, whatever else names them) or ``"@batch"`` (the patterns stored under
    the identifier ``batch``, themselves globs and negations). With ``priorities`` the
    names are ordered by the stored priority patterns: queues matching an earlier pattern
    group first, a ``fairly`` group shuffled, the ``default`` group where the queues no
    group matches go.

    Args:
        specs: queue names, globs, negations and ``@identifiers``.
        priorities: order the queues by the stored priority patterns (default False).
        shuffle: the random source for ``fairly`` groups (default: a new one).

    Raises:
        ConfigurationError: no spec, or a bare ``"@"`` or ``"!"``.

    Examples:
        ```python
        selection = aqless.QueueSelection(["emails", "mail-*", "!mail-spam"])
        names = await selection.resolve(client)
        ```
    """

    def __init__(
        self,
        specs: Sequence[str],
        *,
        priorities: bool = False,
        shuffle: random.Random | None = None,
    ) -> None:
        specs = [spec.strip() for spec in specs if spec.strip()]
        if not specs:
            raise ConfigurationError("a worker needs at least one queue")
        for spec in specs:
            if spec in ("@", "!"):
                raise ConfigurationError(f"bad queue spec {spec!r}")
        self.specs: tuple[str, ...] = tuple(dict.fromkeys(specs))
        self.priorities = priorities
        self.is_static = not priorities and not any(is_pattern(s) for s in self.specs)
        self._random = shuffle or random.Random()  # noqa: S311  # fairness, not secrecy
        self._positive: tuple[str, ...] = tuple(s for s in self.specs if not s.startswith("!"))
        self._negative: tuple[str, ...] = tuple(s[1:] for s in self.specs if s.startswith("!"))

    def may_serve(self, queue: str) -> bool:
        """Whether `queue` could be among the queues (without reading the server): what a
        put event is checked against. ``@identifiers`` may name anything.

        Examples:
            ```python
            assert aqless.QueueSelection(["mail-*"]).may_serve("mail-eu")
            ```
        """
        if any(fnmatchcase(queue, pattern) for pattern in self._negative):
            return False
        return any(spec.startswith("@") or fnmatchcase(queue, spec) for spec in self._positive)

    async def resolve(self, client: Client) -> list[str]:
        """The queue names now, in the order the specs (and priority patterns) give.

        Raises:
            ConnectionLostError: the server could not be reached to read the queues.

        Examples:
            ```python
            names = await aqless.QueueSelection(["mail-*"]).resolve(client)
            ```
        """
        if self.is_static:
            return list(self._positive)
        positive, negative = list(self._positive), list(self._negative)
        if any(spec.startswith("@") for spec in positive):
            identifiers = await client.queue_patterns.identifiers()
            positive, more_negative = _expanded(positive, identifiers)
            negative += more_negative
        known = await client.queues.names()
        names: dict[str, None] = {}
        for spec in positive:
            if bool(_GLOB & set(spec)):
                names.update(dict.fromkeys(sorted(n for n in known if fnmatchcase(n, spec))))
            else:
                names[spec] = None
        chosen = [n for n in names if not any(fnmatchcase(n, pattern) for pattern in negative)]
        if self.priorities:
            chosen = self._prioritized(chosen, await client.queue_patterns.priorities())
        return chosen

    def _prioritized(self, names: list[str], groups: list[PriorityPattern]) -> list[str]:
        placed: list[list[str]] = [[] for _ in groups]
        default = next((i for i, group in enumerate(groups) if group.is_default), len(groups))
        leftover: list[str] = []
        for name in names:
            index = next(
                (
                    i
                    for i, group in enumerate(groups)
                    if not group.is_default and _matches(name, group.patterns)
                ),
                None,
            )
            (leftover if index is None else placed[index]).append(name)
        ordered: list[str] = []
        for i, group in enumerate(groups):
            members = leftover if i == default else placed[i]
            if group.fairly:
                members = members[:]
                self._random.shuffle(members)
            ordered += members
        if default == len(groups):
            ordered += leftover
        return ordered


def _matches(name: str, patterns: Sequence[str]) -> bool:
    """A name matches a pattern list if a glob matches it and no negation does."""
    if any(p.startswith("!") and fnmatchcase(name, p[1:]) for p in patterns):
        return False
    return any(not p.startswith("!") and fnmatchcase(name, p) for p in patterns)


def _expanded(specs: list[str], identifiers: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    """The specs with every ``@identifier`` replaced by its stored patterns; an unknown
    identifier names nothing. Returns the positive and the negative patterns."""
    positive: list[str] = []
    negative: list[str] = []
    for spec in specs:
        for pattern in identifiers.get(spec[1:], []) if spec.startswith("@") else [spec]:
            if pattern.startswith("!"):
                negative.append(pattern[1:])
            elif not pattern.startswith("@"):  # identifiers do not nest
                positive.append(pattern)
    return positive, negative


class Reserver:
    """The order of the queues for each reservation (a pop over several queues):

    - ``"ordered"`` (the default): always the given order: the first queue is drained
      before the second is tried;
    - ``"round-robin"``: the first queue tried moves on by one every reservation;
    - ``"shuffled"``: round-robin over an order shuffled once when the worker starts.

    Args:
        name: one of the three (default ``"ordered"``).
        shuffle: the random source of ``"shuffled"`` (default: a new one).

    Raises:
        ConfigurationError: an unknown name.

    Examples:
        ```python
        worker = aqless.Worker(client, ["a", "b", "c"], reserver="round-robin")
        # or an object of your own making:
        worker = aqless.Worker(client, ["a", "b"], reserver=aqless.Reserver("shuffled"))
        ```
    """

    def __init__(self, name: ReserverName = "ordered", *, shuffle: random.Random | None = None):
        if name not in RESERVERS:
            raise ConfigurationError(f"unknown reserver {name!r}; expected one of {RESERVERS}")
        self.name = name
        self._turn = 0
        self._random = shuffle or random.Random()  # noqa: S311
        self._shuffled: dict[tuple[str, ...], list[str]] = {}

    def order(self, queues: Sequence[str]) -> list[str]:
        """The queues in the order to try them this time.

        Examples:
            ```python
            reserver = aqless.Reserver("round-robin")
            assert reserver.order(["a", "b"]) == ["a", "b"]
            assert reserver.order(["a", "b"]) == ["b", "a"]
            ```
        """
        if self.name == "ordered" or len(queues) < 2:
            return list(queues)
        base = list(queues)
        if self.name == "shuffled":
            key = tuple(sorted(queues))
            if key not in self._shuffled:
                self._shuffled = {key: base}
                self._random.shuffle(base)
            base = self._shuffled[key]
        start = self._turn % len(base)
        self._turn += 1
        return base[start:] + base[:start]

    def __repr__(self) -> str:
        return f"<Reserver {self.name}>"
