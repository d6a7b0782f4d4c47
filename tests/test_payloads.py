"""Payloads without a second pass: pops whose jobs' data comes apart from the reply
(``decoded_apart``), and completes that leave the stored data where the job's code left it
as it was (``Job.complete``'s keep_data). The script's side is tested in
tests/scripts/test_payloads.py, the worker's in tests/worker/test_payloads.py."""

from __future__ import annotations

import pytest

import aqless
from aqless import JobState
from aqless._connection.protocol import decoded_apart
from aqless.errors import ScriptError
from tests.client_helpers import pop_one

pytest_plugins = ["tests.client_fixtures"]


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


async def test_data_stored_in_another_form_is_sent_back_as_before(
    timed_client: aqless.Client,
) -> None:
    """Data another client wrote with other spacing: the job's data as it encodes differs
    from the stored text, so it is sent (and written) as every complete did before."""
    client = timed_client
    await client.queues["q"].put("app.Job", {"v": 1}, jid="j")
    await client.redis.hset(f"{client.protocol.prefix}j:j", "data", '{ "v" : 1 }')
    job = await pop_one(client.queues["q"])
    assert job.data == {"v": 1}
    await job.complete()
    assert await stored_data(client, "j") == '{"v":1}'
