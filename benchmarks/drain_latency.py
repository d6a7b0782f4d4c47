"""A one-slot drain where the round trip, not the CPU, sets the pace: N queued no-op jobs
run by one in-process worker (concurrency 1) through a loopback proxy adding --delay
seconds each way (tests/faults/netem.py), with and without prefetch. A worker that takes
turns with the server pays a round trip per job; one with two pops on their way (prefetch)
about half of one. Prints jobs/s, milliseconds per job and the worker's CPU per job (the
proxy's included: it runs in the same process).

Uses its own Valkey (the embedded binary, on a free loopback port and a temporary folder).

    python benchmarks/drain_latency.py [--jobs 1000] [--delay 0.001] [--prefetch 0 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import aqless  # noqa: E402
from aqless.puts import PutRequest  # noqa: E402
from aqless.worker import Worker  # noqa: E402
from tests.faults.harness import OwnServer, free_port  # noqa: E402
from tests.faults.netem import Conditions, NetemProxy  # noqa: E402

QUEUE = "drain"


async def noop(job: aqless.Job) -> None:
    pass


async def drain(server: OwnServer, jobs: int, delay: float, prefetch: int) -> str:
    async with aqless.Client(server.url) as admin:
        await admin.redis.flushall()
        await admin.queues[QUEUE].put_many(PutRequest("noop") for _ in range(jobs))
    conditions = Conditions(delay=delay, jitter=0.0)
    async with (
        NetemProxy("127.0.0.1", server.port, conditions) as proxy,
        aqless.Client(proxy.url) as client,
    ):
        handlers = aqless.Handlers()
        handlers.add(noop, "noop")
        worker = Worker(
            client, [QUEUE], handlers=handlers, concurrency=1, prefetch=prefetch, burst=True
        )
        started, cpu = time.perf_counter(), time.process_time()
        await worker.run()
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return (
        f"prefetch {prefetch}: {jobs / seconds:7.0f} jobs/s, {seconds / jobs * 1000:6.2f} ms/job, "
        f"CPU {cpu / jobs * 1e6:5.0f} us/job\n"
    )


async def run(options: argparse.Namespace) -> None:
    server = OwnServer(port=free_port())
    server.start()
    try:
        sys.stdout.write(
            f"one slot, {options.jobs} no-op jobs, {options.delay * 1000:g} ms each way\n"
        )
        for _ in range(options.repeat):
            for prefetch in options.prefetch:
                sys.stdout.write(await drain(server, options.jobs, options.delay, prefetch))
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--delay", type=float, default=0.001, help="seconds, each way")
    parser.add_argument("--prefetch", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--repeat", type=int, default=2, help="runs of each, alternating")
    anyio.run(run, parser.parse_args())


if __name__ == "__main__":
    main()
