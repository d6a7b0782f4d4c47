"""Typed job data at put: a handler's declared data type checks and converts what is put, before
anything is sent (aqless.typed); the conversion rules themselves, without a server."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

import pydantic
import pytest

import aqless
from aqless import Job
from aqless.typed import DataParameter, data_parameter, put_payload

pytest_plugins = ["tests.support.client_fixtures"]


class Size(enum.Enum):
    SMALL = "s"
    LARGE = "l"


@dataclass
class Line:
    sku: str
    quantity: int = 1


@dataclass
class Order:
    customer: str
    lines: list[Line]
    size: Size = Size.SMALL
    note: str | None = None
    total: float = 0.0
    tags: dict[str, int] = field(default_factory=dict)


class Invoice(pydantic.BaseModel):
    number: int
    paid: bool = False


class Address(TypedDict):
    city: str
    kind: Literal["home", "work"]


async def charge(job: Job, order: Order) -> None: ...


async def bill(job: Job, invoice: Invoice) -> None: ...


def untyped(job: Job) -> None: ...


def raw(job: Job, data) -> None:  # type: ignore[no-untyped-def]  # no annotation: raw data
    ...


def optional_extra(job: Job, retries: int = 3) -> None: ...


class Steps:
    def verify(self, job: Job, order: Order) -> None: ...

    @staticmethod
    def ship(job: Job, address: Address) -> None: ...

    def process(self, job: Job) -> None: ...


def loaded(kind: Any, data: Any) -> Any:
    return DataParameter("data", kind).load(data, "k")


def refusal(kind: Any, data: Any) -> str:
    with pytest.raises(aqless.JobDataError) as caught:
        loaded(kind, data)
    return caught.value.detail


def test_the_data_parameter_is_the_one_after_the_job_without_a_default() -> None:
    assert data_parameter(charge) == DataParameter("order", Order)
    assert data_parameter(raw) == DataParameter("data", Any)
    assert data_parameter(untyped) is None
    assert data_parameter(optional_extra) is None  # an optional parameter is not the data
    assert data_parameter(Steps().verify) == DataParameter("order", Order)
    assert data_parameter(Steps.ship) == DataParameter("address", Address)


def test_a_dataclass_is_built_from_json_nested_and_checked() -> None:
    data = {"customer": "ann", "lines": [{"sku": "a"}, {"sku": "b", "quantity": 2}], "size": "l"}
    order = loaded(Order, data)
    assert order == Order("ann", [Line("a"), Line("b", 2)], Size.LARGE)
    assert loaded(Order, {"customer": "bo", "lines": [], "total": 3}).total == 3.0


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "data: expected an object for Order, got an array"),
        ({"lines": []}, "data: missing field 'customer'"),
        ({"customer": "a", "lines": [], "colour": 1}, "data: unknown field 'colour'"),
        ({"customer": 1, "lines": []}, "data.customer: expected str, got a number (1)"),
        ({"customer": "a", "lines": [{"sku": "x", "quantity": "2"}]}, "data.lines[0].quantity"),
        ({"customer": "a", "lines": [{"sku": "x", "quantity": True}]}, "expected an integer"),
        ({"customer": "a", "lines": [], "size": "m"}, "data.size: 'm' is not a Size"),
        ({"customer": "a", "lines": [], "note": 3}, "data.note: expected str | None"),
        ({"customer": "a", "lines": [], "tags": {"x": "y"}}, "data.tags.x: expected an integer"),
    ],
)
def test_data_that_does_not_fit_a_dataclass_says_where(data: Any, message: str) -> None:
    assert message in refusal(Order, data)
    assert refusal(Order, data).startswith("the data does not fit Order: ")


def test_plain_types_typed_dicts_and_literals() -> None:
    assert loaded(list[int], [1, 2]) == [1, 2]
    assert loaded(tuple[int, str], [1, "a"]) == (1, "a")
    assert loaded(Address, {"city": "Paris", "kind": "home"}) == {"city": "Paris", "kind": "home"}
    assert "data.kind: expected one of ['home', 'work']" in refusal(
        Address, {"city": "Paris", "kind": "boat"}
    )
    assert "missing field 'kind'" in refusal(Address, {"city": "Paris"})
    assert "data: expected an integer, got a string" in refusal(int, "1")
    assert loaded(Any, {"anything": [1]}) == {"anything": [1]}


def test_a_pydantic_model_validates_with_its_own_rules() -> None:
    assert loaded(Invoice, {"number": 7}) == Invoice(number=7)
    detail = refusal(Invoice, {"number": "seven"})
    assert detail.startswith("the data does not fit Invoice: data: 1 validation error")
    assert "number" in detail


def test_a_msgspec_struct_validates_with_its_own_rules() -> None:
    msgspec: Any = pytest.importorskip("msgspec")

    class Point(msgspec.Struct):  # type: ignore[misc]  # msgspec is an optional test package
        x: int
        y: int = 0

    assert loaded(Point, {"x": 1}) == Point(x=1)
    assert "Expected `int`, got `str` - at `$.x`" in refusal(Point, {"x": "1"})
    assert DataParameter("p", Point).dump(Point(x=2, y=3), "k") == {"x": 2, "y": 3}


def test_put_payload_turns_instances_into_json_and_checks_dicts() -> None:
    order = Order("ann", [Line("a")], Size.LARGE)
    stored = put_payload(charge, "q", order)
    assert stored == {
        "customer": "ann",
        "lines": [{"sku": "a", "quantity": 1}],
        "size": "l",
        "note": None,
        "total": 0.0,
        "tags": {},
    }
    assert json.loads(json.dumps(stored)) == stored
    assert put_payload(charge, "q", {"customer": "ann", "lines": [{"sku": "a"}]})["total"] == 0.0
    assert put_payload(bill, "q", Invoice(number=3)) == {"number": 3, "paid": False}
    with pytest.raises(aqless.JobDataError, match="missing field 'lines'"):
        put_payload(charge, "q", {"customer": "ann"})
    # untyped handlers and names: the data as it is, None stored as {}
    assert put_payload(untyped, "q", {"x": object}) == {"x": object}
    assert put_payload("app.jobs.charge", "q", {"customer": 1}) == {"customer": 1}
    assert put_payload(untyped, "q", None) == {}


def test_a_class_is_typed_by_the_method_of_the_queue() -> None:
    with pytest.raises(aqless.JobDataError, match="Order"):
        put_payload(Steps, "verify", {"customer": 1})
    with pytest.raises(aqless.JobDataError, match="Address"):
        put_payload(Steps, "ship", {"city": "Paris"})
    assert put_payload(Steps, "other", {"x": 1}) == {"x": 1}  # process(job): untyped


async def test_put_refuses_data_that_does_not_fit_before_sending(client: aqless.Client) -> None:
    queue = client.queues["orders"]
    with pytest.raises(aqless.JobDataError) as caught:
        await queue.put(charge, {"customer": "ann", "lines": "many"})
    assert caught.value.command == "queue.put"
    assert "data.lines: expected an array, got a string" in caught.value.detail
    with pytest.raises(aqless.JobDataError):
        await queue.put_many([aqless.PutRequest(charge, {"customer": 3, "lines": []})])
    assert await client.queues.counts() == []  # nothing was put
    assert isinstance(caught.value, aqless.InvalidArgumentError)


async def test_put_stores_a_typed_instance_as_plain_json(client: aqless.Client) -> None:
    queue = client.queues["orders"]
    jid = await queue.put(charge, Order("ann", [Line("a", 2)]))
    job = await client.jobs.get(jid)
    assert isinstance(job, Job)
    assert job.data["lines"] == [{"sku": "a", "quantity": 2}]
    assert job.klass_name == f"{__name__}.charge"
    (second,) = await queue.put_many([aqless.PutRequest(bill, Invoice(number=4))])
    assert (await client.jobs.get(second)).data == {"number": 4, "paid": False}  # type: ignore[union-attr]
    rjid = await queue.recur(bill, Invoice(number=5), interval=60)
    assert (await client.jobs.get(rjid)).data == {"number": 5, "paid": False}  # type: ignore[union-attr]
    with pytest.raises(aqless.JobDataError):
        await queue.recur(bill, {"number": "x"}, interval=60)
