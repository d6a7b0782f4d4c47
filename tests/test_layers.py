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
    ("foundation", ("aqless._version", "aqless.errors", "aqless._concurrency")),
    ("connection", ("aqless._connection", "aqless.scripts")),
    (
        "client",
        (
            "aqless.client", "aqless.queue", "aqless.job", "aqless.models", "aqless.events",
            "aqless.patterns", "aqless.embedded", "aqless.puts", "aqless.typed",
            "aqless.schedules", "aqless.results", "aqless.limits", "aqless.progress",
            "aqless.sync", "aqless.sharding", "aqless.contracts",
        ),
    ),
    (
        "worker",
        ("aqless.worker", "aqless._worker", "aqless.handlers", "aqless.sharding.worker"),
    ),
    ("package", ("aqless",)),  # aqless/__init__.py: the public names, re-exported
    (
        "integrations",
        (
            "aqless.run", "aqless.testing", "aqless.metrics", "aqless.tracing", "aqless.sentry",
            "aqless.documents",
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
    assert LAYERS[layer_of("aqless.sharding.worker")][0] == "worker"
