"""Rate limits: at most `limit` job starts in any window of `per` seconds.

A queue has one (``queue.rate_limit``); named limiters (``client.rate_limits["api"]``) hold
back the jobs that name them at put (``rate_limits=["api"]``). The script enforces them at
every pop, for every worker at once, with a sliding window of start times: no window of
`per` seconds ever holds more than `limit` starts. A limit starts its jobs in bursts (up to
`limit` at once; `limit` at the end of one window and `limit` at the start of the next are
`2 * limit` within `per` seconds, both ends counted), or, ``smooth=True``, at least
``per / limit`` seconds apart, with no window of `per` seconds, both ends counted, holding
more than `limit`.

On a sharded deployment a named limit (and a throttle) lives on the shard keeping its name
(`ShardedClient.keeper_of`), where every job naming it first is put; a queue's own lives on
the queue's pinned shard, and its id (``{<deployment>~<k>}:ql:q:<queue>``, as a plain
client's is ``<prefix>q:<queue>``) names that shard's namespace, so an id read from a
listing is found again where it was read (`ShardedClient.shard_of_limit`).
"""

from __future__ import annotations

from collections.abc import Sequence
from inspect import BoundArguments
from typing import TYPE_CHECKING, Any, cast

from aqless import rules
from aqless._concurrency.routing import ShardedPart, every, routed
from aqless.errors import InvalidArgumentError
from aqless.models import BURST, SMOOTH, RateLimitInfo

if TYPE_CHECKING:
    from aqless import contracts
    from aqless.contracts import ScriptClient as Client


def checked_limit_name(name: str) -> str:
    """A named rate limit's `name`, refused when empty."""
    if not name:
        raise InvalidArgumentError("name", "a rate limit's name must not be empty")
    return name


class RateLimit:
    """One limiter (no I/O to make): a named one, or a queue's (``queue.rate_limit``).

    Examples:
        ```python
        partner = client.rate_limits["partner-api"]
        await partner.set(10, per=60)
        ```
    """

    def __init__(self, client: Client, id: str) -> None:
        self._client = client
        self.id = id

    def __repr__(self) -> str:
        return f"<RateLimit {self.id}>"

    async def get(self) -> RateLimitInfo:
        """Its limit, the starts in the current window and the wait for the next one.

        Examples:
            ```python
            info = await client.rate_limits["partner-api"].get()
            print(info.limit, info.period)
            ```
        """
        return RateLimitInfo.from_json(await self._client.protocol.json("rateLimit.get", self.id))

    async def set(self, limit: int, *, per: float = 1.0, smooth: bool = False) -> None:
        """Start at most `limit` jobs in any `per` seconds: in bursts of up to `limit`, or,
        `smooth`, spread evenly (``per / limit`` seconds apart).

        Args:
            limit: job starts at most in a window, a whole number from 1.
            per: the window in seconds, above 0 (default 1.0).
            smooth: spread the starts evenly instead of in bursts (default False).

        Raises:
            InvalidValueError: `limit` or `per` is outside its rule; nothing sent.
            InvalidArgumentError: `smooth` is not True or False; nothing sent.

        Examples:
            ```python
            await client.rate_limits["partner-api"].set(10, per=60)  # 10 a minute
            await client.rate_limits["search-api"].set(5, smooth=True)  # one every 0.2 s
            ```
        """
        limit, per = (
            rules.check("limit", limit, "rateLimit.set"),
            rules.check("per", per, "rateLimit.set"),
        )
        if not isinstance(smooth, bool):
            raise InvalidArgumentError("smooth", f"True or False, not {smooth!r}")
        mode = SMOOTH if smooth else BURST
        await self._client.protocol.call("rateLimit.set", self.id, limit, per, mode)

    async def delete(self) -> None:
        """Lift the limit (and forget the starts it counted).

        Examples:
            ```python
            await client.rate_limits["partner-api"].delete()
            ```
        """
        await self._client.protocol.call("rateLimit.delete", self.id)


class RateLimits:
    """The rate limits: ``client.rate_limits["api"]`` (no I/O; an empty name raises
    InvalidArgumentError), ``await ....all()``.

    Examples:
        ```python
        partner = client.rate_limits["partner-api"]
        ```
    """

    def __init__(self, client: Client) -> None:
        self._client = client

    def __getitem__(self, name: str) -> RateLimit:
        return RateLimit(self._client, checked_limit_name(name))

    def of_queue(self, queue: str) -> RateLimit:
        """A queue's own limiter (its id is the queue's throttle id).

        Examples:
            ```python
            await client.rate_limits.of_queue("emails").set(100, per=60)
            ```
        """
        return RateLimit(self._client, f"{self._client.prefix}q:{queue}")

    async def all(self) -> list[RateLimitInfo]:
        """Every limit set, queues' and named ones, by id.

        Examples:
            ```python
            for info in await client.rate_limits.all():
                print(info.id, info.limit, info.period)
            ```
        """
        reply = await self._client.protocol.json("rateLimit.all")
        return [RateLimitInfo.from_json(value) for value in reply or []]


def _by_id(parts: Sequence[list[RateLimitInfo]], arguments: BoundArguments) -> list[RateLimitInfo]:
    """Every limit set on any shard, queues' and named ones, by id."""
    return sorted((info for infos in parts for info in infos), key=lambda info: info.id)


class ShardedThrottles(ShardedPart):
    """``client.throttles[name]`` of a sharded deployment (no I/O): the throttle on the shard
    holding it (`ShardedClient.shard_of_limit`).

    Examples:
        ```python
        await client.throttles["smtp"].set(5)  # on the shard keeping "smtp"
        ```
    """

    def __getitem__(self, name: str) -> contracts.Throttle:
        shard = self._client.shard(self._client.shard_of_limit(name))
        return cast("contracts.Throttle", shard.throttles[name])


class ShardedRateLimits(ShardedPart):
    """``client.rate_limits[name]`` of a sharded deployment (no I/O): the limiter on the
    shard holding it, as `ShardedThrottles`; ``await ....all()`` lists every shard's.

    Examples:
        ```python
        await client.rate_limits["partner-api"].set(10, per=60)  # on its keeper shard
        ```
    """

    def __getitem__(self, name: str) -> RateLimit:
        return self._part(self._client.shard(self._client.shard_of_limit(name)))[name]

    def of_queue(self, queue: str) -> RateLimit:
        """A queue's own limiter, on its pinned shard (``queue.rate_limit``).

        Examples:
            ```python
            info = await client.rate_limits.of_queue("invoices").get()
            ```
        """
        return cast(RateLimit, self._client.queues[queue].rate_limit)

    def _part(self, client: Any) -> RateLimits:
        return cast(RateLimits, client.rate_limits)

    all = routed(RateLimits.all, every, _by_id)
