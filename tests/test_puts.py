"""The put model (aqless.puts), without a server: the options' names are written once, and a
put's script arguments follow from its class, data and options."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import pytest

import aqless
from aqless.puts import PUT_OPTIONS, PutOptions, PutRequest, prepare_put


class Report:
    """A job class with default options."""

    @staticmethod
    def default_job_options(data: Any) -> dict[str, Any]:
        return {"priority": 3, "tags": ["reports"], "delay": 30, "jid": f"report-{data['day']}"}


def prepared(klass: Any, data: Any = None, **options: Any) -> Any:
    return prepare_put(klass, data, options, worker="w", queue="q", clock=lambda: 1000.0)  # type: ignore[arg-type]


def test_a_put_request_has_exactly_the_put_options_beside_its_class_and_data() -> None:
    fields = {field.name for field in dataclasses.fields(PutRequest)}
    assert fields - {"klass", "data"} == PUT_OPTIONS


def test_a_request_gives_back_the_options_it_was_given() -> None:
    request = PutRequest("app.A", {"n": 1}, priority=5, tags=["x"])
    assert request.options() == {"priority": 5, "tags": ["x"]}


def test_a_plain_put_is_the_protocol_s_arguments() -> None:
    put = prepared("app.A", {"n": 1}, jid="j1")
    assert put.command == "queue.put"
    assert put.jid == "j1"
    assert put.arguments[:4] == ["w", "q", "j1", "app.A"]
    assert json.loads(put.arguments[4]) == {"n": 1}  # encoded compactly, as bytes
    assert put.arguments[5] == 0
    assert put.order == 0.0


@pytest.mark.parametrize(
    ("options", "tail", "order"),
    [
        ({"priority": 7}, ["priority", 7], 7),
        ({"retries": 2, "tags": ["a", "b"]}, ["retries", 2, "tags", '["a","b"]'], 0.0),
        ({"depends": ["d1"], "throttles": ["t"]}, ["depends", '["d1"]', "throttles", '["t"]'], 0.0),
        ({"rate_limits": ["api"]}, ["rate_limits", '["api"]'], 0.0),
        ({"delay": 5, "priority": 1}, ["priority", 1], None),  # delayed: waits by its time
    ],
)
def test_options_follow_the_six_arguments_in_the_script_s_order(
    options: dict[str, Any], tail: list[Any], order: float | None
) -> None:
    put = prepared("app.A", None, jid="j", **options)
    assert put.arguments[6:] == tail
    assert put.order == order


def test_at_is_a_delay_on_the_client_s_clock() -> None:
    assert prepared("app.A", jid="j", at=1060.0).arguments[5] == 60.0
    assert prepared("app.A", jid="j", at=10.0).arguments[5] == 0.0  # past: runs now


def test_a_class_s_defaults_fill_what_the_put_does_not_give() -> None:
    put = prepared(Report, {"day": 7})
    assert put.jid == "report-7"
    assert put.arguments[5] == 30  # its default delay
    assert put.arguments[6:] == ["priority", 3, "tags", '["reports"]']
    given = prepared(Report, {"day": 7}, delay=0, priority=9, jid="mine")
    assert (given.jid, given.arguments[5]) == ("mine", 0)
    assert given.arguments[6:8] == ["priority", 9]


def test_a_dedup_id_goes_first_and_names_the_deduplicating_command() -> None:
    put = prepared("app.A", jid="j", dedup=aqless.Dedup("order-7", ttl=60))
    assert put.command == "queue.putDeduplicated"
    assert put.arguments[:3] == ["order-7", "ttl", 60]
    assert json.loads(put.arguments[7]) == {}


def test_a_requeue_takes_no_dedup_and_an_unknown_option_is_refused() -> None:
    with pytest.raises(aqless.ConfigurationError, match="requeue"):
        prepare_put(
            "app.A",
            None,
            PutOptions(dedup="x"),
            worker="w",
            queue="q",
            clock=lambda: 0.0,
            requeue=True,
        )
    with pytest.raises(TypeError, match="prority"):
        prepare_put("app.A", None, {"prority": 5}, worker="w", queue="q", clock=lambda: 0.0)  # type: ignore[typeddict-unknown-key]


def test_a_put_that_never_replaces_names_its_own_command() -> None:
    assert prepared("app.A", jid="j1", replace=False).command == "queue.putNew"
    assert prepared("app.A", jid="j1", replace=True).command == "queue.put"
    assert prepared("app.A", jid="j1").command == "queue.put"
    with pytest.raises(aqless.ConfigurationError, match="requeue"):
        prepare_put(
            "app.A", None, {"replace": False}, worker="w", queue="q", clock=lambda: 0.0,
            requeue=True,
        )  # fmt: skip
    with pytest.raises(aqless.ConfigurationError, match="not both"):
        prepared("app.A", replace=False, dedup="d")
    with pytest.raises(aqless.InvalidArgumentError, match="replace"):
        prepared("app.A", replace=0)


def test_a_priority_that_is_no_number_is_a_typed_refusal() -> None:
    for priority in ("high", True, None):
        if priority is None:
            assert prepared("app.A", jid="j").order == 0.0
            continue
        with pytest.raises(aqless.InvalidArgumentError, match="priority"):
            prepared("app.A", jid="j", priority=priority)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("priority", math.nan),
        ("priority", math.inf),
        ("delay", -5),
        ("delay", math.nan),
        ("retries", -1),
        ("retries", 1.5),
        ("retries", True),
    ],
)
def test_a_number_out_of_its_range_is_a_typed_refusal(option: str, value: object) -> None:
    with pytest.raises(aqless.InvalidArgumentError, match=f'Arg "{option}"'):
        prepared("app.A", jid="j", **{option: value})


def test_the_numbers_at_their_bounds_are_put() -> None:
    put = prepared("app.A", jid="j", priority=-3, delay=0, retries=0)
    assert put.arguments[-4:] == ["priority", -3, "retries", 0]
