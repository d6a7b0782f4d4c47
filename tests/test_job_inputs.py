"""Every input of a job keeps its rule (aqless.rules) at the async client's doors: a bad
value is an InvalidValueError naming the input, and nothing is written. Each of these was
accepted and stored before (tags "vip" as ["v", "i", "p"], a complete into queue ''...)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

import aqless
from aqless.errors import InvalidValueError
from aqless.flows import FlowNode
from tests.support.job_doors import BAD_QUEUES, WORK, keys_of, running

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def client(server_url: str) -> AsyncIterator[aqless.Client]:
    async with aqless.Client(server_url, worker_name="w") as opened:
        await opened.redis.flushall()
        yield opened


async def refused(
    client: aqless.Client, option: str, call: Callable[[], Awaitable[Any]]
) -> InvalidValueError:
    """`call` refused naming `option`, with no key of the server changed."""
    before = await keys_of(client.redis)
    with pytest.raises(InvalidValueError) as caught:
        await call()
    assert caught.value.option == option
    assert option in str(caught.value)
    assert await keys_of(client.redis) == before
    return caught.value


PUT_DEFECTS = [
    ("tags", "vip"),
    ("tags", [""]),
    ("tags", ["a\nb"]),
    ("depends", "abc"),
    ("depends", ["a\nb"]),
    ("delay", -5),
    ("priority", float("nan")),
    ("retries", -1),
    ("retries", 1.5),
]


@pytest.mark.parametrize(("option", "value"), PUT_DEFECTS)
async def test_a_bad_put_option_is_refused_at_every_put(
    client: aqless.Client, option: str, value: object
) -> None:
    queue = client.queues["q"]
    options: dict[str, Any] = {option: value}
    await refused(client, option, lambda: queue.put(WORK, {}, **options))
    await refused(client, option, lambda: queue.put_result(WORK, {}, **options))
    await refused(client, option, lambda: queue.put(WORK, {}, durable=False, **options))
    await refused(client, option, lambda: queue.put_many([aqless.PutRequest(WORK, **options)]))


@pytest.mark.parametrize("name", BAD_QUEUES)
async def test_a_bad_queue_name_is_refused_wherever_a_job_is_put_into_it(
    client: aqless.Client, name: str
) -> None:
    queue = client.queues[name] if name else None
    if queue is not None:
        await refused(client, "queue", lambda: queue.put(WORK, {}))
        await refused(client, "queue", lambda: queue.put_many([aqless.PutRequest(WORK)]))
        await refused(client, "queue", lambda: queue.recur(WORK, {}, 60))
        await refused(client, "queue", lambda: queue.unfail("group", 5))
    else:
        await refused(client, "queue", lambda: client.queues[name].put(WORK, {}))
    members = [(name, aqless.PutRequest(WORK))]
    await refused(client, "queue", lambda: client.batches.put(members))
    await refused(client, "queue", lambda: client.flows.put(FlowNode(WORK, queue=name)))
    job = await running(client)
    await refused(client, "queue", lambda: job.complete(name))
    await refused(client, "queue", lambda: job.move(name))


async def test_a_bad_complete_is_refused(client: aqless.Client) -> None:
    job = await running(client)
    await refused(client, "delay", lambda: job.complete("next", delay=-5))
    await refused(client, "queue", lambda: job.complete(""))
    await refused(client, "depends", lambda: job.complete("next", depends="abc"))
    assert await job.complete("next", delay=5) == aqless.JobState.SCHEDULED


async def test_a_bad_fail_retry_or_hand_back_is_refused(client: aqless.Client) -> None:
    job = await running(client)
    await refused(client, "failure_group", lambda: job.fail("", "boom"))
    await refused(client, "delay", lambda: job.retry(delay=-5))
    await refused(client, "failure_group", lambda: job.retry(group=""))
    await refused(client, "reason", lambda: job.hand_back(""))
    await job.fail("boom", "")  # an empty message is a message
    assert await client.redis.lrange("ql:f:boom", 0, -1) == [job.jid]


async def test_a_bad_tag_dependency_or_priority_of_a_job_is_refused(
    client: aqless.Client,
) -> None:
    jid = await client.queues["q"].put(WORK, {}, depends=["gone"], delay=60)
    job = await client.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    await refused(client, "tag", lambda: job.tag(""))
    await refused(client, "tag", lambda: job.tag("ok", "a\tb"))
    await refused(client, "depends", lambda: job.depend("a\nb"))
    await refused(client, "priority", lambda: job.set_priority(float("inf")))
    assert await job.tag("big spender") == ("big spender",)


async def test_a_dependency_on_an_unknown_jid_counts_as_met(client: aqless.Client) -> None:
    """CORE 5.8: a job that does not exist may have completed and been purged by retention,
    so a dependency on it is satisfied: the doors accept it, and the job does not wait."""
    jid = await client.queues["q"].put(WORK, {}, depends=["no-such-job"])
    job = await client.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    assert job.state == aqless.JobState.WAITING
    assert job.dependencies == ()


async def test_a_class_default_option_keeps_its_rule_too(client: aqless.Client) -> None:
    class Tagged:
        @staticmethod
        def default_job_options(data: object) -> dict[str, object]:
            return {"tags": "vip"}

    await refused(client, "tags", lambda: client.queues["q"].put(Tagged, {}))


@pytest.mark.parametrize(
    ("option", "given"), [("delay", {"delay": -5}), ("failure_group", {"group": ""})]
)
def test_job_code_raising_a_bad_retry_is_refused_by_the_rule(
    option: str, given: dict[str, Any]
) -> None:
    with pytest.raises(InvalidValueError) as caught:
        aqless.Retry(**given)
    assert caught.value.option == option


async def test_a_recurring_jobs_queue_keeps_the_rule_when_set_or_changed(
    client: aqless.Client,
) -> None:
    rjid = await client.queues["q"].recur(WORK, {}, 60)
    template = await client.jobs.get(rjid)
    assert isinstance(template, aqless.RecurringJob)
    await refused(client, "queue", lambda: template.update(queue="a b"))
    await refused(client, "queue", lambda: client.queues["a\nb"].recur(WORK, {}, 60))
    await template.update(queue="other")
    assert template.queue_name == "other"
