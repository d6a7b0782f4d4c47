"""aqless's optional features, switched on for compare.py's ``features`` workload (and
``zstd`` for its ``aqless+zstd`` row).

- ``metrics``: ``aqless.metrics.Metrics`` on a registry of its own, instrumenting the worker
  (a counter and a histogram observed per job), never scraped;
- ``tracing``: ``aqless.tracing`` on the put side and as the worker's first middleware, on an
  OpenTelemetry SDK provider whose batch processor hands the spans to an exporter that
  counts and drops them (in process, no network: what an OTLP exporter costs on the wire
  is not aqless's);
- ``zstd``: the client made with ``codec=PayloadCodec(compression=Zstd())`` (aqless.codecs,
  its defaults: level 1, data of 1 KB or more), so puts compress and the worker, through the
  same client, decompresses before the handler. ``AQLESS_ZSTD_LEVEL`` sets another level
  (to compare levels; unset: the default).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import aqless

KNOWN = ("metrics", "tracing", "zstd")


class Features:
    """The features named in `names`, made (and their packages imported) up front, outside
    any measured phase."""

    def __init__(self, names: Sequence[str]) -> None:
        unknown = set(names) - set(KNOWN)
        if unknown:
            raise ValueError(f"unknown features: {', '.join(sorted(unknown))}")
        self.names = tuple(names)
        self.spans = 0  # exported (and dropped) by the tracing provider
        self.tracing: Any = self._tracing() if "tracing" in self.names else None
        self.metrics: Any = self._metrics() if "metrics" in self.names else None
        self.codec: Any = self._codec() if "zstd" in self.names else None

    def _tracing(self) -> Any:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            SpanExporter,
            SpanExportResult,
        )

        from aqless.tracing import Tracing

        features = self

        class Dropping(SpanExporter):
            def export(self, spans: Sequence[Any]) -> SpanExportResult:
                features.spans += len(spans)
                return SpanExportResult.SUCCESS

        self._provider = TracerProvider()
        self._provider.add_span_processor(BatchSpanProcessor(Dropping()))
        return Tracing(self._provider)

    def _metrics(self) -> Any:
        from prometheus_client import CollectorRegistry

        from aqless.metrics import Metrics

        return Metrics(CollectorRegistry())

    def _codec(self) -> Any:
        from aqless.codecs import PayloadCodec, Zstd

        level = os.environ.get("AQLESS_ZSTD_LEVEL", "")
        return PayloadCodec(compression=Zstd(level=int(level)) if level else Zstd())

    def client(self, client: aqless.Client) -> None:
        """Trace `client`'s puts."""
        if self.tracing is not None:
            self.tracing.instrument(client)

    def middleware(self) -> list[Any]:
        """The worker's middleware: tracing's, or none."""
        return [] if self.tracing is None else [self.tracing.middleware]

    def worker(self, worker: aqless.Worker) -> None:
        """Count and time `worker`'s jobs."""
        if self.metrics is not None:
            self.metrics.instrument(worker)

    def flush(self) -> None:
        """Export the spans still in the batch processor's buffer."""
        if self.tracing is not None:
            self._provider.force_flush()
