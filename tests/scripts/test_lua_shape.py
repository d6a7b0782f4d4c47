"""The shape of the Lua (STYLE.md section 5): no function over 80 lines, and one command a
file: each command file defines its own handler and nothing else defines one; the dispatch
table's names are the contracts' names."""

from __future__ import annotations

import re
from dataclasses import dataclass

from aqless.scripts import build
from aqless.scripts.contracts import contracts
from aqless.scripts.sources import command_files, library_files, lua_text

LONGEST = 80  # lines, from `function` to its `end`

# long comments, comments, long strings, strings, names, and the rest a character at a time
_TOKEN = re.compile(
    r"""--\[(?P<c>=*)\[.*?\](?P=c)\]|--[^\n]*|\[(?P<s>=*)\[.*?\](?P=s)\]"""
    r"""|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|(?P<name>[A-Za-z_]\w*)|\S""",
    re.DOTALL,
)
_OPENS = frozenset({"function", "do", "if", "repeat"})
_CLOSES = frozenset({"end", "until"})
_HANDLER = re.compile(r"^Commands\['(?P<name>[^']+)'\] = function", re.MULTILINE)
_ENTRY = re.compile(r"^  \['([^']+)'\] = \{'[^']+', (?:CLASSIC|REQLESS), '\d+ \w+'\},$", re.M)


@dataclass(frozen=True)
class Function:
    name: str
    first: int  # the line of `function`
    last: int  # the line of its `end`

    @property
    def lines(self) -> int:
        return self.last - self.first + 1


def _name(tokens: list[tuple[str, int]], index: int) -> str:
    """The name of the function whose `function` is tokens[index]: what follows it up to
    the parameters, or what it is assigned to on its line; else '(anonymous)'."""
    after = [token for token, _ in tokens[index + 1 : index + 8]]
    if after[0] != "(":
        return "".join(after[: after.index("(")])
    line = tokens[index][1]
    before = [token for token, at in tokens[max(0, index - 8) : index] if at == line]
    if before[-1:] == ["="]:
        start = max((i + 1 for i, t in enumerate(before) if t in ("local", "return")), default=0)
        return "".join(before[start:-1]) or "(anonymous)"
    return "(anonymous)"


def functions(source: str) -> list[Function]:
    """Every function of the Lua `source`, nested ones too, with the lines it spans."""
    tokens = [
        (m.group(0), source.count("\n", 0, m.start()) + 1)
        for m in _TOKEN.finditer(source)
        if not m.group(0).startswith("--")
    ]
    found: list[Function] = []
    stack: list[tuple[str, int] | None] = []  # an open function's name and line, else None
    for index, (word, line) in enumerate(tokens):
        if word == "function":
            stack.append((_name(tokens, index), line))
        elif word in _OPENS:
            stack.append(None)
        elif word in _CLOSES:
            opened = stack.pop()
            if opened is not None:
                found.append(Function(opened[0], opened[1], line))
    assert not stack, "unbalanced blocks: the reader misread the source"
    return found


def lua_files() -> list[str]:
    return [*library_files(), *command_files(), "api.lua", "library.lua", "script.lua"]


def test_no_lua_function_is_over_80_lines() -> None:
    long = [
        f"{path}:{function.first} {function.name}: {function.lines} lines"
        for path in lua_files()
        for function in functions(lua_text(path))
        if function.lines > LONGEST
    ]
    assert long == []


def test_the_reader_finds_functions_and_their_ends() -> None:
    source = (
        "local function a(x)\n  if x then return 1 end\n  for i = 1, 2 do end\nend\n"
        "Commands['job.x'] = function(D, now)\n  local s = 'end'\n  return s\nend\n"
        "function T.b()\n  -- end\n  return [[\nend]]\nend\n"
    )
    assert [(f.name, f.first, f.last) for f in functions(source)] == [
        ("a", 1, 4),
        ("Commands['job.x']", 5, 8),
        ("T.b", 9, 13),
    ]


def test_a_function_over_80_lines_is_found() -> None:
    source = "function T.long()\n" + "  call('PING')\n" * 80 + "end\n"
    assert [f.lines for f in functions(source)] == [82]


def test_each_command_file_defines_its_own_handler_and_no_other_file_one() -> None:
    for path in command_files():
        stem = path.removeprefix("commands/").removesuffix(".lua")
        assert _HANDLER.findall(lua_text(path)) == [stem], path
    for path in [*library_files(), "api.lua"]:
        assert _HANDLER.findall(lua_text(path)) == [], path


def test_every_command_has_a_contract_and_every_contract_a_command() -> None:
    files = {path.removeprefix("commands/").removesuffix(".lua") for path in command_files()}
    assert sorted(contract.names[0] for contract in contracts()) == sorted(files)
    named = [name for contract in contracts() for name in contract.names]
    assert sorted(_ENTRY.findall(build())) == sorted(named)
    assert len(set(named)) == len(named)


def test_the_named_positions_of_a_jobs_fields_are_those_it_reads() -> None:
    # Job.at names the positions of Job.read_full's HMGET reply, which pops read by position
    text = lua_text("lib/job.lua")
    at = re.search(r"^Job\.at = \{(?P<pairs>[^}]*)\}", text, re.MULTILINE)
    read = re.search(
        r"function Job\.read_full\(jid\)\n  return call\('HMGET', [^,]+,(?P<names>[^)]*)\)", text
    )
    assert at is not None
    assert read is not None
    positions = dict(re.findall(r"(\w+) = (\d+)", at["pairs"]))
    names = re.findall(r"'(\w+)'", read["names"])
    assert {name: int(position) for name, position in positions.items()} == {
        name: index for index, name in enumerate(names, 1)
    }
    for_pop = re.search(
        r"function Job\.read_for_pop\(jid\)\n  return call\('HMGET', [^,]+,(?P<names>[^)]*)\)",
        text,
    )
    assert for_pop is not None
    # (data's place is Job.pop_data's: `data`, but while a pop with data_beside runs)
    pop_names = re.findall(r"'(\w+)'|(Job\.pop_data)", for_pop["names"])
    read_for_pop = [quoted or "data" for quoted, field in pop_names if quoted or field]
    assert names[: len(read_for_pop)] == read_for_pop


def test_no_job_field_is_read_by_a_bare_position() -> None:
    bare = re.compile(r"\b(?:job|f)\[\d+\]")
    found = [path for path in lua_files() if bare.search(lua_text(path))]
    assert found == []
