"""aqless depends only on redis-py's public names: no module imports ``redis._*`` (its
parsers, its internals), whose shape may change in any release."""

from __future__ import annotations

import ast
from pathlib import Path

import aqless

PACKAGE = Path(aqless.__file__).parent


def private_redis_imports(source: str) -> list[str]:
    """The private redis-py modules `source` imports (``redis._x``, ``redis.y._z``...)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found += [
            name
            for name in names
            if name.split(".")[0] in ("redis", "hiredis")
            and any(part.startswith("_") for part in name.split(".")[1:])
        ]
    return found


def test_no_private_redis_imports() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if (found := private_redis_imports(path.read_text()))
    }
    assert offenders == {}


def test_a_private_import_is_found() -> None:
    assert private_redis_imports("from redis._parsers.base import BaseParser") == [
        "redis._parsers.base",
        "redis._parsers.base.BaseParser",
    ]
    assert private_redis_imports("import redis.asyncio._x") == ["redis.asyncio._x"]
    assert private_redis_imports("from redis.asyncio import Redis") == []
