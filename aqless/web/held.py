"""Scheduled jobs on the dashboard: when each starts next, and whether a rate limit is what
holds it back.

A pop that finds one of a job's named rate limits full moves the job to the queue's
scheduled set, scored with the limit's next free start (see ratelimit.lua); nothing else
marks it. So a scheduled job counts as rate-limited when it names a limit that is set and
its next start lies within one period of that limit from now (a job put with a longer
delay is only delayed).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from aqless.client import Client
from aqless.documents import rate_limit_document
from aqless.sharding.client import AnyClient

JSON = dict[str, Any]


async def client_of(client: AnyClient, jid: str) -> Client:
    """The plain client of the shard holding `jid` (`client` itself when not sharded)."""
    if client.sharded:
        return await client.client_of_jid(jid)
    return client


def limit_names(text: object) -> list[str]:
    """The job's `rate_limits` field (JSON text of a list) as names; [] when absent or odd."""
    if not isinstance(text, str):
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [str(name) for name in value] if isinstance(value, list) else []


async def schedules(
    client: AnyClient, queue: str, jids: Sequence[str]
) -> dict[str, tuple[float | None, list[str]]]:
    """Each job's next start (its score in the queue's scheduled set) and its named limits:
    one round trip per shard."""
    by_shard: dict[int, tuple[Client, list[str]]] = {}
    for jid in jids:
        shard = await client_of(client, jid)
        by_shard.setdefault(id(shard), (shard, []))[1].append(jid)
    found: dict[str, tuple[float | None, list[str]]] = {}
    for shard, held in by_shard.values():
        scheduled = f"{shard.prefix}q:{queue}-scheduled"
        reads: list[tuple[str, ...]] = []
        for jid in held:
            reads += [("ZSCORE", scheduled, jid), ("HGET", f"{shard.prefix}j:{jid}", "rate_limits")]
        replies = await shard.protocol.plain_many("queue.scheduled", reads)
        for n, jid in enumerate(held):
            score, limits = replies[2 * n], replies[2 * n + 1]
            found[jid] = (None if score is None else float(score)), limit_names(limits)
    return found


async def with_next_start(client: AnyClient, queue: str, jobs: Sequence[JSON]) -> list[JSON]:
    """The scheduled job documents, each with `next_start` (unix time or None),
    `rate_limits` (the names it counts on) and `held_by` (the set limits that hold it back
    now, as rate-limit documents; [] when it is only delayed)."""
    if not jobs:
        return list(jobs)
    limits = {info.id: info for info in await client.rate_limits.all()}
    now = client.clock()
    known = await schedules(client, queue, [str(job["jid"]) for job in jobs])
    found = []
    for job in jobs:
        next_start, names = known.get(str(job["jid"]), (None, []))
        held_by = [
            rate_limit_document(limits[name])
            for name in names
            if name in limits
            and limits[name].limit > 0
            and next_start is not None
            and next_start <= now + limits[name].period
        ]
        found.append({**job, "next_start": next_start, "rate_limits": names, "held_by": held_by})
    return found
