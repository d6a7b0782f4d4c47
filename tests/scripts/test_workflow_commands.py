"""The workflow commands (workflow.lua): `job.sleep` and `job.awaitSignal` park a running
job as scheduled with its data, spending no retry, refused as a heartbeat is; `job.signal`
keeps signals in the job hash, wakes a job parked for it and takes an id once;
`job.awaitChildren` parks it in depends on its children (released, not failed, by a
failed one) or answers their outcomes. Every
refusal leaves the database as it was."""

from __future__ import annotations

import json

from aqless._connection.protocol import error_for
from aqless.errors import (
    InvalidArgumentError,
    JobNotFoundError,
    LockLostError,
    SignalRefusedError,
    StaleAttemptError,
)
from tests.conftest import Lua
from tests.scripts._queues_helpers import rput
from tests.scripts.expect import refused

DATA = '{"_workflow":{"events":["sleep:1"]}}'


async def popped(lua: Lua, now: float, worker: str = "w1") -> None:
    await lua("rateLimit.pop", now, "queue", worker, 10, "data_apart")


async def test_a_sleep_parks_the_job_scheduled_with_its_data_and_no_retry_spent(
    lua: Lua,
) -> None:
    await rput(lua, 1, "jid")
    await popped(lua, 2)
    remaining = await lua.redis.hget("ql:j:jid", "remaining")
    assert await lua("job.sleep", 3, "jid", "w1", 1, DATA, 100) == "scheduled"
    job = await lua.json("job.get", 4, "jid")
    assert (job["state"], job["worker"], job["data"]) == ("scheduled", "", DATA)
    assert job["remaining"] == int(remaining or 0)
    assert await lua.redis.zscore("ql:q:queue-scheduled", "jid") == 100
    assert await lua.redis.zscore("ql:q:queue-locks", "jid") is None
    assert await lua.redis.zscore("ql:w:w1:jobs", "jid") is None
    assert job["history"][-1]["what"] == "parked"


async def test_a_park_is_refused_as_a_heartbeat_is(lua: Lua) -> None:
    await rput(lua, 1, "jid")
    await popped(lua, 2)
    message = await refused(lua, "is stale", "job.sleep", 3, "jid", "w1", 7, DATA, 100)
    assert isinstance(error_for("job.sleep", message), StaleAttemptError)
    message = await refused(lua, "another worker", "job.sleep", 3, "jid", "w2", 1, DATA, 100)
    assert isinstance(error_for("job.sleep", message), LockLostError)
    message = await refused(lua, "not JSON", "job.sleep", 3, "jid", "w1", 1, "{", 100)
    assert isinstance(error_for("job.sleep", message), InvalidArgumentError)
    await refused(lua, "not a number", "job.sleep", 3, "jid", "w1", 1, DATA, "soon")
    await refused(
        lua, 'Arg "signal" missing', "job.awaitSignal", 3, "jid", "w1", 1, DATA, "s#1", "", 9
    )
    message = await refused(
        lua, "does not exist", "job.awaitSignal", 3, "nope", "w1", 1, DATA, "s#1", "s", 9
    )
    assert isinstance(error_for("job.awaitSignal", message), JobNotFoundError)


async def test_signals_are_kept_taken_once_and_wake_a_parked_job(lua: Lua) -> None:
    await rput(lua, 1, "jid")
    assert await lua("job.signal", 2, "jid", "go", '{"n":1}', "a") == "kept"
    assert await lua("job.signal", 2, "jid", "go", '{"n":1}', "a") == "duplicate"
    await popped(lua, 3)
    taken = await lua("job.awaitSignal", 4, "jid", "w1", 1, DATA, "go#1", "go", 999)
    assert json.loads(taken) == {"signal": "go", "id": "a", "at": 2, "payload": {"n": 1}}
    # the same wait asked again (a later run) gets the same signal back
    again = await lua("job.awaitSignal", 5, "jid", "w1", 1, DATA, "go#1", "go", 999)
    assert again == taken
    assert await lua("job.awaitSignal", 6, "jid", "w1", 1, DATA, "go#2", "go", 999) == "parked"
    assert await lua.redis.zscore("ql:q:queue-scheduled", "jid") == 999
    assert await lua("job.signal", 7, "jid", "other", "1", "b") == "kept"
    assert await lua.redis.hget("ql:j:jid", "state") == "scheduled"
    assert await lua("job.signal", 8, "jid", "go", "2", "c") == "woken"
    job = await lua.json("job.get", 9, "jid")
    assert job["state"] == "waiting"
    assert await lua.redis.zscore("ql:q:queue-work", "jid") is not None
    assert await lua.redis.zscore("ql:q:queue-scheduled", "jid") is None
    assert job["history"][-1]["what"] == "signalled"
    await popped(lua, 10)
    taken = await lua("job.awaitSignal", 11, "jid", "w1", 2, DATA, "go#2", "go", 999)
    assert json.loads(taken)["id"] == "c"


async def test_a_wait_past_its_time_times_out_for_good(lua: Lua) -> None:
    await rput(lua, 1, "jid")
    await popped(lua, 2)
    assert await lua("job.awaitSignal", 3, "jid", "w1", 1, DATA, "go#1", "go", 3) == "timeout"
    await lua("job.signal", 4, "jid", "go", "1", "late")
    assert await lua("job.awaitSignal", 5, "jid", "w1", 1, DATA, "go#1", "go", 3) == "timeout"


async def test_a_signal_is_refused_without_a_trace(lua: Lua) -> None:
    message = await refused(lua, "does not exist", "job.signal", 1, "nope", "go", "1", "a")
    assert isinstance(error_for("job.signal", message), JobNotFoundError)
    await rput(lua, 1, "jid")
    await refused(lua, "not JSON", "job.signal", 2, "jid", "go", "{", "a")
    await refused(lua, 'Arg "id" missing', "job.signal", 2, "jid", "go", "1", "")
    await refused(lua, 'Arg "signal" missing', "job.signal", 2, "jid", "", "1", "a")
    await popped(lua, 3)
    await lua("job.complete", 4, "jid", "w1", "queue", "{}")
    message = await refused(lua, "has ended", "job.signal", 5, "jid", "go", "1", "a")
    assert isinstance(error_for("job.signal", message), SignalRefusedError)


async def test_a_gather_parks_in_depends_until_its_children_are_done(lua: Lua) -> None:
    await rput(lua, 1, "wf")
    for kid in ("k1", "k2"):
        await rput(lua, 1, kid, queue="kids")
    await popped(lua, 2)
    kids = '["k1","k2"]'
    assert await lua("job.awaitChildren", 3, "wf", "w1", 1, DATA, kids) == "parked"
    job = await lua.json("job.get", 4, "wf")
    assert (job["state"], job["worker"], job["data"]) == ("depends", "", DATA)
    assert sorted(job["dependencies"]) == ["k1", "k2"]
    assert await lua.redis.zscore("ql:q:queue-depends", "wf") == 3
    assert await lua.redis.zscore("ql:q:queue-locks", "wf") is None
    assert await lua.redis.hget("ql:j:k1", "flow_policy") == "continue"
    await lua("rateLimit.pop", 5, "kids", "w2", 10, "data_apart")
    await lua("job.complete", 6, "k1", "w2", "kids", "{}", "result", "1")
    assert await lua.redis.hget("ql:j:wf", "state") == "depends"  # k2 still runs
    await lua("job.fail", 7, "k2", "w2", "kids-ValueError", "no", "{}")
    assert await lua.redis.hget("ql:j:wf", "state") == "waiting"  # released, not failed
    await popped(lua, 8)
    reply = json.loads(await lua("job.awaitChildren", 9, "wf", "w1", 2, DATA, kids))
    assert [(kid["jid"], kid["state"], kid.get("result")) for kid in reply] == [
        ("k1", "complete", "1"),
        ("k2", "failed", None),
    ]
    assert reply[1]["failure"]["group"] == "kids-ValueError"


async def test_a_gather_is_refused_without_a_trace(lua: Lua) -> None:
    await rput(lua, 1, "wf")
    await popped(lua, 2)
    for bad in ("", "[]", '{"a":1}', "[1]", '[""]'):
        message = await refused(
            lua, "not a JSON list of jids", "job.awaitChildren", 3, "wf", "w1", 1, DATA, bad
        )
        assert isinstance(error_for("job.awaitChildren", message), InvalidArgumentError)
    message = await refused(
        lua, "another worker", "job.awaitChildren", 3, "wf", "w2", 1, DATA, '["k"]'
    )
    assert isinstance(error_for("job.awaitChildren", message), LockLostError)


async def test_a_race_parks_until_its_first_child_ends_and_keeps_that_winner(lua: Lua) -> None:
    await rput(lua, 1, "wf")
    for kid in ("k1", "k2", "k3"):
        await rput(lua, 1, kid, queue="kids")
    await popped(lua, 2)
    kids = '["k1","k2","k3"]'
    assert await lua("job.awaitFirst", 3, "wf", "w1", 1, DATA, "1", kids, "") == "parked"
    assert await lua.redis.hget("ql:j:wf", "state") == "depends"
    await lua("rateLimit.pop", 4, "kids", "w2", 10, "data_apart")
    await lua("job.complete", 5, "k2", "w2", "kids", "{}", "result", '"two"')
    # released by the first to end: it waits for the others no more
    assert await lua.redis.hget("ql:j:wf", "state") == "waiting"
    assert await lua.redis.hget("ql:j:wf", "wf-won:1") == "k2"
    assert await lua.redis.exists("ql:j:wf-dependencies", "ql:j:k1-dependents") == 0
    await lua("job.complete", 6, "k1", "w2", "kids", "{}", "result", '"one"')  # later
    await popped(lua, 7)
    [won] = json.loads(await lua("job.awaitFirst", 8, "wf", "w1", 2, DATA, "1", kids, ""))
    assert (won["jid"], won["result"]) == ("k2", '"two"')  # not k1, first in the order
    assert await lua.redis.hget("ql:j:wf", "wf-first") is None
    assert await lua.redis.hget("ql:j:k3", "state") == "running"  # a loser, left running
    assert json.loads(await lua.redis.hget("ql:j:wf", "flow_children") or "") == ["k1", "k2", "k3"]


async def test_a_race_with_an_ended_child_is_decided_at_once_and_may_cancel_its_losers(
    lua: Lua,
) -> None:
    await rput(lua, 1, "wf")
    for kid in ("k1", "k2", "k3"):
        await rput(lua, 1, kid, queue="kids")
    await rput(lua, 1, "k4", queue="later")
    await rput(lua, 1, "other", "depends", '["k4"]', queue="later")
    await lua("rateLimit.pop", 2, "kids", "w2", 3, "data_apart")  # k1, k2, k3 run
    await lua("job.fail", 3, "k3", "w2", "kids-ValueError", "no", "{}")
    await lua("job.complete", 3, "k2", "w2", "kids", "{}", "result", "2")
    await popped(lua, 4)
    kids = '["k1","k2","k3","k4"]'
    [won] = json.loads(await lua("job.awaitFirst", 5, "wf", "w1", 1, DATA, "1", kids, "cancel"))
    # k2 and k3 had both ended: the first in the order given wins
    assert (won["jid"], won["state"]) == ("k2", "complete")
    # k1 ran and is cancelled (it left the flow first); k4 is a dependency of another job: left
    assert await lua.redis.exists("ql:j:k1") == 0
    assert await lua.redis.zscore("ql:w:w2:jobs", "k1") is None
    assert await lua.redis.hget("ql:j:k4", "state") == "waiting"
    assert await lua.redis.hget("ql:j:k3", "state") == "failed"  # ended: no loser to cancel
    assert json.loads(await lua.redis.hget("ql:j:wf", "flow_children") or "") == ["k2", "k3", "k4"]
    assert await lua.redis.hget("ql:j:wf", "state") == "running"


async def test_a_gather_after_a_race_waits_for_all_of_its_children(lua: Lua) -> None:
    """The race's mark goes once it is decided: a later gather's children each release only
    their own share of it."""
    await rput(lua, 1, "wf")
    for kid in ("k1", "k2", "k3"):
        await rput(lua, 1, kid, queue="kids")
    await popped(lua, 2)
    assert await lua("job.awaitFirst", 3, "wf", "w1", 1, DATA, "1", '["k1"]', "") == "parked"
    await lua("rateLimit.pop", 4, "kids", "w2", 10, "data_apart")
    await lua("job.complete", 5, "k1", "w2", "kids", "{}", "result", "1")
    await popped(lua, 6)
    [won] = json.loads(await lua("job.awaitFirst", 7, "wf", "w1", 2, DATA, "1", '["k1"]', ""))
    assert won["jid"] == "k1"
    assert await lua("job.awaitChildren", 8, "wf", "w1", 2, DATA, '["k2","k3"]') == "parked"
    await lua("job.complete", 9, "k2", "w2", "kids", "{}", "result", "2")
    assert await lua.redis.hget("ql:j:wf", "state") == "depends"  # k3 still runs
    await lua("job.complete", 10, "k3", "w2", "kids", "{}", "result", "3")
    assert await lua.redis.hget("ql:j:wf", "state") == "waiting"


async def test_a_race_is_refused_without_a_trace(lua: Lua) -> None:
    await rput(lua, 1, "wf")
    await popped(lua, 2)
    message = await refused(
        lua, "not a JSON list of jids", "job.awaitFirst", 3, "wf", "w1", 1, DATA, "1", "[]", ""
    )
    assert isinstance(error_for("job.awaitFirst", message), InvalidArgumentError)
    await refused(
        lua, 'Arg "key" missing', "job.awaitFirst", 3, "wf", "w1", 1, DATA, "", '["k"]', ""
    )
    message = await refused(
        lua, "another worker", "job.awaitFirst", 3, "wf", "w2", 1, DATA, "1", '["k"]', ""
    )
    assert isinstance(error_for("job.awaitFirst", message), LockLostError)
