"""ARCHITECTURE.md's rule, checked: a module imports only from its own layer or the layers
below it, never from one above (lazy imports inside functions included)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "aqless"

# bottom to top, as ARCHITECTURE.md draws them; a module belongs to the first layer
# one of whose prefixes names it (a prefix ending in "." names a package's modules)
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("aqless._version", "aqless.errors", "aqless._backoff", "aqless._groups")),
    ("connection", ("aqless._connection.", "aqless._connection", "aqless.scripts")),
    (
        "client",
        (
            "aqless.client", "aqless.queue", "aqless.job", "aqless.job_data", "aqless.models",
            "aqless.events",
            "aqless.patterns", "aqless.embedded", "aqless.durability", "aqless.sync",
            "aqless.typed", "aqless.schedules", "aqless.results", "aqless.dedup",
            "aqless.ratelimits", "aqless.progress", "aqless.run_at", "aqless.shard_map",
            "aqless.sharded", "aqless.sharded_queue", "aqless.sharded_views",
            "aqless.sharded_events", "aqless.shard_changes", "aqless.shard_store",
            "aqless.shard_resize", "aqless.shard_pubsub", "aqless.sync_sharded",
            "aqless.sharded_limits", "aqless.sharded_patterns",
        ),
    ),
    (
        "worker",
        (
            "aqless.worker", "aqless._worker", "aqless.handlers", "aqless.middleware",
            "aqless.outcomes", "aqless.policies", "aqless.reservers", "aqless.observers",
            "aqless.sharded_worker",
        ),
    ),
    ("package", ("aqless",)),  # aqless/__init__.py: the public names, re-exported
    (
        "integrations",
        (
            "aqless.run", "aqless.supervisor", "aqless.testing", "aqless.metrics",
            "aqless.tracing", "aqless.sentry", "aqless.documents",
        ),
    ),
    ("apps", ("aqless.cli", "aqless.web")),
)  # fmt: skip


def layer_of(module: str) -> int:
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS and ARCHITECTURE.md")


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
