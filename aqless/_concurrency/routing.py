"""One verb asked of several servers at once and their answers merged: how the objects of a
sharded deployment derive their verbs from the plain ones, as aqless.sync derives the blocking
ones. A contract's verb declares once which shards it asks and how their answers merge
(aqless.contracts)::

    class Queue(Protocol):
        @on_shards(every)
        async def length(self) -> int: ...

and the sharded class takes it, derived (``length = routed(contracts.Queue.length)``, written
by ``python -m aqless.contracts --write``): `Queue.length`'s parameters, ``length`` called on
the queue's part on every shard at once, their sum returned (`merged`, the merge unless one
is named). A sharded part whose verb has no declaration on a contract names its route
itself: ``all = routed(RateLimits.all, every, by_id)``. The routes: `every` shard,
the `first` (configuration, the same everywhere), the shard holding a given jid (`by_jid`),
each jid's shard with its share (`by_jids`), every shard for a page (`paged`); an object adds
its own (a queue's home shard, a fairness group's keeper). The other merges: `page`,
`in_order`, `latest_first`. mypy checks each declaration against the plain verb, so a
sharded class still satisfies the contract (tests/typing/test_contracts.py).

A route knows the deployment only as `Shards`, and a sharded part (aqless.batches.sharded,
aqless.flows.sharded...) is handed its ShardedClient as one: none imports the sharded client,
which builds them all.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
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

import anyio

from aqless import rules
from aqless._concurrency.task_groups import own_errors

__all__ = [
    "DerivedVerb",
    "PutTargets",
    "Routed",
    "ShardedPart",
    "Shards",
    "by_jid",
    "by_jids",
    "every",
    "first",
    "gathered",
    "home",
    "in_order",
    "interleaved",
    "merged",
    "of_group",
    "on_shards",
    "page",
    "paged",
    "routed",
]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")
X = TypeVar("X")


async def gathered(items: Sequence[X], read: Callable[[X], Awaitable[T]]) -> list[T]:
    """`read` of every item, all at once; the results in the items' order. A read that
    fails raises its own error (`own_errors`), and the reads still under way are
    cancelled."""
    results: dict[int, T] = {}

    async def one(index: int, item: X) -> None:
        results[index] = await read(item)

    with own_errors():
        async with anyio.create_task_group() as reads:
            for index, item in enumerate(items):
                reads.start_soon(one, index, item)
    return [results[index] for index in range(len(items))]


def interleaved(lists: Iterable[Sequence[T]]) -> list[T]:
    """The first item of each list, then the second of each..., skipping exhausted lists."""
    lists = list(lists)
    longest = max((len(items) for items in lists), default=0)
    return [items[i] for i in range(longest) for items in lists if i < len(items)]


# -- what a route and a sharded part know of the deployment ---------------------------------


@dataclass(frozen=True, slots=True)
class PutTargets:
    """What a put names that lives on one shard (the class's defaults already applied)."""

    queue: str
    jid: str | None = None
    route: str | None = None
    #: each dependency's jid and the shard it is on
    dependencies: Mapping[str, int] | None = None
    throttles: Sequence[str] = ()
    rate_limits: Sequence[str] = ()
    dedup_id: str | None = None
    group: str | None = None


class ShardMapView(Protocol):
    """What a sharded part reads of the shard map (aqless.sharding.map.ShardMap)."""

    def candidates(self, jid: str) -> list[int]: ...
    def pin_of(self, queue: str) -> int | None: ...
    def named(self, targets: PutTargets) -> dict[str, int]: ...


class Shards(Protocol):
    """A sharded deployment's client, as its routes and its parts see it."""

    @property
    def clients(self) -> Sequence[Any]: ...
    @property
    def queues(self) -> Any: ...
    @property
    def put_hooks(self) -> Sequence[Any]: ...
    def shard(self, shard_id: int) -> Any: ...
    def shard_of(self, key: str) -> int: ...
    def shard_of_limit(self, name: str) -> int: ...
    def new_jid(self, shard_id: int | None) -> str: ...
    async def current_map(self) -> ShardMapView: ...
    async def shard_of_jid(self, jid: str) -> int: ...
    async def client_of_jid(self, jid: str) -> Any: ...
    async def find_job(self, jid: str) -> tuple[int, Any] | None: ...


class ShardedPart:
    """A part of a sharded client (a queue's, its jobs, its limits...), handed the client
    (no I/O to make)."""

    def __init__(self, client: Shards) -> None:
        self._client = client


class Sharded(Protocol):
    """A sharded object: its deployment (a ShardedClient is its own), and its part on one
    shard (a queue's partition, a shard's ``jobs``...)."""

    @property
    def _client(self) -> Shards: ...
    def _part(self, client: Any) -> Any: ...


#: One shard's share of a call: its client, and the arguments its part is given.
Call = tuple[Any, inspect.BoundArguments]
#: Which shards a call asks, and with what, from the call's arguments (defaults applied).
Route = Callable[[Any, inspect.BoundArguments], Awaitable[list[Call]]]
#: The answer of a call from its shards' answers (in the route's order) and its arguments.
Merge = Callable[[list[R], inspect.BoundArguments], R]


class DerivedVerb(Generic[P, R]):
    """A coroutine verb made from another's signature (a contract's or a plain class's): the
    same parameters and value; `call` says what it does (`Routed`, and
    aqless._connection.scripted's `Scripted`)."""

    #: what the verb is called in the refusal of a class naming it otherwise
    kind = "derived"
    name: str
    signature: inspect.Signature

    def __init__(self, verb: Callable[Concatenate[Any, P], Coroutine[Any, Any, R]]) -> None:
        if isinstance(verb, DerivedVerb):  # a plain class's derived verb, read on the class
            self.name, self.__doc__, self.signature = verb.name, verb.__doc__, verb.signature
            return
        self.name = verb.__name__
        self.__doc__ = verb.__doc__
        parameters = list(inspect.signature(verb).parameters.values())[1:]  # self aside
        self.signature = inspect.Signature(parameters)

    def __set_name__(self, owner: type, name: str) -> None:
        if name != self.name:
            raise TypeError(f"{owner.__name__}.{name} is the {self.kind} {self.name}: name it so")

    if TYPE_CHECKING:
        # what mypy reads a derived verb as when, from another module, it checks a type
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

        async def verb(*args: P.args, **kwargs: P.kwargs) -> R:
            return await self.call(instance, args, kwargs)

        verb.__name__ = self.name
        verb.__doc__ = self.doc(owner)
        verb.__signature__ = self.signature  # type: ignore[attr-defined]
        return verb

    def doc(self, owner: type) -> str | None:
        """The verb's docstring on `owner`: that of the same verb of the class `owner` names
        as ``documented_by`` (a sharded class names the plain one, whose verb documents what
        the contract's verb only points to), else its own (the verb's it was made from)."""
        documented = getattr(owner, "documented_by", None)
        return getattr(getattr(documented, self.name, None), "__doc__", None) or self.__doc__

    async def call(self, instance: Any, args: Any, kwargs: Any) -> R:
        """The verb called on `instance` with `args` and `kwargs`."""
        raise NotImplementedError


class Routed(DerivedVerb[P, R]):
    """A plain verb on a sharded object: the same parameters and value, asked of the
    shards its route names and merged."""

    kind = "sharded"

    def __init__(
        self,
        verb: Callable[Concatenate[Any, P], Coroutine[Any, Any, R]],
        route: Route,
        merge: Merge[R],
    ) -> None:
        super().__init__(verb)
        self.route = route
        self.merge = merge

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


@dataclass(frozen=True, slots=True)
class Sharding:
    """How a contract's verb is asked of a sharded deployment: the shards `route` names,
    their answers merged by `merge` (`merged` when None)."""

    route: Route
    merge: Merge[Any] | None = None


F = TypeVar("F", bound=Callable[..., Any])


def on_shards(route: Route, merge: Merge[Any] | None = None) -> Callable[[F], F]:
    """Declare on a contract's verb how its sharded variant asks the shards (`route`) and
    merges their answers (`merge`, `merged` when not given); the verb is unchanged."""

    def declare(verb: F) -> F:
        verb.sharding = Sharding(route, merge)  # type: ignore[attr-defined]
        return verb

    return declare


def sharding_of(verb: Callable[..., Any]) -> Sharding | None:
    """The routing declared on `verb` (`on_shards`), if any."""
    declared: Sharding | None = getattr(verb, "sharding", None)
    return declared


def routed(
    verb: Callable[Concatenate[Any, P], Coroutine[Any, Any, R]],
    route: Route | None = None,
    merge: Merge[R] | None = None,
) -> Routed[P, R]:
    """`verb` (a contract's or a plain class's) on a sharded object, asked of the shards
    `route` names and answered by `merge` (`merged` when not given); without a route, the
    ones declared on the verb (`on_shards`)."""
    if route is None:
        declared = sharding_of(verb) or Sharding(_undeclared(verb))
        route, merge = declared.route, declared.merge
    return Routed(verb, route, merge or merged)


def _undeclared(verb: Callable[..., Any]) -> Route:
    """The route of a verb that declares none: a refusal when called (not when imported, so
    that ``python -m aqless.contracts --write`` can import the declarations it rewrites)."""

    async def route(sharded: Sharded, arguments: inspect.BoundArguments) -> list[Call]:
        raise TypeError(f"{verb.__qualname__} declares no route: declare one, or give it")

    return route


# -- routes -----------------------------------------------------------------------------------


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
    call per shard (the first shard for no jid, which answers without I/O)."""
    jids: Sequence[str] = arguments.arguments["jids"]
    shares: dict[int, list[str]] = {}
    for jid in jids:
        shares.setdefault(await sharded._client.shard_of_jid(jid), []).append(jid)
    if not shares:
        return await first(sharded, arguments)
    calls: list[Call] = []
    for shard, share in shares.items():
        given = inspect.BoundArguments(arguments.signature, arguments.arguments.copy())
        given.arguments["jids"] = tuple(share) if isinstance(jids, tuple) else share
        calls.append((sharded._client.shard(shard), given))
    return calls


def paged(command: str) -> Route:
    """Every shard, each asked for its first ``offset + count`` (`offset` and `count`
    checked as `command`'s listing), for `page` to interleave."""

    async def route(sharded: Sharded, arguments: inspect.BoundArguments) -> list[Call]:
        given = arguments.arguments
        given["offset"], given["count"] = rules.checked_listing(
            given["offset"], given["count"], command
        )
        asked = inspect.BoundArguments(arguments.signature, given.copy())
        asked.arguments.update(offset=0, count=given["offset"] + given["count"])
        return [(client, asked) for client in sharded._client.clients]

    return route


class Homed(Sharded, Protocol):
    """A sharded object with a home shard (a queue's: where its own limits live)."""

    def _home(self) -> int: ...


async def home(sharded: Homed, arguments: inspect.BoundArguments) -> list[Call]:
    """The object's home shard (a queue's: where its own throttle and rate limit live)."""
    return [(sharded._client.shard(sharded._home()), arguments)]


class Grouped(Sharded, Protocol):
    """A sharded object whose fairness groups each live on one shard (a queue)."""

    def _keeper_of_group(self, group: str) -> int: ...


async def of_group(sharded: Grouped, arguments: inspect.BoundArguments) -> list[Call]:
    """The shard keeping the fairness group given as ``group``; every shard for None, the
    jobs put without one (a cap or a limit then holds on each shard apart)."""
    group = arguments.arguments["group"]
    if group is None:
        return await every(sharded, arguments)
    return [(sharded._client.shard(sharded._keeper_of_group(group)), arguments)]


# -- merges -----------------------------------------------------------------------------------


def merged(parts: Sequence[T], arguments: inspect.BoundArguments | None = None) -> T:
    """The shards' answers as one, by what they are: one answer as it is; numbers summed,
    flags any; a name (or None) the first's; a record field by field (a class with a
    ``merged(parts)`` of its own, such as `aqless.models.Durations`, merges itself);
    mappings united, a key's values merged; names and jids listed once each; records with
    a ``name`` (a queue's counts, a worker's) one per name; a tuple of lists column by
    column; other lists concatenated."""
    answer: T = _merged(parts)
    return answer


def _merged(parts: Sequence[Any]) -> Any:
    answer = parts[0]
    own = getattr(type(answer), "merged", None)
    if len(parts) == 1 or answer is None or isinstance(answer, str):
        return answer
    if own is not None:
        return own(parts)
    if isinstance(answer, bool):
        return any(parts)
    if isinstance(answer, int | float):
        return sum(parts)
    if is_dataclass(answer):
        return _by_field(parts, _merged)
    if isinstance(answer, Mapping):
        by_key: dict[Any, list[Any]] = {}
        for part in parts:
            for key, value in part.items():
                by_key.setdefault(key, []).append(value)
        return {key: _merged(values) for key, values in by_key.items()}
    if isinstance(answer, tuple) and answer and all(isinstance(item, list) for item in answer):
        return tuple(_merged(column) for column in zip(*parts, strict=True))
    return type(answer)(_listed([item for part in parts for item in part]))


def _by_field(parts: Sequence[Any], merge: Callable[[list[Any]], Any]) -> Any:
    """Records merged field by field."""
    columns = {
        field.name: [getattr(part, field.name) for part in parts] for field in fields(parts[0])
    }
    return replace(parts[0], **{name: merge(column) for name, column in columns.items()})


def _listed(items: list[Any]) -> list[Any]:
    """Names and jids once each; records with a name one per name (merged), in order."""
    if all(isinstance(item, str) for item in items):
        return list(dict.fromkeys(items))
    if not (items and is_dataclass(items[0]) and hasattr(items[0], "name")):
        return items
    by_name: dict[str, list[Any]] = {}
    for item in items:
        by_name.setdefault(item.name, []).append(item)
    return [_merged(records) for records in by_name.values()]


def latest_first(parts: Sequence[list[T]], arguments: inspect.BoundArguments) -> list[T]:
    """Records with a name (the shards' workers, most recently seen first), one per name in
    the interleaved order of the shards' lists."""
    return _listed(interleaved(parts))


def page(parts: Sequence[T], arguments: inspect.BoundArguments) -> T:
    """``offset:offset + count`` of the shards' listings interleaved (each shard was asked
    for its first ``offset + count``: `paged`); a page's other fields `merged`."""
    offset, count = arguments.arguments["offset"], arguments.arguments["count"]

    def paged_part(column: list[Any]) -> Any:
        if not isinstance(column[0], list | tuple):
            return _merged(column)
        listed = interleaved(column)[offset : offset + count]
        return listed if isinstance(column[0], list) else type(column[0])(listed)

    answer: T = _by_field(parts, paged_part) if is_dataclass(parts[0]) else paged_part(list(parts))
    return answer


class _Jid(Protocol):
    @property
    def jid(self) -> str: ...


J = TypeVar("J", bound=_Jid)


def in_order(parts: Sequence[Sequence[J]], arguments: inspect.BoundArguments) -> list[J]:
    """The jobs found, in the order their jids were asked."""
    found = {job.jid: job for part in parts for job in part}
    return [found[jid] for jid in arguments.arguments["jids"] if jid in found]
