"""aqless.metrics: a real worker's jobs, durations and heartbeats, and the queues' depths, in a
Prometheus registry (served over ASGI)."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from prometheus_client import CollectorRegistry

import aqless
from aqless.metrics import Metrics

pytest_plugins = ["tests.support.client_fixtures"]

handlers = aqless.Handlers()


@handlers.register("m.Ok")
async def ok(job: aqless.Job) -> None:
    await anyio.sleep(float(job.data.get("sleep", 0)))


@handlers.register("m.Broken")
async def broken(job: aqless.Job) -> None:
    raise ValueError("broken")


@handlers.register("m.Again")
async def again(job: aqless.Job) -> None:
    raise aqless.Retry(delay=3600)


@handlers.register("m.Step")
async def step(job: aqless.Job) -> None:
    await job.complete("next")


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


async def test_a_workers_jobs_by_outcome_durations_and_heartbeats(client: aqless.Client) -> None:
    registry = CollectorRegistry()
    metrics = Metrics(registry)
    q = client.queues["m"]
    await q.set_heartbeat(3)  # renewed after a second
    await q.put("m.Ok", {"sleep": 1.3})
    await q.put("m.Ok", {})
    await q.put("m.Broken", {})
    await q.put("m.Again", {})
    await q.put("m.Step", {})
    worker = aqless.Worker(client, ["m"], handlers=handlers, burst=True, interval=0.1)
    metrics.instrument(worker)
    metrics.instrument(worker)  # idempotent
    with anyio.fail_after(20):
        await worker.run()

    def jobs(klass: str, outcome: str) -> float | None:
        return sample(registry, "aqless_jobs_total", queue="m", klass=klass, outcome=outcome)

    assert jobs("m.Ok", "completed") == 2
    assert jobs("m.Broken", "failed") == 1
    assert jobs("m.Again", "retried") == 1
    assert jobs("m.Step", "advanced") == 1
    durations = "aqless_job_duration_seconds"
    assert sample(registry, f"{durations}_count", queue="m", klass="m.Ok") == 2
    total = sample(registry, f"{durations}_sum", queue="m", klass="m.Ok")
    assert total is not None
    assert 1.3 <= total < 5
    assert sample(registry, f"{durations}_bucket", queue="m", klass="m.Ok", le="0.5") == 1
    renewals = sample(registry, "aqless_worker_heartbeats_total", worker=worker.name)
    assert renewals is not None
    assert renewals >= 1
    assert sample(registry, "aqless_worker_heartbeat_refusals_total", worker=worker.name) == 0
    assert sample(registry, "aqless_worker_running_jobs", worker=worker.name) == 0


async def test_queue_depths_and_failure_groups_are_refreshed_and_served(
    client: aqless.Client,
) -> None:
    registry = CollectorRegistry()
    metrics = Metrics(registry)
    emails = client.queues["emails"]
    for _ in range(3):
        await emails.put("Send", {})
    await emails.put("Send", {}, delay=600)
    failing = await client.queues["reports"].put("Report", {})
    job = await client.queues["reports"].pop()
    assert job is not None
    assert job.jid == failing
    await job.fail("reports-ValueError", "boom")
    await emails.pause()

    await metrics.refresh(client)
    assert sample(registry, "aqless_queue_jobs", queue="emails", state="waiting") == 3
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: metrics.watch(client, interval=0.05))
        await emails.put("Send", {})  # a later refresh sees it
        for _ in range(200):
            if sample(registry, "aqless_queue_jobs", queue="emails", state="waiting") == 4:
                break
            await anyio.sleep(0.02)
        tasks.cancel_scope.cancel()

    assert sample(registry, "aqless_queue_jobs", queue="emails", state="scheduled") == 1
    assert sample(registry, "aqless_queue_paused", queue="emails") == 1
    assert sample(registry, "aqless_queue_paused", queue="reports") == 0
    assert sample(registry, "aqless_failed_jobs", group="reports-ValueError") == 1

    transport = httpx.ASGITransport(app=metrics.asgi_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://metrics") as http:
        text = (await http.get("/")).text
    assert 'aqless_queue_jobs{queue="emails",state="waiting"} 4.0' in text
    assert 'aqless_failed_jobs{group="reports-ValueError"} 1.0' in text


async def test_scaling_signals_are_gauges_when_a_target_is_given(client: aqless.Client) -> None:
    registry = CollectorRegistry()
    metrics = Metrics(registry, scaling_target=0.5)
    emails = client.queues["emails"]
    for _ in range(3):
        await emails.put("Send", {})
    job = await emails.pop()
    assert job is not None
    await job.complete()

    await metrics.refresh(client)
    reading = await emails.scaling(0.5)
    assert sample(registry, "aqless_queue_recommended_slots", queue="emails") == reading.slots
    assert reading.slots >= 1
    assert (sample(registry, "aqless_queue_oldest_wait_seconds", queue="emails") or 0) > 0
    p95 = sample(registry, "aqless_queue_wait_seconds", queue="emails", quantile="0.95")
    assert (p95 or 0) > 0
    assert sample(registry, "aqless_queue_run_mean_seconds", queue="emails") == reading.run_mean
    assert sample(registry, "aqless_queue_throughput_per_minute", queue="emails") is not None
    await metrics.refresh(client)  # a second refresh: the throughput since the first
    assert sample(registry, "aqless_queue_throughput_per_minute", queue="emails") == 0

    plain = Metrics(CollectorRegistry())
    await plain.refresh(client)
    assert sample(plain.registry, "aqless_queue_recommended_slots", queue="emails") is None
    with pytest.raises(aqless.InvalidArgumentError, match="target_p95"):
        Metrics(CollectorRegistry(), scaling_target=0)


async def test_a_grouped_queues_groups_are_gauged_by_group(client: aqless.Client) -> None:
    registry = CollectorRegistry()
    metrics = Metrics(registry)
    queue = client.queues["q"]
    await queue.put_many([aqless.PutRequest("Send", group="tenant-1")] * 3)
    await queue.put("Send", {})
    await queue.pop_many(2)  # one of each group, in turn
    await metrics.refresh(client)
    jobs = "aqless_queue_group_jobs"
    assert sample(registry, jobs, queue="q", group="tenant-1", state="waiting") == 2
    assert sample(registry, jobs, queue="q", group="tenant-1", state="running") == 1
    assert sample(registry, jobs, queue="q", group="", state="running") == 1
    assert sample(registry, "aqless_queue_group_rate_limit", queue="q", group="tenant-1") is None


async def test_a_rate_limited_groups_limit_and_starts_are_gauged(client: aqless.Client) -> None:
    registry = CollectorRegistry()
    metrics = Metrics(registry)
    queue = client.queues["q"]
    await queue.set_group_rate_limit("tenant-1", 2, per=60)
    await queue.put_many([aqless.PutRequest("Send", group="tenant-1")] * 3)
    await queue.pop_many(3)
    await metrics.refresh(client)
    labels = {"queue": "q", "group": "tenant-1"}
    assert sample(registry, "aqless_queue_group_rate_limit", **labels) == 2
    assert sample(registry, "aqless_queue_group_rate_starts", **labels) == 2
    await queue.set_group_rate_limit("tenant-1", None)
    await metrics.refresh(client)
    assert sample(registry, "aqless_queue_group_rate_limit", **labels) is None


def test_a_bad_interval_is_refused() -> None:
    metrics = Metrics(CollectorRegistry())
    with pytest.raises(aqless.ConfigurationError, match="interval"):
        anyio.run(lambda: metrics.watch(aqless.Client("redis://localhost:1"), interval=0))


async def test_each_label_set_is_looked_up_once_not_at_every_job(
    client: aqless.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    metrics = Metrics(CollectorRegistry())
    looked_up: list[tuple[str, ...]] = []
    for family in (metrics.jobs, metrics.durations):
        labels = family.labels

        def counting(*values: str, labels: Any = labels) -> Any:
            looked_up.append(values)
            return labels(*values)

        monkeypatch.setattr(family, "labels", counting)
    for _ in range(3):
        await client.queues["m"].put("m.Ok", {})
    await client.queues["m"].put("m.Broken", {})
    worker = aqless.Worker(client, ["m"], handlers=handlers, burst=True, interval=0.1)
    metrics.instrument(worker)
    with anyio.fail_after(20):
        await worker.run()
    assert sorted(looked_up) == [
        ("m", "m.Broken"),
        ("m", "m.Broken", "failed"),
        ("m", "m.Ok"),
        ("m", "m.Ok", "completed"),
    ]
    assert (
        sample(metrics.registry, "aqless_jobs_total", queue="m", klass="m.Ok", outcome="completed")
        == 3
    )
