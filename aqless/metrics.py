"""Prometheus metrics: what workers did, and what the queues hold.

Needs ``pip install 'aqless[prometheus]'``::

    metrics = aqless.metrics.Metrics()         # on prometheus_client's default registry
    metrics.instrument(worker)                 # jobs, durations, heartbeats of this worker
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(metrics.watch, client)  # queue depths, every 15 s
        tasks.start_soon(worker.run)
    app.mount("/metrics", metrics.asgi_app())  # in the service that hosts the dashboard

The metrics (``aqless_`` is the default namespace):

================================================  =========  ==============================
``aqless_jobs_total{queue,klass,outcome}``        counter    jobs run by instrumented
                                                              workers; outcome: completed,
                                                              failed, retried, advanced,
                                                              handed_back, parked, canceled,
                                                              lost, unreported
``aqless_job_duration_seconds{queue,klass}``      histogram  from the start of the code to
                                                              the outcome sent
``aqless_worker_heartbeats_total{worker}``        counter    locks renewed
``aqless_worker_heartbeat_refusals_total{worker}``  counter  renewals refused (lock lost)
``aqless_worker_running_jobs{worker}``            gauge      jobs running now
``aqless_queue_jobs{queue,state}``                gauge      jobs by state: waiting, running,
                                                              stalled, scheduled, depends,
                                                              throttled, recurring
``aqless_queue_paused{queue}``                    gauge      1 while paused
``aqless_queue_group_jobs{queue,group,state}``    gauge      a grouped queue's jobs by
                                                              fairness group ("" for those
                                                              put without one): waiting,
                                                              running
``aqless_queue_group_rate_limit{queue,group}``    gauge      a rate-limited group's most
                                                              starts per window
``aqless_queue_group_rate_starts{queue,group}``   gauge      its starts in the current
                                                              window
``aqless_failed_jobs{group}``                     gauge      failed jobs by failure group
``aqless_queue_oldest_wait_seconds{queue}``       gauge      with `scaling_target`: how
                                                              long the next job has waited
``aqless_queue_wait_seconds{queue,quantile}``     gauge      today's wait p50 and p95
                                                              (upper bounds, from the stats)
``aqless_queue_run_mean_seconds{queue}``          gauge      today's mean run time
``aqless_queue_throughput_per_minute{queue}``     gauge      completions per minute over
                                                              the scaling window
``aqless_queue_recommended_slots{queue}``         gauge      worker slots that keep the p95
                                                              wait under the target (M/M/c)
``aqless_spool_depth{spool}``                     gauge      with `instrument_spool`: puts
                                                              waiting in a producer's spool
``aqless_spool_capacity{spool}``                  gauge      the most it holds
``aqless_spool_puts_total{spool,outcome}``        counter    spooled, flushed (the server
                                                              took it), dropped (refused at
                                                              the flush), refused (full)
================================================  =========  ==============================

Failures: ``aqless_jobs_total{outcome="failed"}`` counts the ones workers sent,
``aqless_failed_jobs`` what the server holds (from any client). The queue gauges come from
`refresh` (two round trips per queue, plus one), run by `watch` in a task you own; in a
fleet, run it in one process (the dashboard's, say), not in every worker. With
``Metrics(scaling_target=2.0)``, `refresh` also reads each queue's scaling signals (three
more round trips per queue; see ``Queue.scaling``), its throughput taken over the last
`scaling_window` seconds of refreshes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

import anyio

from aqless._worker.observers import WorkerObserver
from aqless.errors import ConfigurationError, ConnectionLostError, ScriptError, needs_extra
from aqless.scaling import QueueScaling, ScalingWindow
from aqless.scaling.estimate import checked_target

with needs_extra("prometheus", "aqless.metrics"):
    from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram
    from prometheus_client import make_asgi_app as _make_asgi_app
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
    from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from aqless.client import Client
    from aqless.job import Job
    from aqless.spool import Spool
    from aqless.worker import Worker

__all__ = ["DURATION_BUCKETS", "QUEUE_STATES", "Metrics"]

logger = logging.getLogger(__name__)

DURATION_BUCKETS: Final = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    300.0,
    900.0,
    3600.0,
)
"""The bounds of `aqless_job_duration_seconds`'s buckets, in seconds: from a few
milliseconds to an hour."""
QUEUE_STATES: Final = (
    "waiting",
    "running",
    "stalled",
    "scheduled",
    "depends",
    "throttled",
    "recurring",
)
"""The states `aqless_queue_jobs` reports."""


class _Workers(Collector):
    """Reads the instrumented workers' own counters at scrape time."""

    def __init__(self, namespace: str) -> None:
        self._namespace = namespace
        self.workers: list[Worker] = []

    def collect(self) -> Iterator[Metric]:
        prefix = f"{self._namespace}_worker"
        renewals = CounterMetricFamily(
            f"{prefix}_heartbeats", "Locks renewed by the worker", labels=["worker"]
        )
        refusals = CounterMetricFamily(
            f"{prefix}_heartbeat_refusals",
            "Lock renewals the server refused (the job was lost)",
            labels=["worker"],
        )
        running = GaugeMetricFamily(
            f"{prefix}_running_jobs", "Jobs the worker runs now", labels=["worker"]
        )
        for worker in self.workers:
            heartbeats = worker.heartbeats
            renewals.add_metric([worker.name], heartbeats.renewals)
            refusals.add_metric([worker.name], heartbeats.refusals)
            running.add_metric([worker.name], len(worker.running))
        yield from (renewals, refusals, running)

    def describe(self) -> Iterator[Metric]:
        workers, self.workers = self.workers, []
        try:
            yield from self.collect()  # the names, without samples
        finally:
            self.workers = workers


class _Spools(Collector):
    """Reads the instrumented spools' depth and counts at scrape time."""

    def __init__(self, namespace: str) -> None:
        self._namespace = namespace
        self.spools: list[Spool] = []

    def collect(self) -> Iterator[Metric]:
        prefix = f"{self._namespace}_spool"
        depth = GaugeMetricFamily(
            f"{prefix}_depth", "Puts waiting in a producer's spool", labels=["spool"]
        )
        capacity = GaugeMetricFamily(
            f"{prefix}_capacity", "The most puts a spool holds", labels=["spool"]
        )
        puts = CounterMetricFamily(
            f"{prefix}_puts", "A spool's puts by outcome", labels=["spool", "outcome"]
        )
        for spool in self.spools:
            stats = spool.stats()
            depth.add_metric([spool.name], stats.depth)
            capacity.add_metric([spool.name], stats.capacity)
            for outcome in ("spooled", "flushed", "dropped", "refused"):
                puts.add_metric([spool.name, outcome], getattr(stats, outcome))
        yield from (depth, capacity, puts)

    def describe(self) -> Iterator[Metric]:
        spools, self.spools = self.spools, []
        try:
            yield from self.collect()  # the names, without samples
        finally:
            self.spools = spools


class _JobMetrics(WorkerObserver):
    """Counts and times a worker's jobs into `metrics`."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics
        # each label set's child, looked up once (``labels()`` validates and locks each call)
        self._counts: dict[tuple[str, str, str], Counter] = {}
        self._durations: dict[tuple[str, str], Histogram] = {}

    def job_finished(self, job: Job, queue: str, outcome: str, seconds: float) -> None:
        klass = job.klass_name
        count = self._counts.get((queue, klass, outcome))
        if count is None:
            count = self._counts[queue, klass, outcome] = self._metrics.jobs.labels(
                queue, klass, outcome
            )
        count.inc()
        duration = self._durations.get((queue, klass))
        if duration is None:
            duration = self._durations[queue, klass] = self._metrics.durations.labels(queue, klass)
        duration.observe(seconds)


class Metrics:
    """One set of aqless metrics in a Prometheus registry.

    Args:
        registry: where the metrics are registered (default: prometheus_client's global
            registry, which ``prometheus_client.start_http_server`` serves). Make one
            ``Metrics`` per registry.
        namespace: the metric names' prefix (default ``"aqless"``).
        buckets: the duration histogram's buckets, in seconds (default
            `DURATION_BUCKETS`: a few milliseconds to an hour).
        scaling_target: a p95 wait (seconds): `refresh` then also reports each queue's
            scaling signals and the worker slots that would meet it (default None: not
            reported).
        scaling_window: the seconds the throughput (and so the slots) is taken over
            (default 60.0).

    Raises:
        InvalidValueError: a `scaling_target` that is not a positive number of seconds.

    Examples:
        ```python
        from aqless.metrics import Metrics

        metrics = Metrics()
        metrics.instrument(worker)  # jobs counted and timed
        watcher = asyncio.create_task(metrics.watch(client, interval=15.0))  # queue gauges
        app.mount("/metrics", metrics.asgi_app())
        ```
    """

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        *,
        namespace: str = "aqless",
        buckets: Sequence[float] = DURATION_BUCKETS,
        scaling_target: float | None = None,
        scaling_window: float = 60.0,
    ) -> None:
        self.registry = registry if registry is not None else REGISTRY
        self.scaling_target = None if scaling_target is None else checked_target(scaling_target)
        self._scaling = ScalingWindow(scaling_window)
        options: dict[str, Any] = {"namespace": namespace, "registry": self.registry}
        self.jobs = Counter(
            "jobs", "Jobs run by workers, by outcome", ["queue", "klass", "outcome"], **options
        )
        self.durations = Histogram(
            "job_duration_seconds",
            "Seconds from the start of a job's code to its outcome sent",
            ["queue", "klass"],
            buckets=tuple(buckets),
            **options,
        )
        self.queue_jobs = Gauge(
            "queue_jobs", "Jobs in a queue by state", ["queue", "state"], **options
        )
        self.queue_paused = Gauge("queue_paused", "1 while a queue is paused", ["queue"], **options)
        self.group_jobs = Gauge(
            "queue_group_jobs",
            "Jobs of a queue's fairness group by state (waiting, running)",
            ["queue", "group", "state"],
            **options,
        )
        self.group_rate_limit = Gauge(
            "queue_group_rate_limit",
            "The most starts of a rate-limited fairness group in any window of its limit",
            ["queue", "group"],
            **options,
        )
        self.group_rate_starts = Gauge(
            "queue_group_rate_starts",
            "A rate-limited fairness group's starts in the current window of its limit",
            ["queue", "group"],
            **options,
        )
        self.failed_jobs = Gauge(
            "failed_jobs", "Failed jobs by failure group", ["group"], **options
        )
        self.oldest_wait = Gauge(
            "queue_oldest_wait_seconds",
            "Seconds the job a pop would take next has waited",
            ["queue"],
            **options,
        )
        self.waits = Gauge(
            "queue_wait_seconds",
            "Today's wait percentiles (upper bounds, from the stats histogram)",
            ["queue", "quantile"],
            **options,
        )
        self.run_mean = Gauge(
            "queue_run_mean_seconds",
            "Today's mean run time of completed jobs",
            ["queue"],
            **options,
        )
        self.throughput = Gauge(
            "queue_throughput_per_minute",
            "Completions per minute over the scaling window",
            ["queue"],
            **options,
        )
        self.recommended_slots = Gauge(
            "queue_recommended_slots",
            "Worker slots that keep the p95 wait under the target (M/M/c model)",
            ["queue"],
            **options,
        )
        self._workers = _Workers(namespace)
        self.registry.register(self._workers)
        self._spools = _Spools(namespace)
        self.registry.register(self._spools)

    def instrument(self, worker: Worker) -> None:
        """Count `worker`'s jobs and time them; report its heartbeats (idempotent).

        Examples:
            ```python
            metrics.instrument(aqless.Worker(client, ["emails"], handlers=handlers))
            ```
        """
        if worker in self._workers.workers:
            return
        self._workers.workers.append(worker)
        worker.observers.append(_JobMetrics(self))

    def instrument_spool(self, spool: Spool) -> None:
        """Report a producer's spool (``client.spool(...)``): its depth, capacity and puts
        by outcome, read at scrape time (idempotent).

        Examples:
            ```python
            spool = client.spool()
            metrics.instrument_spool(spool)  # aqless_spool_depth{spool="memory"}...
            ```
        """
        if spool not in self._spools.spools:
            self._spools.spools.append(spool)

    async def refresh(self, client: Client) -> None:
        """Read every queue's counts, its fairness groups' and the failure groups into the
        gauges, once.

        Raises:
            ConnectionLostError: the server could not be reached.

        Examples:
            ```python
            await metrics.refresh(client)
            ```
        """
        counts = await client.queues.counts()
        groups = await client.jobs.failure_groups()
        scaling: list[QueueScaling] = []
        if self.scaling_target is not None:
            scaling = await self._scaling.read(client.queues, self.scaling_target)
        fairness = {queue.name: await client.queues[queue.name].groups() for queue in counts}
        # cleared and set with no await between: a scrape never sees them half done
        self.queue_jobs.clear()
        self.queue_paused.clear()
        self.failed_jobs.clear()
        self.group_jobs.clear()
        self.group_rate_limit.clear()
        self.group_rate_starts.clear()
        for name, records in fairness.items():
            for record in records:
                label = record.name or ""
                self.group_jobs.labels(name, label, "waiting").set(record.waiting)
                self.group_jobs.labels(name, label, "running").set(record.running)
                if record.rate_limit:
                    self.group_rate_limit.labels(name, label).set(record.rate_limit)
                    self.group_rate_starts.labels(name, label).set(record.rate_used)
        for queue in counts:
            for state in QUEUE_STATES:
                self.queue_jobs.labels(queue.name, state).set(getattr(queue, state))
            self.queue_paused.labels(queue.name).set(1 if queue.paused else 0)
        for group, count in groups.items():
            self.failed_jobs.labels(group).set(count)
        if self.scaling_target is not None:
            self._set_scaling(scaling)

    def _set_scaling(self, readings: Sequence[QueueScaling]) -> None:
        gauges = (self.oldest_wait, self.waits, self.run_mean, self.throughput)
        for gauge in (*gauges, self.recommended_slots):
            gauge.clear()
        for reading in readings:
            name = reading.queue
            self.oldest_wait.labels(name).set(reading.oldest_wait)
            for quantile, value in (("0.5", reading.wait_p50), ("0.95", reading.wait_p95)):
                if value is not None:
                    self.waits.labels(name, quantile).set(value)
            if reading.run_mean is not None:
                self.run_mean.labels(name).set(reading.run_mean)
            self.throughput.labels(name).set(reading.throughput)
            self.recommended_slots.labels(name).set(reading.slots)

    async def watch(self, client: Client, *, interval: float = 15.0) -> None:
        """`refresh` every `interval` seconds (default 15.0), for ever (cancel it to stop);
        a failed read is logged and tried again at the next interval.

        Raises:
            ConfigurationError: `interval` is not positive.

        Examples:
            ```python
            watcher = asyncio.create_task(metrics.watch(client, interval=30.0))
            ```
        """
        if not interval > 0:
            raise ConfigurationError(f"interval must be positive, got {interval!r}")
        while True:
            try:
                await self.refresh(client)
            except (ConnectionLostError, ScriptError) as error:
                logger.warning("could not read the queues' counts: %s", error)
            await anyio.sleep(interval)

    def asgi_app(self) -> Any:
        """An ASGI app serving this registry in Prometheus's text format (mount it at
        ``/metrics`` next to the dashboard).

        Examples:
            ```python
            from starlette.routing import Mount

            routes = [Mount("/metrics", app=metrics.asgi_app())]
            ```
        """
        return _make_asgi_app(self.registry)
