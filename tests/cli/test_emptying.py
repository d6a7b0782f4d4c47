"""Listing a queue's jobs in every state, and `queue empty`: what it cancels by default and
with --state, its confirmation, its counts, and the jobs the server keeps."""

from __future__ import annotations

import re

import aqless
from aqless.cli.emptying import CHUNK_MOST
from aqless.puts import PutRequest
from tests.support.cli import Cli
from tests.support.clients import pop_one

pytest_plugins = ["tests.support.client_fixtures"]


async def test_jobs_lists_every_state(client: aqless.Client, run_cli: Cli) -> None:
    queue = client.queues["bulk"]
    first = await queue.put("app.A", {}, priority=1)
    second = await queue.put("app.A", {})
    failing = await queue.put("app.A", {}, priority=9)
    await (await pop_one(queue)).fail("app.Crash", "boom")
    waiting = await run_cli("--json", "jobs", "bulk", "waiting")
    assert waiting.json() == {"queue": "bulk", "state": "waiting", "jids": [first, second]}
    assert (await run_cli("--json", "jobs", "bulk", "failed")).json()["jids"] == [failing]
    assert (await run_cli("--json", "jobs", "bulk", "complete")).json()["jids"] == []
    table = await run_cli("jobs", "bulk", "waiting")
    assert table.code == 0
    assert first in table.stdout
    assert (await queue.counts()).waiting == 2  # listing took nothing


async def test_empty_cancels_the_waiting_scheduled_and_depending_jobs(
    client: aqless.Client, run_cli: Cli
) -> None:
    queue = client.queues["emails"]
    running = await queue.put("app.A", {}, priority=9)
    assert (await pop_one(queue)).jid == running
    waiting = [await queue.put("app.A", {}) for _ in range(3)]
    later = await queue.put("app.A", {}, delay=600)
    after = await queue.put("app.A", {}, depends=[running])
    other = await client.queues["other"].put("app.A", {})

    declined = await run_cli("queue", "empty", "emails", input="n\n")
    assert declined.code == 1
    assert "cancel 5 jobs of emails (depends 1, scheduled 1, waiting 3)?" in declined.stderr
    assert len(await client.jobs.get_many([*waiting, later, after])) == 5

    outcome = await run_cli("--json", "queue", "empty", "emails", input="y\n")
    assert outcome.json() == {
        "queue": "emails",
        "cancelled": {"depends": 1, "scheduled": 1, "waiting": 3, "throttled": 0},
        "total": 5,
        "kept": {},
    }
    assert await client.jobs.get_many([*waiting, later, after]) == []
    assert [job.jid for job in await client.jobs.get_many([running, other])] == [running, other]
    again = await run_cli("queue", "empty", "emails", "--yes")
    assert "emails: no job to cancel" in again.stdout


async def test_empty_with_states_and_a_job_others_depend_on(
    client: aqless.Client, run_cli: Cli
) -> None:
    queue = client.queues["emails"]
    failing = await queue.put("app.A", {}, priority=9)
    await (await pop_one(queue)).fail("app.Crash", "boom")
    needed = await queue.put("app.A", {})
    dependent = await client.queues["reports"].put("app.B", {}, depends=[needed])
    outcome = await run_cli("queue", "empty", "emails", "--state", "waiting,failed", "--yes")
    assert outcome.code == 0
    assert "cancelled 1 job of emails (failed 1); kept 1 job that others depend on" in (
        outcome.stdout
    )
    assert f"kept {needed}:" in outcome.stderr
    assert await client.jobs.get(failing) is None
    assert [job.jid for job in await client.jobs.get_many([needed, dependent])] == [
        needed,
        dependent,
    ]
    bad = await run_cli("queue", "empty", "emails", "--state", "complete", "--yes")
    assert bad.code == 2
    assert "complete: not one of" in bad.stderr


def cancelled_in(command: bytes) -> int:
    """How many jids a logged `FCALL <function> 0 job.cancel <now> jid...` names (the slow
    log keeps 32 arguments, the last one saying how many more there were)."""
    words = command.split(b" ")
    more = re.search(rb"\.\.\. \((\d+) more arguments\)$", command)
    total = len(words) if more is None else 31 + int(more.group(1))
    return total - 5


async def test_empty_cancels_a_bounded_chunk_a_call(client: aqless.Client, run_cli: Cli) -> None:
    await client.queues["bulk"].put_many([PutRequest("app.A")] * 250)
    redis = client.redis
    kept = await redis.config_get("slowlog-*")
    await redis.config_set("slowlog-max-len", 10_000)
    await redis.config_set("slowlog-log-slower-than", 0)  # every command, with its arguments
    await redis.slowlog_reset()
    try:
        outcome = await run_cli("queue", "empty", "bulk", "--yes")
        logged = await redis.slowlog_get(10_000)
    finally:
        await redis.config_set("slowlog-log-slower-than", str(kept["slowlog-log-slower-than"]))
        await redis.config_set("slowlog-max-len", str(kept["slowlog-max-len"]))
    assert outcome.code == 0, outcome.stderr
    chunks = [
        cancelled_in(entry["command"])
        for entry in logged
        if entry["command"].startswith(b"FCALL") and b" job.cancel " in entry["command"]
    ]
    assert sum(chunks) == 250
    assert max(chunks) <= CHUNK_MOST
