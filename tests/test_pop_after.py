"""Joining an outcome and the pop behind it into one ``queue.popAfter`` call: the batcher's
pairing (aqless._connection.batching) and PopAfter's join and split
(aqless._connection.pop_after). The script's side is tested in tests/scripts/test_pop_after.py,
the worker's in tests/worker/test_one_at_a_time.py."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import anyio
from redis.exceptions import ResponseError

from aqless._connection.batching import Batcher, MakeCall
from aqless._connection.pop_after import PopAfter
from aqless.scripts.loader import Call, Reply

POP: Call = ("rateLimit.pop", ("2.5", "q", "w", 1))


def test_an_outcome_and_a_pop_join_with_each_call_s_own_now() -> None:
    outcome: Call = ("job.complete", ("1.5", "a", "w", "q", "{}"))
    assert PopAfter().join(outcome, POP) == (
        "queue.popAfter",
        ("2.5", "q", "w", 1, "job.complete", "1.5", "a", "w", "q", "{}"),
    )


def test_a_pop_with_data_apart_joins_with_it() -> None:
    outcome: Call = ("job.complete", ("1.5", "a", "w", "q", "{}"))
    pop: Call = ("rateLimit.pop", ("2.5", "q", "w", 1, "data_apart"))
    assert PopAfter().join(outcome, pop) == (
        "queue.popAfter",
        ("2.5", "q", "w", 1, "data_apart", "job.complete", "1.5", "a", "w", "q", "{}"),
    )
    assert PopAfter().split(["ok", ['{"jobs":[{}]}', "[1]"], "ok", "complete"]) == (
        "complete",
        ['{"jobs":[{}]}', "[1]"],
    )


def test_only_outcomes_and_pops_join() -> None:
    pairing = PopAfter()
    assert pairing.join(("job.heartbeat", ("1", "a", "w")), POP) is None
    assert (
        pairing.join(("job.complete", ("1", "a", "w", "q", "{}")), ("queue.peek", ("2",))) is None
    )


def test_the_joined_reply_splits_into_the_outcome_s_and_the_pop_s() -> None:
    pairing = PopAfter()
    assert pairing.split(["ok", "[]", "ok", "complete"]) == ("complete", "[]")
    assert pairing.split(["ok", "[]", "ok", -1]) == (-1, "[]")
    refused, popped = pairing.split(["ok", "[{}]", "refused", "user_function:9: Complete(): no"])
    assert isinstance(refused, ResponseError)
    assert str(refused) == "user_function:9: Complete(): no"
    assert popped == "[{}]"
    outcome, pop_refused = pairing.split(["refused", "user_function:3: Pop(): no", "ok", "1"])
    assert outcome == "1"
    assert isinstance(pop_refused, ResponseError)
    outcome, pop_refused = pairing.split(["refused", "WRONGTYPE Operation", "ok", "1"])
    assert str(pop_refused) == "WRONGTYPE Operation"  # the server's code kept, as it comes
    nothing_ran = ResponseError("OOM command not allowed")
    assert pairing.split(nothing_ran) == (nothing_ran, nothing_ran)


class _Recording:
    """A fake round trip: records each batch, answers a joined call as the script would."""

    def __init__(self) -> None:
        self.batches: list[list[Call]] = []
        self.fail = False

    async def __call__(self, calls: Sequence[Call]) -> list[Reply]:
        self.batches.append(list(calls))
        if self.fail:
            raise ConnectionError("dropped")
        return [
            ["ok", "[popped]", "ok", "done"] if command == "queue.popAfter" else command
            for command, _ in calls
        ]


async def _outcome_and_pop(send: _Recording) -> tuple[dict[str, object], list[Sequence[str]]]:
    """Replies by caller: the complete's, the log's and the pop's."""
    batcher = Batcher(send, pairing=PopAfter())
    replies: dict[str, object] = {}
    released: list[Sequence[str]] = []

    async def call(make: Call | MakeCall, releases: str | None = None) -> None:
        try:
            if isinstance(make, tuple):
                reply = await batcher.submit(make, releases)
            else:
                reply = await batcher.submit_ordered(make)
        except ConnectionError as error:
            reply = error
        replies[make[0] if isinstance(make, tuple) else "rateLimit.pop"] = reply

    def pop(ahead: Sequence[str]) -> Call:
        released.append(list(ahead))
        return ("rateLimit.pop", ("2", "q", "w", len(ahead)))

    async with anyio.create_task_group() as group:
        await group.start(batcher.run)
        with batcher.gathering():
            group.start_soon(call, ("job.complete", ("1", "a", "w", "q", "{}")), "a")
            group.start_soon(call, ("job.log", ("1", "b", "m")))  # releases nothing
            group.start_soon(call, pop)
            await anyio.wait_all_tasks_blocked()
            batcher.close()
    return replies, released


async def test_the_batcher_joins_the_pop_with_the_outcome_ahead_of_it() -> None:
    send = _Recording()
    replies, released = await _outcome_and_pop(send)
    assert released == [["a"]]  # the pop was made knowing the outcome goes ahead of it
    assert send.batches == [
        [
            ("job.log", ("1", "b", "m")),
            ("queue.popAfter", ("2", "q", "w", 1, "job.complete", "1", "a", "w", "q", "{}")),
        ]
    ]
    # each caller got its own part
    assert replies == {"job.complete": "done", "job.log": "job.log", "rateLimit.pop": "[popped]"}


async def test_a_failed_round_trip_fails_both_joined_calls() -> None:
    send = _Recording()
    send.fail = True
    replies, _ = await _outcome_and_pop(send)
    assert len(replies) == 3
    assert all(isinstance(reply, ConnectionError) for reply in replies.values())


async def test_held_calls_fly_from_the_pop_s_own_task_when_nothing_is_in_flight() -> None:
    """The pop that follows a held outcome sends both itself (no hop through the batcher's
    task, which is not even running here)."""
    send = _Recording()
    batcher = Batcher(send, pairing=PopAfter())
    replies: dict[str, object] = {}

    async def complete() -> None:
        replies["complete"] = await batcher.submit(
            ("job.complete", ("1", "a", "w", "q", "{}")), "a"
        )

    async def pop() -> None:
        replies["pop"] = await batcher.submit_ordered(
            lambda ahead: ("rateLimit.pop", ("2", "q", "w", len(ahead)))
        )

    with batcher.gathering(), anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(complete)
            await anyio.wait_all_tasks_blocked()
            group.start_soon(pop)
    assert replies == {"complete": "done", "pop": "[popped]"}
    assert [call[0] for batch in send.batches for call in batch] == ["queue.popAfter"]
    assert batcher.round_trips == 1


def test_many_outcomes_and_a_pop_join_as_jobs_outcomes() -> None:
    outcomes: list[Call] = [
        ("job.complete", ("1.5", "a", "w", "q", "{}")),
        ("job.fail", ("1.75", "b", "w", "g", "m", "", "1")),
    ]
    assert PopAfter().join_many(outcomes, POP) == (
        "jobs.outcomes",
        (
            *("2.5", "q", "w", 1, "job.complete", "1.5", 4, "a", "w", "q", "{}"),
            *("job.fail", "1.75", 6, "b", "w", "g", "m", "", "1"),
        ),
    )
    complete, failed, popped = PopAfter().split_many(
        ["ok", "[]", "ok", "complete", "refused", "user_function:1: Fail(): stale"], 2
    )
    assert (complete, popped) == ("complete", "[]")
    assert isinstance(failed, ResponseError)
    assert str(failed) == "user_function:1: Fail(): stale"
    assert PopAfter().join_many([*outcomes, ("job.log", ("1", "c", "m"))], POP) is None


def test_plain_completes_join_in_runs_of_three_arguments_a_job() -> None:
    """A complete of a job whose data was left as it was (`` '' keep_data 1 attempt n``)
    goes in a run of them, worker and queue once, then its now, jid and attempt; anything
    else (another outcome, another queue, a complete with data or without its attempt) ends
    the run and is framed on its own."""

    def kept(now: str, jid: str, queue: str = "q") -> Call:
        return ("job.complete", (now, jid, "w", queue, "", "keep_data", "1", "attempt", 3))

    with_data: Call = ("job.complete", ("5", "e", "w", "q", "{}", "attempt", 1))
    outcomes = [kept("1", "a"), kept("2", "b"), with_data, kept("6", "f"), kept("7", "g", "r")]
    assert PopAfter().join_many(outcomes, None) == (
        "jobs.outcomes",
        (
            *("1", "", "", ""),
            *("job.complete*", "w", "q", 2, "1", "a", 3, "2", "b", 3),
            *("job.complete", "5", 6, "e", "w", "q", "{}", "attempt", 1),
            *("job.complete*", "w", "q", 1, "6", "f", 3),
            *("job.complete*", "w", "r", 1, "7", "g", 3),
        ),
    )


class _Outcomes(_Recording):
    """Answers a ``jobs.outcomes`` call: each outcome "done", but b's refused."""

    async def __call__(self, calls: Sequence[Call]) -> list[Reply]:
        self.batches.append(list(calls))
        replies: list[Reply] = []
        for command, args in calls:
            if command != "jobs.outcomes":
                replies.append(command)
                continue
            reply: list[Reply] = ["ok", "[popped]"]
            jids = [args[i + 1] for i, arg in enumerate(args) if arg in ("job.complete",)]
            for _ in jids:
                reply += ["ok", "done"]
            reply[4:6] = ["refused", "user_function:1: Complete(): Job b is stale"]
            replies.append(reply)
        return replies


def _completing(
    batcher: Batcher, replies: dict[str, object]
) -> Callable[[str], Coroutine[Any, Any, None]]:
    """A caller completing `jid` through the batcher, its reply kept in `replies`."""

    async def complete(jid: str) -> None:
        replies[jid] = await batcher.submit(("job.complete", ("1", jid, "w", "q", "{}")), jid)

    return complete


async def test_the_batcher_joins_every_outcome_ahead_of_the_pop() -> None:
    send = _Outcomes()
    batcher = Batcher(send, pairing=PopAfter())
    replies: dict[str, object] = {}
    complete = _completing(batcher, replies)

    async def pop() -> None:
        replies["pop"] = await batcher.submit_ordered(
            lambda ahead: ("rateLimit.pop", ("2", "q", "w", len(ahead)))
        )

    with batcher.gathering(), anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            for jid in "abc":
                group.start_soon(complete, jid)
            group.start_soon(batcher.submit, ("job.log", ("1", "x", "m")))
            await anyio.wait_all_tasks_blocked()
            group.start_soon(pop)
    assert [[command for command, _ in batch] for batch in send.batches] == [
        ["job.log", "jobs.outcomes"]
    ]
    (_, (_, outcomes_args)) = send.batches[0]
    assert outcomes_args[:4] == ("2", "q", "w", 3)  # the pop knew of the 3 outcomes ahead
    assert replies["a"] == replies["c"] == "done"
    assert isinstance(replies["b"], ResponseError)  # only b's outcome was refused
    assert replies["pop"] == "[popped]"


async def test_outcomes_with_no_pop_behind_them_join_too() -> None:
    send = _Outcomes()
    batcher = Batcher(send, pairing=PopAfter())
    replies: dict[str, object] = {}
    complete = _completing(batcher, replies)

    with batcher.gathering(), anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            await group.start(batcher.run)
            for jid in "abc":
                group.start_soon(complete, jid)
            await anyio.wait_all_tasks_blocked()
            batcher.close()
    assert [[command for command, _ in batch] for batch in send.batches] == [["jobs.outcomes"]]
    assert send.batches[0][0][1][:4] == ("1", "", "", "")  # no pop
    assert replies["a"] == replies["c"] == "done"
    assert isinstance(replies["b"], ResponseError)
