"""Issue 39: network partitions (packets vanish, nothing is reset) never end a worker, and the
history checker (tests/faults/history.py) finds no broken promise across partitions, a
paused worker, a flaky link and server kills; its negative control proves it catches a
broken fence. The long run is ``test_partitions_long.py`` (``nox -s faults_long``)."""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path

import anyio
import httpx
import pytest

import aqless
from aqless._connection import endpoint
from aqless.events import RECONNECTED, EventStream
from aqless.web import create_app
from tests.faults.harness import QUEUE, OwnServer, free_port, own_server, prepare
from tests.faults.history import RUNS, Puts, check
from tests.faults.netem import Conditions, NetemProxy
from tests.faults.partitions import NetnsLinks, Outcome, history_workers, serving, settle
from tests.support.blackhole_proxy import BlackholeProxy
from tests.support.worker_processes import count_reaches

pytestmark = [pytest.mark.faults, pytest.mark.timeout(180)]

#: What a worker logs when an outage begins and ends (docs/guides/worker.md).
DOWN = "the server is unavailable"
UP = "the server is available again"


async def partitions(
    server_url: str,
    folder: Path,
    cuts: list[float],
    *,
    jobs: int,
    between: float = 2.0,
    settle_within: float = 120.0,
) -> Outcome:
    """Three workers through a BlackholeProxy drain `jobs` fenced jobs (one in ten planned
    to fail) while the network is cut for each of `cuts` seconds, `between` seconds apart;
    every job must have ended `settle_within` seconds after the last cut."""
    async with (
        BlackholeProxy(server_url) as proxy,
        aqless.Client(server_url) as client,
    ):
        await prepare(client)
        puts = Puts()
        with history_workers(proxy.url, folder) as spawn:
            started = await serving(spawn, 3)
            await puts.put(client.queues[QUEUE], jobs, sleep=0.3, fail_every=10)
            for seconds in cuts:
                await anyio.sleep(between)
                proxy.cut()
                await anyio.sleep(seconds)
                proxy.heal()
                assert all(w.running() for w in started), [w.log()[-3000:] for w in started]
            drained_in = await settle(client, puts, timeout=settle_within)
            outcome = Outcome.of(await check(client, puts), started, cuts, drained_in)
            print(f"\n{outcome}")  # noqa: T201  # the run's figures, shown with -s
            for worker in started:
                assert worker.running(), worker.log()[-3000:]
            return outcome


def assert_kept(outcome: Outcome) -> None:
    assert outcome.dead == []
    assert outcome.findings.problems() == []


async def test_three_partitions_of_3_s_end_no_worker_and_break_no_promise(
    tmp_path: Path,
) -> None:
    with own_server() as server:
        outcome = await partitions(server.url, tmp_path, [3.0, 3.0, 3.0], jobs=300)
    assert_kept(outcome)
    for log in outcome.logs:  # each said the outage began and ended, once a cut
        assert log.count(DOWN) >= 1, log[-3000:]
        assert log.count(UP) == log.count(DOWN), log[-3000:]


@pytest.mark.parametrize("fenced", [True, False], ids=["fenced", "unfenced-negative-control"])
async def test_a_paused_worker_applies_no_effect_twice_unless_unfenced(
    tmp_path: Path, fenced: bool
) -> None:
    """SIGSTOP a worker past its jobs' locks: another runs them again (attempt 2); resumed,
    the first finishes its code late. Fenced, its writes change nothing; unfenced (the
    negative control), they land twice, and the checker says so."""
    with own_server() as server, history_workers(server.url, tmp_path) as spawn:
        async with aqless.Client(server.url) as client:
            await prepare(client)
            puts = Puts()
            first = spawn("-i", "historyjobs", "-c", "10", "--interval", "1", QUEUE)
            await puts.put(client.queues[QUEUE], 10, sleep=3.0, fenced=fenced)
            # every job's code has started (recorded its run), not only been popped: stopped
            # before that, a run would never be recorded and the count below never reached
            await count_reaches(client, RUNS, 10, timeout=30)
            first.send(signal.SIGSTOP)
            try:
                (second,) = await serving(spawn, 1)
                await count_reaches(client, RUNS, 20, timeout=120)  # each ran again
                await settle(client, puts, timeout=120)
            finally:
                first.send(signal.SIGCONT)
            await anyio.sleep(3.0)  # the first's code wakes and writes late
            findings = await check(client, puts)
            print(f"\n{findings}")  # noqa: T201
            assert first.running()
            assert second.running()
            if fenced:
                assert findings.problems() == []
            else:
                assert findings.doubled, f"the checker missed a broken fence: {findings}"


async def test_a_flaky_link_breaks_no_promise(tmp_path: Path) -> None:
    """Workers through a lossy link: delays, stalls and resets now and then."""
    server = OwnServer(port=free_port())
    server.start()
    try:
        conditions = Conditions(
            delay=0.002, jitter=0.002, stall_chance=0.005, stall_seconds=1.5, reset_chance=0.004
        )
        async with (
            NetemProxy("127.0.0.1", server.port, conditions) as proxy,
            aqless.Client(server.url) as client,
        ):
            await prepare(client)
            puts = Puts()
            with history_workers(proxy.url, tmp_path) as spawn:
                started = await serving(spawn, 3)
                await puts.put(client.queues[QUEUE], 400, sleep=0.2, fail_every=10)
                await settle(client, puts, timeout=120)
                findings = await check(client, puts)
                print(f"\n{findings}; link: {proxy.tally}")  # noqa: T201
                assert proxy.tally.resets > 0, "the link was not flaky"
                assert all(w.running() for w in started)
                assert findings.problems() == []
    finally:
        server.close()


async def test_server_kills_break_no_promise(tmp_path: Path) -> None:
    with own_server("always") as server, history_workers(server.url, tmp_path) as spawn:
        async with aqless.Client(server.url) as client:
            await prepare(client)
            puts = Puts()
            started = await serving(spawn, 3)
            await puts.put(client.queues[QUEUE], 600, sleep=0.2, fail_every=10)
            for _ in range(2):
                await anyio.sleep(2.0)
                server.kill()
                await anyio.sleep(1.0)
                server.start()
            await settle(client, puts, timeout=120)
            findings = await check(client, puts)
            print(f"\n{findings}")  # noqa: T201
            assert all(w.running() for w in started)
            assert findings.problems() == []


async def test_a_producer_an_event_stream_and_the_dashboard_come_back_after_a_partition(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cut off: a put fails with ConnectionLostError in bounded time (the reply timeout),
    the dashboard answers 503 naming the condition; healed, the next put works, the event
    stream hears it, the dashboard answers 200."""
    monkeypatch.setattr(endpoint, "REPLY_TIMEOUT", 1.0)
    monkeypatch.setattr(endpoint, "CONNECT_TIMEOUT", 1.0)
    async with (
        BlackholeProxy(server_url) as proxy,
        aqless.Client(proxy.url, socket_connect_timeout=1.0) as client,
    ):
        queue = client.queues["partitioned"]
        await queue.put("k", {})
        app = httpx.ASGITransport(app=create_app(client))
        events = EventStream(client.redis, ping_interval=0.5)
        async with httpx.AsyncClient(transport=app, base_url="http://dash") as http, events:
            assert (await http.get("/")).status_code == 200
            proxy.cut()
            started = time.monotonic()
            with pytest.raises(aqless.ConnectionLostError):
                await queue.put("k", {})
            assert time.monotonic() - started < 3
            started = time.monotonic()
            page = await http.get("/")
            assert page.status_code == 503
            assert "cannot connect" in page.text
            assert time.monotonic() - started < 3
            await anyio.sleep(1.5)  # the event stream's PING goes unanswered meanwhile
            proxy.heal()
            with anyio.fail_after(20):
                while True:
                    try:
                        jid = await queue.put("k", {})
                        break
                    except aqless.ConnectionLostError:  # a connect begun while cut
                        await anyio.sleep(0.2)
            assert (await http.get("/")).status_code == 200
            heard: set[str] = set()
            with anyio.fail_after(20):
                while jid not in heard:
                    async for event in events:
                        heard.add(event.jid or "")
                        if jid in heard:
                            break
                        if event.kind == RECONNECTED:  # resubscribed: put again
                            jid = await queue.put("k", {})


@pytest.mark.skipif(not NetnsLinks.available(), reason="needs root and `ip netns`")
async def test_workers_in_network_namespaces_survive_their_links_going_down(
    tmp_path: Path,
) -> None:
    """Each worker in a namespace of its own; its link to the server taken down (the
    kernel drops the packets; TCP retransmits, nothing is reset) for 3 to 6 s, twice."""
    port = free_port()
    server = OwnServer(port=port, extra=("--bind", "0.0.0.0", "--protected-mode", "no"))  # noqa: S104
    server.start()
    chance = random.Random(39)  # noqa: S311  # which link, not a secret
    try:
        with NetnsLinks(3) as links, history_workers("", tmp_path) as spawn:
            url = f"redis://{links.server_address}:{port}"
            started = []
            for n in range(3):
                started += await serving(spawn, 1, prefix=links.prefix(n), env={"AQLESS_URL": url})
            async with aqless.Client(server.url) as client:
                await prepare(client)
                puts = Puts()
                await puts.put(client.queues[QUEUE], 600, sleep=0.3, fail_every=10)
                for _ in range(2):
                    await anyio.sleep(2.0)
                    cut = chance.sample(range(3), 2)
                    for n in cut:
                        links.cut(n)
                    await anyio.sleep(chance.uniform(3, 6))
                    for n in cut:
                        links.heal(n)
                await settle(client, puts, timeout=120)
                findings = await check(client, puts)
                print(f"\n{findings}")  # noqa: T201
                for worker in started:
                    assert worker.running(), worker.log()[-3000:]
                assert sum(DOWN in worker.log() for worker in started) >= 2  # they were cut
                assert findings.problems() == []
    finally:
        server.close()
