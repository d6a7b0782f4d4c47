"""OpenTelemetry spans around put and process, one trace from the web request to the worker.

Needs ``pip install 'aqless[otel]'`` (the OpenTelemetry API; the SDK and an exporter are the
application's choice, as always with OpenTelemetry)::

    aqless.tracing.instrument(client)                     # producer side: every put
    aqless.Worker(client, queues, middleware=[aqless.tracing.middleware, ...])  # consumer side

- **put** (and ``put_many``, and ``job.move``, which put again) runs in a ``send <queue>``
  span of kind PRODUCER, and writes that span's context into each job it puts.
- **process**: the worker's middleware reads it back and runs the job's code in a
  ``process <queue>`` span of kind CONSUMER whose parent is the ``send`` span. A put made in
  a web request's span thus shows the job's processing in the request's trace.

Both spans carry the messaging attributes (``messaging.system``, ``.operation.type``,
``.destination.name``, and the jid as ``messaging.message.id``, or a batch's
``messaging.batch.message_count``); ``Tracing(full_attributes=True)`` adds ``aqless.klass``
and ``aqless.retries_left``. The ``process`` span is current while the job's code runs: the
spans that code makes are its children.

**Sampling.** The worker decides once per job, before any span or attribute is made: with
no SDK, or a sampler that drops every span, it only removes the context; under the SDK's
default sampler (ParentBased), a job whose put's span was not sampled gets no ``process``
span either (the SDK's would record nothing), and its parent's context is current while its
code runs, so that code's spans stay in the put's trace, unsampled: an unsampled job costs
the worker a few µs, a sampled one some 40 (measured by
``benchmarks/tracing_cost.py``).

**Where the context lives.** In the job's data, under the reserved key ``"_aqless_trace"``
(`TRACE_KEY`), as the propagator's carrier (W3C ``traceparent``/``tracestate`` by default):
``{"user": 42, "_aqless_trace": {"traceparent": "00-..."}}``. Only data that is a JSON object
(a dict) gets it; the caller's dict is copied, not changed. A put made outside any trace
starts one (its ``send`` span is the root). Data of another shape (a list, a string) carries
nothing: its processing starts a trace of its own.
The middleware removes the key from ``job.data`` before the job's code (and any middleware
after it) runs, so job code never sees it; put the tracing middleware first. Other qless
clients, the dashboard and ``aqless get`` show the key as part of the data.

The key stays in the stored job until the job completes: a retried job is processed again
under the same parent. A pipeline step that hands its job on with ``job.complete(next_queue)``
sends the data without the key, so the next step starts a new trace, unless the step first
calls ``job.data = aqless.tracing.inject(job.data)`` (then the next step is a child of this
one's ``process`` span). Recurring jobs (``recur``) carry no context: each spawn starts its
own trace.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from aqless._version import __version__
from aqless._worker.outcomes import Retry
from aqless.errors import needs_extra
from aqless.puts import PutRequest, PutSender, class_name

with needs_extra("otel", "aqless.tracing"):
    from opentelemetry import context as otel_context
    from opentelemetry import propagate, trace
    from opentelemetry.trace import SpanKind, Status, StatusCode

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.propagators.textmap import TextMapPropagator

    from aqless._worker.middleware import Perform
    from aqless.client import Client
    from aqless.job import Job
    from aqless.queue import Queue
    from aqless.sharding.client import ShardedClient
    from aqless.sharding.queue import ShardedQueue

__all__ = ["TRACE_KEY", "Tracing", "extract", "inject", "instrument", "middleware"]

TRACE_KEY: Final = "_aqless_trace"
"""The key of the job data that carries the trace context."""
_SYSTEM: Final = "qless"


def inject(data: Any) -> Any:
    """`data` with the current trace context under `TRACE_KEY`: a copy, if `data` is a dict
    and a span is active; otherwise `data` itself. `instrument` does it for every put; call
    it for data put by other means.

    Examples:
        ```python
        from aqless.tracing import inject

        await queue.put("app.jobs.send", inject({"to": address}))
        ```
    """
    if not isinstance(data, Mapping):
        return data
    return _with_carrier(data, _current_carrier())


def _current_carrier() -> dict[str, str]:
    """The current trace context as the propagator writes it (empty outside any span)."""
    if not trace.get_current_span().get_span_context().is_valid:
        return {}
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def _with_carrier(data: Any, carrier: dict[str, str]) -> Any:
    """A copy of `data`, a dict, with `carrier` under `TRACE_KEY`; other data as it is."""
    if not carrier or not isinstance(data, Mapping):
        return data
    return {**data, TRACE_KEY: carrier}


def extract(job: Job) -> Context | None:
    """Remove the trace context from ``job.data`` and return it (None when it has none).
    The middleware does it; call it in code that runs jobs without it.

    Examples:
        ```python
        from opentelemetry import context
        from aqless.tracing import extract

        parent = extract(job)
        token = context.attach(parent) if parent is not None else None
        ```
    """
    if not isinstance(job.data, dict):
        return None
    carrier = job.data.pop(TRACE_KEY, None)
    if not isinstance(carrier, Mapping):
        return None
    return propagate.extract({str(key): str(value) for key, value in carrier.items()})


class Tracing:
    """The put hook and the worker middleware, on a tracer provider of your choice.

    Args:
        tracer_provider: where spans go (default: the global one, at each span, so a
            provider set after this object is made is used).
        full_attributes: give each span aqless's own attributes as well (``aqless.klass``,
            and ``aqless.retries_left`` on ``process``), not only the messaging ones. Off by
            default: the SDK checks every attribute of every span, ~0.5 µs each.

    Examples:
        ```python
        from aqless.tracing import Tracing

        tracing = Tracing(provider, full_attributes=True)
        tracing.instrument(client)  # puts: PRODUCER spans
        worker = aqless.Worker(client, ["emails"], middleware=[tracing.middleware])
        ```
    """

    def __init__(
        self, tracer_provider: trace.TracerProvider | None = None, *, full_attributes: bool = False
    ) -> None:
        self._provider = tracer_provider
        self.full_attributes = full_attributes
        self._cached: tuple[trace.TracerProvider, trace.Tracer, bool, bool] | None = None
        # the last carrier read and the context it gave, with the propagator that read it:
        # the jobs of one put_many (or of one request's puts) share it
        self._last_parent: tuple[TextMapPropagator, Mapping[Any, Any], Context] | None = None
        self._w3c: tuple[TextMapPropagator, bool] | None = None

    def _tracer(self) -> tuple[trace.Tracer, bool]:
        """The provider's tracer, made once per provider (an SDK provider makes a new one
        at each call), and whether it records spans."""
        cached = self._cached_tracer()
        return cached[1], cached[2]

    def _cached_tracer(self) -> tuple[trace.TracerProvider, trace.Tracer, bool, bool]:
        """The provider, its tracer, whether it records spans, and whether it records none
        under a parent that was not sampled (see `_follows_unsampled`)."""
        provider = self._provider if self._provider is not None else trace.get_tracer_provider()
        cached = self._cached
        if cached is None or cached[0] is not provider:
            tracer = provider.get_tracer("aqless", __version__)
            records = not _records_nothing(tracer)
            cached = self._cached = (provider, tracer, records, _follows_unsampled(tracer))
        return cached

    def instrument(self, client: Client | ShardedClient) -> None:
        """Trace every put of `client`, a plain or a sharded deployment's (idempotent).

        Examples:
            ```python
            tracing.instrument(client)
            ```
        """
        if not any(getattr(hook, "__self__", None) is self for hook in client.put_hooks):
            client.put_hooks.append(self.put_hook)

    async def put_hook(
        self, queue: Queue | ShardedQueue, requests: list[PutRequest], send: PutSender
    ) -> list[str]:
        """A `client.put_hooks` entry: a PRODUCER span, its context written into each job.

        The span is current while the jobs are sent (a client library's own spans nest in
        it); an error the send raises is recorded on it, and raised again.

        Examples:
            ```python
            client.put_hooks.append(tracing.put_hook)  # what instrument() does
            ```
        """
        tracer, records = self._tracer()
        if not records:  # its span would be invalid: no context to write
            return await send(requests)
        attributes: dict[str, str | int] = {
            "messaging.system": _SYSTEM,
            "messaging.operation.type": "send",
            "messaging.destination.name": queue.name,
        }
        if len(requests) != 1:
            attributes["messaging.batch.message_count"] = len(requests)
        elif self.full_attributes:
            attributes["aqless.klass"] = class_name(requests[0].klass)
        span = tracer.start_span(
            f"send {queue.name}", kind=SpanKind.PRODUCER, attributes=attributes
        )
        context = trace.set_span_in_context(span)
        token = otel_context.attach(context)
        try:
            carrier: dict[str, str] = {}
            if span.get_span_context().is_valid:
                propagate.inject(carrier, context)  # one context for the batch: in each job
            jids = await send(_carrying(requests, carrier))
            if len(jids) == 1:
                span.set_attribute("messaging.message.id", jids[0])
            return jids
        except Exception as error:
            _record(span, error)
            raise
        finally:
            otel_context.detach(token)
            span.end()

    async def middleware(self, job: Job, perform: Perform) -> Any:
        """Worker middleware: the job's code in a CONSUMER span, child of the put's span.

        The span is the current one while the job's code runs: the spans that code makes
        (its own, or an instrumented HTTP or database client's) are its children, and
        `inject` reads it. With no tracer to record spans (OpenTelemetry's no-op one: no
        SDK configured), the context is only removed from the data: no span, no context
        made. What the job's code raises is recorded on the span and raised again.

        Examples:
            ```python
            worker = aqless.Worker(client, ["emails"], middleware=[tracing.middleware])
            ```
        """
        data = job.data
        carrier = data.pop(TRACE_KEY, None) if isinstance(data, dict) else None
        _, tracer, records, follows_unsampled = self._cached_tracer()
        if not records:
            return await perform()
        if follows_unsampled and _unsampled(carrier):  # decided once, before any span
            return await self._unsampled(carrier, perform)
        attributes: dict[str, str | int] = {
            "messaging.system": _SYSTEM,
            "messaging.operation.type": "process",
            "messaging.destination.name": job.queue_name,
            "messaging.message.id": job.jid,
        }
        if self.full_attributes:
            attributes["aqless.klass"] = job.klass_name
            attributes["aqless.retries_left"] = job.retries_left
        span = tracer.start_span(
            f"process {job.queue_name}",
            self._parent(carrier),
            SpanKind.CONSUMER,
            attributes,
            record_exception=False,
            set_status_on_exception=False,
        )
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            return await perform()
        except Retry as retry:  # control flow, not an error
            span.set_attribute("aqless.retry_delay", retry.delay)
            raise
        except Exception as error:
            _record(span, error)
            raise
        finally:
            otel_context.detach(token)
            span.end()

    async def _unsampled(self, carrier: object, perform: Perform) -> Any:
        """Run a job whose producer's span was not sampled, under a sampler that samples
        no span below such a parent: no span is made (the SDK's would record nothing), and
        the parent's context is current while the code runs, so its own spans are not
        sampled either."""
        parent = self._parent(carrier)
        if parent is None:
            return await perform()
        token = otel_context.attach(parent)
        try:
            return await perform()
        finally:
            otel_context.detach(token)

    def _parent(self, carrier: object) -> Context | None:
        """The context `carrier` (a job's) holds; None when it is no carrier."""
        if not isinstance(carrier, Mapping):
            return None
        propagator = propagate.get_global_textmap()
        last = self._last_parent
        if last is not None and last[0] is propagator and last[1] == carrier:
            return last[2]
        parent = _traceparent_only(carrier) if self._reads_w3c(propagator) else None
        if parent is None:
            parent = propagator.extract({str(key): str(value) for key, value in carrier.items()})
        self._last_parent = (propagator, carrier, parent)
        return parent

    def _reads_w3c(self, propagator: TextMapPropagator) -> bool:
        """Whether `propagator` reads only W3C headers (the default: trace context and
        baggage), so a carrier of a lone ``traceparent`` can be read without it."""
        known = self._w3c
        if known is None or known[0] is not propagator:
            known = self._w3c = (propagator, propagator.fields <= _W3C_FIELDS)
        return known[1]


_W3C_FIELDS: Final = frozenset({"traceparent", "tracestate", "baggage"})
# version 00 exactly as W3C trace context writes it (the propagator also takes other forms)
_TRACEPARENT: Final = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_NO_TRACE: Final = "0" * 32
_NO_SPAN: Final = "0" * 16


def _traceparent_only(carrier: Mapping[Any, Any]) -> Context | None:
    """The context of a carrier that is a lone, well-formed version-00 ``traceparent``, as
    the W3C propagator reads it; None for any other carrier (the propagator reads those)."""
    if len(carrier) != 1:
        return None
    header = carrier.get("traceparent")
    match = _TRACEPARENT.fullmatch(header) if isinstance(header, str) else None
    if match is None:
        return None
    trace_id, span_id, flags = match.groups()
    if trace_id == _NO_TRACE or span_id == _NO_SPAN:
        return None
    parent = trace.SpanContext(
        int(trace_id, 16), int(span_id, 16), True, trace.TraceFlags(int(flags, 16))
    )
    return trace.set_span_in_context(trace.NonRecordingSpan(parent), otel_context.Context())


def _carrying(requests: list[PutRequest], carrier: dict[str, str]) -> list[PutRequest]:
    """`requests` with `carrier` in each one's data (a copy of the request and its data, for
    data that is a dict)."""
    if not carrier:
        return requests
    return [
        replace(request, data=_with_carrier(request.data, carrier))
        if isinstance(request.data, Mapping)
        else request
        for request in requests
    ]


def _record(span: trace.Span, error: Exception) -> None:
    """`error` on `span`: an exception event, and the span's status an error."""
    span.record_exception(error)
    span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))


def _records_nothing(tracer: trace.Tracer) -> bool:
    """Whether `tracer` is OpenTelemetry's no-op one, or a proxy for it (no provider set),
    or the SDK's with a sampler that drops every span."""
    if isinstance(tracer, trace.ProxyTracer):  # what it hands over to (private: may go)
        return isinstance(getattr(tracer, "_tracer", None), trace.NoOpTracer)
    return isinstance(tracer, trace.NoOpTracer) or _sampler(tracer) == "AlwaysOffSampler"


#: what the SDK's ParentBased sampler says of itself when it samples nothing below a parent
#: that was not sampled (its default)
_DROPS_UNSAMPLED: Final = (
    "remoteParentNotSampled:AlwaysOffSampler",
    "localParentNotSampled:AlwaysOffSampler",
)


def _follows_unsampled(tracer: trace.Tracer) -> bool:
    """Whether `tracer` samples no span whose parent was not sampled (the SDK's default
    sampler, ParentBased, as it describes itself): a job put in an unsampled trace then
    needs no span of its own."""
    description = _sampler(tracer)
    return description.startswith("ParentBased{") and all(
        part in description for part in _DROPS_UNSAMPLED
    )


def _sampler(tracer: trace.Tracer) -> str:
    """The description of the SDK tracer's sampler ("" for another tracer)."""
    sampler = getattr(tracer, "sampler", None)
    describe = getattr(sampler, "get_description", None)
    return describe() if callable(describe) else ""


def _unsampled(carrier: object) -> bool:
    """Whether `carrier` is a lone W3C ``traceparent`` whose sampled flag is off (other
    carriers go to the propagator, which decides)."""
    if not isinstance(carrier, Mapping) or len(carrier) != 1:
        return False
    header = carrier.get("traceparent")
    return isinstance(header, str) and len(header) == 55 and header[-2:] in _UNSAMPLED_FLAGS


#: W3C trace flags without the sampled bit (version 00 defines only that bit)
_UNSAMPLED_FLAGS: Final = frozenset(f"{flags:02x}" for flags in range(0, 256, 2))


_default = Tracing()


def instrument(
    client: Client | ShardedClient,
    *,
    tracer_provider: trace.TracerProvider | None = None,
    full_attributes: bool = False,
) -> None:
    """Trace every put of `client`, on `tracer_provider` (default: the global one); see
    `Tracing` for `full_attributes` (default False).

    Examples:
        ```python
        import aqless.tracing

        aqless.tracing.instrument(client)
        ```
    """
    if tracer_provider is None and not full_attributes:
        _default.instrument(client)
    else:
        Tracing(tracer_provider, full_attributes=full_attributes).instrument(client)


async def middleware(job: Job, perform: Perform) -> Any:
    """Worker middleware on the global tracer provider (``aqless-run --middleware
    aqless.tracing:middleware``); put it first so no other middleware sees the context.

    Examples:
        ```python
        worker = aqless.Worker(client, ["emails"], middleware=[aqless.tracing.middleware])
        ```
    """
    return await _default.middleware(job, perform)
