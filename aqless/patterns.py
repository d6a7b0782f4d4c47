"""Queue identifier and priority patterns (REQLESS 7): two documents stored in the server for
every client, which say which queues an ``@identifier`` stands for and in which order a
worker started with ``priorities=True`` serves its queues (see aqless._worker.reservers)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

from aqless._concurrency.routing import ShardedPart
from aqless.contracts.derived import ShardedQueuePatternsRouted
from aqless.errors import ConfigurationError
from aqless.models import PriorityPattern

if TYPE_CHECKING:
    from aqless.contracts import ScriptClient as Client


class QueuePatterns:
    """``client.queue_patterns``: the stored identifier and priority patterns.

    Examples:
        ```python
        await client.queue_patterns.set_identifiers({"mail": ["emails", "sms-*"]})
        ```
    """

    def __init__(self, client: Client) -> None:
        self._client = client

    async def identifiers(self) -> dict[str, list[str]]:
        """Each identifier's queue patterns (``default``, ``["*"]`` unless set, is always
        there). Another client's entry that is not a JSON list is left out.

        Examples:
            ```python
            mail = (await client.queue_patterns.identifiers()).get("mail", [])
            ```
        """
        stored = await self._client.protocol.json("queueIdentifierPatterns.getAll")
        identifiers: dict[str, list[str]] = {}
        for name, text in (stored or {}).items():
            try:
                value = json.loads(text)
            except (TypeError, ValueError):
                continue  # another client's malformed entry: it names no queues
            if isinstance(value, list):
                identifiers[str(name)] = [str(item) for item in value]
        return identifiers

    async def set_identifiers(self, identifiers: Mapping[str, Sequence[str]]) -> None:
        """Replace every identifier: ``@name`` then stands for the queues its patterns
        (names, globs, ``!negations``) match. An identifier with no pattern is dropped;
        ``default`` is ``["*"]`` unless given.

        Args:
            identifiers: each identifier's patterns, by name (without the ``@``).

        Raises:
            ConfigurationError: a name is empty or a pattern list is a bare string; nothing
                sent.

        Examples:
            ```python
            await client.queue_patterns.set_identifiers({"mail": ["emails", "sms-*"]})
            # a worker given "@mail" then serves emails and every sms-* queue
            ```
        """
        arguments: list[str] = []
        for name, patterns in identifiers.items():
            if not name or isinstance(patterns, str):
                raise ConfigurationError(
                    f"an identifier needs a name and a list of patterns: {name!r}: {patterns!r}"
                )
            arguments += [name, json.dumps([str(pattern) for pattern in patterns])]
        await self._client.protocol.call("queueIdentifierPatterns.setAll", *arguments)

    async def priorities(self) -> list[PriorityPattern]:
        """The priority groups in order (a default group always among them).

        Examples:
            ```python
            for group in await client.queue_patterns.priorities():
                print(group.patterns, group.fairly)
            ```
        """
        stored = await self._client.protocol.json("queuePriorityPatterns.getAll")
        groups: list[PriorityPattern] = []
        for text in stored or []:
            try:
                value = json.loads(text)
            except (TypeError, ValueError):
                continue
            if isinstance(value, dict) and isinstance(value.get("pattern"), list):
                patterns = tuple(str(item) for item in value["pattern"])
                groups.append(PriorityPattern(patterns, fairly=bool(value.get("fairly"))))
        return groups

    async def set_priorities(self, groups: Sequence[PriorityPattern]) -> None:
        """Replace the priority order; without a default group one goes last. No groups:
        back to the default order.

        Args:
            groups: the groups, served in this order.

        Examples:
            ```python
            urgent = aqless.PriorityPattern(("urgent-*",))
            await client.queue_patterns.set_priorities([urgent])  # default goes last
            ```
        """
        await self._client.protocol.call(
            "queuePriorityPatterns.setAll",
            *(json.dumps({"fairly": g.fairly, "pattern": list(g.patterns)}) for g in groups),
        )


class ShardedQueuePatterns(ShardedPart, ShardedQueuePatternsRouted):
    """``client.queue_patterns``: set on every shard (each shard's workers read their
    own), read from the first (routes declared on `aqless.contracts.QueuePatterns`).

    Examples:
        ```python
        await client.queue_patterns.set_identifiers({"mail": ["emails"]})  # every shard
        ```
    """

    #: the plain class whose verbs document the derived ones
    documented_by: ClassVar[type] = QueuePatterns

    def _part(self, client: Any) -> QueuePatterns:
        return cast(QueuePatterns, client.queue_patterns)
