"""The qless protocol as one Lua script, assembled from the files in ``lua/``.

The same files also make a Redis 7 / Valkey function library (``build_library``): loaded
once with FUNCTION LOAD and called with FCALL, it skips the cost of defining the script's
functions on every call. Both answer exactly the same commands.

The script answers both the classic qless-core vocabulary (``put``, ``pop``...) and the
reqless-core one (``queue.put``, ``queue.pop``...) over one data model. It is called with
``ARGV = command, now, arguments...`` and no KEYS, or one KEY ending in ``:`` that replaces
the ``ql:`` key prefix (for example ``{app}:ql:`` to keep a deployment in one Cluster slot).

It is assembled from the shared modules (``lua/lib/``, in ``MODULES`` order), the dispatch
table generated from the command files (``lua/commands/``, see aqless.scripts.dispatch),
``lua/api.lua`` (the entry point) and the ending of a script or of a library.
"""

from __future__ import annotations

import hashlib
from functools import cache

from aqless._version import __version__
from aqless.scripts.dispatch import generate
from aqless.scripts.sources import MODULES, library_files, lua_text


def _section(name: str, text: str) -> str:
    return f"\n-- {name} {'-' * (90 - len(name))}\n{text}"


def _modules() -> str:
    parts = [f"-- aqless {__version__}: the qless protocol (qless-core and reqless-core)\n"]
    parts += [_section(path, lua_text(path)) for path in library_files()]
    parts.append(_section("dispatch", generate()))
    parts.append(_section("api.lua", lua_text("api.lua")))
    return "".join(parts)


@cache
def build() -> str:
    """The complete script (for SCRIPT LOAD / EVALSHA)."""
    return _modules() + _section("script.lua", lua_text("script.lua"))


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
    ending = _section("library.lua", lua_text("library.lua")).replace("@FUNCTION@", name)
    return f"#!lua name={name}\n{_modules()}{ending}"


__all__ = ["MODULES", "build", "build_library", "function_name", "sha1"]
