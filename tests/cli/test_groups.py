"""groups: a queue's fairness groups as a table and as JSON; groups set: a group's
settings, bad values refused before anything is written, and audited."""

from __future__ import annotations

import json

import pytest

import aqless
from aqless import PutRequest
from aqless.ops import audit
from tests.support.cli import Cli

NO_RATE = {"rate_limit": 0, "rate_period": 0.0, "rate_used": 0}

pytest_plugins = ["tests.support.client_fixtures"]


async def test_groups_table_and_json(client: aqless.Client, run_cli: Cli) -> None:
    queue = client.queues["emails"]
    assert (await run_cli("groups", "emails")).code == 1  # no queue 'emails' yet
    await client.jobs.cancel(await queue.put("app.Send", {}))  # the queue is seen
    assert "emails has no groups" in (await run_cli("groups", "emails")).stdout
    await queue.put_many([PutRequest("app.Send", group="tenant-<b>")] * 3)
    await queue.put("app.Send")
    await queue.set_group_weight("tenant-<b>", 2.5)
    await queue.set_group_concurrency("tenant-<b>", 4)
    await queue.pop_many(2)
    table = await run_cli("groups", "emails")
    lines = {line.split()[0]: line.split() for line in table.stdout.splitlines() if line.strip()}
    assert lines["tenant-<b>"][1:] == ["2", "1", "2.5", "4"]
    assert lines["(none)"][1:] == ["0", "1", "1"]
    document = (await run_cli("--json", "groups", "emails")).json()
    assert document == [
        {"name": None, "waiting": 0, "running": 1, "weight": 1.0, "concurrency": 0, **NO_RATE},
        {
            "name": "tenant-<b>",
            "waiting": 2,
            "running": 1,
            "weight": 2.5,
            "concurrency": 4,
            **NO_RATE,
        },
    ]


async def test_groups_show_a_groups_rate_limit_and_its_starts(
    client: aqless.Client, run_cli: Cli
) -> None:
    queue = client.queues["emails"]
    await queue.set_group_rate_limit("tenant-a", 3, per=60)
    await queue.put_many([PutRequest("app.Send", group="tenant-a")] * 5)
    await queue.pop_many(5)
    table = await run_cli("groups", "emails")
    (line,) = [line.split() for line in table.stdout.splitlines() if "tenant-a" in line]
    assert line[1:] == ["2", "3", "1", "3/3", "per", "1", "min"]
    (document,) = (await run_cli("--json", "groups", "emails")).json()
    assert (document["rate_limit"], document["rate_period"], document["rate_used"]) == (3, 60, 3)


async def test_groups_set_sets_each_setting(client: aqless.Client, run_cli: Cli) -> None:
    queue = client.queues["emails"]
    await queue.put("app.Send", group="acme")
    outcome = await run_cli(
        "groups", "set", "emails", "acme", "--weight", "2.5", "--concurrency", "4"
    )
    assert outcome.code == 0, outcome.stderr
    assert "emails/acme: weight 2.5" in outcome.stdout
    rated = await run_cli("--json", "groups", "set", "emails", "acme", "--rate", "10/60")
    assert rated.json() == {"queue": "emails", "group": "acme", "rate_limit": 10, "rate_period": 60}
    table = await run_cli("groups", "emails")
    (line,) = [line.split() for line in table.stdout.splitlines() if "acme" in line]
    assert line[1:] == ["1", "0", "2.5", "4", "0/10", "per", "1", "min"]
    (document,) = (await run_cli("groups", "emails", "--json")).json()
    assert document == {
        "name": "acme",
        "waiting": 1,
        "running": 0,
        "weight": 2.5,
        "concurrency": 4,
        "rate_limit": 10,
        "rate_period": 60.0,
        "rate_used": 0,
    }
    lifted = await run_cli(
        "groups", "set", "emails", "acme", "--concurrency", "none", "--rate", "none"
    )
    assert lifted.code == 0, lifted.stderr
    (record,) = await queue.groups()
    assert (record.weight, record.concurrency, record.rate_limit) == (2.5, 0, 0)
    shown = await run_cli("groups", "show", "emails")
    (line,) = [line.split() for line in shown.stdout.splitlines() if "acme" in line]
    assert line[1:] == ["1", "0", "2.5"]


@pytest.mark.parametrize(
    "options",
    [
        ("--weight", "0"),
        ("--weight", "-1"),
        ("--weight", "nan"),
        ("--weight", "heavy"),
        ("--concurrency", "-1"),
        ("--concurrency", "2.5"),
        ("--rate", "0/60"),
        ("--rate", "10/0"),
        ("--rate", "10/abc"),
        ("--rate", "fast"),
        ("--weight", "3", "--rate", "10/-1"),  # one bad value: the good one is not written
        (),  # nothing to set
    ],
    ids=" ".join,
)
async def test_groups_set_refuses_bad_values_writing_nothing(
    client: aqless.Client, run_cli: Cli, options: tuple[str, ...]
) -> None:
    queue = client.queues["emails"]
    await queue.put("app.Send", group="acme")
    before = await queue.groups()
    outcome = await run_cli("groups", "set", "emails", "acme", *options)
    assert outcome.code == 2
    assert outcome.stdout == ""
    assert "Invalid value for" in outcome.stderr or "give --weight" in outcome.stderr
    assert await queue.groups() == before
    assert await audit.read(client) == []


async def test_a_bad_value_says_what_is_wrong(client: aqless.Client, run_cli: Cli) -> None:
    weight = await run_cli("groups", "set", "emails", "acme", "--weight", "-1")
    assert "Invalid value for '--weight'" in weight.stderr
    assert "weight must be a positive number, not -1" in weight.stderr
    rate = await run_cli("--json", "groups", "set", "emails", "acme", "--rate", "0/60")
    error = json.loads(rate.stdout)["error"]
    assert (error["type"], error["exit_code"]) == ("usage", 2)
    assert "limit must be a whole number from 1, not 0" in error["message"]
    unnamed = await run_cli("groups", "set", "emails", "", "--weight", "2")
    assert unnamed.code == 2
    assert "group must be a name of 1 to 128 characters" in unnamed.stderr


async def test_groups_set_is_audited(client: aqless.Client, run_cli: Cli) -> None:
    outcome = await run_cli("groups", "set", "emails", "acme", "--weight", "2", "--rate", "none")
    assert outcome.code == 0, outcome.stderr
    (entry,) = await audit.read(client)
    assert entry.action == "groups set"
    assert entry.targets == ("emails", "acme")
    assert entry.detail == {"weight": "2", "rate": "none"}
    assert entry.outcome == "ok"
    await client.queues["emails"].put("app.Send", {})
    assert (await run_cli("groups", "emails")).code == 0  # a read: no entry
    assert len(await audit.read(client)) == 1
