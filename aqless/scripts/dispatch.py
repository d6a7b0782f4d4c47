"""The script's dispatch table, generated from the commands' contracts.

Each command file (``lua/commands/<command>.lua``) defines one handler,
``Commands['<command>'] = function(D, now, ...)``, under its contract. The generated Lua:

- ``Dispatch.define[<word>]``: the command files whose names begin with ``<word>.`` (``''``
  for a name without a dot), as one function that defines their handlers in ``Commands``;
  ``Dispatch.defined(name)`` runs it the first time one of them is asked for: every closure
  a script creates costs the server time on every EVALSHA call, so a call defines only its
  own word's.
- ``Dispatch.entries[<word>]``: by the same word of the names called, a table of each
  name's entry, ``function(now, a)``, which hands its handler the dialect of the name's
  vocabulary and the arguments as the contract's Args declares them
  (``aqless.scripts.contracts.arguments``).

Adding a command is adding its file: nothing here, or anywhere else, lists the commands.
- ``find_command(name)``: a name's entry, or nil (``api.lua`` calls it).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from aqless.scripts.contracts import CLASSIC_NAMES, Arguments, contracts
from aqless.scripts.sources import command_files, lua_text

_HEAD = """\
-- The dispatch table, generated from the commands' contracts (aqless/scripts/dispatch.py).
local find_command  -- (defined below; queue.popAfter runs another command through it)

-- Every command's handler, by the name of its file: a word's are defined when the first of
-- them is asked for (once per call in a script, once for all in a function library).
local Commands = {}

-- By the word before the first dot of a name: `define`, the command files, as a function
-- that defines their handlers; `entries`, a function that makes each name's entry,
-- function(now, a); `built`, the entries made so far.
local Dispatch = {define = {}, entries = {}, built = {}}

-- The handler of the command file `name`, its word's handlers defined first.
function Dispatch.defined(name)
  Dispatch.define[string.match(name, '^([^.]*)%.') or ''](Commands)
  return Commands[name]
end
"""

_LOOKUP = """
-- Entries found (a function library keeps them between calls).
local found = {}

-- The entry of a command name (function(now, a)), or nil.
find_command = function(name)
  local entry = found[name]
  if entry ~= nil then return entry end
  local word = string.match(name, '^([^.]*)%.') or ''
  local built = Dispatch.built
  if built[word] == nil then
    local entries = Dispatch.entries[word]
    if entries == nil then return nil end
    built[word] = entries()
  end
  entry = built[word][name]
  if entry ~= nil then found[name] = entry end
  return entry
end
"""


def word(name: str) -> str:
    """The word before a name's first dot: its group in Dispatch.define and Dispatch.entries."""
    return name.split(".", 1)[0] if "." in name else ""


def passed(shape: Arguments) -> str:
    """The arguments an entry hands its handler after `D, now`, as Lua."""
    values = [f"a[{position}]" for position in range(1, shape.single + 1)]
    if shape.tail == "rest":
        values.append(f"rest(a, {shape.single + 1})")
    elif shape.tail == "list":
        values += ["a", str(shape.single + 1)]
    return "".join(f", {value}" for value in values)


def _definitions() -> Iterable[str]:
    files: dict[str, list[str]] = defaultdict(list)
    for path in command_files():
        files[word(path.removeprefix("commands/").removesuffix(".lua"))].append(path)
    for group, paths in sorted(files.items()):
        yield f"\nDispatch.define['{group}'] = function(Commands)\n"
        for path in paths:
            yield f"-- {path} {'-' * (90 - len(path))}\n{lua_text(path)}"
        yield "end\n"


def _entries() -> Iterable[str]:
    groups: dict[str, list[str]] = defaultdict(list)
    for contract in contracts():
        file, arguments = contract.names[0], passed(contract.arguments)
        handler = f"(Commands['{file}'] or Dispatch.defined('{file}'))"
        for name in contract.names:
            dialect = "CLASSIC" if name in CLASSIC_NAMES else "REQLESS"
            groups[word(name)].append(
                f"  ['{name}'] = function(now, a)\n"
                f"    return {handler}({dialect}, now{arguments})\n  end,\n"
            )
    for group, lines in sorted(groups.items()):
        yield f"\nDispatch.entries['{group}'] = function() return {{\n{''.join(lines)}}} end\n"


def generate() -> str:
    """The dispatch table's Lua: the command files, the entries and ``find_command``."""
    return "".join((_HEAD, *_definitions(), *_entries(), _LOOKUP))


__all__ = ["generate", "passed", "word"]
