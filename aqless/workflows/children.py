"""A workflow's child jobs (``ctx.child``, ``ctx.gather``, ``ctx.first``): their jids, made
from the workflow's jid and the child's name, so that a replay puts the same job (never a
second one), on the workflow's server (a sharded lookup of the jid finds it there).

On a plain deployment a child's jid is ``blake2b(f"{workflow}\\0{name}")`` (16 bytes, as
hex): one hash. On a sharded one it is 14 bytes of that hash and a counter (4 hex digits),
the first such in the workflow's jid's bucket (`aqless.sharding.map.bucket`): a lookup of
it asks the workflow's shard, where the child lives (it waits as the workflow's dependency,
and a job's dependencies share its server). Either way the same name gives the same jid on
every run: a workflow's job stays on its deployment.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache

from aqless.sharding.map import bucket, bucket_hash, bucket_of

__all__ = ["Child", "child_jid"]


@dataclass(frozen=True, slots=True)
class Child:
    """A child job a workflow started (what ``await ctx.child(...)`` returns): give it to
    ``ctx.gather`` or ``ctx.first`` for its result.

    Attributes:
        name: its name in the workflow's record (``children``).
        jid: its jid (`child_jid` of the workflow's jid and `name`).

    Examples:
        ```python
        parcel = await ctx.child("shop.Parcel", {"kg": 2}, queue="parcels", name="p0")
        [postage] = await ctx.gather(parcel)
        ```
    """

    name: str
    jid: str


@cache
def _counters() -> tuple[bytes, ...]:
    """The ends a sharded child's jid may take (4 hex digits), as the bytes hashed: made
    once, on the first sharded child."""
    return tuple(f"{counter:04x}".encode() for counter in range(1 << 16))


def child_jid(workflow: str, name: str, *, sharded: bool = False) -> str:
    """The jid of the child `name` of the workflow `workflow`: the same on every run.

    Args:
        workflow: the workflow's jid.
        name: the child's name.
        sharded: whether the workflow is on a sharded deployment (default False: a plain
            one). Sharded, the jid is in the workflow's jid's bucket: 28 hex digits of a
            hash, then a counter counted up until the bucket is the workflow's (about 1024
            hashes, a fraction of a millisecond); plain, it is 32 hex digits of the hash.

    Examples:
        ```python
        job = await client.jobs.get(child_jid(workflow_jid, "p0"))  # its child "p0"
        ```
    """
    named = f"{workflow}\x00{name}".encode()
    if not sharded:
        return hashlib.blake2b(named, digest_size=16).hexdigest()
    home = bucket(workflow)
    base = hashlib.blake2b(named, digest_size=14).hexdigest().encode()
    started = bucket_hash(base)  # hashed once, copied for each counter
    for counter in _counters():
        hashed = started.copy()
        hashed.update(counter)
        if bucket_of(hashed.digest()) == home:
            return (base + counter).decode()
    raise AssertionError(f"no jid of {base!r} in bucket {home}")  # 1024 buckets: never
