"""Many slots: the outcomes a worker holds when it pops go with that pop in one script call
(``jobs.outcomes``, aqless._connection.pop_after), not one call each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
from redis.exceptions import ConnectionError as RedisConnectionError

import aqless
from aqless import JobState, PutRequest
from aqless._connection.pop_after import KEPT_COMPLETES
from aqless.scripts.loader import Call
from tests.support.worker import Recorder, make_worker, one


async def test_many_slots_report_their_outcomes_with_the_pop_in_one_call(
    client: aqless.Client,
) -> None:
    recorder = Recorder()
    jids = await client.queues["q"].put_many(PutRequest("app.job") for _ in range(400))
    worker = make_worker(client, ["q"], one(recorder), concurrency=50, burst=True)
    sent: list[Call] = []
    send = client.protocol._send

    async def counting_send(calls: Sequence[Call]) -> list[Any]:
        sent.extend(calls)
        return await send(calls)

    client.protocol._send = counting_send  # type: ignore[method-assign]
    counters = await worker.run()
    assert (counters.started, counters.completed) == (400, 400)
    assert sorted(recorder.jids) == sorted(jids)
    joined = [args for command, args in sent if command == "jobs.outcomes"]
    assert joined  # several outcomes went in one call with a pop
    # the job's data left as it was: the completes go as runs of 3 arguments a job
    assert any(KEPT_COMPLETES in args for args in joined)
    alone = sum(command == "job.complete" for command, _ in sent)
    together = sum(_completes(args) for args in joined)
    in_one = sum(command == "queue.popAfter" for command, _ in sent)
    assert alone + together + in_one == 400  # each outcome sent once
    # one call each would be 400 calls for the outcomes (and a pop's besides)
    outcome_calls = alone + len(joined) + in_one
    assert outcome_calls < 400 / 2, outcome_calls
    for job in await client.jobs.get_many(jids[:50]):
        assert [entry.what for entry in job.history] == ["put", "popped", "done"]


def _completes(args: Sequence[Any]) -> int:
    """The completes a ``jobs.outcomes`` call's arguments carry: each framed on its own, and
    those in runs of plain completes (``job.complete*``, their count after worker and queue)."""
    framed = list(args)
    runs = [int(framed[at + 3]) for at, arg in enumerate(framed) if arg == KEPT_COMPLETES]
    return framed.count("job.complete") + sum(runs)


async def test_a_lost_reply_of_a_joined_call_loses_no_outcome(client: aqless.Client) -> None:
    """The joined call runs, its reply is lost: each outcome in it is sent again (refused,
    found done), and every job completes once."""
    recorder = Recorder()
    jids = await client.queues["q"].put_many(PutRequest("app.job") for _ in range(200))
    worker = make_worker(client, ["q"], one(recorder), concurrency=20, burst=True)
    send = client.protocol._send
    lost: list[Call] = []

    async def reply_lost_once(calls: Sequence[Call]) -> list[Any]:
        replies = await send(calls)
        joined = [call for call in calls if call[0] == "jobs.outcomes"]
        if joined and not lost:
            lost.extend(joined)
            raise RedisConnectionError("the connection dropped before the reply came")
        return replies

    client.protocol._send = reply_lost_once  # type: ignore[method-assign]
    with anyio.fail_after(60):
        counters = await worker.run()
    assert lost, "no joined call was sent"
    assert sorted(recorder.jids) == sorted(jids)  # each ran once
    assert counters.completed + counters.failed <= 200
    states = {job.state for job in await client.jobs.get_many(jids)}
    assert states == {JobState.COMPLETE}


async def test_the_workers_pops_read_no_history(client: aqless.Client) -> None:
    """The worker pops with ``data_apart_no_history``: the server reads no job's history
    list for it, and the job its code gets has none until read again."""
    seen: list[tuple[str, ...]] = []
    read_again: list[tuple[str, ...]] = []

    async def look(job: aqless.Job) -> None:
        seen.append(tuple(entry.what for entry in job.history))
        if len(seen) == 1:
            read_again.append(tuple(entry.what for entry in (await job.refresh()).history))

    await client.queues["q"].put_many(PutRequest("app.job") for _ in range(60))
    worker = make_worker(client, ["q"], one(look), concurrency=10, burst=True)
    await client.redis.config_resetstat()
    counters = await worker.run()
    ran = await client.redis.info("commandstats")
    assert counters.completed == 60
    # the refresh's read alone (a pop with history reads one list a job)
    assert ran["cmdstat_lrange"]["calls"] == 1
    assert read_again == [("put", "popped")]
    assert seen == [()] * 60
