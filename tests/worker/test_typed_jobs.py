"""Typed job data at pop: a handler that declares its data's type gets the stored JSON converted
to it; data that does not fit (put by another client, or by name) fails the job once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pydantic

import aqless
from aqless import Handlers, Job, JobState
from tests.support.worker import process


@dataclass
class Order:
    customer: str
    quantity: int = 1


class Invoice(pydantic.BaseModel):
    number: int


async def test_a_typed_handler_gets_its_data_converted(client: aqless.Client) -> None:
    handlers = Handlers()
    seen: list[Any] = []

    @handlers.register("app.charge")
    async def charge(job: Job, order: Order) -> None:
        seen.append(order)
        seen.append(job.data)

    @handlers.register("app.bill")
    def bill(job: Job, invoice: Invoice) -> None:  # plain code, in a thread
        seen.append(invoice)

    job = await process(client, handlers, "app.charge", {"customer": "ann"})
    assert job.state == JobState.COMPLETE, job.failure
    assert seen == [Order("ann", 1), {"customer": "ann"}]  # job.data stays the stored JSON
    assert job.data == {"customer": "ann"}
    job = await process(client, handlers, "app.bill", {"number": "12"})
    assert job.state == JobState.COMPLETE, job.failure
    assert seen[-1] == Invoice(number=12)


async def test_data_that_does_not_fit_fails_the_job_once(client: aqless.Client) -> None:
    handlers = Handlers()
    ran: list[Order] = []

    @handlers.register("app.charge", retry=aqless.RetryPolicy(max_attempts=5))
    async def charge(job: Job, order: Order) -> None:
        ran.append(order)

    # put by name, as another qless client would: nothing checks it before the worker
    job = await process(client, handlers, "app.charge", {"customer": 7, "extra": 1})
    assert job.state == JobState.FAILED
    assert job.failure is not None
    assert job.failure.group == "q-JobDataError"
    assert job.failure.message == (
        "app.charge: the data does not fit Order: data: unknown field 'extra'"
    )
    assert ran == []
    assert [entry.what for entry in job.history].count("popped") == 1  # not retried


async def test_a_class_method_per_queue_is_typed(client: aqless.Client) -> None:
    handlers = Handlers()
    seen: list[Order] = []

    class Steps:
        def verify(self, job: Job, order: Order) -> None:
            seen.append(order)

    handlers.add(Steps, "app.Steps")
    job = await process(client, handlers, "app.Steps", {"customer": "bo"}, queue="verify")
    assert job.state == JobState.COMPLETE, job.failure
    assert seen == [Order("bo")]


async def test_an_isolated_typed_handler_gets_its_data(client: aqless.Client) -> None:
    handlers = Handlers()
    handlers.add(typed_in_child, "app.child", isolate=True)
    # the child is a fresh interpreter importing aqless and pydantic: seconds under load
    job = await process(
        client, handlers, "app.child", {"customer": "cy", "quantity": 3}, timeout=20
    )
    assert job.state == JobState.COMPLETE, job.failure
    assert job.failure is None


def typed_in_child(job: Job, order: Order) -> None:
    if order != Order("cy", 3):
        raise ValueError(f"unexpected {order!r}")
