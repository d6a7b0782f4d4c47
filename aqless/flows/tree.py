"""A flow as the server holds it now (`FlowTree`, from one ``flow.tree`` call), and its
drawing as text (``aqless flow JID``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from aqless.models import Failure

__all__ = ["FlowTree", "draw"]


@dataclass(frozen=True, slots=True)
class FlowTree:
    """A job of a flow and the jobs below it.

    Attributes:
        jid: the job.
        state: its state now; None when it no longer exists.
        klass: its class name (None when gone).
        queue: its queue (empty once complete).
        name: the name its parent reads it by (None for the root or none given).
        policy: its failure policy (None for the root).
        failure: why it failed, when it did.
        children: the jobs it waits for, in the order given.

    Examples:
        ```python
        tree = await client.flows.tree(flow.root)
        assert tree is not None and tree.jid == flow.root
        ```
    """

    jid: str
    state: str | None
    klass: str | None
    queue: str | None
    name: str | None
    policy: str | None
    failure: Failure | None
    children: tuple[FlowTree, ...]

    @classmethod
    def from_json(cls, node: Mapping[str, Any]) -> FlowTree:
        """Decode one node of the script's reply, its children with it (`Flows.tree` does it).

        Examples:
            ```python
            node = {"jid": "j-1", "state": "waiting", "children": [{"jid": "j-2"}]}
            tree = FlowTree.from_json(node)
            assert [node.jid for _, node in tree.walk()] == ["j-1", "j-2"]
            ```
        """

        def text(key: str) -> str | None:
            value = node.get(key)
            return value if isinstance(value, str) and value else None

        children = node.get("children")
        return cls(
            jid=str(node["jid"]),
            state=text("state"),
            klass=text("klass"),
            queue=text("queue"),
            name=text("name"),
            policy=text("policy"),
            failure=Failure.from_json(node.get("failure")),
            children=tuple(
                cls.from_json(child) for child in (children if isinstance(children, list) else [])
            ),
        )

    def walk(self) -> Iterator[tuple[int, FlowTree]]:
        """Every job of the tree with its depth, parents before their children.

        Examples:
            ```python
            for depth, node in tree.walk():
                print("  " * depth, node.jid, node.state)
            ```
        """
        yield 0, self
        for child in self.children:
            for depth, node in child.walk():
                yield depth + 1, node

    def find(self, jid: str) -> FlowTree | None:
        """The node of `jid` in the tree, or None.

        Examples:
            ```python
            node = tree.find(jid)
            ```
        """
        return next((node for _, node in self.walk() if node.jid == jid), None)


def label(node: FlowTree) -> str:
    """One line of the drawing: name, class, jid, state (and a failure's group)."""
    parts = [f"{node.name}: " if node.name else "", node.klass or "?", f" {node.jid}"]
    parts.append(f" [{node.state or 'gone'}]")
    if node.failure is not None:
        parts.append(f" {node.failure.group}")
    if node.policy and node.policy != "fail":
        parts.append(f" (on failure: {node.policy})")
    return "".join(parts)


def draw(tree: FlowTree) -> str:
    """The tree as text, one job a line, children indented below their parent (what
    ``aqless flow JID`` prints).

    Examples:
        ```python
        tree = await client.flows.tree(jid)
        if tree is not None:
            print(draw(tree))
        ```
    """
    lines = [label(tree)]

    def below(node: FlowTree, indent: str) -> None:
        for index, child in enumerate(node.children):
            last = index == len(node.children) - 1
            lines.append(f"{indent}{'└── ' if last else '├── '}{label(child)}")
            below(child, indent + ("    " if last else "│   "))

    below(tree, "")
    return "\n".join(lines)
