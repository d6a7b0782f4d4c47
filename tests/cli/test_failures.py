"""failed, retry/unfail and cancel, one by one and in bulk, with their effect in Redis."""

from __future__ import annotations

import aqless
from tests.support.cli import Cli
from tests.support.clients import get_job

pytest_plugins = ["tests.support.client_fixtures"]


async def fail_jobs(client: aqless.Client, queue: str, group: str, count: int) -> list[str]:
    q = client.queues[queue]
    jids = [await q.put("app.Job", {"i": i}) for i in range(count)]
    for job in await q.pop_many(count, worker="w-1"):
        await job.fail(group, f"Traceback\n{group}: job {job.jid}")
    return jids


async def test_failed_groups_and_a_groups_jobs(client: aqless.Client, run_cli: Cli) -> None:
    timeouts = await fail_jobs(client, "q", "TimeoutError", 3)
    await fail_jobs(client, "q", "KeyError", 1)
    groups = await run_cli("failed")
    rows = [line.split() for line in groups.stdout.splitlines()]
    assert ["TimeoutError", "3"] in rows
    assert ["KeyError", "1"] in rows
    assert (await run_cli("--json", "failed")).json() == {"TimeoutError": 3, "KeyError": 1}
    listing = await run_cli("failed", "TimeoutError")
    assert "3 of 3" in listing.stdout
    assert all(jid in listing.stdout for jid in timeouts)
    assert f"TimeoutError: job {timeouts[0]}" in listing.stdout  # the message's last line
    page = (await run_cli("--json", "failed", "TimeoutError", "-n", "2")).json()
    assert page["total"] == 3
    assert len(page["jobs"]) == 2
    assert {job["failure"]["group"] for job in page["jobs"]} == {"TimeoutError"}


async def test_an_unknown_group_exits_1(client: aqless.Client, run_cli: Cli) -> None:
    for args in (("failed", "nope"), ("cancel", "--group", "nope")):
        outcome = await run_cli(*args)
        assert outcome.code == 1
        assert "no failure group 'nope'" in outcome.stderr


async def test_retry_a_whole_group_in_bulk(client: aqless.Client, run_cli: Cli) -> None:
    jids = await fail_jobs(client, "q", "Flaky", 620)  # more than one page of 500
    await fail_jobs(client, "q", "Other", 1)
    outcome = await run_cli("--json", "retry", "Flaky")
    assert outcome.json() == {"group": "Flaky", "retried": 620}
    assert outcome.stderr == ""  # no progress bar when stderr is not a terminal
    assert await client.jobs.failure_groups() == {"Other": 1}
    assert (await client.queues["q"].counts()).waiting == 620
    assert (await get_job(client, jids[0])).state == "waiting"


async def test_unfail_part_of_a_group_into_another_queue(
    client: aqless.Client, run_cli: Cli
) -> None:
    await fail_jobs(client, "q", "Flaky", 5)
    outcome = await run_cli("unfail", "Flaky", "--queue", "slow", "--count", "3")
    assert outcome.code == 0
    assert "retried 3 jobs" in outcome.stdout
    assert await client.jobs.failure_groups() == {"Flaky": 2}
    assert len(await client.queues["slow"].peek(10)) == 3


async def test_retry_given_jids_skips_jobs_that_did_not_fail(
    client: aqless.Client, run_cli: Cli
) -> None:
    failed = await fail_jobs(client, "q", "Boom", 2)
    waiting = await client.queues["q"].put("app.Fine", {})
    document = (await run_cli("--json", "retry", failed[0], waiting)).json()
    assert document == {"group": None, "retried": 1}
    assert (await get_job(client, failed[0])).state == "waiting"
    assert (await get_job(client, failed[1])).state == "failed"
    missing = await run_cli("retry", failed[1], "nope")  # all exist, or nothing moves
    assert missing.code == 1
    assert "no job nope" in missing.stderr
    assert (await get_job(client, failed[1])).state == "failed"
    typo = await run_cli("retry", "Bom")
    assert typo.code == 1
    assert "no failure group 'Bom' (did you mean 'Boom'?), and no job with that jid" in typo.stderr
    assert (await run_cli("retry", failed[1])).code == 0  # one jid: not taken for a group


async def test_cancel_jids_all_or_nothing(client: aqless.Client, run_cli: Cli) -> None:
    one = await client.queues["q"].put("app.A", {})
    two = await client.queues["q"].put("app.B", {})
    missing = await run_cli("cancel", one, "nope")
    assert missing.code == 1
    assert "nope" in missing.stderr
    assert await client.queues["q"].length() == 2
    assert (await run_cli("--json", "cancel", one, two)).json() == {"cancelled": [one, two]}
    assert await client.jobs.get(one) is None
    assert await client.jobs.get(two) is None


async def test_cancel_a_group_in_bulk(client: aqless.Client, run_cli: Cli) -> None:
    await fail_jobs(client, "q", "Doomed", 600)
    outcome = await run_cli("cancel", "--group", "Doomed")
    assert outcome.code == 0
    assert "cancelled 600 jobs" in outcome.stdout
    assert await client.jobs.failure_groups() == {}
    assert await client.redis.keys("ql:j:*") == []


async def test_cancel_needs_jids_or_a_group(run_cli: Cli) -> None:
    assert (await run_cli("cancel")).code == 2
    assert (await run_cli("cancel", "a", "--group", "g")).code == 2


async def test_retry_every_group(client: aqless.Client, run_cli: Cli) -> None:
    await fail_jobs(client, "q", "Flaky", 3)
    await fail_jobs(client, "other", "Boom", 2)
    outcome = await run_cli("--json", "retry", "--all")
    assert outcome.json() == {"groups": {"Flaky": 3, "Boom": 2}, "retried": 5}
    assert await client.jobs.failure_groups() == {}
    assert ((await client.queues["q"].counts()).waiting, await client.queues["other"].length()) == (
        3,
        2,
    )
    await fail_jobs(client, "q", "Flaky", 2)
    await fail_jobs(client, "other", "Boom", 1)
    into = await run_cli("retry", "--all", "--queue", "slow")
    assert "retried 3 jobs of 2 groups" in into.stdout
    assert await client.queues["slow"].length() == 3
    nothing = (await run_cli("--json", "retry", "--all")).json()
    assert nothing == {"groups": {}, "retried": 0}


async def test_retry_needs_targets_or_all_but_not_both(client: aqless.Client, run_cli: Cli) -> None:
    await fail_jobs(client, "q", "Flaky", 1)
    for args in ((), ("Flaky", "--all")):
        outcome = await run_cli("retry", *args)
        assert outcome.code == 2
        assert "--all" in outcome.stderr
    assert await client.jobs.failure_groups() == {"Flaky": 1}
