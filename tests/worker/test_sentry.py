"""aqless.sentry with a real sentry_sdk client whose transport keeps the events in a list."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sentry_sdk
from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport

import aqless
from aqless import Job, JobState, RequeuePolicy, RetryPolicy
from aqless.sentry import SentryReporter
from tests.support.worker import make_worker, one, running, until_state

# What is reported to Sentry is decided in the worker's process, whatever the server: the two
# unix kinds only (what differs by kind is tested on every kind in test_running, test_pushes...).


class Kept(Transport):
    """Keeps every event sent, instead of sending it."""

    events: list[dict[str, Any]]

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.events = []

    def capture_envelope(self, envelope: Envelope) -> None:
        for item in envelope.items:
            event = item.get_event()
            if event is not None:
                self.events.append(dict(event))


@pytest.fixture
def events() -> Iterator[list[dict[str, Any]]]:
    transport = Kept()
    sentry_sdk.init(
        dsn="https://key@sentry.invalid/1",
        transport=transport,
        default_integrations=False,
        auto_enabling_integrations=False,
    )
    try:
        yield transport.events
    finally:
        sentry_sdk.get_client().close()
        sentry_sdk.get_global_scope().set_client(None)


class Broken:
    def __init__(self) -> None:
        self.runs = 0

    async def __call__(self, job: Job) -> None:
        self.runs += 1
        raise ConnectionError(f"down, run {self.runs}")


def exception_of(event: dict[str, Any]) -> tuple[str, str]:
    (exception,) = event["exception"]["values"]
    return exception["type"], exception["value"]


async def test_a_failure_is_reported_with_the_job(
    client: aqless.Client, events: list[dict[str, Any]]
) -> None:
    jid = await client.queues["q"].put("app.job", {}, tags=["billing", "eu"])
    worker = make_worker(client, ["q"], one(Broken()))
    reporter = SentryReporter()
    reporter.instrument(worker)
    reporter.instrument(worker)  # once is enough
    async with running(worker):
        await until_state(client, jid, JobState.FAILED)
    (event,) = events
    assert exception_of(event) == ("ConnectionError", "down, run 1")
    assert event["tags"] == {
        "aqless.jid": jid,
        "aqless.queue": "q",
        "aqless.klass": "app.job",
        "aqless.attempt": "1",
        "aqless.group": "q-ConnectionError",
        "aqless.outcome": "fail",
        "aqless.tags": "billing,eu",
    }
    context = event["contexts"]["aqless job"]
    assert context["tags"] == ["billing", "eu"]
    assert context["attempt"] == 1


@pytest.mark.parametrize(("retries", "requeues"), [(False, False), (True, True)])
async def test_retries_and_requeues_are_reported_when_asked_for(
    client: aqless.Client, events: list[dict[str, Any]], retries: bool, requeues: bool
) -> None:
    requeue = RequeuePolicy(on=(ConnectionError,), max_requeues=1)
    retry = RetryPolicy(strategy="fixed", delay=0, max_attempts=2)
    jid = await client.queues["q"].put("app.job", {})
    worker = make_worker(client, ["q"], one(Broken()), retry=retry, requeue=[requeue])
    worker.interval = 0.02
    SentryReporter(retries=retries, requeues=requeues).instrument(worker)
    async with running(worker):
        await until_state(client, jid, JobState.FAILED)
    outcomes = [
        (event["tags"]["aqless.outcome"], event["tags"]["aqless.attempt"]) for event in events
    ]
    if retries:
        assert outcomes == [("requeue", "1"), ("retry", "1"), ("fail", "2")]
        assert [exception_of(event)[1] for event in events] == [
            "down, run 1",
            "down, run 2",
            "down, run 3",
        ]
    else:
        assert outcomes == [("fail", "2")]


async def test_an_unknown_klass_is_reported(
    client: aqless.Client, events: list[dict[str, Any]]
) -> None:
    jid = await client.queues["q"].put("nowhere.job", {})
    worker = make_worker(client, ["q"])
    SentryReporter().instrument(worker)
    async with running(worker):
        await until_state(client, jid, JobState.FAILED)
    (event,) = events
    assert exception_of(event)[0] == "UnknownJobClassError"
    assert event["tags"]["aqless.group"] == "q-UnknownJobClassError"


async def test_a_retry_raised_by_the_code_is_never_reported(
    client: aqless.Client, events: list[dict[str, Any]]
) -> None:
    async def later(job: Job) -> None:
        raise aqless.Retry(delay=60)

    jid = await client.queues["q"].put("app.job", {})
    worker = make_worker(client, ["q"], one(later))
    SentryReporter(retries=True).instrument(worker)
    async with running(worker):
        await until_state(client, jid, JobState.SCHEDULED)
    assert worker.counters.retried == 1
    assert events == []
