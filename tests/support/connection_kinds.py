"""Checks that a client of any kind of deployment (TCP, unix, TLS, ACL user, Sentinel,
Cluster) gets the one connection design: its script calls go over the lean connection, and
an idle worker is pushed its jobs (aqless._connection.endpoint)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio

import aqless
from aqless._connection.lean import LeanConnection
from aqless._connection.pop_after import POP
from tests.support.worker import make_worker, one, running, until


async def assert_script_calls_go_lean(
    client: aqless.Client, kind: str, *, admin: aqless.Client | None = None
) -> None:
    """The client's lean connection is of `kind` and carries its script calls: the server
    lists it (named, or by its ACL user when an `admin` client looks) as calling the script."""
    wire = client.protocol.wire
    assert wire.endpoint.kind == kind
    assert client.protocol.script.uses_lean_connection
    if admin is None:
        await wire.call(("CLIENT", "SETNAME", "aqless-lean"))
        marker, onlooker = " name=aqless-lean ", LeanConnection(wire.endpoint)
    else:  # a user allowed only the script: it cannot name itself
        marker = f" user={wire.endpoint.options['username']} "
        onlooker = admin.protocol.wire
    await client.queues["lean-probe"].length()  # a script call
    assert wire.endpoint.address is not None
    try:
        listed = await onlooker.call(("CLIENT", "LIST"))
    finally:
        if admin is None:
            await onlooker.close()
    lines = [line for line in listed.splitlines() if marker in line]
    assert any(" cmd=fcall " in line or " cmd=evalsha " in line for line in lines), lines


POPS = frozenset({POP, "queue.pop"})


class Pops:
    """Counts a worker's pops (`rateLimit.pop`, the worker's, or `queue.pop`: they all go
    through ScriptCaller.call_ordered)."""

    def __init__(self, client: aqless.Client) -> None:
        self.count = 0
        protocol = client.protocol
        original = protocol.call_ordered

        async def counting(command: str, arguments: Any) -> Any:
            if command in POPS:
                self.count += 1
            return await original(command, arguments)

        protocol.call_ordered = counting  # type: ignore[method-assign]


async def settled(
    pops: Sequence[Pops],
    ready: Callable[[], Awaitable[bool]],
    *,
    quiet: float = 0.3,
    timeout: float = 10,
) -> None:
    """Wait until `ready()` holds and no pop was counted for `quiet` seconds: workers that
    share a budget pop and offer a few times on starting (a pop in flight holds the slot
    another would offer) before their offers settle."""
    with anyio.fail_after(timeout):
        while True:
            counts = [pop.count for pop in pops]
            if await ready():
                await anyio.sleep(quiet)
                if [pop.count for pop in pops] == counts and await ready():
                    return
            else:
                await anyio.sleep(0.01)


async def assert_a_worker_is_pushed_its_job(client: aqless.Client, queue: str = "pushq") -> None:
    """An idle worker of `client` offers, and a put is pushed to it: done without a pop."""
    done: list[str] = []
    worker = make_worker(client, [queue], one(lambda job: done.append(job.jid)), interval=30)
    pops = Pops(client)
    offers = f"{client.prefix}offers:{queue}"
    async with running(worker):

        async def offered() -> bool:
            return bool(await client.redis.hget(offers, client.worker_name))

        await until(lambda: worker.listening, what="the worker listens")
        await settled([pops], offered)  # offering, and no pop of its start still on its way
        before = pops.count
        assert before > 0, "the worker's first pop, before it offered, was not counted"
        jid = await client.queues[queue].put("app.job")
        await until(lambda: jid in done, timeout=5, what="the pushed job done")
        assert pops.count == before, "the job came by a pop, not pushed"
    job = await client.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    assert job.state == aqless.JobState.COMPLETE
