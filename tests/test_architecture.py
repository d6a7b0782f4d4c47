"""ARCHITECTURE.md stays short and true: every path, module and name it cites exists.

What counts as a citation (prose is left alone):

- a path under ``aqless/``, ``tests/``, ``benchmarks/`` or ``docs/`` (file or folder), and a
  Markdown link's target: it must exist in the repository;
- a dotted name starting ``aqless.``: it must import, as a module or as a module's attribute
  (``aqless.puts.prepare_put``, ``aqless.contracts.Queue.pop``);
- in a code span, a bare file name: ``x.lua`` must be a file of ``aqless/scripts/lua/`` (or
  of its ``lib/`` or ``commands/``), ``x.py`` a file of the package;
- in a code span, a CamelCase name, alone or dotted (``LockKeeper``, ``Queue.put``): some
  module of the package must define it, with those attributes;
- in a code span, a lower-case dotted name (``queue.put``, ``protocol.ScriptCaller``): a command
  of the script, or an attribute of a package module of that last name.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

import aqless
from aqless.scripts.contracts import contracts

ROOT = Path(__file__).resolve().parent.parent
DOCUMENT = ROOT / "ARCHITECTURE.md"
MOST_LINES = 250

#: CamelCase names the page cites that belong to other projects.
FOREIGN = frozenset({"RedisCluster", "ExceptionGroup"})

_PATH = re.compile(r"(?<![\w/.-])((?:aqless|tests|benchmarks|docs)/[\w./-]*[\w/])")
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
_DOTTED = re.compile(r"(?<![\w.-])aqless(?:\.\w+)+")
_SPAN = re.compile(r"`([^`\n]+)`")
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
_CAMEL = re.compile(r"^[A-Z][a-z0-9]\w*$")


@cache
def modules() -> dict[str, ModuleType]:
    """Every module of the package (``__main__`` modules aside: importing one runs it)."""
    found = {"aqless": aqless}
    for info in pkgutil.walk_packages(aqless.__path__, "aqless."):
        if not info.name.endswith(".__main__"):
            found[info.name] = importlib.import_module(info.name)
    return found


@cache
def commands() -> frozenset[str]:
    return frozenset(name for contract in contracts() for name in contract.names)


def has_attributes(value: object, names: list[str]) -> bool:
    for name in names:
        if not hasattr(value, name):
            return False
        value = getattr(value, name)
    return True


def resolves(dotted: str) -> bool:
    """Whether `dotted` is a package module, or attributes of the longest module it names."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        module = modules().get(".".join(parts[:end]))
        if module is not None:
            return has_attributes(module, parts[end:])
    return False


def defined(camel: str) -> bool:
    """Whether a CamelCase name, with the attributes after it, is defined by some module."""
    first, *rest = camel.split(".")
    return any(
        first in vars(module) and has_attributes(vars(module)[first], rest)
        for module in modules().values()
    )


def span_problem(span: str) -> str | None:
    """Why a code span's citation does not hold, or None (also for a span that is prose)."""
    if span.endswith(".lua") and "/" not in span:
        folders = ("", "lib", "commands")
        found = any((ROOT / "aqless/scripts/lua" / folder / span).is_file() for folder in folders)
        return None if found else "no such Lua module"
    if span.endswith(".py") and "/" not in span:
        return None if any(aqless_files(span)) else "no such file in the package"
    if not _IDENTIFIER.match(span) or span.startswith("aqless."):
        return None  # not a name, or checked as a dotted name
    first, *rest = span.split(".")
    if _CAMEL.match(first):
        if first in FOREIGN or defined(span):
            return None
        return "no module of the package defines it"
    if not rest:
        return None  # a bare lower-case word: prose, an option, a variable
    if span in commands():
        return None
    by_last = [module for name, module in modules().items() if name.rsplit(".", 1)[-1] == first]
    if any(has_attributes(module, rest) for module in by_last):
        return None
    return "neither a script command nor a package module's attribute"


def aqless_files(name: str) -> list[Path]:
    return list((ROOT / "aqless").rglob(name))


def citations(text: str) -> dict[str, list[str]]:
    """What `text` cites, by kind."""
    spans = _SPAN.findall(text)
    return {
        "path": sorted(set(_PATH.findall(text))),
        "link": sorted({link for link in _LINK.findall(text) if "://" not in link}),
        "dotted": sorted(set(_DOTTED.findall(text))),
        "span": sorted(set(spans)),
    }


def problems(text: str) -> list[str]:
    found = citations(text)
    wrong = [f"path {path}" for path in found["path"] if not (ROOT / path).exists()]
    wrong += [f"link {link}" for link in found["link"] if not (ROOT / link).exists()]
    wrong += [f"name {name}" for name in found["dotted"] if not resolves(name)]
    for span in found["span"]:
        problem = span_problem(span)
        if problem:
            wrong.append(f"`{span}`: {problem}")
    return wrong


def test_architecture_md_is_short() -> None:
    lines = len(DOCUMENT.read_text().splitlines())
    assert lines < MOST_LINES, f"ARCHITECTURE.md has {lines} lines; keep it under {MOST_LINES}"


def test_every_citation_of_architecture_md_exists() -> None:
    wrong = problems(DOCUMENT.read_text())
    assert not wrong, "ARCHITECTURE.md cites what does not exist:\n" + "\n".join(wrong)


def test_architecture_md_cites_enough_to_be_checked() -> None:
    found = citations(DOCUMENT.read_text())
    assert len(found["path"]) >= 30, found["path"]
    assert len(found["dotted"]) >= 15, found["dotted"]


@pytest.mark.parametrize(
    "cited",
    [
        "`aqless/_connection/protocols.py`",  # a renamed file
        "`aqless/sharding/`, `aqless/shards/`",  # a renamed folder
        "see aqless.puts.prepare_puts",  # a renamed function
        "in aqless.shard_map, the map",  # a module that moved
        "`aqless.contracts.Queue.push`",  # a method that does not exist
        "`LockKeepers` heartbeats",  # a renamed class
        "`Queue.pushed`",  # a renamed method
        "`popafter2.lua`",  # a Lua module that is not there
        "`sharded_queue.py`",  # a file that moved away
        "`queue.putDedup`",  # neither a command nor a module's name
        "`protocol.Protocols`",  # a module's name that is not there
        "[the threat model](SECURITY2.md)",  # a link to nothing
    ],
)
def test_a_wrong_citation_is_caught(cited: str) -> None:
    assert problems(cited), cited


@pytest.mark.parametrize(
    "prose",
    [
        "`put_many` pipelines, `durable=` waits, `ql:push:<worker>` is a channel",
        "`aqless --json` and `aqless-run --processes P`",
        "`RedisCluster`, `WAITAOF`, `maxmemory-policy`",
        "`queue.put`, `rateLimit.pop`, `protocol.ScriptCaller`, `Job.complete`",
        "`aqless.sync.Client`, `aqless.scripts.build_library`, `aqless/scripts/lua/`",
    ],
)
def test_prose_and_true_citations_pass(prose: str) -> None:
    assert not problems(prose), problems(prose)
