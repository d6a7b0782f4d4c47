"""``client.flows``: put a tree of jobs in one atomic call, chain jobs, read a flow back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from aqless._connection.protocol import Clock, ScriptCaller, encode_json
from aqless.errors import FlowError
from aqless.flows.hooks import hooked
from aqless.flows.spec import COMMAND, FlowNode, flow_document
from aqless.flows.tree import FlowTree

__all__ = ["Flow", "Flows", "chained"]


@dataclass(frozen=True, slots=True)
class Flow:
    """A flow that was put.

    Attributes:
        root: the root's jid (the job that runs last; a chain's last step).
        jids: every job's jid: parents before their children (a chain's: in step order).
    """

    root: str
    jids: tuple[str, ...]


def chained(steps: Sequence[FlowNode]) -> FlowNode:
    """The chain as a tree: each step the only child of the step after it."""
    if not steps:
        raise FlowError(COMMAND, "a chain needs at least one step")
    if any(step.children for step in steps):
        raise FlowError(COMMAND, "a chain's steps have no children of their own")
    tree = steps[0]
    for step in steps[1:]:
        tree = step.with_children(tree)
    return tree


def preorder(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The jobs of a flow document, parents before their children."""
    return [document, *(node for child in document.get("children", ()) for node in preorder(child))]


class QueueGetter(Protocol):
    """A client's queues by name (``client.queues``)."""

    def __getitem__(self, name: str, /) -> Any: ...


class FlowClient(Protocol):
    """What flows need of a client of one server (``aqless.Client`` is one)."""

    @property
    def protocol(self) -> ScriptCaller: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def worker_name(self) -> str: ...
    @property
    def put_hooks(self) -> Sequence[Callable[..., Awaitable[list[str]]]]: ...
    @property
    def queues(self) -> QueueGetter: ...


class Flows:
    """A client's flows (no I/O to make): ``client.flows.put(parent, children=[...])``."""

    def __init__(self, client: FlowClient) -> None:
        self._client = client

    async def put(self, parent: FlowNode, children: Sequence[FlowNode] = ()) -> Flow:
        """Put `parent` and its children (each with children of its own, if any) in one
        atomic call: every job is put, or none is. The parent waits in ``depends`` until
        every child has completed (or failed under ``ignore``/``continue``), then runs and
        reads their results with ``await job.children_results()``. The client's
        `put_hooks` wrap the call, each given the jobs of one queue at a time (see
        aqless.flows.hooks), and may change every job as a put's.

        Raises:
            FlowCycleError, FlowTooLargeError, FlowError: the tree is refused (see
                `aqless.flows.flow_document`); nothing was written.
            InvalidValueError: a job's queue or option is outside its rule (aqless.rules),
                as at `put`; nothing was written.
            FlowJidTakenError: a jid of the tree is a job's already; nothing was written.
        """
        return await self.put_tree(parent.with_children(*children))

    async def chain(self, steps: Sequence[FlowNode]) -> Flow:
        """Put jobs that run one after the other, in one atomic call: each step is the
        parent of the step before it, so it runs once that step completed and reads its
        result with ``(await job.children_results()).only()``. A step that fails for good
        fails the steps after it (unless its ``on_failure`` says otherwise).
        `Flow.jids` are in step order; `Flow.root` is the last step."""
        flow = await self.put_tree(chained(steps))
        return Flow(flow.root, tuple(reversed(flow.jids)))

    async def put_tree(
        self, root: FlowNode, *, jid_for: Callable[[FlowNode], str] | None = None
    ) -> Flow:
        """`put` of a tree already whole; `jid_for` makes the jids of nodes without one."""
        client = self._client
        document = flow_document(
            root, worker=client.worker_name, clock=client.clock, jid_for=jid_for
        )
        if not client.put_hooks:
            return await self.send(document)

        async def put(tree: FlowNode) -> Flow:  # the tree as the hooks left its jobs
            return await self.send(
                flow_document(tree, worker=client.worker_name, clock=client.clock)
            )

        jids = [str(node["jid"]) for node in preorder(document)]
        flow: Flow = await hooked(root, jids, client.put_hooks, client.queues.__getitem__, put)
        return flow

    async def send(self, document: dict[str, Any]) -> Flow:
        """Send a checked flow document (`flow_document`)."""
        text = encode_json(document, "the flow")
        root = await self._client.protocol.text(COMMAND, self._client.worker_name, text)
        return Flow(root, tuple(str(node["jid"]) for node in preorder(document)))

    async def tree(self, jid: str) -> FlowTree | None:
        """The whole flow `jid` belongs to (from its root), each job with its state now;
        None when the job does not exist. A job of no flow is a tree of one."""
        reply = await self._client.protocol.json("flow.tree", jid)
        return None if reply is None else FlowTree.from_json(reply)
