"""Sharded verbs derived from the contracts (aqless.contracts), as aqless.sync derives the
blocking ones: a sharded object declares once, per verb, which shards it asks and how their
answers merge, and the verb is the contract's, run on the object's part on those shards::

    class ShardedQueue:
        length = routed(contracts.Queue.length, every, summed)

takes `contracts.Queue.length`'s parameters, calls ``length`` on the queue's partition of every
shard at once, and returns their sum. The routes: `every` shard, the `first` (configuration,
the same everywhere), the shard holding a given jid (`by_jid`), each jid's shard with its
share (`by_jids`), every shard for a page (`paged`); an object adds its own (a queue's home
shard, a fairness group's keeper). The merges are in aqless.sharding.reads. mypy checks each
declaration against the contract, so a sharded class still satisfies it
(tests/typing/test_contracts.py).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import (
    TYPE_CHECKING,
    Any,
    Concatenate,
    Generic,
    ParamSpec,
    Protocol,
    Self,
    TypeVar,
    overload,
)

from aqless import rules
from aqless.client import Client
from aqless.sharding.reads import gathered

if TYPE_CHECKING:
    from aqless.sharding.deployment import Deployment

__all__ = ["Routed", "by_jid", "by_jids", "every", "first", "paged", "routed"]

P = ParamSpec("P")
R = TypeVar("R")

#: One shard's share of a call: its client, and the arguments its part is given.
Call = tuple[Client, inspect.BoundArguments]
#: Which shards a call asks, and with what, from the call's arguments (defaults applied).
Route = Callable[[Any, inspect.BoundArguments], Awaitable[list[Call]]]
#: The answer of a call from its shards' answers (in the route's order) and its arguments.
Merge = Callable[[list[R], inspect.BoundArguments], R]


class Sharded(Protocol):
    """A sharded object: its deployment (a ShardedClient is its own), and its part on one
    shard (a queue's partition, a shard's ``jobs``...)."""

    @property
    def _client(self) -> Deployment: ...
    def _part(self, client: Client) -> Any: ...


class Routed(Generic[P, R]):
    """A contract's verb on a sharded object: the same parameters and value, asked of the
    shards its route names and merged."""

    def __init__(
        self,
        verb: Callable[Concatenate[Any, P], Coroutine[Any, Any, R]],
        route: Route,
        merge: Merge[R],
    ) -> None:
        self.name = verb.__name__
        self.__doc__ = verb.__doc__
        parameters = list(inspect.signature(verb).parameters.values())[1:]  # self aside
        self.signature = inspect.Signature(parameters)
        self.route = route
        self.merge = merge

    def __set_name__(self, owner: type, name: str) -> None:
        if name != self.name:
            raise TypeError(f"{owner.__name__}.{name} is the sharded {self.name}: name it so")

    if TYPE_CHECKING:
        # what mypy reads a routed verb as when, from another module, it checks a type
        # argument against a contract (a bound type variable): the verb `__get__` gives
        def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Coroutine[Any, Any, R]: ...

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: object, owner: type) -> Callable[P, Coroutine[Any, Any, R]]: ...
    def __get__(
        self, instance: object | None, owner: type
    ) -> Self | Callable[P, Coroutine[Any, Any, R]]:
        if instance is None:
            return self
        sharded: Sharded = instance  # type: ignore[assignment]

        async def verb(*args: P.args, **kwargs: P.kwargs) -> R:
            return await self.call(sharded, args, kwargs)

        verb.__name__ = self.name
        verb.__doc__ = self.__doc__
        verb.__signature__ = self.signature  # type: ignore[attr-defined]
        return verb

    async def call(self, sharded: Sharded, args: Any, kwargs: Any) -> R:
        arguments = self.signature.bind(*args, **kwargs)
        arguments.apply_defaults()
        calls = await self.route(sharded, arguments)
        name = self.name

        async def ask(call: Call) -> R:
            client, given = call
            answer: R = await getattr(sharded._part(client), name)(*given.args, **given.kwargs)
            return answer

        return self.merge(await gathered(calls, ask), arguments)


def routed(
    verb: Callable[Concatenate[Any, P], Coroutine[Any, Any, R]], route: Route, merge: Merge[R]
) -> Routed[P, R]:
    """`verb` (a contract's) on a sharded object, asked of the shards `route` names and
    answered by `merge`."""
    return Routed(verb, route, merge)


async def every(sharded: Sharded, arguments: inspect.BoundArguments) -> list[Call]:
    """Every shard (active and draining), with the call's arguments."""
    return [(client, arguments) for client in sharded._client.clients]


async def first(sharded: Sharded, arguments: inspect.BoundArguments) -> list[Call]:
    """The first shard: for what is the same on every shard (configuration)."""
    return [(sharded._client.clients[0], arguments)]


def by_jid(parameter: str = "jid") -> Route:
    """The shard holding the jid given as `parameter` (else the one a put of it goes to)."""

    async def route(sharded: Sharded, arguments: inspect.BoundArguments) -> list[Call]:
        return [(await sharded._client.client_of_jid(arguments.arguments[parameter]), arguments)]

    return route


async def by_jids(sharded: Sharded, arguments: inspect.BoundArguments) -> list[Call]:
    """Each shard holding some of the jids given as ``jids``, with its share of them: one
    call per shard."""
    jids: Sequence[str] = arguments.arguments["jids"]
    shares: dict[int, list[str]] = {}
    for jid in jids:
        shares.setdefault(await sharded._client.shard_of_jid(jid), []).append(jid)
    calls: list[Call] = []
    for shard, share in shares.items():
        given = inspect.BoundArguments(arguments.signature, arguments.arguments.copy())
        given.arguments["jids"] = tuple(share) if isinstance(jids, tuple) else share
        calls.append((sharded._client.shard(shard), given))
    return calls


def paged(command: str) -> Route:
    """Every shard, each asked for its first ``offset + count`` (`offset` and `count`
    checked as `command`'s listing), for a merge that interleaves them."""

    async def route(sharded: Sharded, arguments: inspect.BoundArguments) -> list[Call]:
        given = arguments.arguments
        given["offset"], given["count"] = rules.checked_listing(
            given["offset"], given["count"], command
        )
        asked = inspect.BoundArguments(arguments.signature, given.copy())
        asked.arguments.update(offset=0, count=given["offset"] + given["count"])
        return [(client, asked) for client in sharded._client.clients]

    return route
