"""The operators' listings at scale read what they show and no more: the throttles from
aqless's index (no SCAN; other clients' throttles found by a queue's name or by the
reindex sweep), every recurring template a page of templates a call, and one queue's
failed jobs paged on the server."""

from __future__ import annotations

import pytest

import aqless
from aqless.ops.listings import (
    listed_throttles,
    recurring_templates,
    reindex_throttles,
    templates_by_id,
    throttle_documents,
)
from tests.support.clients import Counted, ManualClock, pop_one
from tests.support.commandstats import calls

pytest_plugins = ["tests.support.client_fixtures"]


# -- throttles ---------------------------------------------------------------------------------


async def test_the_throttles_set_are_listed_from_the_index_without_a_scan(
    client: aqless.Client,
) -> None:
    await client.throttles["smtp"].set(3)
    await client.throttles["gone"].set(1)
    await client.throttles["gone"].delete()
    await client.queues["emails"].set_throttle(2)
    await client.queues["emails"].put("app.Send", {}, throttles=["smtp"])
    await pop_one(client.queues["emails"])
    before = await calls(client, "scan")
    listed = await listed_throttles(client)
    assert [(t.info.id, t.info.maximum, t.locks, t.pending) for t in listed] == [
        ("ql:q:emails", 2, 1, 0),
        ("smtp", 3, 1, 0),
    ]
    assert await client.redis.smembers("ql:throttles") == {"smtp", "ql:q:emails"}
    assert await calls(client, "scan") == before


async def test_an_expired_throttle_leaves_the_listing_and_the_index(
    client: aqless.Client,
) -> None:
    await client.throttles["brief"].set(1, expiration=60)
    await client.throttles["kept"].set(1)
    await client.redis.delete("ql:th:brief")  # as its expiry does
    assert [t.info.id for t in await listed_throttles(client)] == ["kept"]
    assert await client.redis.smembers("ql:throttles") == {"kept"}


async def test_other_clients_throttles_are_found_by_queue_name_or_by_the_sweep(
    client: aqless.Client,
) -> None:
    await client.queues["emails"].put("app.Send", {})
    # as another qless client's script writes them: records, no index
    await client.redis.hset("ql:th:ql:q:emails", mapping={"id": "ql:q:emails", "maximum": 4})
    await client.redis.hset("ql:th:other*[x]", mapping={"id": "other*[x]", "maximum": 2})
    await client.redis.zadd("ql:th:lonely-locks", {"j": 1})  # not a record
    await client.redis.mset({f"ql:other-{n}": n for n in range(200)})
    assert [t.info.id for t in await listed_throttles(client)] == ["ql:q:emails"]
    steps: list[int] = []
    assert await reindex_throttles(client, step=2, advance=steps.append) == 2  # both records
    assert len(steps) > 1  # one short step at a time
    documents = await throttle_documents(client)
    assert [(d["id"], d["maximum"]) for d in documents] == [("other*[x]", 2), ("ql:q:emails", 4)]
    assert await reindex_throttles(client) == 0  # indexed already


async def test_the_script_indexes_only_throttles_that_have_a_record(
    client: aqless.Client,
) -> None:
    await client.redis.hset("ql:th:a", mapping={"id": "a", "maximum": 1})
    assert await client.protocol.call("throttle.index", "a", "missing") == 1
    assert await client.redis.smembers("ql:throttles") == {"a"}


# -- recurring templates -----------------------------------------------------------------------


async def test_every_template_is_read_a_page_of_templates_a_call(counted: Counted) -> None:
    client = counted.client
    for queue in ("a", "b"):
        for n in range(30):
            await client.queues[queue].recur("app.Tick", {"n": n}, interval=60, jid=f"{queue}{n}")
    before = counted.round_trips.count
    found = await recurring_templates(client)
    # the queue names, then each queue's ids and its templates
    assert counted.round_trips.count - before == 1 + 2 * 2
    assert len(found) == 60
    assert {(t.jid, t.queue_name, t.data["n"]) for t in found} == {
        (f"{queue}{n}", queue, n) for queue in ("a", "b") for n in range(30)
    }
    assert [t.jid for t in await recurring_templates(client, ["b"])][:2] == ["b0", "b1"]
    picked = await templates_by_id(client, ["b3", "missing", "a7"])
    assert [(t.jid, t.interval) for t in picked] == [("b3", 60), ("a7", 60)]


# -- one queue's failed jobs -------------------------------------------------------------------


async def failing(client: aqless.Client, jobs: list[tuple[str, str, str]]) -> None:
    for queue, jid, group in jobs:
        await client.queues[queue].put("app.Job", {}, jid=jid)
        job = await pop_one(client.queues[queue])
        await job.fail(group, "boom")


PLACES = [
    ("q" if n % 3 else "other", f"j{n:02}", f"g{n % 4}") for n in range(40)
]  # 4 groups, the queue's jobs between another queue's


def expected(queue: str) -> list[str]:
    """The queue's failed jids, group by group in name order, the newest first in each."""
    return [
        jid
        for group in sorted({g for _, _, g in PLACES})
        for q, jid, g in reversed(PLACES)
        if (q, g) == (queue, group)
    ]


@pytest.mark.parametrize("budget", [1, 3, 7, 1000])
async def test_the_server_pages_a_queues_failed_jobs_resuming_where_it_stopped(
    timed_client: aqless.Client, budget: int
) -> None:
    await failing(timed_client, PLACES)
    wanted = expected("q")
    for offset, count in ((0, 100), (5, 4), (9, 1), (25, 10), (30, 5)):
        found: list[str] = []
        skip, group, start = offset, "", 0
        while len(found) < count:
            reply = await timed_client.protocol.json(
                "queue.failedJobs", "q", skip, count - len(found), group, start, budget
            )
            assert len(reply["jids"]) <= budget
            found += reply["jids"]
            skip -= reply["skipped"]
            if reply["group"] is None:
                break
            group, start = reply["group"], reply["start"]
        assert found == wanted[offset : offset + count], (offset, count)
    assert await timed_client.queues["q"].jobs("failed", offset=20, count=3) == wanted[20:23]
    assert await timed_client.queues["other"].jobs("failed") == expected("other")[:25]


async def test_a_deep_failed_page_is_one_round_trip_and_reads_no_job(
    counted: Counted, clock: ManualClock
) -> None:
    await failing(counted.client, PLACES)
    before = counted.round_trips.count
    assert (
        await counted.client.queues["q"].jobs("failed", offset=24, count=2) == expected("q")[24:26]
    )
    assert counted.round_trips.count - before == 1


async def test_a_failed_listing_refuses_a_bad_argument(client: aqless.Client) -> None:
    with pytest.raises(aqless.InvalidArgumentError, match='Arg "budget" is not a number'):
        await client.protocol.json("queue.failedJobs", "q", 0, 1, "", 0, "many")
    with pytest.raises(aqless.InvalidArgumentError, match="no queue name"):
        await client.protocol.json("queue.failedJobs")
