"""Automatic pipelining: concurrent calls share round trips, each keeps its own outcome."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import anyio
import pytest

from aqless import Client, JobNotFoundError
from aqless._connection.batching import Batcher, BatchingPolicy
from aqless.errors import ConnectionLostError
from aqless.scripts.loader import Call, Reply

pytest_plugins = ["tests.support.client_fixtures"]


async def test_concurrent_calls_share_round_trips(client: Client) -> None:
    queue = client.queues["q"]
    jids: list[str] = []

    async def put(n: int) -> None:
        jids.append(await queue.put("k", {"n": n}))

    async with client.protocol.batching() as batcher, anyio.create_task_group() as group:
        for n in range(100):
            group.start_soon(put, n)
    assert len(set(jids)) == 100
    assert batcher.calls == 100
    assert batcher.round_trips < 20  # the first goes alone, the rest ride together
    assert await queue.length() == 100


async def test_a_refusal_reaches_only_its_caller(client: Client) -> None:
    jid = await client.queues["q"].put("k", {})
    outcomes: dict[str, object] = {}

    async def priority(name: str, target: str) -> None:
        try:
            await client.protocol.call("job.setPriority", target, 5)
            outcomes[name] = "ok"
        except JobNotFoundError as error:
            outcomes[name] = error

    async with client.protocol.batching(), anyio.create_task_group() as group:
        group.start_soon(priority, "real", jid)
        group.start_soon(priority, "missing", "no-such-jid")
    assert outcomes["real"] == "ok"
    assert isinstance(outcomes["missing"], JobNotFoundError)
    job = await client.jobs.get(jid)
    assert job is not None
    assert job.priority == 5


async def test_nested_batching_shares_the_outer_batcher(client: Client) -> None:
    async with client.protocol.batching() as outer, client.protocol.batching() as inner:
        assert inner is outer
        await client.queues["q"].put("k", {})
    assert outer.calls == 1
    await client.queues["q"].put("k", {})  # after the block: a plain call again
    assert outer.calls == 1


async def test_a_failed_round_trip_fails_each_of_its_calls() -> None:
    async def send(calls: object) -> list[Reply]:
        raise ConnectionLostError("gone")

    batcher = Batcher(send)
    failures: list[BaseException] = []

    async def submit() -> None:
        try:
            await batcher.submit(("job.get", ("x",)))
        except ConnectionLostError as error:
            failures.append(error)

    async with anyio.create_task_group() as group:
        await group.start(batcher.run)
        for _ in range(3):
            group.start_soon(submit)
        await anyio.wait_all_tasks_blocked()
        batcher.close()
    assert len(failures) == 3


async def test_calls_left_when_the_batcher_is_cancelled_fail_instead_of_hanging() -> None:
    release = anyio.Event()

    async def send(calls: Sequence[Call]) -> list[Reply]:
        await release.wait()
        return ["sent" for _ in calls]

    batcher = Batcher(send)
    outcomes: list[object] = []

    async def submit() -> None:
        try:
            outcomes.append(await batcher.submit(("job.get", ("x",))))
        except ConnectionLostError as error:
            outcomes.append(error)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as callers:
            async with anyio.create_task_group() as runner:
                await runner.start(batcher.run)
                for _ in range(4):
                    callers.start_soon(submit)
                    await anyio.wait_all_tasks_blocked()
                # the first went alone from its own task; the next flies from the
                # batcher's, the other two wait in its queue
                runner.cancel_scope.cancel()
            release.set()
    assert outcomes.count("sent") == 1  # the lone call was on its way: it lands
    assert sum(isinstance(outcome, ConnectionLostError) for outcome in outcomes) == 3
    with pytest.raises(RuntimeError, match="closed"):
        await batcher.submit(("job.get", ("x",)))


async def test_a_flight_stopped_by_a_shared_future_fails_its_calls_and_the_batcher_lives_on() -> (
    None
):
    """A round trip that meets a CancelledError nobody sent the batcher's task (another
    task's shared work, e.g. a connect whose waiter's deadline stopped it) is one failed
    round trip; the batcher serves the next calls."""
    loop = asyncio.get_running_loop()
    sends = 0

    async def send(calls: Sequence[Call]) -> list[Reply]:
        nonlocal sends
        sends += 1
        if sends == 2:  # the batched one: awaits a future another task cancels
            stopped: asyncio.Future[None] = loop.create_future()
            loop.call_later(0.01, stopped.cancel)
            await stopped
        await anyio.sleep(0.05)
        return ["sent" for _ in calls]

    batcher = Batcher(send)
    outcomes: list[object] = []

    async def submit() -> None:
        try:
            outcomes.append(await batcher.submit(("job.get", ("x",))))
        except ConnectionLostError as error:
            outcomes.append(error)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            await group.start(batcher.run)
            group.start_soon(submit)  # alone, from its own task
            await anyio.wait_all_tasks_blocked()
            group.start_soon(submit)  # from the batcher's task: the stopped one
            await anyio.sleep(0.2)
            assert await batcher.submit(("job.get", ("y",))) == "sent"
            batcher.close()
    assert outcomes.count("sent") == 1
    assert sum(isinstance(outcome, ConnectionLostError) for outcome in outcomes) == 1


async def test_up_to_depth_batches_fly_at_once() -> None:
    release = anyio.Event()
    sent: list[int] = []

    async def send(calls: Sequence[Call]) -> list[Reply]:
        sent.append(len(calls))
        await release.wait()
        return [None for _ in calls]

    batcher = Batcher(send, depth=2)
    async with anyio.create_task_group() as group:
        await group.start(batcher.run)
        for _ in range(5):
            group.start_soon(batcher.submit, ("job.get", ("x",)))
            await anyio.wait_all_tasks_blocked()
        assert sent == [1, 1]  # two in flight; the other three wait for a landing
        release.set()
        await anyio.wait_all_tasks_blocked()
        batcher.close()
    assert sorted(sent) == [1, 1, 3]


class _Gated:
    """A fake round trip that records each batch and lands when released."""

    def __init__(self) -> None:
        self.batches: list[list[Call]] = []
        self.release = anyio.Event()

    async def __call__(self, calls: Sequence[Call]) -> list[Reply]:
        self.batches.append(list(calls))
        await self.release.wait()
        return [command for command, _ in calls]


async def test_an_ordered_call_goes_last_made_with_what_the_calls_ahead_of_it_release() -> None:
    send = _Gated()
    batcher = Batcher(send, depth=2)
    seen: list[list[str]] = []

    def pop(released: Sequence[str]) -> Call:
        seen.append(list(released))
        return ("queue.pop", ("q", "w", len(released)))

    async with anyio.create_task_group() as group:
        await group.start(batcher.run)
        group.start_soon(batcher.submit, ("job.complete", ("a",)), "a")  # alone, in flight
        await anyio.wait_all_tasks_blocked()
        with batcher.gathering():  # keep the next ones queued until all are in
            group.start_soon(batcher.submit_ordered, pop)
            group.start_soon(batcher.submit, ("job.complete", ("b",)), "b")  # after the pop
            group.start_soon(batcher.submit, ("job.log", ("c",)))  # releases nothing
            await anyio.wait_all_tasks_blocked()
            send.release.set()
            await anyio.wait_all_tasks_blocked()
            batcher.close()
    # the second batch flew beside the first; the pop went last in it, made knowing that
    # only `b` is released ahead of it (`a` is in another round trip, which may land later)
    assert send.batches[1] == [
        ("job.complete", ("b",)),
        ("job.log", ("c",)),
        ("queue.pop", ("q", "w", 1)),
    ]
    assert seen == [["b"]]


async def test_a_lone_ordered_call_goes_at_once_and_held_lone_calls_wait() -> None:
    send = _Gated()
    send.release.set()
    batcher = Batcher(send)
    async with anyio.create_task_group() as group:
        await group.start(batcher.run)
        made = await batcher.submit_ordered(lambda ahead: ("queue.pop", ("q", "w", len(ahead))))
        assert made == "queue.pop"
        assert send.batches == [[("queue.pop", ("q", "w", 0))]]
        with batcher.gathering():
            group.start_soon(batcher.submit, ("job.complete", ("a",)))
            group.start_soon(batcher.submit_ordered, lambda ahead: ("queue.pop", ("q", "w", 1)))
            await anyio.wait_all_tasks_blocked()
            batcher.close()
    # the held outcome and the pop that followed it shared one round trip
    assert [len(batch) for batch in send.batches] == [1, 2]


async def test_an_ordered_call_whose_arguments_fail_fails_alone() -> None:
    send = _Gated()
    send.release.set()
    batcher = Batcher(send)
    outcomes: list[object] = []

    def broken(released: Sequence[str]) -> Call:
        raise ValueError("no arguments")

    async def ordered() -> None:
        try:
            outcomes.append(await batcher.submit_ordered(broken))
        except ValueError as error:
            outcomes.append(error)

    async with anyio.create_task_group() as group:
        await group.start(batcher.run)
        with batcher.gathering():
            group.start_soon(batcher.submit, ("job.complete", ("a",)))
            group.start_soon(ordered)
            await anyio.wait_all_tasks_blocked()
            batcher.close()
    assert [len(batch) for batch in send.batches] == [1]
    assert isinstance(outcomes[0], ValueError)


async def test_a_held_call_is_sent_by_the_batcher_when_no_pop_follows() -> None:
    """A call held for a pop that never comes (the worker stopped, or it was a job's own
    verb) still goes: the batcher's task is woken on the next turn."""
    send = _Gated()
    send.release.set()
    batcher = Batcher(send)
    async with anyio.create_task_group() as group:
        await group.start(batcher.run)
        with batcher.gathering(), anyio.fail_after(5):
            assert await batcher.submit(("job.complete", ("a",)), "a") == "job.complete"
        batcher.close()
    assert send.batches == [[("job.complete", ("a",))]]


async def test_calls_behind_an_ordered_call_in_flight_go_with_the_next_one() -> None:
    """A prefetching worker: the outcome of a job that ended while the pop was on its way
    waits for the next pop, made as soon as the first lands, and shares its round trip."""
    send = _Gated()
    batcher = Batcher(send, depth=2, policy=BatchingPolicy(hold_behind_ordered=True))
    replies: list[Reply] = []

    async def pop_twice() -> None:
        replies.append(await batcher.submit_ordered(lambda ahead: ("queue.pop", ("q", 1))))
        replies.append(await batcher.submit_ordered(lambda ahead: ("queue.pop", (*ahead,))))

    async with anyio.create_task_group() as group:
        await group.start(batcher.run)
        group.start_soon(pop_twice)
        await anyio.wait_all_tasks_blocked()
        group.start_soon(batcher.submit, ("job.complete", ("b",)), "b")
        await anyio.wait_all_tasks_blocked()
        assert len(send.batches) == 1  # held behind the pop in flight, not flown beside it
        send.release.set()
        await anyio.wait_all_tasks_blocked()
        batcher.close()
    assert send.batches == [
        [("queue.pop", ("q", 1))],
        [("job.complete", ("b",)), ("queue.pop", ("b",))],
    ]
    assert replies == ["queue.pop", "queue.pop"]


async def test_calls_held_behind_an_ordered_call_go_once_it_lands_if_none_follows() -> None:
    send = _Gated()
    batcher = Batcher(send, depth=2, policy=BatchingPolicy(hold_behind_ordered=True))
    async with anyio.create_task_group() as group:
        await group.start(batcher.run)
        group.start_soon(batcher.submit_ordered, lambda ahead: ("queue.pop", ("q", 1)))
        await anyio.wait_all_tasks_blocked()
        group.start_soon(batcher.submit, ("job.complete", ("b",)), "b")
        await anyio.wait_all_tasks_blocked()
        send.release.set()
        with anyio.fail_after(5):
            await anyio.wait_all_tasks_blocked()
        batcher.close()
    assert send.batches == [[("queue.pop", ("q", 1))], [("job.complete", ("b",))]]


async def test_in_order_an_ordered_call_counts_what_the_batches_in_flight_release() -> None:
    """Where batches run in the order sent (one connection), an ordered call made while
    another batch flies knows that its outcomes run first, and flies beside it at once."""
    send = _Gated()
    batcher = Batcher(send, depth=2, policy=BatchingPolicy(in_order=True))
    seen: list[list[str]] = []

    def pop(released: Sequence[str]) -> Call:
        seen.append(list(released))
        return ("queue.pop", ("q", "w", len(released)))

    async with anyio.create_task_group() as group:
        await group.start(batcher.run)
        group.start_soon(batcher.submit, ("job.complete", ("a",)), "a")  # alone, in flight
        await anyio.wait_all_tasks_blocked()
        group.start_soon(batcher.submit_ordered, pop)
        await anyio.wait_all_tasks_blocked()
        assert len(send.batches) == 2  # both on their way
        send.release.set()
        await anyio.wait_all_tasks_blocked()
        batcher.close()
    assert seen == [["a"]]
    assert send.batches[1] == [("queue.pop", ("q", "w", 1))]


async def test_in_order_the_outcomes_that_landed_are_told_and_failed_ones_are_not() -> None:
    landed: list[str] = []
    outcomes = iter([None, ConnectionLostError("gone")])

    async def send(calls: Sequence[Call]) -> list[Reply]:
        failure = next(outcomes)
        if failure is not None:
            raise failure
        return [command for command, _ in calls]

    batcher = Batcher(send, depth=2, policy=BatchingPolicy(in_order=True, on_landed=landed.extend))
    async with anyio.create_task_group() as group:
        await group.start(batcher.run)
        await batcher.submit(("job.complete", ("a",)), "a")
        with pytest.raises(ConnectionLostError):
            await batcher.submit(("job.complete", ("b",)), "b")
        batcher.close()
    assert landed == ["a"]


async def test_a_call_held_for_an_ordered_call_that_took_off_waits_for_the_next() -> None:
    """The wake that would send a held call alone, if no ordered call followed, comes a
    turn later: an ordered call that took off meanwhile took it, and a call queued since
    waits for the next ordered call rather than flying alone."""
    send = _Gated()
    batcher = Batcher(send, depth=2, policy=BatchingPolicy(hold_behind_ordered=True, in_order=True))
    async with anyio.create_task_group() as group:
        await group.start(batcher.run)
        with batcher.gathering():
            group.start_soon(batcher.submit, ("job.complete", ("a",)), "a")
            group.start_soon(batcher.submit_ordered, lambda ahead: ("queue.pop", (*ahead,)))
            group.start_soon(batcher.submit, ("job.complete", ("b",)), "b")
            await anyio.wait_all_tasks_blocked()
        assert len(send.batches) == 1  # `b` is held behind the pop in flight
        group.start_soon(batcher.submit_ordered, lambda ahead: ("queue.pop", (*ahead,)))
        await anyio.wait_all_tasks_blocked()
        send.release.set()
        await anyio.wait_all_tasks_blocked()
        batcher.close()
    assert send.batches == [
        [("job.complete", ("a",)), ("queue.pop", ("a",))],
        [("job.complete", ("b",)), ("queue.pop", ("a", "b"))],
    ]


async def test_a_worker_asks_the_connection_for_its_batching_policy(client: Client) -> None:
    """Only a worker whose pops run ahead holds calls behind them; the connection says
    whether its batches run in the order sent (the lean connection's do)."""
    landed: list[str] = []
    plain = client.protocol.worker_batching(prefetching=False, on_landed=landed.extend)
    assert plain == BatchingPolicy()
    ahead = client.protocol.worker_batching(prefetching=True, on_landed=landed.extend)
    assert ahead == BatchingPolicy(
        hold_behind_ordered=True, in_order=client.protocol.in_order, on_landed=landed.extend
    )
    async with client.protocol.batching(ahead) as batcher:
        assert batcher.policy is ahead


async def test_gathering_ends_with_its_block_even_when_it_raises() -> None:
    send = _Gated()
    send.release.set()
    batcher = Batcher(send)
    with pytest.raises(ValueError, match="stop"), batcher.gathering():
        raise ValueError("stop")
    async with anyio.create_task_group() as group:
        await group.start(batcher.run)
        assert await batcher.submit(("job.log", ("a",))) == "job.log"  # alone, at once
        batcher.close()
    assert send.batches == [[("job.log", ("a",))]]
