"""A sharded deployment's flows: a flow lives on one shard, the one its root's jid (or its
root's pinned queue) places it on; every job of it gets a jid that a lookup finds there.
A job of the flow that names something another shard owns (its given jid, a pinned queue,
a throttle, a rate limit, a fairness group, a job it depends on) is a FlowPlacementError,
before anything is written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from aqless._concurrency.routing import PutTargets, ShardedPart, ShardMapView, by_jid, routed
from aqless.errors import FlowPlacementError
from aqless.flows.client import Flow, Flows, chained, preorder
from aqless.flows.hooks import hooked
from aqless.flows.spec import COMMAND, FlowNode, flow_document

__all__ = ["ShardedFlows"]


class ShardedFlows(ShardedPart):
    """``client.flows`` of a sharded deployment (no I/O to make)."""

    async def put(self, parent: FlowNode, children: Sequence[FlowNode] = ()) -> Flow:
        """`aqless.flows.Flows.put` on the shard the root's jid places the flow on.

        Raises:
            FlowPlacementError: a job of the flow names what another shard owns.
        """
        return await self._put(parent.with_children(*children))

    async def chain(self, steps: Sequence[FlowNode]) -> Flow:
        """`aqless.flows.Flows.chain` on the shard the last step's jid places it on."""
        flow = await self._put(chained(steps))
        return Flow(flow.root, tuple(reversed(flow.jids)))

    def _part(self, client: Any) -> Flows:
        return cast(Flows, client.flows)

    tree = routed(Flows.tree, by_jid())

    async def _put(self, root: FlowNode) -> Flow:
        shard_map = await self._client.current_map()
        pin = shard_map.pin_of(root.queue) if root.queue else None
        root_jid = root.jid or self._client.new_jid(pin)
        shard = pin if pin is not None else shard_map.candidates(root_jid)[0]

        def jid_for(node: FlowNode) -> str:
            return root_jid if node is root else self._client.new_jid(shard)

        target = self._client.shard(shard)
        document = flow_document(
            root, worker=target.worker_name, clock=target.clock, jid_for=jid_for,
            codec=target.codec,
        )  # fmt: skip

        async def put(document: dict[str, Any]) -> Flow:
            outside = {jid for node in preorder(document) for jid in node.get("depends") or ()}
            shards = {jid: await self._client.shard_of_jid(jid) for jid in sorted(outside)}
            _check_placement(shard_map, shard, document, shards)
            return await self._part(target).send(document)

        hooks = self._client.put_hooks
        if not hooks:
            return await put(document)

        async def put_tree(tree: FlowNode) -> Flow:  # the tree as the hooks left its jobs
            return await put(
                flow_document(
                    tree, worker=target.worker_name, clock=target.clock, codec=target.codec
                )
            )

        jids = [str(node["jid"]) for node in preorder(document)]
        flow: Flow = await hooked(root, jids, hooks, self._client.queues.__getitem__, put_tree)
        return flow


def _check_placement(
    shard_map: ShardMapView, shard: int, node: dict[str, Any], shards: dict[str, int]
) -> None:
    """FlowPlacementError unless everything each job of the flow names (`shards`: the shard
    of each job outside the flow that one depends on) is on `shard`."""
    jid = str(node["jid"])
    targets = PutTargets(
        queue=str(node["queue"]),
        dependencies={dependency: shards[dependency] for dependency in node.get("depends") or ()},
        throttles=node.get("throttles") or (),
        rate_limits=node.get("rate_limits") or (),
        group=node.get("group"),
    )
    named = shard_map.named(targets)
    candidates = shard_map.candidates(jid)
    if shard not in candidates:
        named[f"jid {jid!r}"] = candidates[0]
    elsewhere = {what: where for what, where in named.items() if where != shard}
    if elsewhere:
        detail = ", ".join(f"{what} on shard {where}" for what, where in elsewhere.items())
        raise FlowPlacementError(
            COMMAND,
            f"a flow lives on one shard (shard {shard}, where its root's jid places it), "
            f"but job {jid} names {detail}; nothing was put",
        )
    for child in node.get("children", ()):
        _check_placement(shard_map, shard, child, shards)
