"""How good is ``queue.scaling``'s recommendation? Replays an arrival pattern against real
workers whose jobs take a known time, reads the recommendation, and finds the fewest slots
that actually kept the p95 wait under the target.

For each pattern (steady, burst, diurnal: Poisson arrivals whose rate follows the pattern,
one schedule per pattern, replayed identically in every run):

1. Observe: the pattern against a worker with slots to spare, reading
   ``ScalingWindow.update(await queue.scaling(target))`` every ``--every`` seconds over a
   ``--window``-second window; the recommendation is the largest of those readings (the
   fleet an autoscaler following them would have reached at the pattern's peak), and the
   one over the whole run is printed beside it.
2. Sweep: the pattern against workers of fixed concurrency, from the recommendation down
   while the p95 wait still meets the target, or up until it does; the smallest that met
   it is the "needed" figure.

A job's wait is measured from just before its put to the start of its code (so it includes
the put's round trip and the worker's pickup). Job run times are exponential of mean
``--run-ms`` (the model's assumption) or, with ``--fixed``, exactly ``--run-ms``.

Runs on an embedded Valkey (or ``--url``), in the namespace ``aqscaling``, whose keys are
deleted before each run.

    python -m benchmarks.scaling [--patterns steady burst diurnal] [--rate 80]
        [--run-ms 100] [--target 0.1] [--seconds 10] [--fixed] [--url redis://...]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio

import aqless

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.soak import own_server  # noqa: E402

NAMESPACE = "aqscaling"
KLASS = "scaling.Work"
PATTERNS = ("steady", "burst", "diurnal")
DRAIN_FACTOR = 3.0  # a run's jobs must all start within this many pattern lengths


@dataclass(frozen=True, slots=True)
class Settings:
    """One benchmark's knobs."""

    rate: float = 80.0  # mean arrivals per second of the steady pattern
    run_ms: float = 100.0
    target: float = 0.1
    seconds: float = 10.0
    every: float = 0.5
    window: float = 2.0
    fixed: bool = False
    seed: int = 7


def rate_of(pattern: str, rate: float, seconds: float) -> Callable[[float], float]:
    """The arrival rate at `t` seconds into the pattern."""
    if pattern == "steady":
        return lambda t: rate
    if pattern == "burst":  # half the rate, but three times it for the middle 30%
        return lambda t: rate * 3 if 0.35 * seconds <= t < 0.65 * seconds else rate / 2
    if pattern == "diurnal":  # one compressed day: from 0.2 to 1.8 times the rate
        return lambda t: rate * (1 - 0.8 * math.cos(2 * math.pi * t / seconds))
    raise ValueError(f"no pattern {pattern!r}: choose from {PATTERNS}")


def arrivals(pattern: str, settings: Settings) -> list[float]:
    """Poisson arrival times (seconds from the start) following the pattern's rate, by
    thinning a process of the peak rate; the same for every run of a pattern."""
    random_ = random.Random(f"{settings.seed}-{pattern}")  # noqa: S311  # not a secret
    rate = rate_of(pattern, settings.rate, settings.seconds)
    peak = max(rate(settings.seconds * i / 1000) for i in range(1001))
    times: list[float] = []
    t = 0.0
    while True:
        t += random_.expovariate(peak)
        if t >= settings.seconds:
            return times
        if random_.random() * peak < rate(t):
            times.append(t)


def run_times(count: int, settings: Settings) -> list[float]:
    """Each job's run time, in seconds (the same for every run)."""
    mean = settings.run_ms / 1000
    if settings.fixed:
        return [mean] * count
    random_ = random.Random(settings.seed)  # noqa: S311  # not a secret
    return [random_.expovariate(1 / mean) for _ in range(count)]


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1)]


@dataclass
class Replay:
    """One run of a pattern at a concurrency: each job's wait, and the readings taken."""

    concurrency: int
    waits: list[float] = field(default_factory=list)
    unstarted: int = 0
    readings: list[aqless.QueueScaling] = field(default_factory=list)
    overall: aqless.QueueScaling | None = None
    window: float = 0.0

    @property
    def p95(self) -> float:
        if self.unstarted or not self.waits:
            return math.inf
        return percentile(self.waits, 0.95)

    @property
    def recommended(self) -> int:
        full = [reading for reading in self.readings if reading.window >= 0.9 * self.window]
        return max((reading.slots for reading in full), default=0)


async def clear(client: aqless.Client) -> None:
    """Delete the namespace's keys (and nothing else)."""
    keys = [key async for key in client.redis.scan_iter(match=f"{NAMESPACE}:*", count=1000)]
    for start in range(0, len(keys), 1000):
        await client.redis.delete(*keys[start : start + 1000])


async def replay(
    url: str,
    schedule: list[float],
    durations: list[float],
    concurrency: int,
    observe: bool,
    s: Settings,
) -> Replay:
    """The schedule's puts against a worker of `concurrency` slots."""
    result = Replay(concurrency, window=s.window)
    put_at: dict[str, float] = {}
    started: dict[str, float] = {}
    handlers = aqless.Handlers()

    @handlers.register(KLASS)
    async def work(job: aqless.Job) -> None:
        started[job.jid] = time.time()
        await anyio.sleep(float(job.data["seconds"]))

    async with (
        aqless.Client(url, namespace=NAMESPACE) as client,
        aqless.Client(url, namespace=NAMESPACE) as worker_client,
    ):
        await clear(client)
        queue = client.queues["work"]
        worker = aqless.Worker(
            worker_client, ["work"], handlers=handlers, concurrency=concurrency, interval=0.5
        )
        window = aqless.ScalingWindow(s.window)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(worker.run)
            await anyio.sleep(0.3)  # the worker subscribes and offers its slots
            first = window.update(await queue.scaling(s.target))
            begin = time.time()

            async def read_every() -> None:
                while True:
                    await anyio.sleep(s.every)
                    result.readings.append(window.update(await queue.scaling(s.target)))

            if observe:
                tasks.start_soon(read_every)
            for offset, seconds in zip(schedule, durations, strict=True):
                delay = begin + offset - time.time()
                if delay > 0:
                    await anyio.sleep(delay)
                now = time.time()
                jid = await queue.put(KLASS, {"seconds": seconds})
                put_at[jid] = now
            deadline = begin + s.seconds * DRAIN_FACTOR
            while time.time() < deadline:  # polls the server too
                if len(started) == len(put_at) and not (await queue.counts()).running:
                    break
                await anyio.sleep(0.05)
            result.overall = (await queue.scaling(s.target)).since(first)
            worker.stop()
            tasks.cancel_scope.cancel()
        await clear(client)
    result.waits = [started[jid] - at for jid, at in put_at.items() if jid in started]
    result.unstarted = len(put_at) - len(result.waits)
    return result


@dataclass(frozen=True, slots=True)
class Outcome:
    """A pattern's figures."""

    pattern: str
    jobs: int
    recommended: int
    whole_run: int
    needed: int
    p95_by_slots: dict[int, float]

    @property
    def error(self) -> float:
        """The recommendation's distance from the slots needed, as a share of them."""
        return abs(self.recommended - self.needed) / self.needed


async def measure(url: str, pattern: str, s: Settings, *, sweep: bool = True) -> Outcome:
    schedule = arrivals(pattern, s)
    durations = run_times(len(schedule), s)
    peak = max(rate_of(pattern, s.rate, s.seconds)(s.seconds * i / 100) for i in range(101))
    spare = math.ceil(peak * s.run_ms / 1000 * 2) + 4
    observed = await replay(url, schedule, durations, spare, True, s)
    recommended = max(observed.recommended, 1)
    whole_run = observed.overall.slots if observed.overall else 0
    p95s = {spare: observed.p95}
    if sweep:

        async def p95_at(slots: int) -> float:
            if slots not in p95s:
                p95s[slots] = (await replay(url, schedule, durations, slots, False, s)).p95
            return p95s[slots]

        slots = recommended
        if await p95_at(slots) <= s.target:
            while slots > 1 and await p95_at(slots - 1) <= s.target:
                slots -= 1
        else:
            while slots < spare and await p95_at(slots + 1) > s.target:
                slots += 1
            slots += 1
        needed = slots
    else:
        needed = spare if observed.p95 <= s.target else 0
    return Outcome(
        pattern, len(schedule), recommended, whole_run, needed, dict(sorted(p95s.items()))
    )


def table(outcomes: list[Outcome], s: Settings) -> str:
    service = "fixed" if s.fixed else "exponential"
    lines = [
        f"mean rate {s.rate:g}/s, run time {s.run_ms:g} ms ({service}), target p95 wait "
        f"{s.target:g} s, {s.seconds:g} s per run",
        "",
        "| pattern | jobs | recommended (peak) | whole-run reading | needed | error | "
        "p95 wait (ms) by slots |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        by_slots = ", ".join(
            f"{slots}: {'-' if math.isinf(p95) else f'{p95 * 1000:.0f}'}"
            for slots, p95 in o.p95_by_slots.items()
        )
        lines.append(
            f"| {o.pattern} | {o.jobs} | {o.recommended} | {o.whole_run} | {o.needed} | "
            f"{o.error:.0%} | {by_slots} |"
        )
    return "\n".join(lines)


async def main(options: argparse.Namespace) -> None:
    s = Settings(
        rate=options.rate,
        run_ms=options.run_ms,
        target=options.target,
        seconds=options.seconds,
        every=options.every,
        window=options.window,
        fixed=options.fixed,
    )
    async with own_server(options.url) as url:
        outcomes = [await measure(url, pattern, s) for pattern in options.patterns]
    sys.stdout.write(table(outcomes, s) + "\n")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--patterns", nargs="+", choices=PATTERNS, default=list(PATTERNS))
    parser.add_argument("--rate", type=float, default=80.0)
    parser.add_argument("--run-ms", type=float, default=100.0)
    parser.add_argument("--target", type=float, default=0.1)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--every", type=float, default=0.5)
    parser.add_argument("--window", type=float, default=2.0)
    parser.add_argument("--fixed", action="store_true")
    parser.add_argument("--url")
    return parser.parse_args(argv)


if __name__ == "__main__":
    anyio.run(main, parse())
