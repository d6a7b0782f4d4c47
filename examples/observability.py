"""Prometheus metrics and OpenTelemetry traces from a worker.

    pip install 'aqless[prometheus,otel,embedded]'
    python examples/observability.py    (AQLESS_URL, or the embedded Valkey)

In a service, serve ``metrics.asgi_app()`` at ``/metrics`` (or call
``prometheus_client.start_http_server(9100)`` in a worker process), and configure the
OpenTelemetry SDK with the exporter of your collector instead of the printing one here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import anyio
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from prometheus_client import CollectorRegistry, generate_latest

import aqless
from aqless import tracing
from aqless.metrics import Metrics

handlers = aqless.Handlers()


@handlers.register("reports.Build")
async def build(job: aqless.Job) -> None:
    await anyio.sleep(0.01 * job.data["pages"])
    if job.data["pages"] > 3:
        raise ValueError("too long")


class PrintSpans(SpanExporter):
    """Prints each finished span as ``name  trace/span <- parent``."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        for span in spans:
            assert span.context is not None
            parent = f"{span.parent.span_id:016x}" if span.parent else "(root)"
            print(
                f"span {span.name:<16} trace {span.context.trace_id:032x} "
                f"span {span.context.span_id:016x} <- {parent}"
            )
        return SpanExportResult.SUCCESS


async def main() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(PrintSpans()))
    trace.set_tracer_provider(provider)
    registry = CollectorRegistry()  # or the default one: Metrics()
    metrics = Metrics(registry)

    async with aqless.Client(namespace="example-observability") as client:
        tracing.instrument(client)  # puts carry the trace context
        with trace.get_tracer("example").start_as_current_span("nightly reports"):
            for pages in (1, 2, 5):
                await client.queues["reports"].put("reports.Build", {"pages": pages})
        worker = aqless.Worker(
            client,
            ["reports"],
            handlers=handlers,
            middleware=[tracing.middleware],  # first: the code never sees the context
            burst=True,
            interval=0.1,
        )
        metrics.instrument(worker)
        await worker.run()
        await metrics.refresh(client)  # queue depths; `metrics.watch(client)` in a task
    for line in generate_latest(registry).decode().splitlines():
        if line.startswith(("aqless_jobs_total", "aqless_failed_jobs", "aqless_queue_jobs{")):
            print(line)


if __name__ == "__main__":
    asyncio.run(main())
