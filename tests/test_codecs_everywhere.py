"""A client's codec seals every payload that is job data, wherever it is stored: a workflow
signal's payload (in the job's hash), a recurring template's data, a flow's and a batch's
jobs and a sharded deployment's jobs (the outbox's rows: tests/outbox/test_writers.py).
Each test reads the raw bytes the server holds, then reads back through a client with the
key (the data) and, where the data is read, one without (``encrypted (key k1)``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

import aqless
from aqless import PutRequest, WorkflowContext
from aqless.codecs import KeyRing, PayloadCodec
from aqless.codecs.envelope import ENVELOPE_PREFIX
from aqless.flows import FlowNode
from tests.faults.cluster import Cluster
from tests.support.sharding import deployment
from tests.support.worker import make_worker, running

pytest_plugins = ["tests.support.sharding_fixtures"]

SECRET = {"card": "4111-1111", "email": "ada@example.com"}
SEALED = "encrypted (key k1)"


@pytest.fixture
def codec() -> PayloadCodec:
    return PayloadCodec(keys=KeyRing({"k1": KeyRing.new_key()}))


@pytest.fixture
async def clients(
    server_url: str, codec: PayloadCodec
) -> AsyncIterator[tuple[aqless.Client, aqless.Client]]:
    """A client with the key and one without, on a flushed server."""
    async with aqless.Client(server_url, codec=codec) as keyed, aqless.Client(server_url) as bare:
        await bare.redis.flushall()
        yield keyed, bare


def assert_sealed(stored: Any) -> None:
    text = stored.decode() if isinstance(stored, bytes) else str(stored)
    assert text.startswith(ENVELOPE_PREFIX), text
    assert "4111-1111" not in text
    assert "ada@example.com" not in text


async def data_of(client: aqless.Client, jid: str) -> Any:
    job = await client.jobs.get(jid)
    assert job is not None
    return job.data


async def test_a_signal_s_payload_is_sealed_in_the_job_s_hash(
    clients: tuple[aqless.Client, aqless.Client],
) -> None:
    keyed, _ = clients
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Card")
    async def card(ctx: WorkflowContext) -> Any:
        return await ctx.wait_for("card")

    jid = await keyed.queues["signals"].put("wf.Card", {})
    assert await keyed.signal(jid, "card", SECRET) == "kept"
    kept = json.loads(str(await keyed.redis.hget(f"ql:j:{jid}", "wf-signal:1")))
    assert_sealed(json.dumps(kept["payload"], separators=(",", ":")))
    async with running(make_worker(keyed, ["signals"], handlers=handlers, interval=0.1)):
        assert await keyed.result(jid, timeout=10) == SECRET
    assert_sealed(await keyed.redis.hget(f"ql:j:{jid}", "data"))  # the record took it sealed


async def test_a_recurring_template_s_data_is_sealed(
    clients: tuple[aqless.Client, aqless.Client],
) -> None:
    keyed, bare = clients
    queue = keyed.queues["recurring"]
    rjid = await queue.recur("app.Bill", SECRET, interval=3600, jid="bill")
    assert_sealed(await keyed.redis.hget("ql:r:bill", "data"))
    assert await data_of(keyed, rjid) == SECRET
    assert await data_of(bare, rjid) == SEALED
    recurring = await keyed.jobs.get(rjid)
    assert isinstance(recurring, aqless.RecurringJob)
    await recurring.update(data={**SECRET, "n": 2})
    assert_sealed(await keyed.redis.hget("ql:r:bill", "data"))
    assert await data_of(keyed, rjid) == {**SECRET, "n": 2}


async def test_a_flow_s_jobs_are_sealed(clients: tuple[aqless.Client, aqless.Client]) -> None:
    keyed, bare = clients
    flow = await keyed.flows.put(
        FlowNode("app.Report", SECRET, queue="flows"),
        children=[FlowNode("app.Part", SECRET, queue="flows", name="part")],
    )
    for jid in flow.jids:
        assert_sealed(await keyed.redis.hget(f"ql:j:{jid}", "data"))
        assert await data_of(keyed, jid) == SECRET
        assert await data_of(bare, jid) == SEALED
    child = await keyed.queues["flows"].pop()
    assert child is not None
    await child.complete(result=SECRET)
    parent = await keyed.jobs.get(flow.root)
    assert isinstance(parent, aqless.Job)
    assert (await parent.children_results())["part"] == SECRET  # a sealed result, opened


async def test_a_batch_s_jobs_are_sealed(clients: tuple[aqless.Client, aqless.Client]) -> None:
    keyed, bare = clients
    await keyed.batches.put([("batches", PutRequest("app.Mail", SECRET)) for _ in range(2)])
    jids = list(map(str, await keyed.redis.zrange("ql:q:batches-work", 0, -1)))
    assert len(jids) == 2
    for jid in jids:
        assert_sealed(await keyed.redis.hget(f"ql:j:{jid}", "data"))
        assert await data_of(keyed, jid) == SECRET
        assert await data_of(bare, jid) == SEALED


async def test_a_sharded_client_seals_what_it_puts(cluster: Cluster, codec: PayloadCodec) -> None:
    async with deployment(cluster, "sealed", codec=codec) as keyed:
        jids = await keyed.queues["q"].put_many([PutRequest("app.Mail", SECRET) for _ in range(6)])
        for jid in jids:
            shard = await keyed.client_of_jid(jid)
            assert_sealed(await shard.redis.hget(f"{shard.prefix}j:{jid}", "data"))
            job = await keyed.jobs.get(jid)
            assert job is not None
            assert job.data == SECRET
        async with deployment(cluster, "sealed") as bare:
            job = await bare.jobs.get(jids[0])
            assert job is not None
            assert job.data == SEALED
        with anyio.fail_after(10):
            await keyed.jobs.cancel(*jids)


async def test_a_signal_to_a_workflow_of_a_queue_with_its_own_chain_is_opened(
    server_url: str, codec: PayloadCodec
) -> None:
    vault = PayloadCodec(keys=KeyRing({"k9": KeyRing.new_key()}))
    chained = PayloadCodec(keys=codec.keys, queues={"vault": vault})
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Vault")
    async def opened(ctx: WorkflowContext) -> Any:
        return await ctx.wait_for("card")

    async with aqless.Client(server_url, codec=chained) as client:
        jid = await client.queues["vault"].put("wf.Vault", {})
        await client.signal(jid, "card", SECRET)  # sealed by the client's chain (k1)
        async with running(make_worker(client, ["vault"], handlers=handlers, interval=0.1)):
            assert await client.result(jid, timeout=10) == SECRET
