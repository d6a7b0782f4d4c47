"""``client.flows``: put a tree of jobs in one atomic call, chain jobs, read a flow back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from aqless._connection.protocol import Clock, ScriptCaller, encode_json
from aqless.codecs import PayloadCodec
from aqless.errors import FlowError
from aqless.flows.hooks import hooked
from aqless.flows.spec import COMMAND, FlowNode, flow_document
from aqless.flows.tree import FlowTree

__all__ = ["Flow", "Flows", "chained"]


@dataclass(frozen=True, slots=True)
class Flow:
    """A flow that was put (what `Flows.put` and `Flows.chain` return).

    Attributes:
        root: the root's jid (the job that runs last; a chain's last step).
        jids: every job's jid: parents before their children (a chain's: in step order).

    Examples:
        ```python
        flow = await client.flows.put(report, children=[small, large])
        result = await client.jobs.result(flow.root, timeout=60)
        ```
    """

    root: str
    jids: tuple[str, ...]


def chained(steps: Sequence[FlowNode]) -> FlowNode:
    """The chain as a tree: each step the only child of the step after it (what
    `Flows.chain` puts).

    Raises:
        FlowError: no step, or a step with children of its own.

    Examples:
        ```python
        tree = chained([FlowNode("app.fetch", queue="etl"), FlowNode("app.load", queue="etl")])
        assert tree.klass == "app.load"
        ```
    """
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
    @property
    def codec(self) -> PayloadCodec | None: ...


class Flows:
    """A client's flows (``client.flows``; no I/O to make).

    Examples:
        ```python
        from aqless.flows import FlowNode

        flow = await client.flows.put(
            FlowNode("app.jobs.report", queue="reports"),
            children=[FlowNode("app.jobs.resize", {"size": 64}, queue="images", name="small")],
        )
        ```
    """

    def __init__(self, client: FlowClient) -> None:
        self._client = client

    async def put(self, parent: FlowNode, children: Sequence[FlowNode] = ()) -> Flow:
        """Put `parent` and its children (each with children of its own, if any) in one
        atomic call: every job is put, or none is. The parent waits in ``depends`` until
        every child has completed (or failed under ``ignore``/``continue``), then runs and
        reads their results with ``await job.children_results()``. The client's
        `put_hooks` wrap the call, each given the jobs of one queue at a time, and may
        change every job as a put's.

        Args:
            parent: the job that runs last, a `FlowNode`, maybe with children already.
            children: more children of `parent`, after its own (default: none).

        Returns:
            The `Flow`: its root's jid and every job's.

        Raises:
            FlowCycleError, FlowTooLargeError, FlowError: the tree is refused (see
                `aqless.flows.flow_document`); nothing was written.
            InvalidValueError: a job's queue or option is outside its rule (aqless.rules),
                as at `put`; nothing was written.
            FlowJidTakenError: a jid of the tree is a job's already; nothing was written.

        Examples:
            ```python
            flow = await client.flows.put(
                FlowNode("app.jobs.report", queue="reports"),
                children=[
                    FlowNode("app.jobs.resize", {"size": 64}, queue="images", name="small"),
                    FlowNode("app.jobs.resize", {"size": 512}, queue="images", name="large"),
                ],
            )
            ```
        """
        return await self.put_tree(parent.with_children(*children))

    async def chain(self, steps: Sequence[FlowNode]) -> Flow:
        """Put jobs that run one after the other, in one atomic call: each step is the
        parent of the step before it, so it runs once that step completed and reads its
        result with ``(await job.children_results()).only()``. A step that fails for good
        fails the steps after it (unless its ``on_failure`` says otherwise).
        `Flow.jids` are in step order; `Flow.root` is the last step.

        Raises:
            FlowError: no step, a step with children, or the chain refused as a tree is
                at `put` (FlowTooLargeError is one); nothing written.
            InvalidValueError: a step's queue or option is outside its rule; nothing written.
            FlowJidTakenError: a step's jid is a job's already; nothing written.

        Examples:
            ```python
            flow = await client.flows.chain([
                FlowNode("app.etl.extract", queue="etl"),
                FlowNode("app.etl.transform", queue="etl"),
                FlowNode("app.etl.load", queue="etl"),
            ])
            ```
        """
        flow = await self.put_tree(chained(steps))
        return Flow(flow.root, tuple(reversed(flow.jids)))

    async def put_tree(
        self, root: FlowNode, *, jid_for: Callable[[FlowNode], str] | None = None
    ) -> Flow:
        """`put` of a tree already whole.

        Args:
            root: the root, its children already attached.
            jid_for: makes the jid of each node without one (default: a random jid).

        Raises:
            FlowError: the tree is refused, as at `put` (FlowCycleError, FlowTooLargeError
                are FlowErrors); nothing written.
            InvalidValueError: a job's queue or option is outside its rule; nothing written.
            FlowJidTakenError: a jid of the tree is a job's already; nothing written.

        Examples:
            ```python
            flow = await client.flows.put_tree(root, jid_for=lambda node: f"{order_id}-{node.name}")
            ```
        """
        client = self._client
        document = flow_document(
            root, worker=client.worker_name, clock=client.clock, jid_for=jid_for,
            codec=client.codec,
        )  # fmt: skip
        if not client.put_hooks:
            return await self.send(document)

        async def put(tree: FlowNode) -> Flow:  # the tree as the hooks left its jobs
            return await self.send(
                flow_document(
                    tree, worker=client.worker_name, clock=client.clock, codec=client.codec
                )
            )

        jids = [str(node["jid"]) for node in preorder(document)]
        flow: Flow = await hooked(root, jids, client.put_hooks, client.queues.__getitem__, put)
        return flow

    async def send(self, document: dict[str, Any]) -> Flow:
        """Send a checked flow document (`aqless.flows.spec.flow_document`'s); `put` and
        `put_tree` make and send one.

        Raises:
            FlowJidTakenError: a jid of the document is a job's already; nothing written.
            FlowError: the script refused the document; nothing written.

        Examples:
            ```python
            flow = await client.flows.send(document)
            ```
        """
        text = encode_json(document, "the flow")
        root = await self._client.protocol.text(COMMAND, self._client.worker_name, text)
        return Flow(root, tuple(str(node["jid"]) for node in preorder(document)))

    async def tree(self, jid: str) -> FlowTree | None:
        """The whole flow `jid` belongs to (from its root), each job with its state now;
        None when the job does not exist. A job of no flow is a tree of one.

        Examples:
            ```python
            tree = await client.flows.tree(flow.root)
            if tree is not None:
                print(aqless.flows.draw(tree))
            ```
        """
        reply = await self._client.protocol.json("flow.tree", jid)
        return None if reply is None else FlowTree.from_json(reply)
