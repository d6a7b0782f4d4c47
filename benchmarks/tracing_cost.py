"""What `aqless.tracing` costs a worker per job, in CPU time, without a server.

Each round runs N no-op jobs through the tracing middleware, as the worker does: the job is
made from its stored fields (so the data's JSON, with the trace context in it, is decoded)
and the middleware wraps a `perform` that does nothing. CPU is `time.process_time` (every
thread of the process: the batch span processor's too), not wall time. Modes:

- ``off``: no middleware, and data without a trace context (an uninstrumented producer);
- ``noop``: the middleware on OpenTelemetry's no-op tracer (the API, no SDK);
- ``unsampled``: an SDK provider whose sampler drops every span;
- ``unsampled-parent``: an SDK provider with the default sampler (ParentBased), every job's
  context saying its producer's span was not sampled (a put in an unsampled trace);
- ``ratio``: the same, but one job in ten carries a sampled context (a producer sampling a
  tenth of its traces: what sampling on costs the worker);
- ``sampled``: an SDK provider, every span sampled, a `BatchSpanProcessor` whose exporter
  drops the spans (what `compare.py`'s ``features`` workload runs);
- ``sampled-batch``: the same, every job carrying the same context (the jobs of one
  ``put_many``, as ``compare.py`` puts them); ``sampled`` gives each job a trace of its own;
- ``sampled-full``: ``sampled`` with ``Tracing(full_attributes=True)``.

The put side (``--puts``): CPU per job of the put hook around a `send` that does nothing, for
a put of one job and a ``put_many`` of 100, off (no hook), on the no-op tracer and sampled.

Then, for a sampled job, the parts on their own (``--parts``): aqless's (reading the context
out of the data, the attributes, the span's name) and the SDK's (the propagator, the span's
start, its end with the processor). ``--profile`` prints cProfile's view of the sampled mode.

    python -m benchmarks.tracing_cost [--jobs 5000] [--rounds 5] [--modes off,sampled,...]
        [--puts] [--parts] [--profile MODE]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from random import Random
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import SpanKind

import aqless
from aqless import tracing

MODES = (
    "off",
    "noop",
    "unsampled",
    "unsampled-parent",
    "ratio",
    "sampled",
    "sampled-batch",
    "sampled-full",
)
# a producer's context as `put` writes it (sampled flag set: a ParentBased sampler keeps it)
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
PLAIN = json.dumps({"user": 42})
CARRYING = json.dumps({"user": 42, tracing.TRACE_KEY: {"traceparent": TRACEPARENT}})


def carrying(n: int, sampled_every: int = 1) -> list[str]:
    """The data of `n` jobs each put in a trace of its own (a put per web request), one in
    `sampled_every` of them sampled (0: none)."""
    random = Random(n)  # noqa: S311 (ids for a benchmark)
    return [
        json.dumps(
            {
                "user": 42,
                tracing.TRACE_KEY: {
                    "traceparent": f"00-{random.getrandbits(128):032x}-"
                    f"{random.getrandbits(64):016x}-"
                    f"{'01' if sampled_every and i % sampled_every == 0 else '00'}"
                },
            }
        )
        for i in range(n)
    ]


#: the share of the jobs sampled, one in so many, by mode (the others: every job)
SAMPLED_EVERY = {"unsampled-parent": 0, "ratio": 10}


def say(line: str) -> None:
    sys.stdout.write(line + "\n")


class Dropping(SpanExporter):
    """Counts the spans it is handed and drops them."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        self.spans += len(spans)
        return SpanExportResult.SUCCESS


def sdk_provider(*, sampled: bool, exporter: Dropping | None = None) -> TracerProvider:
    provider = TracerProvider() if sampled else TracerProvider(sampler=ALWAYS_OFF)
    provider.add_span_processor(BatchSpanProcessor(exporter or Dropping()))
    return provider


def fields(n: int, data: str) -> dict[str, Any]:
    return {"jid": f"j{n:08d}", "klass": "app.Noop", "queue": "q", "data": data, "remaining": 5}


async def nothing() -> None:
    return None


def runner(mode: str) -> tuple[Callable[[int], float], Callable[[], None]]:
    """A function running N jobs in `mode` and returning their CPU seconds, and a cleanup."""
    exporter = Dropping()
    ran = 0
    if mode == "off":
        middleware = None
        provider: TracerProvider | None = None
    else:
        if mode == "noop":
            provider = None
            traced = tracing.Tracing(trace.NoOpTracerProvider())
        else:
            provider = sdk_provider(sampled=mode != "unsampled", exporter=exporter)
            full = {"full_attributes": True} if mode == "sampled-full" else {}
            traced = tracing.Tracing(provider, **full)
        middleware = traced.middleware

    async def jobs(n: int) -> float:
        if mode == "off":
            texts = [PLAIN] * n
        elif mode == "sampled-batch":  # the jobs of one put_many: one context
            texts = [CARRYING] * n
        else:
            texts = carrying(n, SAMPLED_EVERY.get(mode, 1))
        started = time.process_time()
        for i, text in enumerate(texts):
            job = aqless.Job(None, fields(i, text))
            if middleware is None:
                await nothing()
            else:
                await middleware(job, nothing)
        return time.process_time() - started

    def run(n: int) -> float:
        nonlocal ran
        ran += n
        return asyncio.run(jobs(n))

    def cleanup() -> None:
        if provider is not None:
            provider.shutdown()  # exports what the batch processor holds
        expected = ran if mode.startswith("sampled") else ran // 10 if mode == "ratio" else 0
        if exporter.spans < expected:
            # a full queue drops spans: that round measured less than a span per job
            say(f"({mode}: {expected - exporter.spans:,} of {expected:,} spans dropped)")

    return run, cleanup


def per_job_us(mode: str, jobs: int, rounds: int) -> list[float]:
    run, cleanup = runner(mode)
    try:
        run(min(jobs, 1000))  # warm up
        return [run(jobs) / jobs * 1e6 for _ in range(rounds)]
    finally:
        cleanup()


def modes(jobs: int, rounds: int, names: Sequence[str]) -> None:
    results: dict[str, list[float]] = {mode: [] for mode in names}
    for _ in range(rounds):  # alternate the modes, so a busy moment hits them all
        for mode in names:
            results[mode] += per_job_us(mode, jobs, 1)
    off = statistics.median(results["off"])
    say(f"CPU per job, µs: median (min-max) of {rounds} rounds of {jobs:,} jobs")
    say("| mode | per job | over off |")
    say("|---|---|---|")
    for mode, figures in results.items():
        median = statistics.median(figures)
        say(
            f"| {mode} | {median:.1f} ({min(figures):.1f}-{max(figures):.1f}) "
            f"| {median - off:+.1f} |"
        )


class Named:
    """What the put hook reads of a queue."""

    name = "q"


def puts(jobs: int, rounds: int) -> None:
    """The put hook's CPU per job, one job per put and 100 per put_many."""

    async def send(requests: list[aqless.PutRequest]) -> list[str]:
        return [f"j{n:08d}" for n in range(len(requests))]

    def run(hook: Any, size: int) -> float:
        batches = [
            [aqless.PutRequest("app.Noop", {"user": 42}) for _ in range(size)]
            for _ in range(jobs // size)
        ]

        async def go() -> float:
            started = time.process_time()
            for batch in batches:
                if hook is None:
                    await send(batch)
                else:
                    await hook(Named(), batch, send)
            return time.process_time() - started

        return asyncio.run(go()) / (len(batches) * size) * 1e6

    provider = sdk_provider(sampled=True)
    hooks = {
        "off": None,
        "noop": tracing.Tracing(trace.NoOpTracerProvider()).put_hook,
        "sampled": tracing.Tracing(provider).put_hook,
    }
    say(f"\nThe put hook, CPU µs per job: median of {rounds} rounds of {jobs:,} jobs")
    say("| mode | put | over off | put_many of 100 | over off |")
    say("|---|---|---|---|---|")
    results: dict[tuple[str, int], list[float]] = {(m, s): [] for m in hooks for s in (1, 100)}
    for _ in range(rounds):
        for mode, hook in hooks.items():
            for size in (1, 100):
                results[mode, size].append(run(hook, size))
    off = {size: statistics.median(results["off", size]) for size in (1, 100)}
    for mode in hooks:
        cells = []
        for size in (1, 100):
            median = statistics.median(results[mode, size])
            cells.append(f"{median:.1f} | {median - off[size]:+.1f}")
        say(f"| {mode} | {' | '.join(cells)} |")
    provider.shutdown()


def cpu_us(step: Callable[[], object], n: int) -> float:
    """The median CPU µs of one call of `step`, over 5 runs of `n` calls."""
    figures = []
    for _ in range(5):
        started = time.process_time()
        for _ in range(n):
            step()
        figures.append((time.process_time() - started) / n * 1e6)
    return statistics.median(figures)


def parts(n: int) -> None:
    """The sampled job's steps, each on its own."""
    provider = sdk_provider(sampled=True)
    bare = TracerProvider()  # no processor: the span without on_start/on_end
    tracer = provider.get_tracer("aqless")
    bare_tracer = bare.get_tracer("aqless")
    carrier = {"traceparent": TRACEPARENT}
    parent = propagate.extract(carrier)
    attributes: dict[str, str | int] = {
        "messaging.system": "qless",
        "messaging.operation.type": "process",
        "messaging.destination.name": "q",
        "messaging.message.id": "j00000001",
        "aqless.klass": "app.Noop",
        "aqless.retries_left": 5,
    }
    four = dict(list(attributes.items())[:4])  # the default set
    traced = tracing.Tracing(provider)

    def start(chosen: Any, attributes: dict[str, str | int] | None) -> Any:
        return chosen.start_span("process q", parent, SpanKind.CONSUMER, attributes)

    steps: dict[str, Callable[[], object]] = {
        "aqless: decode the data without a context": lambda: json.loads(PLAIN),
        "aqless: decode the data with a context": lambda: json.loads(CARRYING),
        "aqless: read a lone traceparent": lambda: tracing._traceparent_only(carrier),
        "aqless: the context of the previous job's carrier": lambda: traced._parent(carrier),
        "API: propagate.extract (the global propagator)": lambda: propagate.extract(carrier),
        "aqless: the attributes (4)": lambda: {**four, "messaging.message.id": "j1"},
        "aqless: the span's name": lambda: f"process {'q'}",
        "SDK: start_span, no attributes, no processor": lambda: start(bare_tracer, None),
        "SDK: start_span, 4 attributes, no processor": lambda: start(bare_tracer, four),
        "SDK: start_span, 6 attributes, no processor": lambda: start(bare_tracer, attributes),
        "SDK: start_span + end, 4 attributes, no processor": lambda: start(bare_tracer, four).end(),
        "SDK: start_span + end, 4 attributes, batch processor": lambda: start(tracer, four).end(),
        "SDK: start_span + end, 6 attributes, batch processor": lambda: start(
            tracer, attributes
        ).end(),
        "API: set_span_in_context + attach + detach": lambda: attach_detach(parent),
    }
    say(f"\nA sampled job's steps on their own, CPU µs per call (median of 5 x {n:,})")
    say("| step | µs |")
    say("|---|---|")
    for name, step in steps.items():
        say(f"| {name} | {cpu_us(step, n):.2f} |")
    provider.shutdown()
    bare.shutdown()


def attach_detach(parent: Any) -> None:
    from opentelemetry import context

    token = context.attach(trace.set_span_in_context(trace.get_current_span(parent)))
    context.detach(token)


def profile(jobs: int, mode: str) -> None:
    run, cleanup = runner(mode)
    run(1000)
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    run(jobs)
    profiler.disable()
    cleanup()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated")
    parser.add_argument("--puts", action="store_true", help="time the put hook too")
    parser.add_argument("--parts", action="store_true", help="time a sampled job's steps")
    parser.add_argument("--profile", choices=MODES, help="cProfile one mode instead")
    options = parser.parse_args()
    if options.profile:
        profile(options.jobs, options.profile)
        return
    modes(options.jobs, options.rounds, options.modes.split(","))
    if options.puts:
        puts(options.jobs, options.rounds)
    if options.parts:
        parts(options.jobs)


if __name__ == "__main__":
    main()
