"""No two-way ties between the folders of the package: where a package or module directly
under aqless/ (a unit) imports from another, that other imports nothing from it. Every
import counts: lazy ones inside functions, those under TYPE_CHECKING, relative ones."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "aqless"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit_of(name: str) -> str | None:
    """The unit the module `name` belongs to (``aqless.sharding.map`` is ``aqless.sharding``),
    or None for what is no unit: the package itself, a name defined in it, another library."""
    parts = name.split(".")
    if parts[0] != "aqless" or len(parts) < 2:
        return None
    path = PACKAGE / parts[1]
    if path.with_suffix(".py").exists() or (path / "__init__.py").exists():
        return f"aqless.{parts[1]}"
    return None


def imported(source: str, package: str) -> set[str]:
    """Every module and name `source` (a module of `package`) imports, relative imports
    made absolute."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parents = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parents + ([node.module] if node.module else []))
            names |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return names


def ties() -> dict[tuple[str, str], set[str]]:
    """(unit, other unit): the modules of the first that import from the second."""
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        own = unit_of(module)
        if own is None:
            continue
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for name in imported(path.read_text(), package):
            other = unit_of(name)
            if other is not None and other != own:
                found[own, other].add(module)
    return found


def two_way(found: dict[tuple[str, str], set[str]]) -> dict[frozenset[str], str]:
    """Each pair of units tied both ways, with the modules that make it."""
    pairs: dict[frozenset[str], str] = {}
    for (one, other), modules in found.items():
        if one < other and (other, one) in found:
            back = found[other, one]
            pairs[frozenset((one, other))] = (
                f"{one} <-> {other}: {sorted(modules)} import {other}; {sorted(back)} import {one}"
            )
    return pairs


def test_no_two_way_ties_between_units() -> None:
    pairs = two_way(ties())
    assert not pairs, "two-way ties:\n" + "\n".join(sorted(pairs.values()))


def test_every_kind_of_import_is_read() -> None:
    source = """
from typing import TYPE_CHECKING
import aqless.errors
from aqless import rules
from .. import client
from ..sharding.map import bucket
if TYPE_CHECKING:
    from aqless.job import Job
def lazy() -> None:
    from aqless.web import create_app
"""
    units = {unit_of(name) for name in imported(source, "aqless.sync")} - {None}
    assert units == {
        "aqless.errors",
        "aqless.rules",
        "aqless.client",
        "aqless.sharding",
        "aqless.job",
        "aqless.web",
    }
    assert unit_of("aqless.Client") is None
    assert unit_of("redis.asyncio") is None
    assert module_name(PACKAGE / "_concurrency" / "__init__.py") == "aqless._concurrency"


def test_a_two_way_tie_is_named_with_its_modules() -> None:
    assert two_way({("a.x", "a.y"): {"a.x.m"}, ("a.y", "a.x"): {"a.y.n"}}) == {
        frozenset(("a.x", "a.y")): "a.x <-> a.y: ['a.x.m'] import a.y; ['a.y.n'] import a.x"
    }
