"""groups: a queue's fairness groups as a table and as JSON."""

from __future__ import annotations

import aqless
from aqless import PutRequest
from tests.support.cli import Cli

NO_RATE = {"rate_limit": 0, "rate_period": 0.0, "rate_used": 0}

pytest_plugins = ["tests.support.client_fixtures"]


async def test_groups_table_and_json(client: aqless.Client, run_cli: Cli) -> None:
    queue = client.queues["emails"]
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
    assert line[1:] == ["2", "3", "1", "3/3", "per", "60s"]
    (document,) = (await run_cli("--json", "groups", "emails")).json()
    assert (document["rate_limit"], document["rate_period"], document["rate_used"]) == (3, 60, 3)
