"""aqless's fenced attempts and hand-backs (lifecycle.lua): every pop stores a new, rising
`attempt` in the job hash; the owner's verbs given an attempt are refused when it is not the
current one; calls without one (other clients) are checked by worker name alone, as before.
`job.handBack` returns a running job to its queue without spending a retry."""

from __future__ import annotations

import json

import pytest

from aqless._connection.protocol import error_for
from aqless.errors import LockLostError, StaleAttemptError
from aqless.scripts.loader import Argument
from tests.conftest import Lua
from tests.scripts._queues_helpers import rput
from tests.scripts.expect import refused

STALE = "attempt 1 is stale: the job is on attempt 2"


async def own_pop(lua: Lua, now: float, worker: str = "w1") -> list[dict[str, object]]:
    """aqless's own pop (data apart): the job objects, each with its attempt."""
    reply = await lua("rateLimit.pop", now, "queue", worker, 10, "data_apart")
    jobs: list[dict[str, object]] = json.loads(reply[0])["jobs"]
    return jobs


async def popped_twice(lua: Lua) -> None:
    """A job popped by w1, its lock expired (grace-period 0), popped again by w1."""
    await lua("config.set", 0, "grace-period", 0)
    await lua("config.set", 0, "heartbeat", 10)
    await rput(lua, 1, "jid")
    assert [job["attempt"] for job in await own_pop(lua, 2)] == [1]
    assert [job["attempt"] for job in await own_pop(lua, 20)] == [2]


async def test_every_pop_is_a_new_attempt_and_only_own_pops_show_it(lua: Lua) -> None:
    await rput(lua, 1, "jid")
    (first,) = await own_pop(lua, 2)
    assert first["attempt"] == 1
    assert await lua.redis.hget("ql:j:jid", "attempt") == "1"
    await lua("job.retry", 3, "jid", "queue", "w1")
    (again,) = await lua.json("queue.pop", 4, "queue", "w2", 1)
    assert "attempt" not in again  # the protocol's job object is as it was
    assert await lua.redis.hget("ql:j:jid", "attempt") == "2"
    assert "attempt" not in await lua.json("job.get", 5, "jid")


@pytest.mark.parametrize(
    ("command", "arguments"),
    [
        ("job.heartbeat", ("jid", "w1", "", 1)),
        ("job.complete", ("jid", "w1", "queue", "{}", "attempt", 1)),
        ("job.complete", ("jid", "w1", "queue", "{}", "keep_data", "1", "attempt", 1)),
        ("job.complete", ("jid", "w1", "queue", "{}", "attempt", 1, "keep_data", "1")),
        ("job.completeAndRequeue", ("jid", "w1", "queue", "{}", "next", "attempt", 1)),
        ("job.fail", ("jid", "w1", "group", "message", "", 1)),
        ("job.retry", ("jid", "queue", "w1", 0, "", "", 1)),
        ("job.progress", ("jid", "w1", 0.5, "", 1)),
        ("job.handBack", ("jid", "w1", "operator", 1)),
    ],
)
async def test_a_verb_of_an_earlier_attempt_is_refused(
    lua: Lua, command: str, arguments: tuple[Argument, ...]
) -> None:
    await popped_twice(lua)
    message = await refused(lua, STALE, command, 21, *arguments)
    error = error_for(command, message)
    assert isinstance(error, StaleAttemptError)
    assert isinstance(error, LockLostError)


@pytest.mark.parametrize(
    ("command", "arguments"),
    [
        ("job.heartbeat", ("jid", "w1", "", 1)),
        ("job.complete", ("jid", "w1", "queue", "{}", "attempt", 1)),
        ("job.completeAndRequeue", ("jid", "w1", "queue", "{}", "next", "attempt", 1)),
        ("job.fail", ("jid", "w1", "group", "message", "", 1)),
        ("job.retry", ("jid", "queue", "w1", 0, "", "", 1)),
        ("job.progress", ("jid", "w1", 0.5, "", 1)),
        ("job.handBack", ("jid", "w1", "operator", 1)),
        ("job.checkpoint", ("jid", "w1", "{}", 1)),
    ],
)
async def test_a_verb_of_an_earlier_attempt_is_stale_whatever_became_of_the_job(
    lua: Lua, command: str, arguments: tuple[Argument, ...]
) -> None:
    """A zombie attempt wakes up after the later one completed the job: its verb is
    refused as stale (the fence comes before the state), not as a job that is not running,
    which a worker could take for its own verb that already took effect."""
    await popped_twice(lua)
    assert await lua("job.complete", 21, "jid", "w1", "queue", "{}", "attempt", 2) == "complete"
    message = await refused(lua, STALE, command, 22, *arguments)
    assert isinstance(error_for(command, message), StaleAttemptError)


async def test_the_current_attempt_is_taken(lua: Lua) -> None:
    await popped_twice(lua)
    assert await lua("job.heartbeat", 21, "jid", "w1", "", 2) == 31
    await lua("job.progress", 22, "jid", "w1", 0.5, "half", 2)
    assert await lua("job.complete", 23, "jid", "w1", "queue", "{}", "attempt", 2) == "complete"


async def test_a_call_without_an_attempt_is_checked_by_worker_alone(lua: Lua) -> None:
    """Other clients send no attempt: the earlier attempt's worker name still passes."""
    await popped_twice(lua)
    assert await lua("job.heartbeat", 21, "jid", "w1") == 31
    assert await lua("job.fail", 22, "jid", "w1", "group", "message") == "jid"


async def test_a_bad_attempt_is_an_invalid_argument(lua: Lua) -> None:
    await rput(lua, 1, "jid")
    await own_pop(lua, 2)
    await refused(
        lua,
        'Heartbeat(): Arg "attempt" not a whole number: x',
        "job.heartbeat",
        3,
        "jid",
        "w1",
        "",
        "x",
    )


async def test_an_attempt_that_is_not_whole_is_refused_when_it_is_the_stored_text(
    lua: Lua,
) -> None:
    """The usual call gives the attempt as the job stores it, and is let through on the
    text alone; a stored text that is not a whole number is still refused."""
    await rput(lua, 1, "jid")
    await own_pop(lua, 2)
    await lua.redis.hset("ql:j:jid", "attempt", "1.5")
    for command, arguments in (
        ("job.heartbeat", ("jid", "w1", "", "1.5")),
        ("job.complete", ("jid", "w1", "queue", "{}", "attempt", "1.5")),
    ):
        name = command.removeprefix("job.").capitalize()
        message = f'{name}(): Arg "attempt" not a whole number: 1.5'
        await refused(lua, message, command, 3, *arguments)


async def test_a_retry_with_its_attempt_keeps_the_meaning_of_absent_group(lua: Lua) -> None:
    """'' stands for an absent group and message before the attempt: the job is retried
    with no failure recorded, as a retry without them."""
    await rput(lua, 1, "jid")
    await own_pop(lua, 2)
    assert await lua("job.retry", 3, "jid", "queue", "w1", 0, "", "", 1) == 4
    assert await lua.redis.hget("ql:j:jid", "failure") is None


async def test_a_hand_back_keeps_the_retries_and_says_why(lua: Lua) -> None:
    await rput(lua, 1, "jid", "retries", 5, "priority", 3)
    await own_pop(lua, 2)
    assert await lua("job.handBack", 3, "jid", "w1", "worker stopping", 1) == "waiting"
    job = await lua.json("job.get", 4, "jid")
    assert (job["state"], job["worker"], job["remaining"], job["retries"]) == (
        "waiting",
        "",
        5,
        5,
    )
    assert job["history"][-1] == {
        "what": "handed-back",
        "when": 3,
        "reason": "worker stopping",
        "worker": "w1",
    }
    assert await lua.redis.zscore("ql:q:queue-work", "jid") is not None
    assert await lua.redis.zscore("ql:q:queue-locks", "jid") is None
    assert await lua.redis.zcard("ql:w:w1:jobs") == 0
    (again,) = await own_pop(lua, 5, worker="w2")
    assert (again["attempt"], again["remaining"]) == (2, 5)


async def test_a_hand_back_is_only_the_holders(lua: Lua) -> None:
    await rput(lua, 1, "jid")
    await refused(lua, "is not currently running: waiting", "job.handBack", 2, "jid", "w1", "x")
    await own_pop(lua, 3)
    await refused(lua, "has been given to another worker: w1", "job.handBack", 4, "jid", "w2", "x")
    await refused(lua, "does not exist", "job.handBack", 4, "nope", "w1", "x")
    await refused(lua, 'Arg "reason" missing', "job.handBack", 4, "jid", "w1")


async def test_a_lost_lock_still_spends_a_retry(lua: Lua) -> None:
    await lua("config.set", 0, "grace-period", 0)
    await lua("config.set", 0, "heartbeat", 10)
    await rput(lua, 1, "jid", "retries", 5)
    await own_pop(lua, 2)
    (again,) = await own_pop(lua, 20)
    assert (again["attempt"], again["remaining"]) == (2, 4)


# -- worker.takeBack: the jobs a worker holds but never heard of, each a new attempt ---------


async def test_a_take_back_hands_the_held_jobs_out_again_with_a_new_attempt(lua: Lua) -> None:
    await lua("config.set", 0, "heartbeat", 10)
    for jid in ("a", "b"):
        await rput(lua, 1, jid)
    assert [job["attempt"] for job in await own_pop(lua, 2)] == [1, 1]
    await lua("job.checkpoint", 3, "a", "w1", '{"at": 1}', 1)
    (taken,) = json.loads(await lua("worker.takeBack", 5, "w1", "a"))
    # as an own pop presents a job: its new attempt, and the checkpoint to resume from
    assert (taken["jid"], taken["attempt"], taken["checkpoint"]) == ("a", 2, {"at": 1})
    assert (taken["worker"], taken["state"], taken["expires"]) == ("w1", "running", 15)
    assert await lua.redis.zscore("ql:q:queue-locks", "a") == 15
    assert await lua.redis.zscore("ql:w:w1:jobs", "a") == 15
    # one pop, then the take-back: an entry of its own, naming the worker
    assert [entry["what"] for entry in taken["history"]] == ["put", "popped", "taken-back"]
    assert taken["history"][-1] == {"what": "taken-back", "when": 5, "worker": "w1"}
    for get in ("get", "job.get"):  # another client reads it as any entry, in each vocabulary
        history = json.loads(await lua(get, 5, "a"))["history"]
        assert history[-1] == {"what": "taken-back", "when": 5, "worker": "w1"}
    # the earlier attempt is fenced out
    await refused(lua, STALE, "job.complete", 6, "a", "w1", "queue", "{}", "attempt", 1)
    # no jid named: every job the worker holds
    every = json.loads(await lua("worker.takeBack", 7, "w1"))
    assert sorted((job["jid"], job["attempt"]) for job in every) == [("a", 3), ("b", 2)]


async def test_a_take_back_leaves_jobs_not_running_under_the_worker_alone(lua: Lua) -> None:
    await lua("config.set", 0, "grace-period", 0)
    await lua("config.set", 0, "heartbeat", 10)
    for jid in ("mine", "theirs", "done"):
        await rput(lua, 1, jid)
    await own_pop(lua, 2, "w1")
    await lua("job.complete", 3, "done", "w1", "queue", "{}")
    # "theirs": w1's lock lapsed and w2 reclaimed it (w1 still lists it)
    await lua("job.timeout", 4, "theirs")
    await lua("rateLimit.pop", 5, "queue", "w2", 10, "data_apart")
    before = await lua.redis.hgetall("ql:j:theirs")
    taken = json.loads(await lua("worker.takeBack", 6, "w1", "mine", "theirs", "done", "mine"))
    assert [(job["jid"], job["attempt"]) for job in taken] == [("mine", 2)]
    assert await lua.redis.hgetall("ql:j:theirs") == before
    assert await lua("worker.takeBack", 7, "nobody") == "[]"
    await refused(lua, 'TakeBack(): Arg "worker" missing', "worker.takeBack", 8)
