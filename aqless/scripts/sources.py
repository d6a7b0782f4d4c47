"""Where the script's Lua lives: the shared modules in ``lua/lib/`` (in ``MODULES`` order),
one file per command in ``lua/commands/`` (``<command>.lua``, any order: a new file is a new
command), and the entry points in ``lua/``."""

from __future__ import annotations

from functools import cache
from importlib import resources

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
    "put.lua",
    "progress.lua",
    "checkpoint.lua",
    "workflow.lua",
    "queue.lua",
    "failedqueue.lua",
    "cron.lua",
    "popafter.lua",
    "recurring.lua",
    "recurringmany.lua",
    "schedules.lua",
    "worker.lua",
    "patterns.lua",
    "helpers.lua",
)

_LUA = resources.files(__package__).joinpath("lua")


def lua_text(path: str) -> str:
    """The text of the Lua file at `path` under ``lua/`` (``lib/base.lua``, ``api.lua``...)."""
    return _LUA.joinpath(path).read_text(encoding="utf-8")


@cache
def command_files() -> tuple[str, ...]:
    """The command files, as paths under ``lua/``, sorted by name (deterministic)."""
    folder = _LUA.joinpath("commands")
    names = sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".lua"))
    return tuple(f"commands/{name}" for name in names)


def library_files() -> tuple[str, ...]:
    """The shared modules, as paths under ``lua/``, in ``MODULES`` order."""
    return tuple(f"lib/{name}" for name in MODULES)


__all__ = ["MODULES", "command_files", "library_files", "lua_text"]
