"""The LockKeeper against a real server: what it does when the server refuses a renewal."""

from __future__ import annotations

import asyncio
import re

import anyio
import pytest

import aqless
from aqless._worker.locks import SUBSCRIBE_TRIES, LockKeeper
from aqless._worker.running import RunningJobs
from tests.support.loopback_proxy import LoopbackProxy
from tests.support.worker import WORKER


async def test_a_refused_renewal_of_a_job_being_reported_is_not_sent_again_at_once(
    client: aqless.Client,
) -> None:
    """The job's outcome is on its way (its complete already landed, its reply did not):
    the server refuses the heartbeat, and the keeper waits before asking again instead of
    asking in a loop until the outcome's reply comes."""
    jid = await client.queues["q"].put("app.A")
    job = await client.queues["q"].pop()
    assert job is not None
    await client.protocol.call("job.complete", jid, WORKER, "q", "{}")  # settled elsewhere
    running_jobs = RunningJobs(1)
    running, _ = running_jobs.take(job, lock_seconds=60, renew_at=0.0)
    running.reporting = True
    keeper = LockKeeper(client, WORKER, running_jobs.by_jid)
    with anyio.move_on_after(0.5):
        await keeper.keep()
    assert keeper.refusals == 1
    assert running.lost is None  # a job being reported is not lost by a refusal


#: A SUBSCRIBE command (or PSUBSCRIBE, SSUBSCRIBE) as the client sends it: the start of a RESP
#: array whose first string is the command's name. Matching the word anywhere also matched
#: the FUNCTION LOAD of the script's library, whose source mentions subscribing: the put of
#: a test on a server without the library was reset.
_SUBSCRIBE = re.compile(rb"(?:^|\r\n)\*\d+\r\n\$\d+\r\n[PS]?SUBSCRIBE\r\n", re.IGNORECASE)


class _SubscriptionResetting(LoopbackProxy):
    """Forwards to the server, but resets the first `resets` connections that subscribe."""

    def __init__(self, server_url: str, resets: int) -> None:
        super().__init__()
        self._server_url = server_url
        self.resets = resets

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await self.upstream(self._server_url)
        self._spawn(self._pump(reader, up_writer, writer, watch=True))
        self._spawn(self._pump(up_reader, writer, up_writer, watch=False))

    async def _pump(
        self,
        source: asyncio.StreamReader,
        sink: asyncio.StreamWriter,
        other: asyncio.StreamWriter,
        *,
        watch: bool,
    ) -> None:
        try:
            while data := await source.read(65536):
                if watch and self.resets and _SUBSCRIBE.search(data):
                    self.resets -= 1
                    other.transport.abort()  # the client's side: a reset, not a reply
                    return
                sink.write(data)
                await sink.drain()
        finally:
            sink.close()


async def test_a_connection_lost_while_subscribing_to_the_workers_channel_is_tried_again(
    server_url: str,
) -> None:
    """Two resets of the worker's channel's subscription at its start: it subscribes on the
    third try and runs its job; a subscription reset every time ends the run with the
    typed ConnectionLostError."""
    async with (
        _SubscriptionResetting(server_url, resets=2) as proxy,
        aqless.Client(proxy.url, namespace="subretry") as client,
    ):
        await client.queues["q"].put("app.A")
        handlers = aqless.Handlers()
        ran: list[str] = []

        @handlers.register("app.A")
        async def work(job: aqless.Job) -> None:
            ran.append(job.jid)

        worker = aqless.Worker(client, ["q"], handlers=handlers, burst=True, interval=0.1)
        await worker.run()
        assert len(ran) == 1
        assert proxy.resets == 0
    async with (
        _SubscriptionResetting(server_url, resets=10 * SUBSCRIBE_TRIES) as proxy,
        aqless.Client(proxy.url, namespace="subretry") as client,
    ):
        worker = aqless.Worker(client, ["q"], handlers=handlers, burst=True, interval=0.1)
        with pytest.raises(aqless.ConnectionLostError):
            await worker.run()
        assert proxy.resets < 9 * SUBSCRIBE_TRIES  # each try was reset (redis-py's tries too)


async def test_a_job_whose_code_releases_it_is_not_lost_nor_renewed_while_the_verb_is_on_its_way(
    client: aqless.Client,
) -> None:
    """The job's code cancels its own job: the ``canceled`` event (or a refused renewal) may
    come before the cancel's reply. Meanwhile the job shows its worker still (nothing of the
    handle is hidden), but it is `released`: the keeper neither renews it nor loses it."""
    await client.queues["q"].put("app.A", jid="a")
    job = await client.queues["q"].pop()
    assert job is not None
    running_jobs = RunningJobs(1)
    running, _ = running_jobs.take(job, lock_seconds=60, renew_at=0.0)
    keeper = LockKeeper(client, WORKER, running_jobs.by_jid)
    on_its_way = asyncio.ensure_future(job.cancel())
    await asyncio.sleep(0)  # the verb started: its call is sent, its reply not read
    assert job.released
    assert job.worker_name == WORKER
    assert not running.held
    keeper.lose(running, "canceled event")
    assert running.lost is None
    await on_its_way
    assert (job.released, job.worker_name) == (True, "")
    assert await client.jobs.get("a") is None


async def test_a_verb_that_fails_leaves_the_job_held(client: aqless.Client) -> None:
    """A complete refused (the job was taken away meanwhile) leaves `released` as it was:
    the job is the keeper's to lose."""
    await client.queues["q"].put("app.A", jid="a")
    job = await client.queues["q"].pop()
    assert job is not None
    running_jobs = RunningJobs(1)
    running, _ = running_jobs.take(job, lock_seconds=60, renew_at=0.0)
    await client.protocol.call("job.timeout", "a")
    with pytest.raises(aqless.LockLostError):
        await job.complete()
    assert (job.released, job.worker_name, running.held) == (False, WORKER, True)
    LockKeeper(client, WORKER, running_jobs.by_jid).lose(running, "heartbeat refused")
    assert running.lost == "heartbeat refused"
