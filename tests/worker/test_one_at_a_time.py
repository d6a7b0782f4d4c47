"""One job at a time: a worker with one slot reports each job's outcome and pops the next
in one script call (``queue.popAfter``, aqless._connection.pop_after), with the failure
semantics of the two calls: a refused outcome does not stop the pop, and a lost reply loses
neither the outcome nor the popped job. (``prefetch=0``: the default may hold the next job
while runs are short, and send its pops ahead: tests/worker/test_default_prefetch.py.)"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

import aqless
from aqless import Job, JobState
from aqless.scripts.loader import Call, Reply
from tests.support.worker import Recorder, all_complete, make_worker, one, running, until


class Sent:
    """Records the command of every script call the client sends (the calls still go)."""

    def __init__(self, client: aqless.Client, monkeypatch: pytest.MonkeyPatch) -> None:
        self.commands: list[str] = []
        script = client.protocol.script
        send, send_many = script.send, script.send_many

        async def one_call(command: str, args: Sequence[Any]) -> Reply:
            self.commands.append(command)
            return await send(command, args)

        async def many_calls(calls: Sequence[Call], **options: Any) -> list[Reply]:
            self.commands += [command for command, _ in calls]
            return await send_many(calls, **options)

        monkeypatch.setattr(script, "send", one_call)
        monkeypatch.setattr(script, "send_many", many_calls)

    def count(self, command: str) -> int:
        return self.commands.count(command)


async def test_one_slot_reports_and_pops_in_one_call(
    client: aqless.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = Recorder()
    jids = [await client.queues["q"].put("app.job", {"n": n}) for n in range(6)]
    sent = Sent(client, monkeypatch)
    worker = make_worker(client, handlers=one(recorder), concurrency=1, prefetch=0)
    async with running(worker):
        await all_complete(client, jids)
        await until(lambda: worker.counters.completed == 6)
    assert recorder.jids == jids  # in order, one at a time
    assert sent.count("job.complete") == 0
    assert sent.count("queue.popAfter") == 6  # the last one's pop finds nothing
    for job in await client.jobs.get_many(jids):
        assert [entry.what for entry in job.history] == ["put", "popped", "done"]


async def test_failures_and_retries_go_with_the_next_pop_too(
    client: aqless.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def code(job: Job) -> None:
        if job.data["n"] == 1:
            raise ValueError("no")
        if job.data["n"] == 2 and job.retries_left == 5:
            raise aqless.Retry(0)

    queue = client.queues["q"]
    jids = [await queue.put("app.job", {"n": n}) for n in range(4)]
    sent = Sent(client, monkeypatch)
    worker = make_worker(client, handlers=one(code), concurrency=1, prefetch=0)
    async with running(worker):
        await until(lambda: worker.counters.completed == 3 and worker.counters.failed == 1)
    states = [job.state for job in await client.jobs.get_many(jids)]
    assert states == [JobState.COMPLETE, JobState.FAILED, JobState.COMPLETE, JobState.COMPLETE]
    assert worker.counters.retried == 1
    assert sent.count("job.fail") == sent.count("job.retry") == sent.count("job.complete") == 0
    assert sent.count("queue.popAfter") == 5  # 3 completes, 1 fail, 1 retry


async def test_a_refused_outcome_still_pops_the_next_job(
    client: aqless.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = Recorder()

    async def taken(job: Job) -> None:
        await recorder(job)
        if job.data["n"] == 0:  # another worker has it now: the complete will be refused
            await client.redis.hset(f"ql:j:{job.jid}", "worker", "thief")

    first, second = [await client.queues["q"].put("app.job", {"n": n}) for n in range(2)]
    sent = Sent(client, monkeypatch)
    worker = make_worker(client, handlers=one(taken), concurrency=1, prefetch=0)
    async with running(worker):
        await all_complete(client, [second])
    assert recorder.jids == [first, second]
    assert (await client.jobs.get_many([first]))[0].state == JobState.RUNNING
    assert worker.counters.completed == 1
    assert sent.count("queue.popAfter") >= 2  # the refused complete's call popped `second`


async def test_a_lost_reply_loses_neither_the_outcome_nor_the_popped_job(
    client: aqless.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The joined call runs, its reply is lost: the complete is sent again (refused, found
    done) and the job the pop took is found held and run."""
    recorder = Recorder()
    jids = [await client.queues["q"].put("app.job", {"n": n}) for n in range(3)]
    script = client.protocol.script
    send = script.send
    lost: list[Reply] = []

    async def reply_lost_once(command: str, args: Sequence[Any]) -> Reply:
        reply = await send(command, args)
        if command == "queue.popAfter" and not lost:
            lost.append(reply)
            raise RedisConnectionError("the connection dropped before the reply came")
        return reply

    monkeypatch.setattr(script, "send", reply_lost_once)
    worker = make_worker(client, handlers=one(recorder), concurrency=1, prefetch=0)
    async with running(worker):
        await all_complete(client, jids)
        await until(lambda: worker.counters.completed == 3)
    assert lost, "no joined call was sent"
    assert sorted(recorder.jids) == sorted(jids)  # each ran once (the held one found later)
    histories = sorted(
        [entry.what for entry in job.history] for job in await client.jobs.get_many(jids)
    )
    # the job the lost reply's pop took was taken back: a second hand-out, a new attempt
    taken_back = ["put", "popped", "taken-back", "done"]
    assert histories == [["put", "popped", "done"]] * 2 + [taken_back]
