"""The qless protocol as one Lua script, assembled from the modules in ``lua/``.

The same modules also make a Redis 7 / Valkey function library (``build_library``): loaded
once with FUNCTION LOAD and called with FCALL, it skips the cost of defining the script's
functions on every call. Both answer exactly the same commands.

The script answers both the classic qless-core vocabulary (``put``, ``pop``...) and the
reqless-core one (``queue.put``, ``queue.pop``...) over one data model. It is called with
``ARGV = command, now, arguments...`` and no KEYS, or one KEY ending in ``:`` that replaces
the ``ql:`` key prefix (for example ``{app}:ql:`` to keep a deployment in one Cluster slot).
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources

from aqless._version import __version__

# The order matters: every module may use what the modules before it define.
MODULES: tuple[str, ...] = (
    "base.lua",
    "jsontext.lua",
    "dialect.lua",
    "config.lua",
    "events.lua",
    "history.lua",
    "stats.lua",
    "tags.lua",
    "groups.lua",
    "throttle.lua",
    "throttleindex.lua",
    "dedup.lua",
    "batches.lua",
    "ratelimit.lua",
    "grouprates.lua",
    "flows.lua",
    "job.lua",
    "results.lua",
    "lifecycle.lua",
    "progress.lua",
    "checkpoint.lua",
    "queue.lua",
    "failedqueue.lua",
    "cron.lua",
    "popafter.lua",
    "recurring.lua",
    "recurringmany.lua",
    "worker.lua",
    "patterns.lua",
    "commands.lua",
    "api.lua",
)


def _modules() -> str:
    folder = resources.files(__package__).joinpath("lua")
    parts = [f"-- aqless {__version__}: the qless protocol (qless-core and reqless-core)\n"]
    for name in MODULES:
        parts.append(f"\n-- {name} {'-' * (90 - len(name))}\n")
        parts.append(folder.joinpath(name).read_text(encoding="utf-8"))
    return "".join(parts)


def _ending(name: str) -> str:
    text = resources.files(__package__).joinpath("lua", name).read_text(encoding="utf-8")
    return f"\n-- {name} {'-' * (90 - len(name))}\n{text}"


@cache
def build() -> str:
    """The complete script (for SCRIPT LOAD / EVALSHA): the modules in ``MODULES`` order."""
    return _modules() + _ending("script.lua")


def sha1() -> str:
    """The SHA1 digest under which the server caches the script (EVALSHA's argument)."""
    return hashlib.sha1(build().encode("utf-8"), usedforsecurity=False).hexdigest()


def function_name() -> str:
    """The name of the library and of its one function: versioned by the script's digest,
    so that deployments of different aqless versions can share a server."""
    return f"aqless_{sha1()[:16]}"


@cache
def build_library() -> str:
    """The function library (for FUNCTION LOAD / FCALL): the same modules and dispatcher."""
    name = function_name()
    ending = _ending("library.lua").replace("@FUNCTION@", name)
    return f"#!lua name={name}\n{_modules()}{ending}"


__all__ = ["MODULES", "build", "build_library", "function_name", "sha1"]
