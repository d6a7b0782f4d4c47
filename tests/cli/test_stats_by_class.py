"""aqless stats --by-class: each job class's run time quantiles (upper bounds of the
script's buckets), failure rate and throughput over this hour and the last day, from the
counts the script keeps with each outcome."""

from __future__ import annotations

import pytest

import aqless
from aqless.ops.classes import bucket_bound, class_figures
from tests.support.cli import Cli

pytest_plugins = ["tests.support.client_fixtures"]


async def finish(client: aqless.Client, queue: str, klass: str, runs: list[float]) -> None:
    """Put, pop and complete a job of `klass` per run time in `runs` (a negative one fails,
    after that long)."""
    for seconds in runs:
        await client.queues[queue].put(klass, {})
        job = await client.queues[queue].pop()
        assert job is not None
        await client.redis.hset(f"ql:j:{job.jid}", "time", client.clock() - abs(seconds))
        if seconds >= 0:
            await job.complete()
        else:
            await job.fail("boom", "it broke")


async def test_by_class_figures_as_json_and_as_a_table(client: aqless.Client, run_cli: Cli) -> None:
    await finish(client, "mail", "app.Send", [0.1] * 8 + [3.0, 30.0] + [-1.0, -1.0])
    await finish(client, "mail", "app.Bounce", [0.5])
    await finish(client, "reports", "app.Daily", [120.0])

    documents = (await run_cli("--json", "stats", "--by-class")).json()
    by_key = {(d["queue"], d["klass"], d["window"]): d for d in documents}
    assert [(d["queue"], d["klass"]) for d in documents][:2] == [("mail", "app.Send")] * 2
    send = by_key[("mail", "app.Send", "hour")]
    assert (send["completed"], send["failed"]) == (10, 2)
    assert send["failure_rate"] == pytest.approx(2 / 12)
    assert 0.1 <= send["p50"] <= 0.1 * 2**0.5  # an upper bound within a factor of √2
    assert 3.0 <= send["p95"] <= 30.0 * 2**0.5
    assert 30.0 <= send["p99"] <= 30.0 * 2**0.5
    assert by_key[("mail", "app.Send", "day")]["completed"] == 10
    assert by_key[("reports", "app.Daily", "day")]["p50"] >= 120.0
    assert by_key[("mail", "app.Bounce", "hour")]["failure_rate"] == 0.0

    one = (await run_cli("--json", "stats", "reports", "--by-class")).json()
    assert {d["klass"] for d in one} == {"app.Daily"}
    text = (await run_cli("stats", "--by-class")).stdout
    assert "app.Send" in text
    assert "16.7%" in text
    unknown = await run_cli("stats", "nope", "--by-class")
    assert unknown.code == 1
    assert (await run_cli("stats", "--by-class", "--scaling")).code == 2


async def test_figures_cost_no_more_with_more_jobs(client: aqless.Client) -> None:
    await finish(client, "q", "app.A", [0.01] * 3)
    (hour, day) = await class_figures(client)
    assert (hour.window, day.window) == ("hour", "day")
    assert hour.completed == 3
    # runs of 10 ms (and the moments the test takes): buckets of 2^(7/2) ms, 2^(8/2) ms...
    assert sum(count for _, count in hour.histogram) == 3
    assert all(bucket_bound(7) <= bound <= 0.1 for bound, _ in hour.histogram)
    assert bucket_bound(0) == 0.001
    assert bucket_bound(7) == pytest.approx(0.0113, rel=0.01)
