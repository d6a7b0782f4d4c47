"""Registers the script on a server and calls it, reloading it after NOSCRIPT."""

from __future__ import annotations

from collections.abc import Sequence

import redis.asyncio as aioredis
from redis.exceptions import NoScriptError

from aqless.scripts import build, sha1

Argument = str | bytes | int | float
Reply = object


class Script:
    """The qless script bound to one ``redis.asyncio.Redis`` client.

    Calls go through EVALSHA. When the server answers NOSCRIPT (it restarted, or someone ran
    SCRIPT FLUSH) the script is loaded again and the call repeated once, transparently.
    """

    def __init__(self, redis: aioredis.Redis, *, prefix: str | None = None) -> None:
        if prefix is not None and not prefix.endswith(":"):
            raise ValueError(f"a key prefix must end with ':', got {prefix!r}")
        self._redis = redis
        self._keys: Sequence[str] = () if prefix is None else (prefix,)
        self.source = build()
        self.sha = sha1()

    async def load(self) -> str:
        """Register the script with SCRIPT LOAD; return its SHA1."""
        sha: str | bytes = await self._redis.script_load(self.source)
        return sha.decode() if isinstance(sha, bytes) else sha

    async def __call__(self, command: str, now: float, *args: Argument) -> Reply:
        argv = (command, repr(now), *args)
        try:
            return await self._redis.evalsha(self.sha, len(self._keys), *self._keys, *argv)
        except NoScriptError:
            await self.load()
            return await self._redis.evalsha(self.sha, len(self._keys), *self._keys, *argv)
