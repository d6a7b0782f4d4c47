"""A workflow's child jobs (``ctx.child``, ``ctx.gather``): their jids, made from the
workflow's jid and the child's name, so that a replay puts the same job (never a second
one), on the workflow's server (a sharded lookup of the jid finds it there).

A child's jid is the first of ``blake2b(f"{workflow}\\0{name}\\0{i}")`` (16 bytes, as hex),
for i = 0, 1, ..., in the workflow's jid's bucket (`aqless.sharding.map.bucket`): on a
sharded deployment it is looked up on the workflow's shard, where the child lives, since
the child waits as the workflow's dependency and a job's dependencies share its server.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from itertools import count

from aqless.sharding.map import bucket

__all__ = ["Child", "child_jid"]


@dataclass(frozen=True, slots=True)
class Child:
    """A child job a workflow started (what ``await ctx.child(...)`` returns): give it to
    ``ctx.gather`` for its result.

    Attributes:
        name: its name in the workflow's record (``children``).
        jid: its jid (`child_jid` of the workflow's jid and `name`).
    """

    name: str
    jid: str


def child_jid(workflow: str, name: str) -> str:
    """The jid of the child `name` of the workflow `workflow`: the same on every run, in
    the workflow's jid's bucket (about 1024 hashes)."""
    home = bucket(workflow)
    for attempt in count():
        key = f"{workflow}\x00{name}\x00{attempt}".encode()
        jid = hashlib.blake2b(key, digest_size=16).hexdigest()
        if bucket(jid) == home:
            return jid
    raise AssertionError("unreachable")  # pragma: no cover
