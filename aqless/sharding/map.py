"""The shard map of a sharded deployment: which shards there are, and which shard owns each
bucket of jids.

A sharded deployment ``billing`` is N complete qless namespaces on one Cluster, its shards,
each with a hash tag of its own (``{billing~0}``, ``{billing~1}``...: another tag where
that one's slot would share a primary with an earlier shard). The map is one JSON document
in the Cluster, at ``{billing}:ql:shards``::

    {"version": 1,
     "shards": [{"id": 0, "namespace": "{billing~0}", "state": "active"}, ...],
     "generations": [[owner of bucket 0, owner of bucket 1, ... bucket 1023], ...],
     "pinned": {"mail": 2}, "next_id": 3}

(``pinned`` and ``next_id`` may be absent: no pinned queue, ids from 0 up. A draining
shard's entry also has ``"since"``, when it began draining.) Changes to a map are made by
aqless.sharding.changes and stored by aqless.sharding.store.

A key (a jid, a routing key, a throttle's name) falls in bucket ``blake2b(key) % 1024``: its
UTF-8 bytes' BLAKE2b digest of 8 bytes, read big-endian (a CRC would put keys that differ only
in their last character on a few shards). The newest generation (the last) says which shard a
put of it goes to. A job put before a
generation was added may sit on the owner of an older one: the candidates of a jid are the
distinct owners of its bucket, newest first, and a lookup asks them in that order. The
state of a named throttle, rate limit or dedup id stays on its bucket's oldest owner that is
still active (`ShardMap.keeper`), so adding shards does not move it away from that state.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from aqless._concurrency.routing import PutTargets
from aqless.errors import ConfigurationError

__all__ = [
    "BUCKETS",
    "Shard",
    "ShardMap",
    "bucket",
    "bucket_hash",
    "bucket_of",
    "group_key",
    "map_key",
    "placed_namespaces",
]

#: How many buckets the keys are spread over: the unit a generation gives to a shard.
BUCKETS = 1024

ShardState = Literal["active", "draining"]


def bucket(key: str) -> int:
    """The bucket of a jid or routing key: its UTF-8 bytes' 8-byte BLAKE2b digest, read as a
    big-endian number, modulo 1024."""
    return bucket_of(bucket_hash(key.encode()).digest())


def bucket_hash(start: bytes) -> hashlib.blake2b:
    """The hash whose digest gives a key's bucket (`bucket_of`), fed `start`: a search over
    keys sharing a start copies it and feeds each its own end."""
    return hashlib.blake2b(start, digest_size=8)


def bucket_of(digest: bytes) -> int:
    """The bucket of the key whose `bucket_hash` gave `digest`."""
    return int.from_bytes(digest, "big") % BUCKETS


def checked_deployment(name: str) -> str:
    """A deployment's name, refused when it could not be put inside a hash tag."""
    if not name or "{" in name or "}" in name:
        raise ConfigurationError(
            f"a sharded deployment's name must be a non-empty string without braces, got {name!r}"
        )
    return name


def group_key(queue: str, group: str) -> str:
    """What decides the shard of a queue's fairness group: its keeper holds the group."""
    return f"{queue}\x00{group}"


def map_key(deployment: str) -> str:
    """Where the deployment's shard map lives (a slot of its own)."""
    return f"{{{deployment}}}:ql:shards"


@dataclass(frozen=True, slots=True)
class Shard:
    """One shard: its id (never reused), its namespace (a qless key prefix with a hash
    tag of its own) and whether it takes new jobs (``active``) or is being emptied
    (``draining``, `since` that time: it owns no bucket in the newest generation).

    Examples:
        ```python
        for shard in (await client.current_map()).shards:
            print(shard.id, shard.namespace, shard.state)
        ```
    """

    id: int
    namespace: str
    state: ShardState = "active"
    since: float | None = None


@dataclass(frozen=True, slots=True)
class ShardMap:
    """The shards of a deployment and the owners of the buckets, per generation (newest
    last), the queues pinned to one shard, and the id the next shard added takes. Read
    from the Cluster, changed only by a compare-and-set of the whole (a new version).

    Examples:
        ```python
        shard_map = aqless.ShardMap.first(["{billing~0}:ql:", "{billing~1}:ql:"])
        assert [shard.id for shard in shard_map.active] == [0, 1]
        ```
    """

    version: int
    shards: tuple[Shard, ...]
    generations: tuple[tuple[int, ...], ...]
    pinned: Mapping[str, int] = field(default_factory=dict)
    next_id: int = 0

    @property
    def new_id(self) -> int:
        """The id of the next shard added: never one a shard had, even a forgotten one."""
        return max(self.next_id, *(shard.id + 1 for shard in self.shards))

    @classmethod
    def first(cls, namespaces: Sequence[str]) -> ShardMap:
        """A new deployment's map: bucket b belongs to shard ``b % N``.

        Examples:
            ```python
            shard_map = aqless.ShardMap.first(["{billing~0}:ql:", "{billing~1}:ql:"])
            assert shard_map.version == 1
            ```
        """
        shards = tuple(Shard(k, namespace) for k, namespace in enumerate(namespaces))
        owners = tuple(b % len(shards) for b in range(BUCKETS))
        return cls(version=1, shards=shards, generations=(owners,))

    @property
    def active(self) -> tuple[Shard, ...]:
        """The shards that take new jobs, by id."""
        return tuple(shard for shard in self.shards if shard.state == "active")

    def shard(self, shard_id: int) -> Shard:
        """The shard with this id.

        Raises:
            KeyError: the map has no shard `shard_id`.

        Examples:
            ```python
            draining = shard_map.shard(2).state == "draining"
            ```
        """
        for shard in self.shards:
            if shard.id == shard_id:
                return shard
        raise KeyError(shard_id)

    def owner(self, key: str) -> int:
        """The shard a put of `key` (a jid, a routing key, a throttle's name) goes to: the
        owner of its bucket in the newest generation.

        Examples:
            ```python
            shard_id = shard_map.owner("customer-42")  # where route="customer-42" puts go
            ```
        """
        return self.generations[-1][bucket(key)]

    def keeper(self, name: str) -> int:
        """The shard keeping the state of a named throttle, rate limit or dedup id: its
        bucket's owner in the oldest generation whose owner of it is still active. So the
        state stays where it was made when shards are added; only a drain moves it (to
        the next owner, with none of that state).

        Examples:
            ```python
            shard_id = shard_map.keeper("smtp")  # where the throttle "smtp" lives
            ```
        """
        index = bucket(name)
        active = {shard.id for shard in self.active}
        for owners in self.generations:
            if owners[index] in active:
                return owners[index]
        return self.generations[-1][index]  # not reached: the newest owners are active

    def pin_of(self, queue: str) -> int | None:
        """The shard every put of `queue` goes to, if the queue is pinned (its own
        throttle or rate limit lives there).

        Examples:
            ```python
            if shard_map.pin_of("invoices") is None:
                print("invoices is spread over every shard")
            ```
        """
        return self.pinned.get(queue)

    def named(self, targets: PutTargets) -> dict[str, int]:
        """Each thing a put names that lives on one shard, and that shard, by description
        (aqless.sharding.placement).

        Examples:
            ```python
            places = shard_map.named(targets)  # {"routing key 'customer-42'": 1, ...}
            if len(set(places.values())) > 1:
                print("a put naming these is refused: CrossShardError")
            ```
        """
        named: dict[str, int] = {}
        pin = self.pin_of(targets.queue)
        if pin is not None:
            named[f"pinned queue {targets.queue!r}"] = pin
        for dependency, shard in (targets.dependencies or {}).items():
            named[f"dependency {dependency!r}"] = shard
        if targets.route:
            named[f"routing key {targets.route!r}"] = self.owner(targets.route)
        kept = [(f"throttle {name!r}", name) for name in targets.throttles if name]
        kept += [(f"rate limit {name!r}", name) for name in targets.rate_limits if name]
        if targets.dedup_id:
            kept.append((f"dedup id {targets.dedup_id!r}", targets.dedup_id))
        if targets.group:
            kept.append((f"group {targets.group!r}", group_key(targets.queue, targets.group)))
        named.update((what, self.keeper(key)) for what, key in kept)
        return named

    def candidates(self, jid: str) -> list[int]:
        """The shards that may hold `jid`, to ask in this order: its bucket's owners over
        the generations, newest first, each once (one shard while no shard was added).

        Examples:
            ```python
            for shard_id in shard_map.candidates(jid):
                print("ask shard", shard_id)
            ```
        """
        index = bucket(jid)
        return list(dict.fromkeys(owners[index] for owners in reversed(self.generations)))

    def to_json(self) -> str:
        """The map as the JSON document stored in the Cluster (`from_json` reads it back).

        Examples:
            ```python
            assert aqless.ShardMap.from_json(shard_map.to_json()) == shard_map
            ```
        """
        document: dict[str, Any] = {
            "version": self.version,
            "shards": [_shard_document(shard) for shard in self.shards],
            "generations": [list(owners) for owners in self.generations],
        }
        if self.pinned:
            document["pinned"] = dict(self.pinned)
        if self.next_id:
            document["next_id"] = self.next_id
        return json.dumps(document, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> ShardMap:
        """Decode a stored map; ConfigurationError if it is not one.

        Raises:
            ConfigurationError: `text` is not a shard map, or an inconsistent one (a bucket
                owned by an unknown shard, a shard id twice...).

        Examples:
            ```python
            shard_map = aqless.ShardMap.from_json(stored_text)
            ```
        """
        try:
            document: Any = json.loads(text)
            shards = tuple(
                Shard(
                    int(s["id"]),
                    str(s["namespace"]),
                    _state(s["state"]),
                    None if s.get("since") is None else float(s["since"]),
                )
                for s in document["shards"]
            )
            generations = tuple(
                tuple(int(owner) for owner in owners) for owners in document["generations"]
            )
            pinned = {str(queue): int(shard) for queue, shard in document.get("pinned", {}).items()}
            shard_map = cls(
                int(document["version"]),
                shards,
                generations,
                pinned,
                int(document.get("next_id", 0)),
            )
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            raise ConfigurationError(f"not a shard map: {text[:200]!r} ({error})") from error
        known = {shard.id for shard in shards}
        if (
            not shards
            or not generations
            or len(known) != len(shards)
            or any(len(owners) != BUCKETS or not set(owners) <= known for owners in generations)
            or not set(pinned.values()) <= known
        ):
            raise ConfigurationError(f"not a consistent shard map: {text[:200]!r}")
        return shard_map


def _shard_document(shard: Shard) -> dict[str, Any]:
    document: dict[str, Any] = {"id": shard.id, "namespace": shard.namespace, "state": shard.state}
    if shard.since is not None:
        document["since"] = shard.since
    return document


def _state(value: Any) -> ShardState:
    if value not in get_args(ShardState):
        raise ValueError(f"unknown shard state {value!r}")
    state: ShardState = value
    return state


def placed_namespaces(
    deployment: str,
    count: int,
    primary_of: Callable[[str], str],
    primaries: Sequence[str],
    *,
    first_id: int = 0,
    placed: Sequence[str] = (),
    tries: int = 10_000,
) -> list[str]:
    """The namespaces of `count` new shards (ids from `first_id` up), each on one of the
    `primaries` holding the fewest shards so far, counting the namespaces `placed` already
    (`primary_of` names the primary that holds a namespace's slot): ``{<deployment>~<k>}``
    if it lands on one, else ``{<deployment>~<k>~<n>}`` with the first n that does."""
    load = dict.fromkeys(primaries, 0)
    for namespace in placed:
        if primary_of(namespace) in load:
            load[primary_of(namespace)] += 1
    namespaces = []
    for k in range(first_id, first_id + count):
        fewest = min(load.values())
        for attempt in range(tries):
            tag = f"{deployment}~{k}" if attempt == 0 else f"{deployment}~{k}~{attempt}"
            namespace = f"{{{tag}}}"
            primary = primary_of(namespace)
            if load.get(primary) == fewest:
                load[primary] += 1
                namespaces.append(namespace)
                break
        else:
            raise ConfigurationError(f"no hash tag for shard {k} lands on a free primary")
    return namespaces
