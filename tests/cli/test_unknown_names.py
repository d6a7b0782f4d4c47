"""A name the deployment never saw (a queue, a failure group, a worker) exits 1 naming the
closest known ones; `cancel` says what it lacks; `stats --scaling` refuses a target or
sample out of its rule as a usage error (exit 2), before reading anything."""

from __future__ import annotations

import time

import pytest

import aqless
from tests.support.cli import Cli
from tests.support.clients import pop_one

pytest_plugins = ["tests.support.client_fixtures"]


@pytest.mark.parametrize(
    "args",
    [
        ("jobs", "biling", "waiting"),
        ("groups", "biling"),
        ("queue", "empty", "biling", "--yes"),
        ("peek", "biling"),
        ("stats", "biling"),
        ("stats", "biling", "--scaling"),
        ("recurring", "list", "biling"),
    ],
)
async def test_an_unknown_queue_exits_1_naming_the_closest(
    client: aqless.Client, run_cli: Cli, args: tuple[str, ...]
) -> None:
    await client.queues["billing"].put("app.Charge", {})
    outcome = await run_cli(*args)
    assert outcome.code == 1, outcome.stdout
    assert "no queue 'biling' (did you mean 'billing'?)" in outcome.stderr
    document = await run_cli("--json", *args)
    assert document.code == 1
    assert '"type": "not_found"' in document.stdout


async def test_a_queue_never_named_alike_has_no_suggestion(
    client: aqless.Client, run_cli: Cli
) -> None:
    await client.queues["billing"].put("app.Charge", {})
    outcome = await run_cli("jobs", "nope", "waiting")
    assert outcome.code == 1
    assert "no queue 'nope'" in outcome.stderr
    assert "did you mean" not in outcome.stderr
    assert (await run_cli("jobs", "billing", "waiting")).code == 0


async def test_an_unknown_failure_group_or_worker_exits_1_naming_the_closest(
    client: aqless.Client, run_cli: Cli
) -> None:
    await client.queues["billing"].put("app.Charge", {})
    job = await pop_one(client.queues["billing"], worker="worker-1")
    await job.fail("billing-Error", "it broke")
    for args in (
        ("failed", "billing-Eror"),
        ("cancel", "--group", "billing-Eror"),
        ("retry", "billing-Eror"),
    ):
        outcome = await run_cli(*args)
        assert outcome.code == 1, args
        assert "no failure group 'billing-Eror' (did you mean 'billing-Error'?)" in " ".join(
            outcome.stderr.split()
        ), args
    worker = await run_cli("workers", "worker-2")
    assert worker.code == 1
    assert "no worker 'worker-2' (did you mean 'worker-1'?)" in worker.stderr
    assert (await client.jobs.failure_groups()) == {"billing-Error": 1}  # nothing changed


async def test_cancel_without_jids_or_group_says_what_it_needs(run_cli: Cli) -> None:
    outcome = await run_cli("cancel")
    assert outcome.code == 2
    assert "give the jids to cancel, or --group" in outcome.stderr
    assert "not both" not in outcome.stderr
    both = await run_cli("cancel", "a-jid", "--group", "g")
    assert "give jids or --group, not both" in both.stderr


@pytest.mark.parametrize(
    ("option", "value"),
    [("--target", "nan"), ("--target", "inf"), ("--sample", "nan"), ("--sample", "inf")],
)
async def test_scaling_refuses_a_target_or_sample_out_of_range(
    client: aqless.Client, run_cli: Cli, option: str, value: str
) -> None:
    await client.queues["billing"].put("app.Charge", {})
    started = time.monotonic()
    outcome = await run_cli("stats", "--scaling", option, value)
    assert time.monotonic() - started < 10  # `--sample inf` slept forever
    assert outcome.code == 2, outcome.stderr
    assert f"{option} must be a" in outcome.stderr
    assert "Traceback" not in outcome.stderr
    assert "server refused" not in outcome.stderr


async def test_a_next_free_start_reads_in_human_units(client: aqless.Client, run_cli: Cli) -> None:
    queue = client.queues["billing"]
    await queue.set_rate_limit(1, per=3600)
    await queue.put("app.Charge", {})
    await pop_one(queue)
    outcome = await run_cli("rate-limit", "list")
    row = next(line for line in outcome.stdout.splitlines() if "queue billing" in line)
    assert row.count("1 h") == 2 or "59 min" in row  # the period, and the next free start
    assert "3599" not in row
    assert "3600" not in row


async def test_an_unknown_rate_limit_exits_1_naming_the_closest(
    client: aqless.Client, run_cli: Cli
) -> None:
    await client.rate_limits["payments-api"].set(5, per=1)
    outcome = await run_cli("rate-limit", "show", "payment-api")
    assert outcome.code == 1
    assert "no rate limit 'payment-api' (did you mean 'payments-api'?)" in outcome.stderr
    assert (await run_cli("rate-limit", "show", "payments-api")).code == 0
