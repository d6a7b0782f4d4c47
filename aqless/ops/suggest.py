"""The names a search form offers as it is typed (`aqless.ops.search`): queues, tags, failure
groups and workers from their indexes, and the classes of a small sample of jobs (the
protocol keeps no index of classes); bounded reads, whatever the deployment's size."""

from __future__ import annotations

import time
from typing import Any, Final

from aqless.sharding.client import AnyClient

#: How many names of each kind the autocomplete offers at most, and how many jobs it reads
#: to learn the classes.
NAMES_MOST: Final = 200
CLASS_SAMPLE: Final = 100
SAMPLED: Final = 15  # queues and failure groups whose jobs the class sample reads


def _sample_calls(prefix: str, queues: list[str], groups: list[str]) -> list[tuple[Any, ...]]:
    """The reads of a sample of jids, each O(1) or O(sample): a few at random of the first
    queues' sets and of the completed set, the newest and oldest of the first failure groups."""
    calls: list[tuple[Any, ...]] = []
    for queue in queues[:SAMPLED]:
        calls += [("ZRANDMEMBER", f"{prefix}q:{queue}-{kind}", 3) for kind in ("work", "scheduled")]
    for group in groups[:SAMPLED]:
        calls += [("LRANGE", f"{prefix}f:{group}", 0, 2), ("LRANGE", f"{prefix}f:{group}", -3, -1)]
    calls.append(("ZRANDMEMBER", f"{prefix}completed", 10))
    return calls


async def names(client: AnyClient) -> dict[str, Any]:
    """The names a search form offers as it is typed: queues, tags (the most used first),
    failure groups, workers, and the classes of a sample of jobs (a few at random of the
    first queues' waiting and scheduled jobs and of the completed ones, the newest and oldest
    of the first failure groups: the protocol keeps no index of classes), each list at most
    `NAMES_MOST` long; and what reading them cost (round trips, jobs read)."""
    started = time.perf_counter()
    queues: set[str] = set()
    tags: dict[str, float] = {}
    groups: set[str] = set()
    workers: set[str] = set()
    classes: set[str] = set()
    trips = read = 0
    for shard in client.servers:
        p = shard.prefix
        queue_names, tag_scores, group_names, worker_names = await shard.protocol.plain_many(
            "search.names",
            [
                ("ZRANGE", f"{p}queues", 0, NAMES_MOST - 1),
                ("ZREVRANGE", f"{p}tags", 0, NAMES_MOST - 1, "WITHSCORES"),
                ("SRANDMEMBER", f"{p}failures", NAMES_MOST),
                ("ZREVRANGE", f"{p}workers", 0, NAMES_MOST - 1),
            ],
        )
        queues.update(map(str, queue_names))
        pairs = list(tag_scores)
        for tag, score in zip(pairs[::2], pairs[1::2], strict=True):
            tags[str(tag)] = tags.get(str(tag), 0.0) + float(score)
        groups.update(map(str, group_names))
        workers.update(map(str, worker_names))
        listings = await shard.protocol.plain_many(
            "search.names",
            _sample_calls(p, list(map(str, queue_names)), list(map(str, group_names))),
        )
        sample = list(dict.fromkeys(str(j) for listing in listings for j in listing))
        sample = sample[:CLASS_SAMPLE]
        klasses = await shard.protocol.plain_many(
            "search.names", [("HGET", f"{p}j:{jid}", "klass") for jid in sample]
        )
        classes.update(str(k) for k in klasses if k)
        trips += 3 if sample else 2
        read += len(sample)
    return {
        "queues": sorted(queues)[:NAMES_MOST],
        "tags": sorted(tags, key=lambda t: (-tags[t], t))[:NAMES_MOST],
        "groups": sorted(groups)[:NAMES_MOST],
        "workers": sorted(workers)[:NAMES_MOST],
        "classes": sorted(classes)[:NAMES_MOST],
        "cost": {
            "round_trips": trips,
            "jobs_read": read,
            "milliseconds": round((time.perf_counter() - started) * 1000, 1),
        },
    }
