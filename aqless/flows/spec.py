"""What a flow asks for: `FlowNode` (a job of the tree: a `PutRequest` with a queue, a
name and a failure policy), the bounds a flow keeps within, and the JSON document the script's
``flow.put`` takes.

Everything here is checked before anything is sent; the script checks again (the jids that
already exist can only be known there) and writes nothing unless the whole tree passes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from typing import Any, Literal, TypeAlias

from aqless._connection.protocol import Clock
from aqless.codecs import PayloadCodec
from aqless.errors import FlowCycleError, FlowError, FlowTooLargeError
from aqless.puts import (
    JobClass,
    PutRequest,
    checked_queue,
    class_name,
    new_jid,
    option_fields,
    prepare_put,
)

__all__ = [
    "MAX_CHILDREN",
    "MAX_DEPTH",
    "MAX_JOBS",
    "FailurePolicy",
    "FlowNode",
    "flow_document",
]

MAX_DEPTH = 32
"""Levels below a flow's root (a chain of n steps is n - 1 levels deep)."""
MAX_CHILDREN = 1000
"""Children of one job of a flow."""
MAX_JOBS = 10000
"""Jobs in one flow."""

FailurePolicy: TypeAlias = Literal["fail", "ignore", "continue"]
"""What a child's failure for good does to its parent:

- ``fail`` (the default): the parent fails too, in the group ``flow-child-failed``, with a
  message naming the child and its failure; its own parent hears of it in turn;
- ``ignore``: the parent runs as if the child had completed without a result (the child
  stays failed; `ChildrenResults.ignored` lists it);
- ``continue``: the parent runs; `ChildrenResults.failed` lists the child and why, and
  reading its value raises `JobFailedError`.

Either way a parent still waits for its other children."""

POLICIES: frozenset[str] = frozenset(("fail", "ignore", "continue"))
COMMAND = "flow.put"


@dataclass(frozen=True, slots=True)
class FlowNode(PutRequest):
    """A job of a flow: a `PutRequest` (its class, data and every option of `PutOptions`:
    jid, priority, delay or at, tags, retries, depends, throttles, rate_limits, group, with
    the class's ``default_job_options(data)`` for those not given, checked as every put's)
    with a queue, plus

    Attributes:
        name: what its parent reads its result by (``children_results()["resize"]``);
            unique among its siblings. None: by jid only.
        on_failure: what its failure for good does to its parent (`FailurePolicy`).
        children: the jobs it waits for; each may have children of its own.

    ``depends`` adds jobs outside the flow that it waits for besides its children. A flow
    only makes new jobs, so ``dedup`` is refused (FlowError).

    Raises:
        InvalidValueError: an option outside its rule, as a put's (checked when the flow
            is put).

    Examples:
        ```python
        report = FlowNode("app.jobs.report", queue="reports", priority=5)
        small = FlowNode("app.jobs.resize", {"size": 64}, queue="images", name="small",
                         on_failure="continue")
        flow = await client.flows.put(report, children=[small])
        ```
    """

    _: KW_ONLY
    queue: str
    name: str | None = None
    on_failure: FailurePolicy = "fail"
    children: Sequence[FlowNode] = field(default=())

    def with_children(self, *children: FlowNode) -> FlowNode:
        """This node with `children` after its own (a copy: nodes are frozen).

        Examples:
            ```python
            tree = report.with_children(small, large)
            ```
        """
        return replace(self, children=(*self.children, *children))


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def nameable_class(klass: JobClass) -> str:
    """The class name a worker imports the job's handler by; FlowError for a class or
    function that no import reaches (a lambda, a local function) or an empty name."""
    if isinstance(klass, str):
        if not klass:
            raise FlowError(COMMAND, "a job class name must not be empty")
        return klass
    name = class_name(klass)
    if "<lambda>" in name or "<locals>" in name:
        raise FlowError(COMMAND, f"the class {name} cannot be named: no worker could import it")
    return name


@dataclass
class _Walk:
    """What a flow's check has met so far."""

    jids: set[str] = field(default_factory=set)
    above: set[int] = field(default_factory=set)  # the ids of the nodes being walked
    count: int = 0
    codec: PayloadCodec | None = None  # what each job's data is stored through


def flow_document(
    root: FlowNode,
    *,
    worker: str,
    clock: Clock,
    jid_for: Callable[[FlowNode], str] | None = None,
    codec: PayloadCodec | None = None,
) -> dict[str, Any]:
    """The tree as ``flow.put`` takes it, every job given a jid (`jid_for(node)` makes one
    for a node without, a random one by default), its data stored through `codec` as a
    put's (aqless.codecs), after checking it all.

    Raises:
        FlowCycleError: a jid (or a node) that appears twice, or is its own descendant.
        FlowTooLargeError: deeper than MAX_DEPTH, a job with more than MAX_CHILDREN
            children, more than MAX_JOBS jobs.
        FlowError: a class that cannot be named, an empty queue name, an unknown policy, a
            name used twice among siblings, a dedup.
        InvalidArgumentError (or TypeError...): an option the same put refuses, as
            `prepare_put` refuses it (with a note naming the job's class).
    """
    make = jid_for or (lambda node: new_jid())
    return _node(root, 0, _Walk(codec=codec), worker, clock, make)


def _node(
    node: FlowNode,
    depth: int,
    walk: _Walk,
    worker: str,
    clock: Clock,
    make: Callable[[FlowNode], str],
) -> dict[str, Any]:
    if id(node) in walk.above:
        raise FlowCycleError(COMMAND, f"a job of class {node.klass!r} is its own descendant")
    walk.count += 1
    if walk.count > MAX_JOBS:
        raise FlowTooLargeError(COMMAND, f"the flow has more than {MAX_JOBS} jobs")
    if depth > MAX_DEPTH:
        raise FlowTooLargeError(COMMAND, f"the flow is deeper than {MAX_DEPTH} levels")
    if len(node.children) > MAX_CHILDREN:
        raise FlowTooLargeError(COMMAND, f"a job has more than {MAX_CHILDREN} children")
    checked_queue(node.queue, COMMAND)  # every job of a flow needs a queue
    if node.on_failure not in POLICIES:
        raise FlowError(COMMAND, f"unknown failure policy {node.on_failure!r}")
    klass = nameable_class(node.klass)
    if node.dedup is not None:
        raise FlowError(COMMAND, "a flow only makes new jobs, so its jobs take no dedup")
    try:
        prepared = prepare_put(
            node.klass, node.data, node.options(), worker=worker, queue=node.queue,
            clock=clock, make_jid=lambda: make(node), codec=walk.codec,
        )  # fmt: skip
    except Exception as error:  # refused as the same put outside a flow is
        error.add_note(f"(a job of class {klass} in the flow)")
        raise
    jid = prepared.jid
    if jid in walk.jids:
        raise FlowCycleError(COMMAND, f"job {jid} appears twice in the flow")
    walk.jids.add(jid)
    document: dict[str, Any] = {
        "jid": jid,
        "klass": klass,
        "queue": node.queue,
        "data": _text(prepared.arguments[4]),
        "delay": prepared.arguments[5],
        "policy": node.on_failure,
        **option_fields(prepared.arguments[6:]),
    }
    if node.name is not None:
        document["name"] = node.name
    if node.children:
        walk.above.add(id(node))
        names: set[str] = set()
        children = []
        for child in node.children:
            if child.name is not None:
                if child.name in names:
                    raise FlowError(COMMAND, f"two children of job {jid} are named {child.name!r}")
                names.add(child.name)
            children.append(_node(child, depth + 1, walk, worker, clock, make))
        walk.above.discard(id(node))
        document["children"] = children
    return document
