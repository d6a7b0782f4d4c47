"""Registers the protocol on a server and calls it, reloading it whenever the server lost it.

On Redis 7+ and Valkey the protocol is loaded as a function library (FUNCTION LOAD) and
called with FCALL: its functions are defined once, not on every call. Elsewhere, or when
asked to, it is the script, called with EVALSHA. Either way a server that forgot it (a
restart, SCRIPT FLUSH, FUNCTION FLUSH) gets it again, transparently.
"""

from __future__ import annotations

from collections.abc import Sequence

import redis.asyncio as aioredis
from redis.exceptions import NoScriptError, ResponseError

from aqless.scripts import build, build_library, function_name, sha1

Argument = str | bytes | int | float
Call = tuple[str, Sequence[Argument]]  # a command and its arguments (after `now`)
Reply = object


def _missing_function(error: ResponseError) -> bool:
    return str(error).startswith("Function not found")


def _no_functions(error: ResponseError) -> bool:
    # servers before Redis 7 know neither FCALL nor FUNCTION
    return str(error).lower().startswith("unknown command")


class Script:
    """The qless protocol bound to one ``redis.asyncio.Redis`` client.

    Args:
        redis: the client to call through.
        prefix: a key prefix ending in ':' to use instead of ``ql:``.
        functions: call the function library with FCALL where the server has functions
            (the default); False always uses EVALSHA.
    """

    def __init__(
        self, redis: aioredis.Redis, *, prefix: str | None = None, functions: bool = True
    ) -> None:
        if prefix is not None and not prefix.endswith(":"):
            raise ValueError(f"a key prefix must end with ':', got {prefix!r}")
        self._redis = redis
        self._keys: Sequence[str] = () if prefix is None else (prefix,)
        self._functions = functions
        self.source = build()
        self.sha = sha1()
        self.function = function_name()

    async def load(self) -> str:
        """Register the script with SCRIPT LOAD; return its SHA1."""
        sha: str | bytes = await self._redis.script_load(self.source)
        return sha.decode() if isinstance(sha, bytes) else sha

    async def load_library(self) -> None:
        """Register the function library with FUNCTION LOAD (replacing a library of the same
        name, which is the same code: the name carries the script's digest)."""
        await self._redis.function_load(build_library(), replace=True)

    async def __call__(self, command: str, now: float, *args: Argument) -> Reply:
        argv = (command, repr(now), *args)
        if self._functions:
            try:
                return await self._fcall(argv)
            except ResponseError as error:
                if not _no_functions(error):
                    raise
                self._functions = False
        return await self._evalsha(argv)

    async def many(
        self, command: str, now: float, calls: Sequence[Sequence[Argument]]
    ) -> list[Reply]:
        """The same command with many argument lists, pipelined in one round trip (not a
        transaction: each call is atomic on its own). A refused call's reply is its
        ResponseError, in place."""
        return await self.batch(now, [(command, args) for args in calls])

    async def batch(self, now: float, calls: Sequence[Call]) -> list[Reply]:
        """Commands with their arguments, pipelined in one round trip (not a transaction:
        each call is atomic on its own). A refused call's reply is its ResponseError, in
        place."""
        replies = await self._pipeline(now, calls)
        if replies and isinstance(replies[0], ResponseError):
            first = replies[0]
            if self._functions and _no_functions(first):
                self._functions = False
                replies = await self._pipeline(now, calls)
            elif _missing_function(first) or isinstance(first, NoScriptError):
                # the server lost the code: nothing ran, so the whole batch can go again
                await (self.load_library() if self._functions else self.load())
                replies = await self._pipeline(now, calls)
        return replies

    async def _pipeline(self, now: float, calls: Sequence[Call]) -> list[Reply]:
        pipeline = self._redis.pipeline(transaction=False)
        for command, args in calls:
            argv = (command, repr(now), *args)
            if self._functions:
                pipeline.fcall(self.function, len(self._keys), *self._keys, *argv)
            else:
                pipeline.evalsha(self.sha, len(self._keys), *self._keys, *argv)
        replies: list[Reply] = await pipeline.execute(raise_on_error=False)
        return replies

    async def _fcall(self, argv: Sequence[Argument]) -> Reply:
        try:
            return await self._redis.fcall(self.function, len(self._keys), *self._keys, *argv)
        except ResponseError as error:
            if not _missing_function(error):
                raise
            await self.load_library()
            return await self._redis.fcall(self.function, len(self._keys), *self._keys, *argv)

    async def _evalsha(self, argv: Sequence[Argument]) -> Reply:
        try:
            return await self._redis.evalsha(self.sha, len(self._keys), *self._keys, *argv)
        except NoScriptError:
            await self.load()
            return await self._redis.evalsha(self.sha, len(self._keys), *self._keys, *argv)
