"""Every server condition reaches the caller as aqless's typed error: a call the package
makes on redis-py directly (not through the script, or ``ScriptCaller.plain``) sits inside
``raising_aqless_errors`` or the Cluster's ``calls``, which map redis-py's errors; and no
module uses a redis-py pipeline, whose refusal text hides the server's condition code.

The connection layer (aqless/_connection, aqless/scripts) maps errors itself and is left
out. `WRAPPED_BY_CALLERS` lists the modules whose direct calls their callers wrap."""

from __future__ import annotations

import ast
from pathlib import Path

import aqless

PACKAGE = Path(aqless.__file__).parent
MAPPING_LAYER = ("_connection", "scripts")
WRAPPERS = frozenset({"raising_aqless_errors", "calls"})
#: a client's own lifecycle, not a call that meets a condition
LIFECYCLE = frozenset({"aclose", "close"})

#: module -> why its direct calls need no wrapper of their own
WRAPPED_BY_CALLERS: dict[str, str] = {
    "sharding/store.py": "the shard map: aqless/sharding/client.py calls it inside calls()",
    "sharding/pubsub.py": "a shard's SPUBLISH mark: aqless/sharding/client.py, inside calls()",
    "sharding/resize.py": "copy_config: aqless/sharding/client.py, inside calls()",
    "testing/plugin.py": "the pytest plugin's flush of a test's own database",
}


def on_redis(node: ast.expr) -> bool:
    """Whether `node` is ``redis``, or ``<anything>.redis``: redis-py's client."""
    return (isinstance(node, ast.Name) and node.id == "redis") or (
        isinstance(node, ast.Attribute) and node.attr == "redis"
    )


def redis_call(node: ast.expr) -> ast.Call | None:
    """The call of a redis-py client's method that `node` is, if it is one."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    method = node.func
    return node if on_redis(method.value) and method.attr not in LIFECYCLE else None


def pipeline(method: ast.expr) -> bool:
    return (
        isinstance(method, ast.Attribute) and method.attr == "pipeline" and on_redis(method.value)
    )


def wrapper(item: ast.withitem) -> bool:
    call = item.context_expr
    if not isinstance(call, ast.Call):
        return False
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    return name in WRAPPERS


def unwrapped_calls(source: str) -> list[str]:
    """``line: call`` of each redis-py call (awaited, or iterated with ``async for``) that
    no error-mapping ``with`` holds, and of each redis-py pipeline."""
    found: list[str] = []

    def visit(node: ast.AST, wrapped: bool) -> None:
        if isinstance(node, ast.With) and any(wrapper(item) for item in node.items):
            wrapped = True
        if isinstance(node, ast.Call) and pipeline(node.func):
            found.append(f"{node.lineno}: {ast.unparse(node)} (a redis-py pipeline)")
        target = None
        if isinstance(node, ast.Await):
            target = redis_call(node.value)
        elif isinstance(node, ast.AsyncFor) or (
            isinstance(node, ast.comprehension) and node.is_async
        ):
            target = redis_call(node.iter)
        if target is not None and not wrapped:
            found.append(f"{target.lineno}: {ast.unparse(target)}")
        for child in ast.iter_child_nodes(node):
            visit(child, wrapped)

    visit(ast.parse(source), False)
    return found


def test_every_direct_call_maps_its_errors() -> None:
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name.split("/")[0] in MAPPING_LAYER or name in WRAPPED_BY_CALLERS:
            continue
        if found := unwrapped_calls(path.read_text()):
            offenders[name] = found
    assert offenders == {}, "wrap these in raising_aqless_errors, or use ScriptCaller.plain"


def test_the_modules_wrapped_by_their_callers_still_call_redis_directly() -> None:
    for name in WRAPPED_BY_CALLERS:
        assert unwrapped_calls((PACKAGE / name).read_text()), f"{name}: drop it from the list"


def test_an_unwrapped_call_and_a_pipeline_are_found() -> None:
    source = """
async def read(client, redis):
    names = await client.redis.zrange("k", 0, -1)
    keys = [key async for key in client.redis.scan_iter(match="x*")]
    with raising_aqless_errors("read"):
        kept = await client.redis.hgetall("k")
        more = [key async for key in client.redis.scan_iter(match="y*")]
    with _cluster.calls("read"):
        await redis.get("k")
    await redis.set("k", 1)
    async with client.redis.pipeline(transaction=False) as pipe:
        pipe.hget("k", "f")
    await client.redis.aclose()
"""
    assert unwrapped_calls(source) == [
        "3: client.redis.zrange('k', 0, -1)",
        "4: client.redis.scan_iter(match='x*')",
        "10: redis.set('k', 1)",
        "11: client.redis.pipeline(transaction=False) (a redis-py pipeline)",
    ]
