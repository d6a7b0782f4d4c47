"""The script's dispatch table, generated from the commands' contracts.

Each command file (``lua/commands/<command>.lua``) defines one handler,
``Commands['<command>'] = function(D, now, ...)``, under its contract. The generated Lua:

- ``Dispatch.define[<word>]``: the command files whose names begin with ``<word>.`` (``''``
  for a name without a dot), as one function that defines their handlers in ``Commands``;
  ``Dispatch.defined(name)`` runs it the first time one of them is asked for: every closure
  a script creates costs the server time on every EVALSHA call, so a call defines only its
  own word's.
- ``Dispatch.entries[<word>]``: by the same word of the names called, a function that makes
  a table of each name's file, dialect and shape, ``{file, D, shape}``.
- ``Dispatch.shapes[<shape>]``: for each way a handler takes its arguments (the contract's
  Args, ``aqless.scripts.contracts.arguments``), a function that makes a name's entry,
  ``function(now, a)``, which hands the handler its dialect and the arguments. Entries are
  made as names are first called, all from these few functions: a function written for each
  name would keep its compiled code in the server's Lua memory, which every garbage
  collection walks (one for each of the 134 names kept 35 KB more there, of ~550).
- ``find_command(name)``: a name's entry, or nil (``api.lua`` calls it).

Adding a command is adding its file: nothing here, or anywhere else, lists the commands.
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
-- that defines their handlers; `entries`, a function that makes each name's {file,
-- dialect, shape}; `built`, those made so far. `shapes`: by how a handler takes its
-- arguments, a function(handler, D) that makes an entry, function(now, a).
local Dispatch = {define = {}, entries = {}, built = {}, shapes = {}}

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
  local spec = built[word][name]
  if spec == nil then return nil end
  local file = spec[1]
  entry = Dispatch.shapes[spec[3]](Commands[file] or Dispatch.defined(file), spec[2])
  found[name] = entry
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


def shape(shape: Arguments) -> str:
    """The name of a handler's shape in ``Dispatch.shapes``: ``<single> <tail>``."""
    return f"{shape.single} {shape.tail}"


def _shapes() -> Iterable[str]:
    for arguments in sorted({contract.arguments for contract in contracts()}, key=shape):
        yield (
            f"\nDispatch.shapes['{shape(arguments)}'] = function(handler, D)\n"
            f"  return function(now, a) return handler(D, now{passed(arguments)}) end\nend\n"
        )


def _entries() -> Iterable[str]:
    groups: dict[str, list[str]] = defaultdict(list)
    for contract in contracts():
        file, form = contract.names[0], shape(contract.arguments)
        for name in contract.names:
            dialect = "CLASSIC" if name in CLASSIC_NAMES else "REQLESS"
            groups[word(name)].append(f"  ['{name}'] = {{'{file}', {dialect}, '{form}'}},\n")
    for group, lines in sorted(groups.items()):
        yield f"\nDispatch.entries['{group}'] = function() return {{\n{''.join(lines)}}} end\n"


def generate() -> str:
    """The dispatch table's Lua: the command files, the entries and ``find_command``."""
    return "".join((_HEAD, *_definitions(), *_shapes(), *_entries(), _LOOKUP))


__all__ = ["generate", "passed", "shape", "word"]
