"""The assembled script's top-level locals stay well under Lua's limit of 200 per function:
every `local` of every module is a local of the one chunk the server compiles, and going
past the limit makes the script fail to load ("too many local variables")."""

from __future__ import annotations

import re

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from aqless.scripts import build, build_library

LUA_LOCALS_LIMIT = 200
MARGIN = 30

# long brackets, comments, strings, names, and the rest one character at a time
_TOKEN = re.compile(
    r"""--\[(?P<c>=*)\[.*?\](?P=c)\]|--[^\n]*|\[(?P<s>=*)\[.*?\](?P=s)\]"""
    r"""|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|(?P<name>[A-Za-z_]\w*)|\S""",
    re.DOTALL,
)
_OPENS = frozenset({"function", "do", "if", "repeat"})
_CLOSES = frozenset({"end", "until"})


def _tokens(source: str) -> list[str]:
    return [m.group(0) for m in _TOKEN.finditer(source) if not m.group(0).startswith("--")]


def top_level_locals(source: str) -> list[str]:
    """The names the chunk `source` declares `local` outside any function or block."""
    tokens = _tokens(source.split("\n", 1)[1] if source.startswith("#!") else source)
    names: list[str] = []
    depth = 0
    for index, word in enumerate(tokens):
        if word in _OPENS:
            depth += 1
        elif word in _CLOSES:
            depth -= 1
        elif word == "local" and depth == 0:
            rest = tokens[index + 1 :]
            if rest[0] == "function":
                names.append(rest[1])
                continue
            names.append(rest[0])
            position = 1
            while rest[position] == ",":
                names.append(rest[position + 1])
                position += 2
    assert depth == 0, "unbalanced blocks: the counter misread the source"
    return names


@pytest.mark.parametrize("source", [build, build_library], ids=["script", "library"])
def test_top_level_locals_keep_a_margin_under_the_limit(source: object) -> None:
    names = top_level_locals(source())  # type: ignore[operator]
    assert len(names) == len(set(names)), "a top-level local declared twice"
    assert len(names) <= LUA_LOCALS_LIMIT - MARGIN, (
        f"{len(names)} top-level locals: keep at most {LUA_LOCALS_LIMIT - MARGIN} "
        f"(Lua's limit is {LUA_LOCALS_LIMIT}); group helpers into tables"
    )


def _padded(count: int) -> str:
    """The script with `count` more top-level locals declared ahead of it."""
    return "".join(f"local pad_{i}\n" for i in range(count)) + build()


async def test_the_count_is_the_servers(redis: aioredis.Redis) -> None:
    """The server takes the script with as many more locals as the count leaves under the
    limit, and refuses it with one more: the counter reads the source as Lua does."""
    room = LUA_LOCALS_LIMIT - len(top_level_locals(build()))
    await redis.script_load(_padded(room))
    with pytest.raises(
        ResponseError, match=r"more than 200 local variables|too many local variables"
    ):
        await redis.script_load(_padded(room + 1))
