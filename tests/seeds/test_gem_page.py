"""Acceptance tests of what the qless gem's page (seeds/001) adds to the Ruby README (seeds/003,
tested in test_ruby_readme.py): ``job.requeue``, a worker built in code from a reserver, the
web app in the foreground, and the ``failed`` statistic of the 0.12.0 release notes."""

from __future__ import annotations

import socket
import subprocess
import sys

import anyio
import httpx
import pytest
from prometheus_client import CollectorRegistry

import aqless
from aqless import JobState
from aqless.metrics import Metrics
from tests.support.clients import get_job, pop_one
from tests.support.worker import Recorder, make_worker, one
from tests.support.worker_processes import eventually

pytest_plugins = ["tests.support.client_fixtures"]
pytestmark = pytest.mark.timeout(60)


# == Enqueing Jobs ==========================================================================


async def test_requeue_moves_a_job_to_another_queue(client: aqless.Client) -> None:
    """Seed: "job.requeue("some_other_queue") # move it to a new queue" """
    jid = await client.queues["testing"].put("MyJobClass", {"hello": "howdy"})
    await (await get_job(client, jid)).requeue("some_other_queue")
    job = await get_job(client, jid)
    assert (job.queue_name, job.state, job.data) == (
        "some_other_queue",
        JobState.WAITING,
        {"hello": "howdy"},
    )
    assert await client.queues["testing"].length() == 0


# == Running A Worker =======================================================================


async def test_a_worker_is_built_in_code_from_queues_and_a_reserver(
    client: aqless.Client,
) -> None:
    """Seed: "queues = %w[ queue_1 queue_2 ].map { |name| client.queues[name] }; reserver =
    Qless::JobReservers::Ordered.new(queues); worker = Qless::Workers::ForkingWorker.new(
    reserver); worker.run" """
    recorder = Recorder()
    for name in ("queue_2", "queue_1", "queue_2", "queue_1"):
        await client.queues[name].put("app.job", {})
    reserver = aqless.Reserver("ordered")
    worker = make_worker(
        client,
        ["queue_1", "queue_2"],
        one(recorder),
        reserver=reserver,
        concurrency=1,
        burst=True,
    )
    assert (await worker.run()).completed == 4
    assert recorder.queues == ["queue_1", "queue_1", "queue_2", "queue_2"]


# == Web Interface ==========================================================================


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_the_web_app_runs_in_the_foreground(client: aqless.Client) -> None:
    """Seed: "Running as a daemon is default behavior. To run in the foreground, pass the
    --foreground or -F flag: qless-web -F". ``aqless web`` always serves in the
    foreground: the process started is the one serving, until it is stopped."""
    await client.queues["testing"].put("MyJobClass", {})
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "aqless.cli",
        "web",
        "--url",
        str(client.url),
        "--port",
        str(port),
    ]
    server = await anyio.open_process(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:

            async def serving() -> bool:
                try:
                    return (await http.get("/api/overview")).status_code == 200
                except httpx.TransportError:
                    return False

            await eventually(serving, 20, "the dashboard answers")
            overview = (await http.get("/api/overview")).json()
            assert [queue["name"] for queue in overview["queues"]] == ["testing"]
        assert server.returncode is None  # still attached: no daemon left behind
    finally:
        server.terminate()
        with anyio.fail_after(10):
            await server.wait()


# == Release Notes 0.12.0 ===================================================================


async def test_the_failed_statistic_counts_failed_jobs(client: aqless.Client) -> None:
    """Seed: "The metric failures provided by qless-stats has been replaced by failed for
    compatibility with users of graphite." aqless's statistics and Prometheus gauge are
    named ``failed`` too."""
    queue = client.queues["testing"]
    for _ in range(2):
        await queue.put("MyJobClass", {})
    for _ in range(2):
        await (await pop_one(queue)).fail("boom", "it broke")
    assert (await queue.stats()).failed == 2
    metrics = Metrics(CollectorRegistry())
    await metrics.refresh(client)
    assert metrics.registry.get_sample_value("aqless_failed_jobs", {"group": "boom"}) == 2
