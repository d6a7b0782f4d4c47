"""ARCHITECTURE.md's rule, checked: a module imports only from its own layer or the layers
below it, never from one above (lazy imports inside functions included)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "aqless"

# bottom to top, as ARCHITECTURE.md draws them; a module belongs to the layer of the longest
# prefix that names it (``aqless.sharding`` names the package and its modules)
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("aqless._version", "aqless.errors", "aqless.rules", "aqless._concurrency")),
    ("connection", ("aqless._connection", "aqless.scripts", "aqless.codecs")),
    (
        "client",
        (
            "aqless.client", "aqless._client", "aqless.queue", "aqless.job", "aqless.models",
            "aqless.events", "aqless.patterns", "aqless.embedded", "aqless.puts", "aqless.typed",
            "aqless.schedules", "aqless.results", "aqless.limits", "aqless.progress",
            "aqless.sync", "aqless.sharding", "aqless.contracts", "aqless.scaling",
            "aqless.batches", "aqless.flows", "aqless.workflows", "aqless.spool",
        ),
    ),
    (
        "worker",
        ("aqless.worker", "aqless._worker", "aqless.handlers"),
    ),
    ("package", ("aqless",)),  # aqless/__init__.py: the public names, re-exported
    (
        "integrations",
        (
            "aqless.run", "aqless.testing", "aqless.metrics", "aqless.tracing", "aqless.sentry",
            "aqless.documents", "aqless.ops", "aqless.outbox",
        ),
    ),
    ("apps", ("aqless.cli", "aqless.web")),
)  # fmt: skip

#: How many modules may sit at the top of the package (the rest live in its folders).
MOST_TOP_LEVEL_MODULES = 25


def layer_of(module: str) -> int:
    best, found = -1, None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            named = module == prefix or module.startswith(prefix + ".")
            if named and len(prefix) > best:
                best, found = len(prefix), index
    if found is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS and ARCHITECTURE.md")
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """The aqless modules `path` imports (``from aqless import x`` names aqless.x)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {module_of(name) for name in names if name == "aqless" or name.startswith("aqless.")}


def module_of(name: str) -> str:
    """The module `name` is, or is defined in (``aqless.Client`` is the package's)."""
    while name != "aqless":
        path = PACKAGE.parent.joinpath(*name.split("."))
        if path.with_suffix(".py").exists() or (path / "__init__.py").exists():
            return name
        name = name.rsplit(".", 1)[0]
    return name


SOURCES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: module_name(path))
def test_no_module_imports_a_layer_above_its_own(path: Path) -> None:
    module = module_name(path)
    own = layer_of(module)
    above = {name: LAYERS[layer_of(name)][0] for name in imported(path) if layer_of(name) > own}
    assert not above, f"{module} ({LAYERS[own][0]}) imports from layers above it: {above}"


def test_every_layer_is_drawn_in_architecture_md() -> None:
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text()
    missing = [name for name, _ in LAYERS if f"**{name}**" not in text]
    assert not missing, f"ARCHITECTURE.md does not draw the layers {missing}"


def test_the_top_of_the_package_stays_small() -> None:
    modules = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(modules) <= MOST_TOP_LEVEL_MODULES, modules


def test_a_sharding_module_sits_in_the_layer_of_its_longest_prefix() -> None:
    assert LAYERS[layer_of("aqless.sharding.queue")][0] == "client"


def import_graph() -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports (typing-only and lazy
    imports included)."""
    return {
        module_name(path): {name for name in imported(path) if name != module_name(path)}
        for path in SOURCES
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of `graph`: its strongly connected groups of two or more modules
    (Tarjan's algorithm, iterative)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in order:
            continue
        work = [(root, iter(sorted(graph[root])))]
        order[root] = low[root] = len(order)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in graph:
                    continue
                if successor not in order:
                    order[successor] = low[successor] = len(order)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], order[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == order[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_the_package_has_no_import_circles() -> None:
    assert circles(import_graph()) == []


def test_a_circle_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert circles(graph) == [["a", "b", "c"]]


# -- no one outside aqless/sharding/ asks which client it holds --------------------------------


def asks_which_client(source: str) -> list[int]:
    """The lines of `source` that call ``isinstance(x, ShardedClient)`` (the class named
    alone, dotted, or in a tuple): the question `client.sharded` and `client.servers` answer
    for every deployment."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "isinstance"
            and len(node.args) == 2
        ):
            continue
        classes = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        for named in classes:
            name = named.attr if isinstance(named, ast.Attribute) else getattr(named, "id", "")
            if name == "ShardedClient":
                lines.append(node.lineno)
    return lines


def test_no_module_outside_sharding_asks_whether_its_client_is_sharded() -> None:
    asking = {
        module_name(path): lines
        for path in SOURCES
        if not module_name(path).startswith("aqless.sharding")
        and (lines := asks_which_client(path.read_text()))
    }
    assert not asking, f"use client.sharded or client.servers, not isinstance: {asking}"


@pytest.mark.parametrize(
    "source",
    [
        "isinstance(client, ShardedClient)",
        "if not isinstance(client, aqless.ShardedClient): pass",
        "x = isinstance(board.client, (Client, sharding.client.ShardedClient))",
    ],
)
def test_asking_which_client_is_found(source: str) -> None:
    assert asks_which_client(source) == [1]
    assert asks_which_client("isinstance(client, aqless.Client) and client.sharded") == []
