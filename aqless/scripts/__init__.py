"""The qless protocol as one Lua script, assembled from the modules in ``lua/``.

The script answers both the classic qless-core vocabulary (``put``, ``pop``...) and the
reqless-core one (``queue.put``, ``queue.pop``...) over one data model. It is called with
``ARGV = command, now, arguments...`` and no KEYS, or one KEY ending in ``:`` that replaces
the ``ql:`` key prefix (for example ``{app}:ql:`` to keep a deployment in one Cluster slot).
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources

from aqless import __version__

# The order matters: every module may use what the modules before it define.
MODULES: tuple[str, ...] = (
    "base.lua",
    "dialect.lua",
    "config.lua",
    "events.lua",
    "history.lua",
    "stats.lua",
    "tags.lua",
    "throttle.lua",
    "job.lua",
    "lifecycle.lua",
    "queue.lua",
    "recurring.lua",
    "worker.lua",
    "patterns.lua",
    "commands.lua",
    "api.lua",
)


@cache
def build() -> str:
    """Return the complete script, the modules concatenated in ``MODULES`` order."""
    folder = resources.files(__package__).joinpath("lua")
    parts = [f"-- aqless {__version__}: the qless protocol (qless-core and reqless-core)\n"]
    for name in MODULES:
        parts.append(f"\n-- {name} {'-' * (90 - len(name))}\n")
        parts.append(folder.joinpath(name).read_text(encoding="utf-8"))
    return "".join(parts)


def sha1() -> str:
    """The SHA1 digest under which the server caches the script (EVALSHA's argument)."""
    return hashlib.sha1(build().encode("utf-8"), usedforsecurity=False).hexdigest()


__all__ = ["MODULES", "build", "sha1"]
