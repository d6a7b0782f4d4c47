"""A flow's put through the client's put hooks (``client.put_hooks``): each job of the flow
goes through them as a put into its queue does, and the flow is still one atomic call.

The flow's jobs are grouped by queue, in the order the flow lists them (parents before their
children); each group goes through the hooks, given its queue, inside the group before it.
The innermost ``send`` puts the whole flow, each job as the hooks left it: every hook wraps
the one write, sees its refusal, and is answered its jobs' jids, as around a put.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import fields, replace
from typing import Any

from aqless.errors import FlowError
from aqless.flows.spec import COMMAND, FlowNode
from aqless.puts import PutRequest, inside_hooks

__all__ = ["hooked"]

#: The fields a hook may change of a flow's job: those of a put.
_PUT_FIELDS = tuple(field.name for field in fields(PutRequest))


async def hooked(
    root: FlowNode,
    jids: Sequence[str],
    hooks: Sequence[Callable[..., Awaitable[list[str]]]],
    queue_of: Callable[[str], Any],
    put: Callable[[FlowNode], Awaitable[Any]],
) -> Any:
    """`put(tree)` inside `hooks`, `tree` being `root` with each job as the hooks sent it.

    Args:
        root: the flow, checked already (no job is its own descendant).
        jids: every job's jid, in `preorder` (the flow's document's).
        hooks: the client's put hooks, each called as for a put into a job's queue.
        queue_of: the queue a hook is given, by name.
        put: puts the tree, returns what `hooked` returns.
    """
    nodes = _preorder(root)
    sent: list[PutRequest] = [
        replace(node, jid=jid, children=()) for node, jid in zip(nodes, jids, strict=True)
    ]
    groups: dict[str, list[int]] = {}
    for index, node in enumerate(nodes):
        groups.setdefault(node.queue, []).append(index)
    order = list(groups.items())
    done: list[Any] = []

    async def through(step: int) -> None:
        if step == len(order):
            done.append(await put(_rebuilt(root, iter(sent))))
            return
        queue, indexes = order[step]

        async def send(requests: list[PutRequest]) -> list[str]:
            if len(requests) != len(indexes):
                raise FlowError(COMMAND, "a put hook must send every job of a flow it is given")
            for index, request in zip(indexes, requests, strict=True):
                sent[index] = request
            await through(step + 1)
            return [str(sent[index].jid) for index in indexes]

        await inside_hooks(hooks, queue_of(queue), send)([sent[index] for index in indexes])

    await through(0)
    return done[0]


def _preorder(node: FlowNode) -> list[FlowNode]:
    return [node, *(each for child in node.children for each in _preorder(child))]


def _rebuilt(node: FlowNode, sent: Iterator[PutRequest]) -> FlowNode:
    """`node`'s tree, each job's put fields taken from `sent` (in preorder)."""
    request = next(sent)
    changed = {name: getattr(request, name) for name in _PUT_FIELDS}
    children = tuple(_rebuilt(child, sent) for child in node.children)
    return replace(node, **changed, children=children)
