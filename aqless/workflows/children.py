"""A workflow's child jobs (``ctx.child``, ``ctx.gather``): their jids, made from the
workflow's jid and the child's name, so that a replay puts the same job (never a second
one), on the workflow's server (a sharded lookup of the jid finds it there).

A child's jid is ``blake2b(f"{workflow}\\0{name}")`` (14 bytes, as hex) and a counter (4 hex
digits), the first such in the workflow's jid's bucket (`aqless.sharding.map.bucket`): on a
sharded deployment it is looked up on the workflow's shard, where the child lives, since
the child waits as the workflow's dependency and a job's dependencies share its server.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from aqless.sharding.map import bucket

__all__ = ["Child", "child_jid"]


@dataclass(frozen=True, slots=True)
class Child:
    """A child job a workflow started (what ``await ctx.child(...)`` returns): give it to
    ``ctx.gather`` for its result.

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


def child_jid(workflow: str, name: str) -> str:
    """The jid of the child `name` of the workflow `workflow`: the same on every run, in
    the workflow's jid's bucket (32 hex digits: 28 of a hash of both, then a counter,
    counted up until the bucket is the workflow's: about 1024 tries, a few ms).

    Examples:
        ```python
        job = await client.jobs.get(child_jid(workflow_jid, "p0"))  # its child "p0"
        ```
    """
    home = bucket(workflow)
    base = hashlib.blake2b(f"{workflow}\x00{name}".encode(), digest_size=14).hexdigest()
    for counter in range(1 << 16):
        jid = f"{base}{counter:04x}"
        if bucket(jid) == home:
            return jid
    raise AssertionError(f"no jid of {base} in bucket {home}")  # 1024 buckets: never
