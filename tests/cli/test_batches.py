"""batch, batches: a batch's totals and callbacks as a table and as JSON."""

from __future__ import annotations

import aqless
from aqless import BatchCallback, PutRequest
from tests.support.cli import Cli
from tests.support.clients import pop_one

pytest_plugins = ["tests.support.client_fixtures"]


async def test_batch_shows_live_totals_and_batches_lists_them(
    client: aqless.Client, run_cli: Cli
) -> None:
    members = [("work", PutRequest("app.Member")) for _ in range(3)]
    bid = await client.batches.put(
        members, description="<nightly>", on_complete=BatchCallback("app.Done", "callbacks")
    )
    await (await pop_one(client.queues["work"])).complete()
    view = await run_cli("batch", bid)
    lines = {line.split()[0]: line.split()[1:] for line in view.stdout.splitlines() if line.strip()}
    assert lines["total"] == ["3"]
    assert lines["pending"] == ["2"]
    assert lines["done"] == ["1"]
    assert lines["state"] == ["running"]
    assert "app.Done in callbacks (not put)" in view.stdout
    document = (await run_cli("--json", "batch", bid)).json()
    found = await client.batches.get(bid)
    assert found is not None
    assert document == found.to_json()

    listing = await run_cli("batches")
    row = next(line.split() for line in listing.stdout.splitlines() if bid in line)
    assert row[1:6] == ["<nightly>", "3", "2", "1", "0"]
    assert (await run_cli("--json", "batches")).json()["batches"][0]["id"] == bid


async def test_an_unknown_batch_exits_1(client: aqless.Client, run_cli: Cli) -> None:
    outcome = await run_cli("batch", "nope")
    assert outcome.code == 1
    assert "no batch 'nope'" in outcome.stderr
