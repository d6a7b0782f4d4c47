"""Parked workflows and their timers, on one in-process worker (concurrency --concurrency,
polling every --interval seconds, 5 by default: a wake-up that waited for a poll would show).

1. Parked: --parked workflows each run one step, then half sleep an hour and half wait for
   a signal. Once all are parked the worker holds none of them (checked: no job running, in
   the worker or the server, every one scheduled), and a plain job put then starts at once.
   Prints the server's memory per parked workflow (INFO used_memory, before the puts and
   once all are parked) and MEMORY USAGE of one parked workflow's keys.
2. Signals: each waiting workflow is signalled in turn; signal-to-resume is from just
   before `client.signal` to the workflow's code running past its `wait_for` (p50/p99/max).
3. Timers: --timers workflows sleep until a time spread over --spread seconds (all parked
   well before the first is due); a timer's lateness is from its time to the workflow's code
   running past the sleep (p50/p99/max, and how many are over 100 ms).

Uses its own Valkey (the embedded binary, on a free loopback port and a temporary folder).

    python benchmarks/workflow_timers.py [--parked 10000] [--timers 10000] [--spread 60]
"""

from __future__ import annotations

import argparse
import inspect
import os
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import aqless  # noqa: E402
from aqless.puts import PutRequest  # noqa: E402
from aqless.worker import Worker  # noqa: E402
from tests.faults.harness import OwnServer, free_port  # noqa: E402

QUEUE = "workflows"
LATE = 0.1  # the acceptance bound for a timer, seconds


class Stalls:
    """Moments the worker's event loop ran nothing for over `at_least` seconds, and the CPU
    the process used meanwhile: near none, it was not scheduled (a loaded machine); near
    all, its own code held the loop."""

    def __init__(self, at_least: float = 0.05) -> None:
        self.at_least = at_least
        self.stalls: list[tuple[float, float]] = []  # (seconds, CPU seconds)

    async def watch(self) -> None:
        while True:
            wall, cpu = time.perf_counter(), time.process_time()
            await anyio.sleep(0.005)
            late = time.perf_counter() - wall - 0.005
            if late > self.at_least:
                self.stalls.append((late, time.process_time() - cpu))

    def describe(self) -> str:
        if not self.stalls:
            return f"the event loop never stalled over {self.at_least * 1000:.0f} ms"
        seconds = sum(late for late, _ in self.stalls)
        cpu = sum(used for _, used in self.stalls)
        return (
            f"the event loop stalled {len(self.stalls)} times over {self.at_least * 1000:.0f} ms "
            f"(longest {max(late for late, _ in self.stalls) * 1000:.0f} ms, "
            f"{seconds:.1f} s in all, the process using {cpu / seconds:.0%} of a core meanwhile)"
        )


class Seen:
    """What the workflows' code saw: when each waiter resumed, each timer's lateness."""

    def __init__(self) -> None:
        self.resumed: dict[str, float] = {}
        self.signalled: dict[str, anyio.Event] = {}
        self.lateness: list[float] = []
        self.plain: list[float] = []


def handlers_for(seen: Seen) -> aqless.Handlers:
    handlers = aqless.Handlers()

    @handlers.workflow("bench.sleeper")
    async def sleeper(ctx: aqless.WorkflowContext) -> None:
        await ctx.step("begin", lambda: 1)
        await ctx.sleep(3600)

    @handlers.workflow("bench.waiter")
    async def waiter(ctx: aqless.WorkflowContext) -> None:
        await ctx.step("begin", lambda: 1)
        await ctx.wait_for("go")
        seen.resumed[ctx.job.jid] = time.perf_counter()
        if (signalled := seen.signalled.get(ctx.job.jid)) is not None:
            signalled.set()

    @handlers.workflow("bench.timer")
    async def timer(ctx: aqless.WorkflowContext) -> None:
        at = float(ctx.data["at"])
        await ctx.sleep_until(at)
        seen.lateness.append(time.time() - at)

    @handlers.register("bench.plain")
    async def plain(job: aqless.Job) -> None:
        seen.plain.append(time.perf_counter())

    return handlers


async def until(what: str, condition: Callable[[], bool | Awaitable[bool]], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not await _true(condition()):
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await anyio.sleep(0.05)


def check(condition: bool, failure: str) -> None:
    if not condition:
        raise SystemExit(failure)


async def _true(value: bool | Awaitable[bool]) -> bool:
    return await value if inspect.isawaitable(value) else value


async def counts(client: aqless.Client) -> aqless.QueueCounts:
    return await client.queues[QUEUE].counts()


def quantiles(values: Sequence[float]) -> str:
    ordered = sorted(values)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {p50 * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms, max {ordered[-1] * 1000:.2f} ms"


async def used_memory(client: aqless.Client) -> int:
    info: dict[str, Any] = await client.redis.info("memory")
    return int(info["used_memory"])


async def parked_phase(client: aqless.Client, worker: Worker, seen: Seen, parked: int) -> list[str]:
    """Park `parked` workflows, half asleep, half waiting; returns the waiters' jids."""
    before = await used_memory(client)
    half = parked // 2
    requests = [PutRequest("bench.sleeper", {"n": n}) for n in range(parked - half)]
    requests += [PutRequest("bench.waiter", {"n": n}) for n in range(half)]
    started = time.perf_counter()
    jids = await client.queues[QUEUE].put_many(requests)
    waiters = jids[parked - half :]

    async def all_parked() -> bool:
        return (await counts(client)).scheduled == parked

    await until("every workflow parked", all_parked, timeout=600)
    seconds = time.perf_counter() - started
    after = await used_memory(client)
    now = await counts(client)
    check(now.running == 0, f"{now.running} workflows hold a slot")
    check(not worker.running, f"the worker runs {len(worker.running)} parked workflows")
    put_at = time.perf_counter()
    await client.queues[QUEUE].put("bench.plain", {})
    await until("the plain job", lambda: bool(seen.plain), timeout=10)
    sys.stdout.write(
        f"parked: {parked} workflows ({parked - half} asleep, {half} waiting for a signal) "
        f"in {seconds:.1f} s on {worker.concurrency} slots; none holds a slot (0 running in "
        f"the server and the worker); a plain job put then started after "
        f"{(seen.plain[0] - put_at) * 1000:.1f} ms\n"
    )
    sample = jids[0]
    usage = {
        what: await client.redis.memory_usage(key) or 0
        for what, key in (("job hash", f"ql:j:{sample}"), ("history", f"ql:j:{sample}-history"))
    }
    sys.stdout.write(
        f"memory per parked workflow: {(after - before) / parked:.0f} bytes (INFO used_memory, "
        f"{before} -> {after}); MEMORY USAGE of one: "
        + ", ".join(f"{what} {size} B" for what, size in usage.items())
        + "\n"
    )
    return waiters


async def signal_phase(client: aqless.Client, seen: Seen, waiters: list[str]) -> None:
    latencies = []
    for jid in waiters:
        resumed = seen.signalled[jid] = anyio.Event()
        sent = time.perf_counter()
        await client.signal(jid, "go", {})
        await resumed.wait()
        latencies.append(seen.resumed[jid] - sent)
    sys.stdout.write(f"signal to resume, {len(waiters)} signals one at a time: ")
    sys.stdout.write(quantiles(latencies) + "\n")


async def timer_phase(
    client: aqless.Client, seen: Seen, timers: int, spread: float, stalls: Stalls, lead: float
) -> None:
    chance = random.Random(41)  # noqa: S311 (a benchmark's spread, not a secret)
    first = time.time() + max(lead, timers / 500)  # after every timer has parked
    requests = [
        PutRequest("bench.timer", {"at": first + chance.uniform(0, spread)}) for _ in range(timers)
    ]
    await client.queues[QUEUE].put_many(requests)

    async def all_parked() -> bool:
        return (await counts(client)).scheduled >= timers

    await until("every timer parked", all_parked, timeout=first - time.time())
    check(time.time() < first, "the timers were not all parked before the first was due")

    async def all_fired() -> bool:
        return len(seen.lateness) >= timers

    stalls.stalls.clear()
    await until("every timer", all_fired, timeout=first + spread + 60 - time.time())
    over = sum(1 for late in seen.lateness if late > LATE)
    sys.stdout.write(
        f"timers: {timers} over {spread:g} s ({timers / spread:.0f}/s), lateness "
        f"{quantiles(seen.lateness)}; {over} over {LATE * 1000:.0f} ms; meanwhile "
        f"{stalls.describe()}\n"
    )


async def run(options: argparse.Namespace) -> None:
    server = OwnServer(port=free_port())
    server.start()
    try:
        async with aqless.Client(server.url) as client:
            await client.redis.flushall()
            seen = Seen()
            worker = Worker(
                client,
                [QUEUE],
                handlers=handlers_for(seen),
                concurrency=options.concurrency,
                interval=options.interval,
            )
            load = " ".join(f"{figure:.2f}" for figure in os.getloadavg())
            sys.stdout.write(
                f"one worker, concurrency {options.concurrency}, interval {options.interval:g} s; "
                f"load average {load} on {os.cpu_count()} cores\n"
            )
            stalls = Stalls()
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(worker.run)
                tasks.start_soon(stalls.watch)
                waiters = await parked_phase(client, worker, seen, options.parked)
                stalls.stalls.clear()
                await signal_phase(client, seen, waiters)
                sys.stdout.write(f"  meanwhile {stalls.describe()}\n")
                await timer_phase(
                    client, seen, options.timers, options.spread, stalls, options.lead
                )
                worker.stop()
                tasks.cancel_scope.cancel()
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parked", type=int, default=10000)
    parser.add_argument("--timers", type=int, default=10000)
    parser.add_argument("--spread", type=float, default=60.0, help="seconds")
    parser.add_argument(
        "--lead", type=float, default=10.0, help="seconds from the puts to the first timer"
    )
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--interval", type=float, default=5.0, help="seconds")
    anyio.run(run, parser.parse_args())


if __name__ == "__main__":
    main()
