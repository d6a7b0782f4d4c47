"""client.queue_patterns: the stored identifier and priority patterns, read and replaced."""

from __future__ import annotations

import json

import pytest

import aqless
from aqless import PriorityPattern

pytest_plugins = ["tests.support.client_fixtures"]

DEFAULT_GROUP = PriorityPattern(("default",))


async def test_the_defaults(client: aqless.Client) -> None:
    assert await client.queue_patterns.identifiers() == {"default": ["*"]}
    assert await client.queue_patterns.priorities() == [DEFAULT_GROUP]


async def test_identifiers_are_replaced_whole(client: aqless.Client) -> None:
    patterns = client.queue_patterns
    await patterns.set_identifiers({"batch": ["batch-*", "!batch-slow"], "web": ("web",)})
    assert await patterns.identifiers() == {
        "batch": ["batch-*", "!batch-slow"],
        "web": ["web"],
        "default": ["*"],
    }
    stored = await client.redis.hget("ql:qp:identifiers", "batch")
    assert json.loads(str(stored)) == ["batch-*", "!batch-slow"]  # what other clients read
    await patterns.set_identifiers({"web": ["web-*"], "default": ["web-*"], "empty": []})
    assert await patterns.identifiers() == {"web": ["web-*"], "default": ["web-*"]}
    await patterns.set_identifiers({})
    assert await patterns.identifiers() == {"default": ["*"]}


async def test_a_worker_serves_what_a_set_identifier_names(client: aqless.Client) -> None:
    await client.queue_patterns.set_identifiers({"mail": ["mail-*", "!mail-spam"]})
    for name in ("mail-a", "mail-spam", "web"):
        await client.queues[name].put("app.Job", {})
    assert await aqless.QueueSelection(["@mail"]).resolve(client) == ["mail-a"]


@pytest.mark.parametrize("bad", [{"": ["a"]}, {"batch": "batch-*"}])
async def test_a_bad_identifier_is_refused_before_the_server(
    client: aqless.Client, bad: dict[str, list[str]]
) -> None:
    await client.queue_patterns.set_identifiers({"kept": ["k"]})
    with pytest.raises(aqless.ConfigurationError):
        await client.queue_patterns.set_identifiers(bad)
    assert (await client.queue_patterns.identifiers())["kept"] == ["k"]


async def test_priorities_are_replaced_whole(client: aqless.Client) -> None:
    patterns = client.queue_patterns
    urgent = PriorityPattern(("urgent-*", "alerts"))
    fair = PriorityPattern(("mail-*",), fairly=True)
    await patterns.set_priorities([urgent, fair])
    assert await patterns.priorities() == [urgent, fair, DEFAULT_GROUP]
    first = json.loads(str(await client.redis.lindex("ql:qp:priorities", 0)))
    assert first == {"fairly": False, "pattern": ["urgent-*", "alerts"]}
    await patterns.set_priorities([fair, DEFAULT_GROUP, urgent])
    assert await patterns.priorities() == [fair, DEFAULT_GROUP, urgent]
    await patterns.set_priorities([])
    assert await patterns.priorities() == [DEFAULT_GROUP]


async def test_a_worker_orders_queues_by_set_priorities(client: aqless.Client) -> None:
    await client.queue_patterns.set_priorities([PriorityPattern.parse("urgent-*")])
    for name in ("bulk", "urgent-a"):
        await client.queues[name].put("app.Job", {})
    selection = aqless.QueueSelection(["*"], priorities=True)
    assert await selection.resolve(client) == ["urgent-a", "bulk"]


def test_the_written_form_of_a_priority_group() -> None:
    group = PriorityPattern.parse(" fairly: mail-*, sms ,")
    assert group == PriorityPattern(("mail-*", "sms"), fairly=True)
    assert str(group) == "fairly:mail-*,sms"
    assert PriorityPattern.parse(str(group)) == group
    assert str(PriorityPattern.parse("urgent-*")) == "urgent-*"
    for empty in ("", "fairly:", " , "):
        with pytest.raises(aqless.ConfigurationError):
            PriorityPattern.parse(empty)
