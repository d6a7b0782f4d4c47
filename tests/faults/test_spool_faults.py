"""Reliable push under faults (aqless.spool): producers keep putting while the server is
SIGKILLed and restarted; a producer process is SIGKILLed with puts in its spool file and the
next one sends them. Every accepted put must be queued exactly once (each job, each dedup id
counted), in the order its producer made them. The server fsyncs every write (``always``),
so a SIGKILL loses nothing it acknowledged."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

import aqless
from tests.faults.harness import QUEUE, OwnServer, own_server
from tests.support.processes import CHECKOUT

pytestmark = [pytest.mark.faults, pytest.mark.timeout(120)]


@pytest.fixture
def server() -> Iterator[OwnServer]:
    with own_server("always") as own:
        yield own


async def queued_in_order(client: aqless.Client) -> list[str]:
    """The queue's waiting jobs, in the order a pop takes them."""
    return [str(jid) for jid in await client.redis.zrevrange(f"ql:q:{QUEUE}-work", 0, -1)]


async def check_exactly_once(client: aqless.Client, producers: list[list[str]]) -> None:
    """Every accepted jid queued once, with its dedup id; each producer's in its order."""
    accepted = [jid for made in producers for jid in made]
    queued = await queued_in_order(client)
    assert len(queued) == len(accepted), f"{len(queued)} jobs for {len(accepted)} puts"
    assert set(queued) == set(accepted)
    dedup_ids = [key async for key in client.redis.scan_iter("ql:dedup:spool:*", count=1000)]
    assert len(dedup_ids) == len(accepted)
    place = {jid: index for index, jid in enumerate(queued)}
    for made in producers:
        places = [place[jid] for jid in made]
        assert places == sorted(places), "a producer's puts were queued out of order"


async def put_through_restarts(
    server: OwnServer, jobs: int, producers: int, restarts: int = 3
) -> tuple[aqless.SpoolStats, list[list[str]]]:
    """`producers` tasks put `jobs` jobs through one spool while the server is SIGKILLed
    `restarts` times (down 0.3 s each), spread over the run; the receipts' jids per task."""
    made: list[list[str]] = [[] for _ in range(producers)]
    async with aqless.Client(server.url, socket_timeout=2) as client:
        spool = client.spool(capacity=jobs)

        async def produce(index: int) -> None:
            for number in range(index, jobs, producers):
                receipt = await spool.put(QUEUE, "faultjobs.work", {"n": number})
                made[index].append(receipt.jid)
                await anyio.sleep(0.0005)

        async def kill_and_restart() -> None:
            for fault in range(1, restarts + 1):
                while sum(map(len, made)) < jobs * fault // (restarts + 1):  # noqa: ASYNC110
                    await anyio.sleep(0.01)
                server.kill()
                await anyio.sleep(0.3)
                await anyio.to_thread.run_sync(server.start)

        async with anyio.create_task_group() as group:
            group.start_soon(kill_and_restart)
            for index in range(producers):
                group.start_soon(produce, index)
        with anyio.fail_after(30):
            await spool.flush()
        assert server.starts == restarts + 1
        await check_exactly_once(client, made)
        return spool.stats(), made


async def test_puts_through_three_server_kills_are_queued_exactly_once_in_order(
    server: OwnServer,
) -> None:
    stats, _ = await put_through_restarts(server, jobs=2_000, producers=2)
    assert stats.spooled > 0, "no put met an outage"
    assert (stats.flushed, stats.dropped, stats.refused, stats.depth) == (stats.spooled, 0, 0, 0)


@pytest.mark.faults_long
@pytest.mark.timeout(600)
async def test_10000_puts_by_4_producers_through_three_server_kills(server: OwnServer) -> None:
    stats, _ = await put_through_restarts(server, jobs=10_000, producers=4)
    print(f"\n{stats}")  # noqa: T201
    assert (stats.flushed, stats.dropped, stats.refused) == (stats.spooled, 0, 0)


PRODUCER = """
import asyncio, os, signal, sys
import aqless

async def main(url, path, count):
    async with aqless.Client(url, socket_timeout=2) as client:
        spool = client.spool(path=path)
        for number in range(count):
            if number == count // 2:
                print("half", flush=True)
                sys.stdin.readline()  # the test kills the server meanwhile
            receipt = await spool.put("q", "faultjobs.work", {"n": number})
            print(receipt.jid, "spooled" if receipt.spooled else "queued", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # mid-outage, puts waiting in the file

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


def producer(tmp_path: Path, server: OwnServer, count: int) -> subprocess.Popen[str]:
    """A producer process that puts `count` jobs, half of them once told to go on (the
    server killed meanwhile), then SIGKILLs itself."""
    script = tmp_path / "producer.py"
    script.write_text(PRODUCER)
    arguments = [server.url, str(tmp_path / "puts.spool"), str(count)]
    return subprocess.Popen(
        [sys.executable, str(script), *arguments],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": CHECKOUT},
    )


async def test_a_spool_file_outlives_a_producer_killed_during_an_outage(
    server: OwnServer, tmp_path: Path
) -> None:
    first = producer(tmp_path, server, 200)
    assert first.stdout is not None
    assert first.stdin is not None
    lines = [first.stdout.readline() for _ in range(100)]
    assert first.stdout.readline() == "half\n"
    server.kill()
    first.stdin.write("go\n")
    first.stdin.flush()
    lines += first.stdout.readlines()
    assert first.wait(timeout=30) == -9  # SIGKILLed with puts in its spool
    first.stdin.close()
    first.stdout.close()
    accepted = [line.split() for line in lines]
    assert len(accepted) == 200
    assert {how for _, how in accepted[:100]} == {"queued"}
    assert {how for _, how in accepted[100:]} == {"spooled"}
    server.start()
    async with aqless.Client(server.url) as client:  # the next producer
        spool = client.spool(path=tmp_path / "puts.spool")
        assert spool.depth == 100
        with anyio.fail_after(30):
            await spool.flush()
        await check_exactly_once(client, [[jid for jid, _ in accepted]])
    assert (tmp_path / "puts.spool").read_bytes() == b""


async def test_puts_while_the_server_loads_its_data_are_spooled_then_queued() -> None:
    """A restarted server reading its data back refuses every call (``-LOADING``,
    ServerUnavailableError): the puts meanwhile wait in the spool, then land in order."""
    from tests.faults.test_loading import SLOW_LOADING, loading, reloading

    server = OwnServer("always", extra=SLOW_LOADING)
    server.start()
    try:
        async with aqless.Client(server.url) as client:
            spool = client.spool()
            made: list[str] = []
            async with reloading(server, client):
                while loading(server):  # puts while it loads
                    made.append((await spool.put(QUEUE, "faultjobs.work")).jid)
                    await anyio.sleep(0.02)
            assert spool.stats().spooled > 0, "no put met the loading server"
            with anyio.fail_after(10):
                await spool.flush()
            await check_exactly_once(client, [made])
    finally:
        server.close()
