"""flows.lua (aqless's own): flow.put writes a whole tree or nothing, and every path that
fails a job for good (fail, retry without retries left, a lock lost without retries left,
in both vocabularies) applies the child's policy to its parent once."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import Lua
from tests.scripts.expect import refused


def node(jid: str, *children: dict[str, Any], **fields: Any) -> dict[str, Any]:
    document: dict[str, Any] = {"jid": jid, "klass": "k", "queue": "q", "data": "{}", **fields}
    if children:
        document["children"] = list(children)
    return document


async def put_flow(lua: Lua, tree: dict[str, Any]) -> object:
    return await lua("flow.put", 1, "w", json.dumps(tree))


async def pop(lua: Lua, count: int = 10, now: float = 2) -> list[str]:
    return [job["jid"] for job in await lua.json("queue.pop", now, "q", "w", count)]


async def state(lua: Lua, jid: str) -> str | None:
    value = await lua.redis.hget(f"ql:j:{jid}", "state")
    return None if value is None else str(value)


async def test_a_tree_is_put_children_first_with_the_parent_in_depends(lua: Lua) -> None:
    tree = node("p", node("a", name="first"), node("b", node("c"), policy="ignore"))
    assert await put_flow(lua, tree) == "p"
    assert [await state(lua, jid) for jid in "pabc"] == ["depends", "waiting", "depends", "waiting"]
    assert await lua.redis.smembers("ql:j:p-dependencies") == {"a", "b"}
    assert await lua.redis.hget("ql:j:p", "flow_children") == '["a","b"]'
    fields = await lua.redis.hmget("ql:j:a", "flow_parent", "flow_name", "flow_policy")
    assert fields == ["p", "first", "fail"]
    assert await lua.redis.hget("ql:j:b", "flow_policy") == "ignore"
    # what any qless client reads: a valid job in depends
    job = await lua.json("job.get", 1, "p")
    assert job["state"] == "depends"
    assert sorted(job["dependencies"]) == ["a", "b"]


@pytest.mark.parametrize(
    ("tree", "text"),
    [
        (node("p", node("a", node("p"))), "job p would be its own descendant"),
        (node("p", node("a"), node("a")), "job a appears twice in the flow"),
        (node("p", node("a", klass="")), "job a has no class"),
        (node("p", node("a", queue="")), "job a has no queue"),
        (node("p", node("a", data="{")), "job a data is not JSON"),
        (node("p", node("a", policy="maybe")), "job a has an unknown failure policy: maybe"),
        (node("p", node("a", priority="high")), "job a priority is not a number"),
        (node("p", node("a", tags=[1])), "job a tags is not a list of names"),
        (node("p", node("a", depends="x")), "job a depends is not a list of names"),
        (node("p", node("a", group="")), "job a group is not a name"),
        (node("p", node("a", group=7)), "job a group is not a name"),
        (node("p", node("a", name="x"), node("b", name="x")), "two children of job p are named x"),
        (node("p", *[node(f"c{i}") for i in range(1001)]), "job p has more than 1000 children"),
    ],
)  # fmt: skip
async def test_a_bad_tree_writes_nothing(lua: Lua, tree: dict[str, Any], text: str) -> None:
    await refused(lua, "flow.put(): " + text, "flow.put", 1, "w", json.dumps(tree))
    assert await lua.redis.keys("*") == []


async def test_each_job_s_put_options_are_put_s_group_and_depends_included(lua: Lua) -> None:
    await lua("queue.put", 0, "w", "q", "outside", "k", "{}", 0)
    tree = node("p", node("a", group="7", priority=3, tags=["t"]), group="vip", depends=["outside"])
    await put_flow(lua, tree)
    assert await lua.redis.hmget("ql:j:a", "group", "priority", "tags") == ["7", "3", '["t"]']
    assert await lua.redis.hget("ql:j:p", "group") == "vip"
    assert await lua.redis.smembers("ql:j:p-dependencies") == {"a", "outside"}
    # the queue is grouped: the child waits in its group's index
    assert await lua.redis.zrange("ql:q:q-group-work:7", 0, -1) == ["a"]


async def test_a_tree_too_deep_writes_nothing(lua: Lua) -> None:
    tree = node("n33")
    for depth in range(32, -1, -1):
        tree = node(f"n{depth}", tree)
    await refused(
        lua, "flow.put(): the flow is deeper than 32 levels", "flow.put", 1, "w", json.dumps(tree)
    )
    assert await lua.redis.keys("*") == []


async def test_a_jid_taken_writes_nothing(lua: Lua) -> None:
    await lua("queue.put", 0, "w", "q", "taken", "k", "{}", 0)
    before = sorted(await lua.redis.keys("*"))
    await refused(
        lua,
        "flow.put(): job taken already exists",
        "flow.put",
        1,
        "w",
        json.dumps(node("p", node("a"), node("taken"))),
    )
    assert sorted(await lua.redis.keys("*")) == before


FAILS: dict[str, tuple[str, ...]] = {
    "fail": ("job.fail", "a", "w", "boom", "it broke"),
    "classic fail": ("fail", "a", "w", "boom", "it broke"),
    "retry exhausted": ("job.retry", "a", "q", "w", "0", "boom", "it broke"),
}


async def fail_a(lua: Lua, how: str) -> None:
    assert "a" in await pop(lua)
    await lua(FAILS[how][0], 3, *FAILS[how][1:])


@pytest.mark.parametrize("how", sorted(FAILS))
async def test_fail_fails_the_parent_and_its_parent_naming_the_child(lua: Lua, how: str) -> None:
    await put_flow(
        lua, node("top", node("p", node("a", name="resize", retries=0), node("b")), node("c"))
    )
    await fail_a(lua, how)
    assert await state(lua, "a") == "failed"
    assert await state(lua, "p") == "failed"
    assert await state(lua, "top") == "failed"
    failure = json.loads(str(await lua.redis.hget("ql:j:p", "failure")))
    assert failure["group"] == "flow-child-failed"
    assert failure["message"].startswith('child "resize" (a) failed: boom: it broke')
    assert (
        "child p failed: flow-child-failed"
        in json.loads(str(await lua.redis.hget("ql:j:top", "failure")))["message"]
    )
    assert await lua.redis.lrange("ql:f:flow-child-failed", 0, -1) == ["top", "p"]
    # the parents left their other children: completing them releases nothing
    assert await lua.redis.smembers("ql:j:b-dependents") == set()
    assert await lua.redis.exists("ql:j:p-dependencies", "ql:j:top-dependencies") == 0
    assert await lua.redis.zcard("ql:q:q-depends") == 0
    await lua("job.complete", 4, "b", "w", "q", "{}")
    await lua("job.complete", 4, "c", "w", "q", "{}")
    assert (await state(lua, "p"), await state(lua, "top")) == ("failed", "failed")


@pytest.mark.parametrize("policy", ["ignore", "continue"])
async def test_ignore_and_continue_release_the_parent_once_its_other_children_are_done(
    lua: Lua, policy: str
) -> None:
    await put_flow(lua, node("p", node("a", retries=0, policy=policy), node("b")))
    await fail_a(lua, "fail")
    assert await state(lua, "p") == "depends"  # b is still to come
    await lua("job.complete", 4, "b", "w", "q", "{}", "result", "7")
    assert await state(lua, "p") == "waiting"
    children = await lua.json("flow.children", 5, "p")
    assert [(c["jid"], c["state"], c["policy"]) for c in children] == [
        ("a", "failed", policy),
        ("b", "complete", "fail"),
    ]
    assert children[0]["failure"]["message"] == "it broke"
    assert children[1]["result"] == "7"


async def test_a_child_failing_again_changes_nothing(lua: Lua) -> None:
    await put_flow(lua, node("p", node("a", retries=0, policy="continue"), node("b")))
    await fail_a(lua, "fail")
    await lua("job.requeue", 4, "w", "q", "a", "k", "{}", 0)
    assert "a" in await pop(lua, now=5)
    await lua("job.fail", 6, "a", "w", "boom", "again")
    assert await state(lua, "p") == "depends"
    assert await lua.redis.smembers("ql:j:p-dependencies") == {"b"}


async def test_a_lock_lost_without_retries_left_applies_the_policy(lua: Lua) -> None:
    await lua("config.set", 0, "grace-period", 0)
    await put_flow(lua, node("p", node("a", retries=0)))
    assert await pop(lua) == ["a"]
    await pop(lua, now=1000)  # the lock expired: a has no retry left and fails
    assert await state(lua, "a") == "failed"
    assert await state(lua, "p") == "failed"


async def test_children_and_tree_read_the_flow(lua: Lua) -> None:
    await put_flow(lua, node("p", node("a", node("x"), name="one")))
    tree = await lua.json("flow.tree", 2, "x")
    assert tree["jid"] == "p"
    assert tree["children"][0]["name"] == "one"
    assert tree["children"][0]["children"][0]["jid"] == "x"
    assert await lua("flow.tree", 2, "nope") is None
    assert await lua("flow.children", 2, "nope") is None
    assert await lua.json("flow.children", 2, "x") == []


STALE = "attempt 1 is stale: the job is on attempt 2"


async def own_pop(lua: Lua, now: float) -> list[tuple[str, int]]:
    """aqless's worker's pop: each job's jid and attempt."""
    reply = await lua("rateLimit.pop", now, "q", "w", 10, "data_apart")
    return [(job["jid"], job["attempt"]) for job in json.loads(reply[0])["jobs"]]


async def what_happened(lua: Lua, jid: str, what: str) -> int:
    """How many entries of the job's history are `what`."""
    job = await lua.json("job.get", 30, jid)
    return sum(entry["what"] == what for entry in job["history"])


async def test_a_nested_parent_completes_once_and_releases_its_parent_once(lua: Lua) -> None:
    """The middle parent `p` loses its lock and is popped again by the same worker name:
    its first attempt's completion, early or late, and the second's sent twice change
    nothing; `top` is released once, by the second attempt's completion."""
    await lua("config.set", 0, "grace-period", 0)
    await lua("config.set", 0, "heartbeat", 10)
    await put_flow(lua, node("top", node("p", node("a"), retries=5)))
    assert await own_pop(lua, 2) == [("a", 1)]
    await lua("job.complete", 3, "a", "w", "q", "{}", "result", "1", "attempt", 1)
    assert await own_pop(lua, 4) == [("p", 1)]
    assert await own_pop(lua, 20) == [("p", 2)]  # the lock expired: the same worker again
    early = ("p", "w", "q", "{}", "result", '"first"', "attempt", 1)
    await refused(lua, STALE, "job.complete", 21, *early)
    assert await state(lua, "top") == "depends"
    await lua("job.complete", 22, "p", "w", "q", "{}", "result", '"second"', "attempt", 2)
    assert await state(lua, "top") == "waiting"
    assert await own_pop(lua, 23) == [("top", 1)]
    await refused(lua, STALE, "job.complete", 24, *early)  # late: p completed meanwhile
    twice = ("p", "w", "q", "{}", "result", '"second"', "attempt", 2)
    await refused(lua, "is not currently running: complete", "job.complete", 25, *twice)
    assert await state(lua, "top") == "running"
    assert await lua.redis.hget("ql:j:p", "result") == '"second"'
    assert await what_happened(lua, "p", "done") == 1
    assert await what_happened(lua, "top", "popped") == 1
    assert await lua.redis.zcard("ql:q:q-work") == 0


# -- removal: cancel, with BullMQ's semantics -------------------------------------------------


async def job_keys(lua: Lua) -> list[str]:
    return sorted(str(key) for key in await lua.redis.keys("ql:j:*"))


@pytest.mark.parametrize("command", ["job.cancel", "cancel"])
async def test_cancelling_a_parent_removes_every_job_below_it(lua: Lua, command: str) -> None:
    await put_flow(lua, node("p", node("a"), node("b", node("c"))))
    assert await lua(command, 2, "p") == ["p", "a", "b", "c"]
    assert await job_keys(lua) == []
    assert await lua.redis.zrange("ql:q:q-work", 0, -1) == []
    assert await lua.redis.zrange("ql:q:q-depends", 0, -1) == []


async def test_completed_and_failed_jobs_below_go_with_their_parent(lua: Lua) -> None:
    await put_flow(lua, node("p", node("a"), node("b", policy="continue")))
    assert sorted(await pop(lua)) == ["a", "b"]
    await lua("job.complete", 3, "a", "w", "q", "{}")
    await lua("job.fail", 3, "b", "w", "boom", "it broke")
    assert await state(lua, "p") == "waiting"
    await lua("job.cancel", 4, "p")
    assert await job_keys(lua) == []
    assert await lua.redis.zrange("ql:completed", 0, -1) == []
    assert await lua.redis.lrange("ql:f:boom", 0, -1) == []


@pytest.mark.parametrize("named", [("m",), ("m", "c1", "c2"), ("c1", "m")])
async def test_a_sub_flow_goes_with_its_children_and_its_parent_stops_waiting(
    lua: Lua, named: tuple[str, ...]
) -> None:
    await put_flow(lua, node("g", node("m", node("c1"), node("c2")), node("x")))
    removed = await lua("job.cancel", 2, *named)
    assert sorted(removed) == ["c1", "c2", "m"]
    assert await job_keys(lua) == ["ql:j:g", "ql:j:g-dependencies", "ql:j:g-history",
                                   "ql:j:x", "ql:j:x-dependents", "ql:j:x-history"]  # fmt: skip
    assert await lua.redis.hget("ql:j:g", "flow_children") == '["x"]'
    assert await state(lua, "g") == "depends"
    await lua("job.cancel", 3, "x")
    assert await state(lua, "g") == "waiting"  # it waited for nothing else
    assert await lua.redis.hget("ql:j:g", "flow_children") is None
    assert await lua.redis.zrange("ql:q:q-work", 0, -1) == ["g"]


async def test_nothing_is_removed_while_a_job_of_the_flow_runs(lua: Lua) -> None:
    await put_flow(lua, node("p", node("a"), node("b")))
    assert len(await pop(lua, count=1)) == 1
    running = "a" if await state(lua, "a") == "running" else "b"
    text = f"Cancel(): job {running} of a flow is running"
    for named in (("p",), ("p", "a", "b"), (running,)):
        await refused(lua, text, "job.cancel", 3, *named)


async def test_a_job_outside_the_flow_that_depends_on_one_of_it_still_refuses(lua: Lua) -> None:
    await put_flow(lua, node("p", node("a")))
    await lua("queue.put", 1, "w", "q", "x", "k", "{}", 0, "depends", '["a"]')
    await refused(
        lua,
        "Cancel(): a is a dependency of x but is not mentioned to be canceled",
        "job.cancel",
        2,
        "p",
    )
    assert sorted(await lua("job.cancel", 2, "p", "x")) == ["a", "p", "x"]
