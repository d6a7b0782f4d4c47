"""rate-limit: list, show, set and delete, named limits and a queue's own."""

from __future__ import annotations

import aqless
from tests.support.cli import Cli
from tests.support.clients import pop_one

pytest_plugins = ["tests.support.client_fixtures"]


async def test_rate_limit_set_list_show_delete(client: aqless.Client, run_cli: Cli) -> None:
    assert (await run_cli("rate-limit", "set", "api", "2", "--per", "30")).code == 0
    assert (await run_cli("rate-limit", "set", "emails", "5", "--queue")).code == 0
    info = await client.rate_limits["api"].get()
    assert (info.limit, info.period) == (2, 30.0)
    assert (await client.queues["emails"].rate_limit.get()).limit == 5
    await client.queues["q"].put("app.Call", {}, rate_limits=["api"])
    await pop_one(client.queues["q"])
    shown = (await run_cli("--json", "rate-limit", "show", "api")).json()
    assert (shown["limit"], shown["period"], shown["used"], shown["wait"]) == (2, 30.0, 1, 0)
    listed = (await run_cli("--json", "rate-limit", "list")).json()
    assert sorted(d["id"] for d in listed) == ["api", f"{client.prefix}q:emails"]
    table = (await run_cli("rate-limit", "list")).stdout
    assert "next free in" in table
    assert "api" in table
    assert (await run_cli("rate-limit", "delete", "emails", "--queue")).code == 0
    assert (await client.queues["emails"].rate_limit.get()).limit == 0
    refused = await run_cli("rate-limit", "set", "api", "0")
    assert refused.code != 0


async def test_rate_limit_set_smooth(client: aqless.Client, run_cli: Cli) -> None:
    assert (await run_cli("rate-limit", "set", "api", "50", "--smooth")).code == 0
    assert (await run_cli("rate-limit", "set", "emails", "5", "--queue", "--smooth")).code == 0
    assert (await client.rate_limits["api"].get()).smooth
    assert (await client.queues["emails"].rate_limit.get()).smooth
    shown = (await run_cli("--json", "rate-limit", "show", "api")).json()
    assert (shown["limit"], shown["smooth"]) == (50, True)
    assert "smooth" in (await run_cli("rate-limit", "list")).stdout
    # set again without --smooth: bursts
    assert (await run_cli("rate-limit", "set", "api", "50")).code == 0
    assert not (await client.rate_limits["api"].get()).smooth
