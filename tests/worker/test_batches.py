"""Batches run by real Workers (on Valkey 9 and Redis 7): the callback jobs run once each when
their condition is met, with the batch's id and totals in their data; live totals; and the
refusals a bad batch gets before anything is written."""

from __future__ import annotations

from typing import Any

import pytest

import aqless
import aqless.sync
from aqless import BatchCallback, InvalidArgumentError, Job, PutRequest
from tests.support.deployments import Deployment
from tests.support.worker import make_worker, running, until


class Calls:
    """Job code for members (fail when the data says so) and callbacks (recorded)."""

    def __init__(self) -> None:
        self.callbacks: list[tuple[str, dict[str, Any]]] = []
        self.handlers = aqless.Handlers()
        self.handlers.register("app.Member")(self.member)
        for kind in ("Success", "Complete", "Death"):
            self.handlers.register(f"app.{kind}")(self.callback)

    async def member(self, job: Job) -> None:
        if job.data.get("fail"):
            raise RuntimeError("member failed")

    async def callback(self, job: Job) -> None:
        self.callbacks.append((job.klass_name, dict(job.data)))

    def kinds(self) -> list[str]:
        return sorted(klass for klass, _ in self.callbacks)


CALLBACKS: dict[str, Any] = {
    "on_success": BatchCallback("app.Success", "callbacks", {"note": "all good"}),
    "on_complete": BatchCallback("app.Complete", "callbacks"),
    "on_death": BatchCallback("app.Death", "callbacks"),
}


def members(count: int, *, failing: int = 0) -> list[tuple[str, PutRequest]]:
    return [
        ("work", PutRequest("app.Member", {"fail": n < failing}, retries=0)) for n in range(count)
    ]


async def test_success_and_complete_run_once_when_every_member_completed(
    client: aqless.Client,
) -> None:
    calls = Calls()
    bid = await client.batches.put(members(5), description="nightly", **CALLBACKS)
    first = await client.batches.get(bid)
    assert first is not None
    assert (first.total, first.pending, first.done, first.failed) == (5, 5, 0, 0)
    async with running(make_worker(client, ["work", "callbacks"], calls.handlers)):
        await until(lambda: len(calls.callbacks) == 2, what="two callbacks")
    assert calls.kinds() == ["app.Complete", "app.Success"]
    success = dict(calls.callbacks)["app.Success"]
    assert success["note"] == "all good"
    assert success["batch"] == {
        "id": bid, "event": "success", "description": "nightly",
        "total": 5, "pending": 0, "done": 5, "failed": 0,
    }  # fmt: skip
    batch = await client.batches.get(bid)
    assert batch is not None
    assert batch.succeeded
    assert batch.fraction == 1.0
    assert batch.finished is not None
    assert batch.expires == pytest.approx(batch.finished + 86_400)
    assert all(callback.fired for kind, callback in batch.callbacks.items() if kind != "death")
    assert not batch.callbacks["death"].fired


async def test_the_first_death_runs_on_death_and_success_never(client: aqless.Client) -> None:
    calls = Calls()
    bid = await client.batches.put(members(4, failing=2), **CALLBACKS)
    async with running(make_worker(client, ["work", "callbacks"], calls.handlers)):
        await until(lambda: len(calls.callbacks) == 2, what="death and complete")
    assert calls.kinds() == ["app.Complete", "app.Death"]
    death = dict(calls.callbacks)["app.Death"]["batch"]
    assert death["failed"] == 1
    assert death["event"] == "death"
    batch = await client.batches.get(bid)
    assert batch is not None
    assert (batch.pending, batch.done, batch.failed) == (0, 2, 2)
    assert not batch.succeeded


async def test_a_cancelled_member_counts_as_failed(client: aqless.Client) -> None:
    bid = await client.batches.put(members(2), **CALLBACKS)
    page = await client.queues["work"].peek(2)
    await client.jobs.cancel(page[0].jid)
    batch = await client.batches.get(bid)
    assert batch is not None
    assert (batch.pending, batch.failed) == (1, 1)
    assert batch.callbacks["death"].fired


async def test_members_carry_the_batch_id_and_look_like_any_job(client: aqless.Client) -> None:
    bid = await client.batches.put(members(1))
    (job,) = await client.queues["work"].peek(1)
    assert await client.redis.hget(f"{client.prefix}j:{job.jid}", "batch") == bid
    assert job.klass_name == "app.Member"  # an ordinary job to any client
    listing = await client.batches.recent()
    assert listing.total == 1
    assert [batch.id for batch in listing.batches] == [bid]


def local_class() -> type:
    class Hidden:
        pass

    return Hidden


async def test_bad_batches_are_refused_before_anything_is_written(client: aqless.Client) -> None:
    await client.queues["work"].put("app.Member", jid="taken")
    refusals: list[tuple[str, Any, dict[str, Any]]] = [
        ("at least one member", [], {}),
        ("at most 10000 members", [("work", PutRequest("app.Member"))] * 10_001, {}),
        ("importable by its name", members(1), {"on_success": BatchCallback(local_class(), "q")}),
        ("importable by its name", members(1), {"on_death": BatchCallback(lambda: 0, "q")}),
        ("member jid already exists: taken", [("work", PutRequest("app.Member", jid="taken"))], {}),
        ("takes no dedup", [("work", PutRequest("app.Member", dedup="d"))], {}),
        ("queue must be a name", [("", PutRequest("app.Member"))], {}),
        ("'batch' key", members(1), {"on_success": BatchCallback("a.B", "q", {"batch": 1})}),
    ]
    for text, given, callbacks in refusals:
        with pytest.raises(InvalidArgumentError, match=text):
            await client.batches.put(given, **callbacks)
    assert await client.queues["work"].length() == 1
    assert (await client.batches.recent()).total == 0


def test_the_blocking_client_puts_and_reads_batches(deployment: Deployment) -> None:
    assert deployment.url is not None
    with aqless.sync.Client(deployment.url) as client:
        bid = client.batches.put(members(2), on_complete=CALLBACKS["on_complete"])
        batch = client.batches.get(bid)
        assert batch is not None
        assert batch.total == 2
        assert client.batches.get("no-such-batch") is None
