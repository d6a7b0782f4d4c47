"""Flows (aqless.flows, flows.lua): a tree of jobs put in one atomic call, parents running
after their children with their results, the per-child failure policies, chains, and the
input refused before anything is written. With real workers, on Valkey and Redis 7."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

import aqless
from aqless import Handlers, Job, JobState
from aqless.errors import (
    FlowCycleError,
    FlowError,
    FlowJidTakenError,
    FlowRunningError,
    FlowTooLargeError,
    InvalidArgumentError,
    JobFailedError,
)
from aqless.flows import MAX_CHILDREN, MAX_DEPTH, FlowNode, chained, draw
from aqless.puts import PUT_OPTIONS, PutRequest
from tests.support.worker import make_worker, running, until, until_state

pytest_plugins = ["tests.support.client_fixtures"]

SEEN: dict[str, Any] = {}


def square(job: Job) -> Any:
    return job.data["n"] ** 2


def breaks(job: Job) -> Any:
    raise ValueError(f"no answer for {job.data}")


async def total(job: Job) -> Any:
    results = await job.children_results()
    SEEN[job.jid] = results
    return sum(value or 0 for value in results.values().values())


async def plus_one(job: Job) -> Any:
    results = await job.children_results()
    before = results.only() if len(results) else job.data["start"]
    return before + 1


def handlers() -> Handlers:
    registry = Handlers()
    for name, function in (
        ("square", square),
        ("breaks", breaks),
        ("total", total),
        ("plus_one", plus_one),
    ):
        registry.add(function, name)
    return registry


def leaf(n: int, **options: Any) -> FlowNode:
    return FlowNode("square", {"n": n}, queue="q", **options)


async def state(client: aqless.Client, jid: str) -> str | None:
    job = await client.jobs.get(jid)
    return str(job.state) if isinstance(job, Job) else None


async def test_a_parent_waits_in_depends_and_runs_with_its_children_s_results(
    client: aqless.Client,
) -> None:
    parent = FlowNode("total", queue="q")
    flow = await client.flows.put(parent, children=[leaf(2, name="two"), leaf(3, name="three")])
    assert len(flow.jids) == 3
    assert flow.jids[0] == flow.root
    job = await client.jobs.get(flow.root)
    assert isinstance(job, Job)
    assert job.state == JobState.DEPENDS
    assert set(job.dependencies) == set(flow.jids[1:])
    async with running(make_worker(client, handlers=handlers())):
        assert await client.result(flow.root, timeout=10) == 13
    results = SEEN[flow.root]
    assert results["two"] == 4
    assert results[flow.jids[2]] == 9
    assert [child.name for child in results] == ["two", "three"]
    assert results.by_name["three"].jid == flow.jids[2]
    assert not results.failed
    assert not results.ignored


async def test_a_nested_tree_runs_from_the_leaves_up(client: aqless.Client) -> None:
    middle = FlowNode("total", queue="q", name="middle", children=[leaf(1), leaf(2)])
    flow = await client.flows.put(FlowNode("total", queue="q"), [middle, leaf(10, name="ten")])
    async with running(make_worker(client, handlers=handlers())):
        assert await client.result(flow.root, timeout=10) == 1 + 4 + 100
    tree = await client.flows.tree(flow.jids[3])  # from a grandchild: the whole flow
    assert tree is not None
    assert tree.jid == flow.root
    assert [node.state for _, node in tree.walk()] == ["complete"] * 5
    assert [depth for depth, _ in tree.walk()] == [0, 1, 2, 2, 1]
    drawn = draw(tree)
    assert "middle: total" in drawn
    assert "[complete]" in drawn


async def test_a_failing_child_fails_its_parent_and_the_parent_s_parent(
    client: aqless.Client,
) -> None:
    middle = FlowNode(
        "total", queue="q", name="middle", children=[FlowNode("breaks", queue="q", name="bad")]
    )
    flow = await client.flows.put(FlowNode("total", queue="q"), [middle, leaf(1)])
    async with running(make_worker(client, handlers=handlers())):
        with pytest.raises(JobFailedError) as failed:
            await client.result(flow.root, timeout=10)
    assert failed.value.group == "flow-child-failed"
    assert "middle" in failed.value.message
    middle_job = await client.jobs.get(flow.jids[1])
    assert isinstance(middle_job, Job)
    assert middle_job.failure is not None
    assert 'child "bad"' in middle_job.failure.message
    assert "ValueError" in middle_job.failure.message
    assert (await client.jobs.failure_groups())["flow-child-failed"] == 2


async def test_ignore_runs_the_parent_as_if_the_child_had_completed(
    client: aqless.Client,
) -> None:
    children = [
        leaf(3, name="three"),
        FlowNode("breaks", queue="q", name="bad", on_failure="ignore"),
    ]
    flow = await client.flows.put(FlowNode("total", queue="q"), children)
    async with running(make_worker(client, handlers=handlers())):
        assert await client.result(flow.root, timeout=10) == 9
    results = SEEN[flow.root]
    assert results["bad"] is None
    assert [child.name for child in results.ignored] == ["bad"]
    assert results.child("bad").failure is not None
    assert not results.failed


async def test_continue_runs_the_parent_and_says_which_child_failed_and_why(
    client: aqless.Client,
) -> None:
    children = [
        leaf(3, name="three"),
        FlowNode("breaks", queue="q", name="bad", on_failure="continue"),
    ]
    flow = await client.flows.put(FlowNode("total", queue="q"), children)
    async with running(make_worker(client, handlers=handlers())):
        assert await client.result(flow.root, timeout=10) == 9
    results = SEEN[flow.root]
    assert [child.name for child in results.failed] == ["bad"]
    failure = results.failed[0].failure
    assert failure is not None
    assert "no answer" in failure.message
    with pytest.raises(JobFailedError):
        results["bad"]
    assert results.values() == {"three": 9}


async def test_a_child_that_fails_again_after_a_requeue_does_nothing_twice(
    client: aqless.Client,
) -> None:
    children = [FlowNode("breaks", queue="q", name="bad", on_failure="continue"), leaf(1)]
    flow = await client.flows.put(FlowNode("total", queue="other"), children)
    async with running(make_worker(client, handlers=handlers())):
        await until(lambda: _is(client, flow.root, "waiting"), what="the parent waits to run")
        bad = await client.jobs.get(flow.jids[1])
        assert isinstance(bad, Job)
        await bad.requeue("q")
        await until(lambda: _is(client, flow.jids[1], "failed"), what="failed again")
    assert await state(client, flow.root) == "waiting"
    assert await client.queues["other"].length() == 1


async def _is(client: aqless.Client, jid: str, wanted: str) -> bool:
    return await state(client, jid) == wanted


async def test_a_chain_hands_each_step_the_result_of_the_one_before(
    client: aqless.Client,
) -> None:
    steps = [FlowNode("plus_one", {"start": 10}, queue="q")]
    steps += [FlowNode("plus_one", queue="q") for _ in range(4)]
    flow = await client.flows.chain(steps)
    assert flow.root == flow.jids[-1]
    assert len(flow.jids) == 5
    async with running(make_worker(client, handlers=handlers())):
        assert await client.result(flow.root, timeout=10) == 15
        for index, jid in enumerate(flow.jids):
            assert await client.result(jid, timeout=1) == 11 + index


async def test_a_job_that_is_in_no_flow_has_no_children_results(client: aqless.Client) -> None:
    jid = await client.queues["q"].put("square", {"n": 1})
    job = await client.jobs.get(jid)
    assert isinstance(job, Job)
    assert len(await job.children_results()) == 0
    tree = await client.flows.tree(jid)
    assert tree is not None
    assert tree.children == ()
    assert await client.flows.tree("nope") is None


# -- put options: a FlowNode is a PutRequest --------------------------------------------------


class Tenant:
    """A job class whose default options put each job in its tenant's fairness group."""

    @staticmethod
    def default_job_options(data: Any) -> dict[str, Any]:
        return {"group": data["tenant"], "priority": 7}


def test_a_flow_node_takes_every_option_of_a_put() -> None:
    node = FlowNode("square", queue="q", group="g", depends=["x"], at=10.0, dedup=None)
    assert isinstance(node, PutRequest)
    assert {field.name for field in dataclasses.fields(FlowNode)} >= PUT_OPTIONS
    assert node.with_children(leaf(1)).options() == node.options()


async def test_a_class_s_default_group_reaches_each_job_of_the_flow(
    client: aqless.Client,
) -> None:
    # a text that is no JSON ("vip") and one that is ("7") are both group names
    children = [FlowNode(Tenant, {"tenant": "7"}, queue="q")]
    flow = await client.flows.put(FlowNode(Tenant, {"tenant": "vip"}, queue="q"), children)
    for jid, group in zip(flow.jids, ["vip", "7"], strict=True):
        fields = await client.redis.hmget(f"ql:j:{jid}", "group", "priority")
        assert fields == [group, "7"]
    waiting = {record.name: record.waiting for record in await client.queues["q"].groups()}
    assert waiting.get("7") == 1


async def test_a_flow_node_s_group_depends_and_at_are_put_as_a_put_s(
    client: aqless.Client,
) -> None:
    outside = await client.queues["q"].put("square", {"n": 1})
    later = time.time() + 3600
    parent = FlowNode("total", queue="q", group="g", depends=[outside])
    flow = await client.flows.put(parent, [leaf(2, at=later, group="h")])
    job = await client.jobs.get(flow.root)
    assert isinstance(job, Job)
    assert set(job.dependencies) == {outside, flow.jids[1]}
    assert await client.redis.hget(f"ql:j:{flow.root}", "group") == "g"
    child = await client.jobs.get(flow.jids[1])
    assert isinstance(child, Job)
    assert child.state == JobState.SCHEDULED
    assert await client.redis.hget(f"ql:j:{child.jid}", "group") == "h"
    # the outside job completing alone does not release the parent: its child is pending
    async with running(make_worker(client, handlers=handlers())):
        await until_state(client, outside, JobState.COMPLETE)
    assert await state(client, flow.root) == "depends"


async def test_a_flow_node_s_options_are_refused_as_a_put_s_are(client: aqless.Client) -> None:
    with pytest.raises(InvalidArgumentError) as put_refusal:
        await client.queues["q"].put("square", {"n": 1}, priority="high")  # type: ignore[call-overload]
    with pytest.raises(InvalidArgumentError) as flow_refusal:
        await client.flows.put(leaf(1), [leaf(2, priority="high")])
    assert type(flow_refusal.value) is type(put_refusal.value)
    assert str(flow_refusal.value) == str(put_refusal.value)
    with pytest.raises(InvalidArgumentError):
        leaf(1, group="")
    with pytest.raises(FlowError, match="dedup"):
        await client.flows.put(leaf(1), [leaf(2, dedup="once")])
    assert await client.redis.keys("ql:j:*") == []


# -- refused before anything is written ------------------------------------------------------


async def nothing_written(client: aqless.Client) -> bool:
    return await client.redis.keys("ql:j:*") == []


async def test_a_jid_that_exists_already_is_refused_and_nothing_is_written(
    client: aqless.Client,
) -> None:
    await client.queues["q"].put("square", {"n": 1}, jid="taken")
    with pytest.raises(FlowJidTakenError, match="taken"):
        await client.flows.put(FlowNode("total", queue="q"), [leaf(1), leaf(2, jid="taken")])
    assert sorted(await client.redis.keys("ql:j:*")) == ["ql:j:taken", "ql:j:taken-history"]


async def test_a_job_that_would_be_its_own_descendant_is_refused(
    client: aqless.Client,
) -> None:
    inner = leaf(1, jid="a")
    with pytest.raises(FlowCycleError, match="twice"):
        await client.flows.put(FlowNode("total", queue="q", jid="a"), [inner])
    looped: list[FlowNode] = []
    node = FlowNode("total", queue="q", children=looped)
    looped.append(node)
    with pytest.raises(FlowCycleError, match="own descendant"):
        await client.flows.put(node)
    assert await nothing_written(client)


async def test_the_script_refuses_a_cycle_given_as_json(client: aqless.Client) -> None:
    tree: dict[str, Any] = {"jid": "a", "klass": "k", "queue": "q", "data": "{}", "children": [
        {"jid": "b", "klass": "k", "queue": "q", "data": "{}", "children": [
            {"jid": "a", "klass": "k", "queue": "q", "data": "{}"}]}]}  # fmt: skip
    with pytest.raises(FlowCycleError, match="own descendant"):
        await client.flows.send(tree)
    tree["children"][0]["children"][0]["jid"] = "b2"
    tree["children"].append({"jid": "b2", "klass": "k", "queue": "q", "data": "{}"})
    with pytest.raises(FlowCycleError, match="twice"):
        await client.flows.send(tree)
    tree["children"].pop()
    tree["klass"] = ""
    with pytest.raises(FlowError, match="has no class"):
        await client.flows.send(tree)
    assert await nothing_written(client)


async def test_a_tree_too_deep_or_too_wide_is_refused(client: aqless.Client) -> None:
    with pytest.raises(FlowTooLargeError, match="deeper"):
        await client.flows.chain([leaf(1) for _ in range(MAX_DEPTH + 2)])
    with pytest.raises(FlowTooLargeError, match="children"):
        await client.flows.put(leaf(0), [leaf(i) for i in range(MAX_CHILDREN + 1)])
    assert await nothing_written(client)


async def test_a_class_that_cannot_be_named_is_refused(client: aqless.Client) -> None:
    def local_handler(job: Job) -> None: ...

    with pytest.raises(FlowError, match="cannot be named"):
        await client.flows.put(leaf(1), [FlowNode(local_handler, queue="q")])
    with pytest.raises(FlowError, match="cannot be named"):
        await client.flows.put(FlowNode(lambda job: None, queue="q"))
    with pytest.raises(FlowError, match="named 'x'"):
        await client.flows.put(leaf(1), [leaf(2, name="x"), leaf(3, name="x")])
    with pytest.raises(FlowError, match="policy"):
        await client.flows.put(leaf(1), [leaf(2, on_failure="explode")])  # type: ignore[arg-type,unused-ignore]
    with pytest.raises(FlowError, match="no children"):
        chained([leaf(1), leaf(2, children=[leaf(3)])])
    assert await nothing_written(client)


# -- removal: cancel, with BullMQ's semantics -------------------------------------------------


async def test_cancelling_a_flow_s_root_removes_the_whole_flow(client: aqless.Client) -> None:
    middle = FlowNode("total", queue="q", children=[leaf(1)])
    flow = await client.flows.put(FlowNode("total", queue="q"), [leaf(2), middle])
    root = await client.jobs.get(flow.root)
    assert isinstance(root, Job)
    await root.cancel()
    assert [await state(client, jid) for jid in flow.jids] == [None] * 4
    assert (await client.queues["q"].counts()).waiting == 0


async def test_a_sub_flow_is_removed_with_its_children_and_its_parent_runs_without_it(
    client: aqless.Client,
) -> None:
    middle = FlowNode("total", queue="q", name="middle", children=[leaf(1), leaf(2)])
    flow = await client.flows.put(FlowNode("total", queue="q"), [middle, leaf(3, name="three")])
    await client.jobs.cancel(*flow.jids[1:4])  # the sub-flow and its children
    assert [await state(client, jid) for jid in flow.jids] == [
        "depends", None, None, None, "waiting"
    ]  # fmt: skip
    async with running(make_worker(client, handlers=handlers())):
        assert await client.result(flow.root, timeout=10) == 9
    assert [child.name for child in SEEN[flow.root]] == ["three"]


async def test_a_flow_is_not_removed_while_a_job_of_it_runs(client: aqless.Client) -> None:
    flow = await client.flows.put(FlowNode("total", queue="q"), [leaf(1), leaf(2)])
    popped = await client.queues["q"].pop()
    assert popped is not None
    with pytest.raises(FlowRunningError, match=f"job {popped.jid} of a flow is running"):
        await client.jobs.cancel(*flow.jids)
    with pytest.raises(FlowRunningError):
        await popped.cancel()
    assert [await state(client, jid) for jid in flow.jids] == [
        "depends", *("running" if jid == popped.jid else "waiting" for jid in flow.jids[1:])
    ]  # fmt: skip
    await popped.complete()
    await client.jobs.cancel(flow.root)
    assert [await state(client, jid) for jid in flow.jids] == [None] * 3
