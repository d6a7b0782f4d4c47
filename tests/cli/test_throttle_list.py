"""throttle list (from the index, no scan) and throttle reindex (other clients' throttles)."""

from __future__ import annotations

import aqless
from tests.support.cli import Cli
from tests.support.clients import pop_one

pytest_plugins = ["tests.support.client_fixtures"]


async def test_throttle_list_shows_each_throttle_with_its_use(
    client: aqless.Client, run_cli: Cli
) -> None:
    assert (await run_cli("--json", "throttle", "list")).json() == []
    assert "no throttle is set" in (await run_cli("throttle", "list")).stdout
    await client.throttles["smtp"].set(2, expiration=600)
    await client.queues["emails"].set_throttle(1)
    await client.queues["emails"].put("app.Send", {}, throttles=["smtp"])
    await client.queues["emails"].put("app.Send", {}, throttles=["smtp"])
    await pop_one(client.queues["emails"])
    listed = (await run_cli("--json", "throttle", "list")).json()
    assert [(d["id"], d["maximum"], d["locks"], d["pending"]) for d in listed] == [
        (f"{client.prefix}q:emails", 1, 1, 0),
        ("smtp", 2, 1, 0),
    ]
    assert 590 < listed[1]["ttl"] <= 600
    table = (await run_cli("throttle", "list")).stdout
    assert "smtp" in table
    assert "in 10 min" in table or "in 9 min" in table


async def test_throttle_reindex_finds_the_throttles_other_clients_set(
    client: aqless.Client, run_cli: Cli
) -> None:
    await client.redis.hset("ql:th:legacy", mapping={"id": "legacy", "maximum": 5})
    assert (await run_cli("--json", "throttle", "list")).json() == []
    outcome = await run_cli("throttle", "reindex")
    assert outcome.code == 0, outcome.stderr
    assert "indexed 1 throttle" in outcome.stdout
    listed = (await run_cli("--json", "throttle", "list")).json()
    assert [(d["id"], d["maximum"]) for d in listed] == [("legacy", 5)]
    assert (await run_cli("--json", "throttle", "reindex")).json() == {"added": 0}
