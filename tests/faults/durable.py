"""Durable puts against a server SIGKILLed right after each reply: the loop that the fault
test (tests/faults/test_durable_puts.py) and benchmarks/durable_puts.py share."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import anyio

import aqless
from tests.faults.harness import OwnServer

QUEUE = "durable"


@dataclass
class Tally:
    """What the tries found: the jids acknowledged but missing after the restart."""

    tries: int = 0
    lost: list[str] = field(default_factory=list)
    put_seconds: list[float] = field(default_factory=list)  # each acknowledged put's time


async def kill_after_each_put(
    server: OwnServer, tries: int, durable: aqless.Durability | bool
) -> Tally:
    """`tries` times: a durable put, a SIGKILL of the server as soon as it is acknowledged,
    a restart on the same data, and a look for the job."""
    tally = Tally()
    async with aqless.Client(server.url) as client:
        queue = client.queues[QUEUE]
        for attempt in range(tries):
            started = time.perf_counter()
            jid = await queue.put("app.Job", {"attempt": attempt}, durable=durable)
            tally.put_seconds.append(time.perf_counter() - started)
            server.kill()  # right after the reply: nothing else runs in between
            await anyio.to_thread.run_sync(server.start)
            tally.tries += 1
            if await client.jobs.get(jid) is None:
                tally.lost.append(jid)
    return tally
