"""The contracts of the script's commands, read from the command files they head.

Every command has one file, ``lua/commands/<command>.lua``, which opens with its contract
and then defines its handler, ``Commands['<command>'] = function(D, now, <Args>)``::

    --[=[ <command> [| <twin>...]
      Args     the arguments after `now`, by name ([x] optional, x... repeated)
      Reads    the keys read, as CORE.md section 2.1 names them (docs/protocol)
      Writes   the keys written
      Returns  what comes back
      Errors   '<error text>'   <the aqless.errors exception it becomes>
               as <command>
    ]=]

A field goes on over the lines indented past the field names. The first name is the file's;
its twins (the other vocabulary's name for it) run the same handler, with the dialect of
their vocabulary (``D``: CLASSIC for qless-core's names, ``CLASSIC_NAMES``, else REQLESS).

Args declares what the handler receives, and the dispatch table is generated from it
(aqless/scripts/dispatch.py): ``none``, or a list of items, then maybe a remark in
parentheses; alternatives are separated by `` | `` and the first, the widest, fixes the
positions. An item ``x`` or ``[x]`` (optional) is one argument; a last item ``x...``,
``[x...]`` or ``[x]...`` is the rest as a list; a last item ``[x, y]...`` (option pairs) or
``(...)`` is the rest left where it is: the handler receives the whole argument list and the
position that part starts at (``a, first``). Each Errors line is an error
text in quotes and the name of the exception the client raises for it (a long text leaves
the name to the next line); or ``as <command>`` for every error of that command's contract;
or ``cjson <exception>`` for the JSON library's own decoding errors; or ``none``. In an
error text, ``<x>`` stands for a value the script appends and ``{x}`` for a placeholder of
dialect.lua. Shorthands for keys: ``<q>-*`` is the five job sets of a queue
(ql:q:<q>-work|locks|scheduled|depends|throttled); ``job objects`` is what a job object
reads (ql:j:<jid>, ql:j:<jid>-history|-dependents|-dependencies, ql:tracked); ``throttles``
is ql:th:<tid>, ql:th:<tid>-locks|-pending; ``rate limits`` is ql:rl:<id>,
ql:rl:<id>-starts and ql:rate_limits. The comment opens with ``--[=[`` rather than ``--[[``:
Lua 5.1 refuses a ``[[`` inside a ``[[`` comment, and some replies are written ``[[...]]``.

The error lines make the table ``exception_name`` reads: the client's exception for a
refusal is the one its command's contract names for the matching text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Final, Literal

from aqless.scripts.sources import command_files, lua_text

#: qless-core's command names: their handlers run with its dialect (CLASSIC). The
#: vocabulary is fixed; every other name (reqless-core's, aqless's own) runs with REQLESS.
CLASSIC_NAMES: Final = frozenset(
    (
        *("put", "requeue", "pop", "peek", "complete", "fail", "retry", "heartbeat"),
        *("timeout", "cancel", "depends", "priority", "get", "multiget", "log", "track"),
        *("tag", "failed", "unfail", "jobs", "queues", "length", "pause", "unpause"),
        *("queue.forget", "stats", "workers", "worker.deregister", "config.get"),
        *("config.set", "config.unset", "recur", "recur.get", "recur.update", "recur.tag"),
        *("recur.untag", "unrecur"),
    )
)

FIELDS = ("Args", "Reads", "Writes", "Returns", "Errors")

_START = re.compile(r"^--\[=\[ (?P<names>\S.*)$")
_FIELD = re.compile(r"^  (?P<field>[A-Z]\w*) +(?P<value>\S.*)$")
_CONTINUED = re.compile(r"^ {11} *(?P<value>\S.*)$")
_QUOTED = re.compile(r"^'(?P<text>.*)'(?:\s+(?P<exception>\w+))?$")
_NAME = re.compile(r"^\w+$")
_CJSON = re.compile(r"^cjson\s+(?P<exception>\w+)$")
_PLACEHOLDER = re.compile(r"<[^>]*>|\{[^}]*\}")


@dataclass(frozen=True)
class Arguments:
    """What a handler receives after `D` and `now`, as Args declares it: `single` arguments
    one by one, then the rest (`tail`): none, a list of its values (``rest``), or the whole
    argument list and the position the rest starts at (``list``)."""

    single: int
    tail: Literal["none", "rest", "list"]


def _items(text: str) -> list[str]:
    """The comma-separated items of `text`, brackets and parentheses kept whole."""
    items, depth, current = [], 0, ""
    for char in text:
        depth += (char in "[(") - (char in "])")
        if char == "," and depth == 0:
            items.append(current.strip())
            current = ""
        else:
            current += char
    return [*items, current.strip()] if current.strip() else items


def _without_remark(text: str) -> str:
    """`text` without its remark: a parenthesis opened after a space, not after a comma."""
    depth = 0
    for index, char in enumerate(text):
        remark = char == "(" and depth == 0 and text[index - 1 : index] == " "
        if remark and text[index - 2 : index] != ", ":
            return text[:index].strip()
        depth += (char in "[(") - (char in "])")
    return text.strip()


def arguments(args: str) -> Arguments:
    """The shape a contract's Args declares (see the module's description)."""
    first = _without_remark(args).split(" | ")[0].strip()
    if first == "none":
        return Arguments(0, "none")
    items = _items(first)
    last = items[-1]
    if last.startswith("(") or (last.endswith("...") and "," in last):
        return Arguments(len(items) - 1, "list")
    if last.endswith(("...", "...]")):
        return Arguments(len(items) - 1, "rest")
    return Arguments(len(items), "none")


@dataclass(frozen=True)
class Refusal:
    """One error text of a contract and the exception it becomes."""

    text: str
    exception: str

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """Matches the texts the script raises: each placeholder stands for any value."""
        literal = _PLACEHOLDER.split(self.text)
        return re.compile(".*".join(re.escape(part) for part in literal), re.DOTALL)


@dataclass
class Contract:
    names: tuple[str, ...]
    module: str
    line: int
    fields: dict[str, str] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    same_as: list[str] = field(default_factory=list)  # the `as <command>` lines
    cjson: str | None = None  # the exception of the JSON library's errors
    unnamed: str | None = None  # a text whose exception is on the next line
    problems: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.module}:{self.line} ({' | '.join(self.names)})"

    @property
    def arguments(self) -> Arguments:
        """What the handler receives, as Args declares it."""
        return arguments(self.fields.get("Args", "none"))


def _error_line(contract: Contract, value: str) -> None:
    if contract.unnamed is not None:
        if _NAME.match(value) is None:
            contract.problems.append(f"{contract.where}: no exception for {contract.unnamed!r}")
        else:
            contract.refusals.append(Refusal(contract.unnamed, value))
        contract.unnamed = None
    elif (quoted := _QUOTED.match(value)) is not None:
        if quoted["exception"] is None:
            contract.unnamed = quoted["text"]
        else:
            contract.refusals.append(Refusal(quoted["text"], quoted["exception"]))
    elif value.startswith("as "):
        contract.same_as.append(value[3:].strip())
    elif (cjson := _CJSON.match(value)) is not None:
        contract.cjson = cjson["exception"]
    elif value != "none":
        contract.problems.append(f"{contract.where}: unreadable error line {value!r}")


def parse(text: str, module: str) -> list[Contract]:
    """The contracts in the Lua source `text` of `module`."""
    contracts: list[Contract] = []
    current: Contract | None = None
    last = ""
    for number, line in enumerate(text.splitlines(), 1):
        if current is None:
            if (start := _START.match(line)) is not None:
                names = tuple(name.strip() for name in start["names"].split("|"))
                current, last = Contract(names, module, number), ""
                contracts.append(current)
        elif line == "]=]":
            if current.unnamed is not None:
                current.problems.append(f"{current.where}: no exception for {current.unnamed!r}")
            current = None
        elif (found := _FIELD.match(line)) is not None:
            last = found["field"]
            current.order.append(last)
            current.fields[last] = found["value"].strip()
            if last == "Errors":
                _error_line(current, found["value"].strip())
        elif last and (more := _CONTINUED.match(line)) is not None:
            if last == "Errors":
                _error_line(current, more["value"].strip())
            else:
                current.fields[last] += " " + more["value"].strip()
        else:
            current.problems.append(f"{current.where}: unreadable line {line!r}")
    if current is not None:
        current.problems.append(f"{current.where}: no closing ]=]")
    return contracts


@cache
def contracts() -> tuple[Contract, ...]:
    """Every command's contract, in the order of the command files."""
    return tuple(found for path in command_files() for found in parse(lua_text(path), path))


@cache
def _refusals() -> tuple[dict[str, tuple[Refusal, ...]], tuple[Refusal, ...]]:
    """Each command's refusals (its `as` contracts' included), and all of them in order."""
    by_name = {name: contract for contract in contracts() for name in contract.names}

    def of(contract: Contract, seen: frozenset[str]) -> list[Refusal]:
        found = list(contract.refusals)
        for other in contract.same_as:
            if other in by_name and other not in seen:
                found += of(by_name[other], seen | {other})
        return found

    by_command = {name: tuple(of(c, frozenset(c.names))) for name, c in by_name.items()}
    every = tuple(refusal for contract in contracts() for refusal in contract.refusals)
    return by_command, every


def exception_name(command: str, text: str) -> str | None:
    """The name of the exception the contracts give the error `text` of `command` (those of
    the other commands when its own have none: a call may run another command), or None
    for a text no contract names."""
    own, every = _refusals()
    for refusals in (own.get(command, ()), every):
        for refusal in refusals:
            if refusal.pattern.fullmatch(text):
                return refusal.exception
    return None


__all__ = [
    "CLASSIC_NAMES",
    "FIELDS",
    "Arguments",
    "Contract",
    "Refusal",
    "arguments",
    "contracts",
    "exception_name",
    "lua_text",
    "parse",
]
