"""Which queues a worker pops from, and in which order: reservers, globs, negations,
identifier patterns and priority patterns."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

import anyio
import pytest

import aqless
from aqless import QueueSelection, Reserver
from tests.support.worker import Recorder, make_worker, one, running, until

# Which queue a worker pops from is the worker's order and the script's pop, the same on every
# kind: the two unix kinds only, except the test that hears a new queue through its put event.


async def run_all(
    client: aqless.Client, specs: Sequence[str], jobs: dict[str, int], **options: Any
) -> list[str]:
    """Put `jobs` (queue -> how many), run one job at a time until all but the jobs of
    queues the worker must not serve ran; returns the queues in the order they ran."""
    for queue, count in jobs.items():
        for _ in range(count):
            await client.queues[queue].put("app.job")
    expected = options.pop("expected", sum(jobs.values()))
    recorder = Recorder()
    worker = make_worker(client, specs, one(recorder), concurrency=1, **options)
    async with running(worker):
        await until(lambda: worker.counters.completed == expected)
        await anyio.sleep(0.1)  # time to take a job it must not
    return recorder.queues


async def test_ordered_drains_the_first_queue_first(client: aqless.Client) -> None:
    ran = await run_all(client, ["q1", "q2"], {"q2": 3, "q1": 3})
    assert ran == ["q1"] * 3 + ["q2"] * 3


async def test_round_robin_alternates(client: aqless.Client) -> None:
    ran = await run_all(client, ["q1", "q2"], {"q1": 3, "q2": 3}, reserver="round-robin")
    assert ran == ["q1", "q2"] * 3


async def test_shuffled_covers_every_queue(client: aqless.Client) -> None:
    ran = await run_all(
        client, ["q1", "q2", "q3"], {"q1": 2, "q2": 2, "q3": 2}, reserver="shuffled"
    )
    assert sorted(ran) == ["q1", "q1", "q2", "q2", "q3", "q3"]
    assert sorted(ran[:3]) == ["q1", "q2", "q3"]  # round-robin over the shuffled order


def test_shuffled_order_is_a_rotation_of_one_shuffle() -> None:
    reserver = Reserver("shuffled", shuffle=random.Random(7))  # noqa: S311  # seeded: repeatable
    queues = [f"q{i}" for i in range(6)]
    orders = [reserver.order(queues) for _ in range(6)]
    assert all(sorted(order) == queues for order in orders)
    assert [order[0] for order in orders] == orders[0]  # each starts one further on


async def test_globs_and_negations(client: aqless.Client) -> None:
    ran = await run_all(
        client,
        ["mail-*", "!mail-spam"],
        {"mail-a": 2, "mail-b": 1, "mail-spam": 2, "other": 1},
        expected=3,
    )
    assert ran == ["mail-a", "mail-a", "mail-b"]
    assert await client.queues["mail-spam"].length() == 2


async def test_identifier_patterns(client: aqless.Client) -> None:
    await client.protocol.call(
        "queueIdentifierPatterns.setAll", "batch", json.dumps(["batch-*", "!batch-slow"])
    )
    ran = await run_all(client, ["@batch"], {"batch-1": 1, "batch-slow": 1, "web": 1}, expected=1)
    assert ran == ["batch-1"]
    everything = await QueueSelection(["@default"]).resolve(client)
    assert sorted(everything) == ["batch-1", "batch-slow", "web"]
    assert await QueueSelection(["@unknown"]).resolve(client) == []


async def set_priorities(client: aqless.Client, *groups: tuple[list[str], bool]) -> None:
    await client.protocol.call(
        "queuePriorityPatterns.setAll",
        *(json.dumps({"pattern": patterns, "fairly": fairly}) for patterns, fairly in groups),
    )


async def test_priority_patterns(client: aqless.Client) -> None:
    await set_priorities(client, (["urgent-*"], False), (["default"], False), (["bulk"], False))
    ran = await run_all(
        client,
        ["*"],
        {"bulk": 1, "normal": 1, "urgent-b": 1, "urgent-a": 1},
        priorities=True,
    )
    assert ran == ["urgent-a", "urgent-b", "normal", "bulk"]


async def test_a_fairly_group_is_shuffled(client: aqless.Client) -> None:
    await set_priorities(client, (["fair-*"], True), (["default"], False))
    for name in ("fair-a", "fair-b", "fair-c", "fair-d", "last"):
        await client.queues[name].put("app.job")
    selection = QueueSelection(["*"], priorities=True, shuffle=random.Random(1))  # noqa: S311
    orders = {tuple(await selection.resolve(client)) for _ in range(20)}
    assert len(orders) > 1
    for order in orders:
        assert sorted(order[:4]) == ["fair-a", "fair-b", "fair-c", "fair-d"]
        assert order[4] == "last"


@pytest.mark.every_deployment  # heard from the put event, not the 30 s poll: by kind
async def test_a_new_queue_matching_a_glob_is_picked_up(client: aqless.Client) -> None:
    recorder = Recorder()
    await client.queues["mail-old"].put("app.job")
    worker = make_worker(client, ["mail-*"], one(recorder), interval=30)
    async with running(worker):
        await until(lambda: recorder.queues == ["mail-old"])
        await client.queues["mail-new"].put("app.job")
        await until(lambda: recorder.queues == ["mail-old", "mail-new"], timeout=1)
