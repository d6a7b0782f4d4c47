"""Payloads without a second pass: pops whose jobs' data comes apart from the reply
(``decoded_apart``), and completes that leave the stored data where the job's code left it
as it was (``Job.complete``'s keep_data). The script's side is tested in
tests/scripts/test_payloads.py, the worker's in tests/worker/test_payloads.py."""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest

import aqless
from aqless import JobState
from aqless._connection import job_data
from aqless._connection.job_data import KEEP_DATA, StoredData
from aqless._connection.protocol import decoded_apart
from aqless.errors import ScriptError
from tests.support.clients import pop_one

pytest_plugins = ["tests.support.client_fixtures"]


def test_each_data_text_goes_back_into_its_job() -> None:
    reply = ['{"jobs":[{"jid":"a"},{"jid":"b"}],"wait":null,"held":false}', '{"x":1}', '"s"']
    value = decoded_apart("rateLimit.pop", reply)
    assert value == {
        "jobs": [{"jid": "a", "data": '{"x":1}'}, {"jid": "b", "data": '"s"'}],
        "wait": None,
        "held": False,
    }
    decoded = [aqless.Job(None, fields).data for fields in value["jobs"]]
    assert decoded == [{"x": 1}, "s"]  # a JSON string stays a string, decoded once


@pytest.mark.parametrize(
    "reply",
    [
        '{"jobs":[]}',  # the plain reply: not what was asked for
        [],
        ['{"jobs":[{"jid":"a"}]}'],  # a job without its data
        ['{"jobs":[]}', "{}"],  # data without a job
        ['["not", "an object"]'],
    ],
)
def test_a_reply_that_does_not_fit_is_a_script_error(reply: object) -> None:
    with pytest.raises(ScriptError):
        decoded_apart("rateLimit.pop", reply)


async def stored_data(client: aqless.Client, jid: str) -> str:
    data = await client.redis.hget(f"{client.protocol.prefix}j:{jid}", "data")
    assert isinstance(data, str)
    return data


async def test_a_complete_that_left_the_data_as_it_was_keeps_the_stored_data(
    timed_client: aqless.Client,
) -> None:
    client = timed_client
    await client.queues["q"].put("app.Job", {"v": 1}, jid="j")
    job = await pop_one(client.queues["q"])
    # written while the job ran: a complete that sent the data back would overwrite it
    await client.redis.hset(f"{client.protocol.prefix}j:j", "data", '{"v":"meanwhile"}')
    assert await job.complete() is JobState.COMPLETE
    assert await stored_data(client, "j") == '{"v":"meanwhile"}'


async def test_a_complete_into_a_next_queue_keeps_it_too(timed_client: aqless.Client) -> None:
    client = timed_client
    await client.queues["q"].put("app.Job", {"v": 1}, jid="j")
    job = await pop_one(client.queues["q"])
    await client.redis.hset(f"{client.protocol.prefix}j:j", "data", '{"v":"meanwhile"}')
    assert await job.complete("next", delay=5) is JobState.SCHEDULED
    assert await stored_data(client, "j") == '{"v":"meanwhile"}'


async def test_data_changed_in_place_is_saved(timed_client: aqless.Client) -> None:
    client = timed_client
    await client.queues["q"].put("app.Job", {"v": [1]}, jid="j")
    job = await pop_one(client.queues["q"])
    job.data["v"].append(2)  # the same object, changed
    await job.complete()
    assert await stored_data(client, "j") == '{"v":[1,2]}'


async def test_data_stored_in_another_form_and_left_alone_stays_as_stored(
    timed_client: aqless.Client,
) -> None:
    client = timed_client
    await client.queues["q"].put("app.Job", {"v": 1}, jid="j")
    await client.redis.hset(f"{client.protocol.prefix}j:j", "data", '{ "v" : 1 }')
    job = await pop_one(client.queues["q"])
    assert job.data == {"v": 1}
    await job.complete()
    assert await stored_data(client, "j") == '{ "v" : 1 }'


async def test_data_stored_in_another_form_and_changed_is_written(
    timed_client: aqless.Client,
) -> None:
    client = timed_client
    await client.queues["q"].put("app.Job", {"v": {"w": 1}}, jid="j")
    await client.redis.hset(f"{client.protocol.prefix}j:j", "data", '{"v": {"w": 1}}')
    job = await pop_one(client.queues["q"])
    job.data["v"]["w"] = 2
    await job.complete("next")
    assert await stored_data(client, "j") == '{"v":{"w":2}}'


# -- StoredData: when the data is as it was read -------------------------------------------------

FLAT = '{"n":1,"pad":"xyz","f":1.5,"t":true,"none":null}'


def read(text: str) -> tuple[StoredData, Any]:
    data = json.loads(text)
    return StoredData(text, data), data


def no_encoding(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(value: object, what: str) -> str:
        raise AssertionError("encoded")

    monkeypatch.setattr(job_data, "encode_json", refuse)


@pytest.mark.parametrize("text", [FLAT, '["a",1,2.5,null]', '"text"', "7", "null", "{}"])
def test_flat_data_left_alone_is_told_without_encoding(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored, data = read(text)
    no_encoding(monkeypatch)
    assert stored.complete_argument(data) == ("", KEEP_DATA)


def change_value(data: Any) -> None:
    data["n"] = 2


def same_value_in_another_type(data: Any) -> None:
    data["n"] = True  # == 1, but JSON true


def same_number_as_float(data: Any) -> None:
    data["n"] = 1.0


def moved_to_the_end(data: Any) -> None:
    data["n"] = data.pop("n")  # the same objects, another order


def added(data: Any) -> None:
    data["new"] = None


def removed(data: Any) -> None:
    del data["none"]


@pytest.mark.parametrize(
    "change",
    [
        change_value,
        same_value_in_another_type,
        same_number_as_float,
        moved_to_the_end,
        added,
        removed,
    ],
)
def test_flat_data_changed_in_place_is_sent(change: Callable[[Any], None]) -> None:
    stored, data = read(FLAT)
    change(data)
    text, options = stored.complete_argument(data)
    assert options == ()
    assert text == json.dumps(data, separators=(",", ":"))
    assert text != FLAT


def test_nested_data_changed_in_place_is_sent() -> None:
    stored, data = read('{"a":{"b":[1]}}')
    data["a"]["b"].append(2)
    assert stored.complete_argument(data) == ('{"a":{"b":[1,2]}}', ())


def test_nested_or_large_data_left_alone_is_kept_once_encoded() -> None:
    for text in ('{"a":{"b":[1]}}', json.dumps(list(range(100)), separators=(",", ":"))):
        stored, data = read(text)
        assert stored.complete_argument(data) == ("", KEEP_DATA)


def test_an_equal_copy_or_an_equal_new_value_is_kept_once_encoded() -> None:
    stored, data = read(FLAT)
    assert stored.complete_argument(dict(data)) == ("", KEEP_DATA)
    data["pad"] = "".join(["x", "yz"])  # equal, another object
    assert stored.complete_argument(data) == ("", KEEP_DATA)


def test_data_read_from_no_text_is_always_sent() -> None:
    assert StoredData(None, {"a": 1}).complete_argument({"a": 1}) == ('{"a":1}', ())


def test_a_pickled_copy_carries_no_second_copy_of_the_payload() -> None:
    stored, data = read('{"pad":"' + "x" * 10_000 + '"}')
    pickled = pickle.dumps((stored, data))
    assert len(pickled) < 11_000
    copy, copied = pickle.loads(pickled)  # noqa: S301 (our own bytes)
    assert copy.complete_argument(copied) == (json.dumps(data, separators=(",", ":")), ())
