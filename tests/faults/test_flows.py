"""Flows under SIGKILL (marker ``faults``): 200 flows of 20 children each drain through real
``aqless-run`` processes while one is SIGKILLed every 2 s. Every parent completes once,
runs only after all of its children completed, and reads all of their results."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import anyio
import pytest

import aqless
from aqless.flows import FlowNode
from tests.faults.harness import QUEUE, Killer, drained, own_server, prepare, workers

pytestmark = [pytest.mark.faults, pytest.mark.timeout(180)]

FLOWS, CHILDREN = 200, 20

#: The jobs of the flows' workers (``-i flowjobs``): a child returns its index; a parent
#: records what it read of its children and when, by the server's clock.
FLOW_JOBS = """
import json

import anyio


async def child(job):
    await anyio.sleep(0.1)
    await job.client.redis.rpush("flow:children", job.jid)
    return job.data["i"]


async def parent(job):
    results = await job.children_results()
    seconds, micro = await job.client.redis.time()
    record = {
        "jid": job.jid,
        "at": seconds + micro / 1e6,
        "values": sorted(child.value() for child in results),
        "states": sorted({str(child.state) for child in results}),
    }
    await job.client.redis.rpush("flow:parents", json.dumps(record))
    return sum(record["values"])
"""

WORKER = ("-i", "flowjobs", "-c", "10", "--interval", "1", "--backoff", "0.2", QUEUE)


def flow(number: int) -> FlowNode:
    children = [
        FlowNode("flowjobs.child", {"i": i}, queue=QUEUE, name=f"c{i}", retries=50)
        for i in range(CHILDREN)
    ]
    return FlowNode("flowjobs.parent", {"flow": number}, queue=QUEUE, retries=50, children=children)


async def test_sigkilled_workers_run_every_parent_once_after_all_its_children(
    tmp_path: Path,
) -> None:
    with own_server() as server, workers(server.url, tmp_path) as spawn:
        (tmp_path / "flowjobs.py").write_text(FLOW_JOBS)
        async with aqless.Client(server.url) as client:
            await prepare(client)
            roots = [(await client.flows.put(flow(number))).root for number in range(FLOWS)]
            total = FLOWS * (CHILDREN + 1)
            killer = Killer(spawn, client, WORKER)
            killer.start(3)
            async with anyio.create_task_group() as group:
                while await client.redis.zcard("ql:completed") < total * 0.9:
                    await anyio.sleep(2.0)
                    await killer.kill_one(group)
                await drained(client, total, timeout=60, spawned=spawn.started)
            assert killer.kills >= 4, "the flows drained before the faults happened"

            records = [
                json.loads(text) for text in await client.redis.lrange("flow:parents", 0, -1)
            ]
            runs = Counter(record["jid"] for record in records)
            assert set(runs) == set(roots)
            # a parent runs again only when its worker was killed while running it
            assert sum(runs.values()) - len(runs) <= 10 * killer.kills
            reruns = sum(runs.values()) - len(runs)
            print(f"\n{FLOWS} flows: {killer.kills} kills, {reruns} parent reruns")  # noqa: T201
            for record in records:
                assert record["values"] == list(range(CHILDREN)), record
                assert record["states"] == ["complete"], record
            for root in roots:
                job = await client.jobs.get(root)
                assert isinstance(job, aqless.Job)
                assert job.state == aqless.JobState.COMPLETE
                assert await client.result(root, timeout=1) == sum(range(CHILDREN))
                first_run = min(r["at"] for r in records if r["jid"] == root)
                children = await client.jobs.get_many(list(job.dependencies) or [])
                assert not children  # released: the parent depends on nothing now
                finished = await _children_finished(client, root)
                assert max(finished) <= first_run, root


async def _children_finished(client: aqless.Client, root: str) -> list[float]:
    """When each child of `root` completed (the `ql:completed` scores)."""
    results = await client.redis.hget(f"ql:j:{root}", "flow_children")
    jids = json.loads(results or "[]")
    assert len(jids) == CHILDREN
    scores = await client.redis.zmscore("ql:completed", jids)
    finished = [float(score) for score in scores if score is not None]
    assert len(finished) == CHILDREN
    return finished
