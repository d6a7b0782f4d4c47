"""aqless.tracing on a real server and a real worker, spans read from the SDK's in-memory
exporter: where the context travels, who sees it, retries, pipelines and failures."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, Sampler
from opentelemetry.trace import SpanKind, StatusCode

import aqless
from aqless import tracing
from aqless.flows import FlowNode
from aqless.tracing import TRACE_KEY
from tests.support.examples import span_exporter

pytest_plugins = ["tests.support.client_fixtures"]

handlers = aqless.Handlers()
seen: list[object] = []


@handlers.register("t.Look")
async def look(job: aqless.Job) -> None:
    seen.append(job.data)


@handlers.register("t.Flaky")
async def flaky(job: aqless.Job) -> None:
    seen.append(job.data)
    if job.retries_left == job.original_retries:
        raise aqless.Retry()


@handlers.register("t.Broken")
async def broken(job: aqless.Job) -> None:
    raise ValueError("broken")


@handlers.register("t.Step")
async def step(job: aqless.Job) -> None:
    job.data = tracing.inject(job.data)  # carry the trace to the next step
    await job.complete("t-next")


@pytest.fixture(autouse=True)
def _clean() -> None:
    span_exporter().clear()
    seen.clear()


def send_attributes(jid: str | None = None) -> dict[str, object]:
    """The default attributes of a ``send t`` span: of a put of one job (`jid`) or a batch."""
    common: dict[str, object] = {
        "messaging.system": "qless",
        "messaging.operation.type": "send",
        "messaging.destination.name": "t",
    }
    return common if jid is None else {**common, "messaging.message.id": jid}


def process_attributes(jid: str) -> dict[str, object]:
    """The default attributes of job `jid`'s ``process t`` span."""
    return {
        "messaging.system": "qless",
        "messaging.operation.type": "process",
        "messaging.destination.name": "t",
        "messaging.message.id": jid,
    }


def finished(name: str) -> list[ReadableSpan]:
    return [span for span in span_exporter().get_finished_spans() if span.name == name]


async def run(client: aqless.Client, *queues: str) -> None:
    worker = aqless.Worker(
        client, list(queues), handlers=handlers, middleware=[tracing.middleware], burst=True
    )
    with anyio.fail_after(20):
        await worker.run()


async def test_the_context_rides_in_the_data_and_job_code_never_sees_it(
    client: aqless.Client,
) -> None:
    tracing.instrument(client)
    tracing.instrument(client)  # idempotent
    assert len(client.put_hooks) == 1
    data = {"user": 42}
    with trace.get_tracer("test").start_as_current_span("request") as request:
        jid = await client.queues["t"].put("t.Look", data)
        await client.queues["t"].put_many(
            [aqless.PutRequest("t.Look", {"n": 1}), aqless.PutRequest("t.Look", [1, 2])]
        )
    assert data == {"user": 42}  # the caller's dict is left alone
    stored = json.loads(await client.redis.hget(f"ql:j:{jid}", "data") or "{}")
    assert stored["user"] == 42
    assert (
        stored[TRACE_KEY]["traceparent"].split("-")[1]
        == f"{request.get_span_context().trace_id:032x}"
    )
    await run(client, "t")
    assert sorted(map(str, seen)) == sorted(map(str, [{"user": 42}, {"n": 1}, [1, 2]]))
    (single,) = [s for s in finished("send t") if s.attributes == send_attributes(jid)]
    (batch,) = [s for s in finished("send t") if s is not single]
    assert batch.attributes == {**send_attributes(), "messaging.batch.message_count": 2}
    processes = finished("process t")
    assert len(processes) == 3
    parents = sorted(p.parent.span_id for p in processes if p.parent is not None)
    # the list data carried nothing: its processing starts a trace of its own
    assert parents == sorted([single.context.span_id, batch.context.span_id])
    assert all(p.kind == SpanKind.CONSUMER for p in processes)
    (looked,) = [
        p for p in processes if p.attributes and p.attributes["messaging.message.id"] == jid
    ]
    assert looked.attributes == process_attributes(jid)


async def test_a_put_outside_any_trace_starts_one(client: aqless.Client) -> None:
    assert tracing.inject({"a": 1}) == {"a": 1}  # no span: nothing to carry
    tracing.instrument(client)
    await client.queues["t"].put("t.Look", {"user": 1})
    await run(client, "t")
    (send,) = finished("send t")
    (process,) = finished("process t")
    assert send.parent is None
    assert process.parent is not None
    assert process.parent.span_id == send.context.span_id
    assert seen == [{"user": 1}]


async def test_a_flows_jobs_carry_the_context_of_their_queues_send_span(
    client: aqless.Client,
) -> None:
    """Every job a flow puts is traced as a put is: a ``send <queue>`` span per queue of the
    flow, its context in each job, and each job's processing its child."""
    tracing.instrument(client)
    with trace.get_tracer("test").start_as_current_span("request") as request:
        flow = await client.flows.put(
            FlowNode("t.Look", {"parent": True}, queue="t"),
            [FlowNode("t.Look", {"child": True}, queue="t-children")],
        )
    parent, child = flow.jids
    for jid in flow.jids:
        stored = json.loads(await client.redis.hget(f"ql:j:{jid}", "data") or "{}")
        trace_id = stored[TRACE_KEY]["traceparent"].split("-")[1]
        assert trace_id == f"{request.get_span_context().trace_id:032x}"
    await run(client, "t-children", "t")
    assert sorted(map(str, seen)) == sorted(map(str, [{"child": True}, {"parent": True}]))
    (send,) = finished("send t")
    (send_children,) = finished("send t-children")
    assert send.attributes == send_attributes(parent)
    assert send_children.attributes == send_attributes(child) | {
        "messaging.destination.name": "t-children"
    }
    for processed, sent in (
        (finished("process t"), send),
        (finished("process t-children"), send_children),
    ):
        (span,) = processed
        assert span.parent is not None
        assert span.parent.span_id == sent.context.span_id


async def test_a_retried_job_keeps_its_parent_and_failures_are_errors(
    client: aqless.Client,
) -> None:
    tracing.instrument(client)
    with trace.get_tracer("test").start_as_current_span("request"):
        flaky_jid = await client.queues["t"].put("t.Flaky", {"x": 1})
        broken_jid = await client.queues["t"].put("t.Broken", {})
    await run(client, "t")
    assert seen == [{"x": 1}, {"x": 1}]
    sends = {s.attributes["messaging.message.id"]: s for s in finished("send t") if s.attributes}
    processes = finished("process t")
    flaky_runs = [p for p in processes if p.attributes and flaky_jid in p.attributes.values()]
    assert [p.attributes for p in flaky_runs] == [
        {**process_attributes(flaky_jid), "aqless.retry_delay": 0},
        process_attributes(flaky_jid),
    ]
    assert {p.parent.span_id for p in flaky_runs if p.parent} == {sends[flaky_jid].context.span_id}
    assert all(p.status.status_code == StatusCode.UNSET for p in flaky_runs)  # Retry: no error
    (failed,) = [p for p in processes if p.attributes == process_attributes(broken_jid)]
    assert failed.status.status_code == StatusCode.ERROR
    assert [event.name for event in failed.events] == ["exception"]


async def test_a_pipeline_step_that_injects_makes_the_next_step_its_child(
    client: aqless.Client,
) -> None:
    tracing.instrument(client)
    with trace.get_tracer("test").start_as_current_span("request"):
        await client.queues["t"].put("t.Step", {"order": 7})
    await run(client, "t")
    (first,) = finished("process t")
    job_data = json.loads(
        await client.redis.hget(f"ql:j:{(await client.queues['t-next'].peek())[0].jid}", "data")
        or "{}"
    )
    assert TRACE_KEY in job_data
    assert job_data[TRACE_KEY]["traceparent"].split("-")[2] == f"{first.context.span_id:016x}"


class CountingProvider(TracerProvider):
    """An SDK provider that counts the tracers asked of it."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def get_tracer(self, *arguments: Any, **options: Any) -> trace.Tracer:
        self.asked += 1
        return super().get_tracer(*arguments, **options)


async def test_a_provider_is_asked_for_its_tracer_once_not_at_every_span(
    client: aqless.Client,
) -> None:
    provider = CountingProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    traced = tracing.Tracing(provider)
    traced.instrument(client)
    for n in range(3):
        await client.queues["t"].put("t.Look", {"n": n})
    worker = aqless.Worker(
        client, ["t"], handlers=handlers, middleware=[traced.middleware], burst=True
    )
    with anyio.fail_after(20):
        await worker.run()
    names = sorted(span.name for span in exporter.get_finished_spans())
    assert names == ["process t"] * 3 + ["send t"] * 3
    assert provider.asked == 1


async def test_with_a_no_op_tracer_the_worker_only_removes_the_context(
    client: aqless.Client,
) -> None:
    tracing.instrument(client)
    with trace.get_tracer("test").start_as_current_span("request"):
        await client.queues["t"].put("t.Look", {"user": 7})
    silent = tracing.Tracing(trace.NoOpTracerProvider())
    currents: list[trace.Span] = []

    async def spy(job: aqless.Job, perform: Any) -> Any:
        currents.append(trace.get_current_span())
        return await perform()

    worker = aqless.Worker(
        client, ["t"], handlers=handlers, middleware=[silent.middleware, spy], burst=True
    )
    with anyio.fail_after(20):
        await worker.run()
    assert seen == [{"user": 7}]  # the key is gone all the same
    assert finished("process t") == []
    assert currents == [trace.INVALID_SPAN]  # no span was made current for the job


@handlers.register("t.Child")
async def child(job: aqless.Job) -> None:
    with trace.get_tracer("job code").start_as_current_span("lookup"):
        pass


async def test_spans_the_job_code_makes_are_children_of_its_process_span(
    client: aqless.Client,
) -> None:
    await client.queues["t"].put("t.Child", {})
    await run(client, "t")
    (process,) = finished("process t")
    (lookup,) = finished("lookup")
    assert lookup.parent is not None
    assert lookup.parent.span_id == process.context.span_id


async def test_full_attributes_add_aqless_own(client: aqless.Client) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.instrument(client, tracer_provider=provider, full_attributes=True)
    jid = await client.queues["t"].put("t.Look", {"n": 1})
    traced = tracing.Tracing(provider, full_attributes=True)
    worker = aqless.Worker(
        client, ["t"], handlers=handlers, middleware=[traced.middleware], burst=True
    )
    with anyio.fail_after(20):
        await worker.run()
    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert spans["send t"].attributes == {**send_attributes(jid), "aqless.klass": "t.Look"}
    assert spans["process t"].attributes == {
        **process_attributes(jid),
        "aqless.klass": "t.Look",
        "aqless.retries_left": 5,
    }


async def test_a_put_the_server_refuses_is_an_error_on_its_send_span(
    client: aqless.Client,
) -> None:
    tracing.instrument(client)
    with pytest.raises(aqless.JobNotFoundError):
        await client.queues["t"].put("t.Look", {}, jid="missing", requeue=True)
    (send,) = finished("send t")
    assert send.status.status_code == StatusCode.ERROR
    assert [event.name for event in send.events] == ["exception"]


TRACE_ID, SPAN_ID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"


@pytest.mark.parametrize(
    "carrier",
    [
        {"traceparent": f"00-{TRACE_ID}-{SPAN_ID}-01"},
        {"traceparent": f" 00-{TRACE_ID}-{SPAN_ID}-01"},  # the propagator allows blanks
        {"traceparent": f"00-{TRACE_ID}-{SPAN_ID}-01", "tracestate": "vendor=x"},
        {"traceparent": f"01-{TRACE_ID}-{SPAN_ID}-01-later"},  # a later version's form
        {"traceparent": f"00-{TRACE_ID}-{SPAN_ID}-03"},  # flags beyond sampled
        {"traceparent": f"00-{'0' * 32}-{SPAN_ID}-01"},  # invalid: no parent
        {"traceparent": f"00-{TRACE_ID.upper()}-{SPAN_ID}-01"},  # invalid: no parent
        {"traceparent": f"00-{TRACE_ID}-{SPAN_ID}-01", "baggage": "user=7"},
    ],
)
async def test_the_parent_is_what_the_propagator_reads_from_the_carrier(
    client: aqless.Client, carrier: dict[str, str]
) -> None:
    # written as another client (or an older aqless) might: the worker reads any carrier
    # the way the configured propagator does
    await client.queues["t"].put("t.Look", {"user": 1, TRACE_KEY: carrier})
    await run(client, "t")
    (process,) = finished("process t")
    expected = trace.get_current_span(propagate.extract(carrier)).get_span_context()
    if expected.is_valid:
        assert process.parent == expected
        assert process.context.trace_id == expected.trace_id
    else:
        assert process.parent is None
    assert seen == [{"user": 1}]


async def test_a_job_put_in_an_unsampled_trace_records_no_span(client: aqless.Client) -> None:
    carrier = {"traceparent": f"00-{TRACE_ID}-{SPAN_ID}-00"}
    await client.queues["t"].put("t.Look", {TRACE_KEY: carrier})
    await run(client, "t")
    assert finished("process t") == []
    assert seen == [{}]


class SpanCountingProvider(TracerProvider):
    """An SDK provider (by default with the SDK's sampler, ParentBased) that counts the
    spans started."""

    def __init__(self, sampler: Sampler | None = None) -> None:
        super().__init__(sampler)
        self.started = 0

    def get_tracer(self, *arguments: Any, **options: Any) -> trace.Tracer:
        tracer = super().get_tracer(*arguments, **options)
        start_span = tracer.start_span

        def counted(*span_arguments: Any, **span_options: Any) -> trace.Span:
            self.started += 1
            return start_span(*span_arguments, **span_options)

        setattr(tracer, "start_span", counted)  # noqa: B010 (a method of this one tracer)
        return tracer


@handlers.register("t.Where")
async def where(job: aqless.Job) -> None:
    seen.append(trace.get_current_span().get_span_context())
    with trace.get_tracer("job code").start_as_current_span("lookup"):
        pass


@pytest.mark.parametrize("sampled", [False, True])
async def test_an_unsampled_job_makes_no_span_and_its_code_stays_in_its_trace(
    client: aqless.Client, sampled: bool
) -> None:
    provider = SpanCountingProvider()
    traced = tracing.Tracing(provider)
    flags = "01" if sampled else "00"
    carrier = {"traceparent": f"00-{TRACE_ID}-{SPAN_ID}-{flags}"}
    await client.queues["t"].put("t.Where", {TRACE_KEY: carrier})
    worker = aqless.Worker(
        client, ["t"], handlers=handlers, middleware=[traced.middleware], burst=True
    )
    with anyio.fail_after(20):
        await worker.run()
    assert provider.started == (1 if sampled else 0)  # unsampled: decided before any span
    (current,) = seen
    assert isinstance(current, trace.SpanContext)
    assert current.trace_id == int(TRACE_ID, 16)  # the job's code runs in the put's trace
    assert current.trace_flags.sampled is sampled
    assert len(finished("lookup")) == (1 if sampled else 0)  # its code's spans follow


async def test_a_sampler_that_drops_every_span_makes_none(client: aqless.Client) -> None:
    provider = SpanCountingProvider(ALWAYS_OFF)
    carrier = {"traceparent": f"00-{TRACE_ID}-{SPAN_ID}-01"}
    await client.queues["t"].put("t.Look", {TRACE_KEY: carrier, "n": 1})
    worker = aqless.Worker(
        client,
        ["t"],
        handlers=handlers,
        middleware=[tracing.Tracing(provider).middleware],
        burst=True,
    )
    with anyio.fail_after(20):
        await worker.run()
    assert provider.started == 0
    assert seen == [{"n": 1}]
