"""The worker's throughput and pickup latency, with a real ``aqless-run`` process.

1. Drain: N queued no-op jobs (20,000 by default) run by one worker process at concurrency
   1, 50 and 200: jobs/s, CPU per job of the worker process (from /proc) and of the
   server (INFO cpu), and the server's commands and script calls per job (INFO
   commandstats: a script's own commands count; the bench's polling of the counts too).
2. Pickup: jobs put at a steady 200/s for 10 s into the queue of an idle worker polling only
   every 30 s; the time from put to the start of the job's code, p50/p99.

Runs on the embedded Valkey (aqless.embedded.default_url()) or --url, in the namespace
``aqbench`` (whose keys are deleted before each phase; nothing else is touched).

    python benchmarks/worker_drain.py [--jobs 20000] [--repeat 1] [--rate 200]
        [--seconds 10] [--url redis://...] [--prefetch N] [--concurrency 1 ...] [--no-pickup]

``--prefetch N`` runs every worker with ``aqless-run --prefetch N`` (by AQLESS_PREFETCH).
``--concurrency 1 --no-pickup`` measures only the one-slot drain (round-trip bound).
``--breakdown`` prints each drain's server commands per job by name.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import anyio

import aqless
from aqless.puts import PutRequest

NAMESPACE = "aqbench"
QUEUE = "bench"
STARTS = f"{NAMESPACE}:bench:starts"
CONCURRENCIES = (1, 50, 200)

JOBS = f'''
import logging
import time

# -v is for the worker's "serving" line: not a line per job, whose cost is no pickup's
logging.getLogger("aqless._worker.joblog").setLevel(logging.WARNING)


async def noop(job):
    pass


async def stamp(job):
    started = time.time()
    await job.client.redis.rpush("{STARTS}", f"{{job.jid}} {{started}}")
'''


@dataclass(frozen=True, slots=True)
class Cost:
    """What a phase took: seconds, and CPU seconds of the worker process and the server."""

    seconds: float
    worker_cpu: float
    server_cpu: float
    #: commands the server ran (INFO commandstats: each script call and each command a
    #: script ran), and script calls (FCALL, EVALSHA), the bench's own polling included
    commands: int = 0
    script_calls: int = 0

    def per_job(self, jobs: int) -> tuple[float, float]:
        """Microseconds of worker and server CPU per job."""
        return self.worker_cpu / jobs * 1e6, self.server_cpu / jobs * 1e6


class WorkerProcess:
    """``aqless-run`` on the bench queue, in a folder holding the job module."""

    def __init__(self, url: str, folder: Path, concurrency: int, interval: float) -> None:
        self.log = folder / f"worker-c{concurrency}.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(  # noqa: S603  # our own command
                [
                    sys.executable,
                    "-m",
                    "aqless.run",
                    "-v",
                    "--url",
                    url,
                    "--namespace",
                    NAMESPACE,
                    "-i",
                    "benchjobs",
                    "-c",
                    str(concurrency),
                    "--interval",
                    str(interval),
                    QUEUE,
                ],
                cwd=folder,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )

    async def ready(self) -> None:
        deadline = time.monotonic() + 20
        while "serving" not in self.log.read_text():
            self.check()
            if time.monotonic() > deadline:
                raise TimeoutError(f"the worker did not start:\n{self.log.read_text()}")
            await anyio.sleep(0.02)

    def check(self) -> None:
        if self.process.poll() is not None:
            raise RuntimeError(f"the worker exited:\n{self.log.read_text()}")

    def cpu(self) -> float:
        """CPU seconds the process has used (user + system)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


async def server_cpu(client: aqless.Client) -> float:
    info = await client.redis.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


async def server_commands(client: aqless.Client) -> dict[str, int]:
    """The commands the server has run so far, by name (INFO commandstats)."""
    stats = await client.redis.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


def _delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {name: count - before.get(name, 0) for name, count in after.items()}


async def clean(client: aqless.Client) -> None:
    """Delete the namespace's keys (and nothing else)."""
    async for key in client.redis.scan_iter(match=f"{NAMESPACE}:*", count=1000):
        await client.redis.unlink(key)


@contextmanager
def worker(url: str, folder: Path, concurrency: int, interval: float) -> Iterator[WorkerProcess]:
    process = WorkerProcess(url, folder, concurrency, interval)
    try:
        yield process
    finally:
        process.stop()


async def drain(
    client: aqless.Client, folder: Path, jobs: int, concurrency: int, *, breakdown: bool = False
) -> Cost:
    """Seconds for one worker process to run `jobs` queued no-op jobs."""
    await clean(client)
    queue = client.queues[QUEUE]
    await queue.pause()
    await queue.put_many(PutRequest("benchjobs.noop") for _ in range(jobs))
    with worker(str(client.url), folder, concurrency, interval=0.05) as process:
        await process.ready()
        commands = await server_commands(client)
        cpu, server, started = process.cpu(), await server_cpu(client), time.perf_counter()
        await queue.unpause()
        while True:
            counts = await queue.counts()
            if counts.waiting == 0 and counts.running == 0:
                break
            process.check()
            await anyio.sleep(0.01)
        seconds = time.perf_counter() - started
        cost = Cost(seconds, process.cpu() - cpu, await server_cpu(client) - server)
        ran = _delta(commands, await server_commands(client))
        scripts = sum(ran.get(name, 0) for name in ("fcall", "fcall_ro", "evalsha", "eval"))
        if breakdown:
            per_job = sorted(ran.items(), key=lambda item: -item[1])
            sys.stdout.write(
                f"c{concurrency}: "
                + ", ".join(f"{name} {count / jobs:.2f}" for name, count in per_job if count)
                + "\n"
            )
        return replace(cost, commands=sum(ran.values()), script_calls=scripts)


async def pickup(
    client: aqless.Client, folder: Path, rate: float, seconds: float
) -> tuple[list[float], Cost]:
    """Put-to-start latencies (seconds) of jobs put at `rate` per second into the queue of
    an idle worker that polls only every 30 s."""
    await clean(client)
    queue = client.queues[QUEUE]
    count = round(rate * seconds)
    with worker(str(client.url), folder, 200, interval=30.0) as process:
        await process.ready()
        await queue.put("benchjobs.stamp")  # warm up: connections, scripts, subscriptions
        while await client.redis.llen(STARTS) < 1:
            process.check()
            await anyio.sleep(0.01)
        await client.redis.delete(STARTS)
        put_at: dict[str, float] = {}
        cpu, server, started = process.cpu(), await server_cpu(client), time.perf_counter()
        for index in range(count):
            await anyio.sleep(max(0.0, started + index / rate - time.perf_counter()))
            now = time.time()
            put_at[await queue.put("benchjobs.stamp")] = now
        while await client.redis.llen(STARTS) < count:
            process.check()
            await anyio.sleep(0.01)
        cost = Cost(
            time.perf_counter() - started, process.cpu() - cpu, await server_cpu(client) - server
        )
    starts = [str(entry).split() for entry in await client.redis.lrange(STARTS, 0, -1)]
    return [float(start) - put_at[jid] for jid, start in starts], cost


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def report_drain(jobs: int, results: dict[int, list[Cost]]) -> None:
    out = sys.stdout
    out.write(f"\nDrain: {jobs} queued no-op jobs, one aqless-run process\n")
    out.write(
        f"{'concurrency':>11} {'jobs/s':>8} {'(min-max)':>15} "
        f"{'worker us/job':>14} {'server us/job':>14} {'cmds/job':>9} {'calls/job':>9}\n"
    )
    for concurrency, costs in results.items():
        rates = [jobs / cost.seconds for cost in costs]
        middle = sorted(costs, key=lambda cost: cost.seconds)[len(costs) // 2]
        worker_us, server_us = middle.per_job(jobs)
        spread = f"{min(rates):.0f}-{max(rates):.0f}"
        out.write(
            f"{concurrency:>11} {statistics.median(rates):>8.0f} {spread:>15} "
            f"{worker_us:>14.0f} {server_us:>14.0f} {middle.commands / jobs:>9.2f} "
            f"{middle.script_calls / jobs:>9.2f}\n"
        )


def report_pickup(rate: float, latencies: list[float], cost: Cost) -> None:
    ms = [latency * 1000 for latency in latencies]
    worker_us, server_us = cost.per_job(len(ms))
    sys.stdout.write(
        f"\nPickup: {len(ms)} jobs put at {rate:g}/s into an idle worker's queue "
        f"(-c 200, --interval 30)\n"
        f"  put -> start of job code: p50 {percentile(ms, 0.5):.2f} ms, "
        f"p99 {percentile(ms, 0.99):.2f} ms, max {max(ms):.2f} ms\n"
        f"  worker {worker_us:.0f} us/job, server {server_us:.0f} us/job (CPU)\n"
    )


async def run(options: argparse.Namespace) -> None:
    from aqless import embedded

    url = options.url or await anyio.to_thread.run_sync(embedded.default_url)
    if options.prefetch is not None:  # the worker processes read it
        os.environ["AQLESS_PREFETCH"] = str(options.prefetch)
    with tempfile.TemporaryDirectory(prefix="aqless-bench-") as name:
        folder = Path(name)
        (folder / "benchjobs.py").write_text(JOBS)
        async with aqless.Client(url, namespace=NAMESPACE) as client:
            server = (await client.redis.info("server")).get("server_name", "redis")
            sys.stdout.write(f"server {url} ({server})\n")
            results: dict[int, list[Cost]] = {}
            for concurrency in options.concurrency:
                results[concurrency] = [
                    await drain(
                        client, folder, options.jobs, concurrency, breakdown=options.breakdown
                    )
                    for _ in range(options.repeat)
                ]
            report_drain(options.jobs, results)
            if options.no_pickup:
                await clean(client)
                return
            latencies, cost = await pickup(client, folder, options.rate, options.seconds)
            report_pickup(options.rate, latencies, cost)
            await clean(client)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=20_000, help="jobs per drain")
    parser.add_argument("--repeat", type=int, default=1, help="drains per concurrency")
    parser.add_argument(
        "--concurrency", type=int, nargs="+", default=list(CONCURRENCIES), help="drain at these"
    )
    parser.add_argument("--rate", type=float, default=200.0, help="pickup: puts per second")
    parser.add_argument("--seconds", type=float, default=10.0, help="pickup: for how long")
    parser.add_argument("--url", default=None, help="a server to use (default: embedded)")
    parser.add_argument(
        "--prefetch", type=int, default=None, help="the workers' prefetch (default: theirs)"
    )
    parser.add_argument("--no-pickup", action="store_true", help="drain only: skip the pickup")
    parser.add_argument(
        "--breakdown", action="store_true", help="print each drain's commands per job, by name"
    )
    anyio.run(run, parser.parse_args())


if __name__ == "__main__":
    main()
