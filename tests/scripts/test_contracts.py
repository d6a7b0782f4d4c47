"""The contracts of commands.lua: every command of the table has a header in the fixed form
(see the top of commands.lua), and the headers cannot drift from the code they describe."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources

from aqless.scripts import MODULES
from tests.scripts.test_script import CLASSIC_COMMANDS, RELESS_COMMANDS

FIELDS = ("args", "reads", "writes", "reply", "errors")
ENTRY = re.compile(r"^\s*\['([^']+)'\] = function")
HEADER = re.compile(r"^\s*--- (.+)$")
FIELD = re.compile(r"^\s*-- (\w+): (.*)$")
CONTINUATION = re.compile(r"^\s*--    (.*)$")
SEE = re.compile(r"^\s*-- contract: see (\S+)$")
VALUE = re.compile(r"<[^>]*>")  # a value the script appends to an error text
# a Lua string literal, or a comment (which ends the line)
TOKEN = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|--.*$""", re.MULTILINE)


@dataclass
class Header:
    names: list[str]
    line: int
    fields: dict[str, str] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)


def lua_text(name: str) -> str:
    return resources.files("aqless.scripts").joinpath("lua", name).read_text(encoding="utf-8")


def lua_strings() -> list[str]:
    """The string literals of every module (comments, and so the headers, left out)."""
    return [
        token[1:-1]
        for name in MODULES
        for token in TOKEN.findall(lua_text(name))
        if not token.startswith("--")
    ]


def parse_headers(lines: list[str]) -> tuple[list[Header], dict[int, Header]]:
    """The headers, and each by the index of its last line."""
    headers: list[Header] = []
    by_end: dict[int, Header] = {}
    current: Header | None = None
    last_field = ""
    for index, line in enumerate(lines):
        if (match := HEADER.match(line)) is not None:
            current = Header([name.strip() for name in match.group(1).split("|")], index + 1)
            headers.append(current)
        elif current is not None and (match := FIELD.match(line)) is not None:
            last_field = match.group(1)
            current.order.append(last_field)
            current.fields[last_field] = match.group(2).strip()
        elif current is not None and last_field and (match := CONTINUATION.match(line)):
            current.fields[last_field] += " " + match.group(1).strip()
        else:
            if current is not None:
                by_end[index - 1] = current
            current, last_field = None, ""
    return headers, by_end


def error_texts(value: str) -> list[str]:
    return [text.strip() for text in value.split(";") if text.strip() not in ("", "none")]


def contract_problems(commands: str, strings: list[str]) -> list[str]:
    """What is wrong with the headers of `commands` (the text of commands.lua), whose error
    texts must occur in the Lua string literals `strings`."""
    lines = commands.splitlines()
    headers, by_end = parse_headers(lines)
    problems: list[str] = []
    entries = {m.group(1): i for i, line in enumerate(lines) if (m := ENTRY.match(line))}
    named: dict[str, Header] = {}
    for header in headers:
        where = f"header line {header.line} ({' | '.join(header.names)})"
        if header.order != list(FIELDS):
            problems.append(f"{where}: fields {header.order}, expected {list(FIELDS)}")
        for name in FIELDS:
            if not header.fields.get(name):
                problems.append(f"{where}: empty {name}")
        for name in header.names:
            if name not in entries:
                problems.append(f"{where}: no command {name!r} in the table")
            if name in named:
                problems.append(f"{where}: {name!r} already has a header")
            named[name] = header
        for text in error_texts(header.fields.get("errors", "")):
            if text == "cjson" or text.startswith("as "):
                continue
            for fragment in VALUE.split(text):
                if fragment.strip() and not any(fragment in string for string in strings):
                    problems.append(f"{where}: error text {fragment!r} not in the Lua source")
    for header in headers:
        for text in error_texts(header.fields.get("errors", "")):
            if text.startswith("as ") and text[3:] not in named:
                problems.append(f"header line {header.line}: {text!r} names no header")
    for name, index in entries.items():
        above = lines[index - 1] if index > 0 else ""
        covering = by_end.get(index - 1)
        if (match := SEE.match(above)) is not None:
            covering = named.get(match.group(1))
        if covering is None or name not in covering.names:
            problems.append(f"command {name!r} (line {index + 1}) has no header naming it")
    return problems


def test_every_command_has_a_header_in_the_fixed_form() -> None:
    assert contract_problems(lua_text("commands.lua"), lua_strings()) == []


CRON_COMMANDS = ("setCron", "extendCron", "cronRefills", "nextRuns")


def test_the_table_is_what_the_headers_cover() -> None:
    commands = lua_text("commands.lua")
    lines = commands.splitlines()
    headers, _ = parse_headers(lines)
    entries = {m.group(1) for line in lines if (m := ENTRY.match(line))}
    aqless_own = {"worker.offer", "worker.withdraw", "job.result", "queue.putDeduplicated"}
    aqless_own |= {"job.dedup"}
    aqless_own |= {f"recurringJob.{name}" for name in CRON_COMMANDS}
    aqless_own |= {f"rateLimit.{verb}" for verb in ("all", "delete", "get", "pop", "set")}
    aqless_own |= {"job.progress", "jobs.progress"}
    aqless_own |= {"queue.popAfter"}
    assert entries == set(CLASSIC_COMMANDS + RELESS_COMMANDS) | aqless_own
    assert {name for header in headers for name in header.names} == entries


def test_a_removed_header_is_found() -> None:
    commands = lua_text("commands.lua")
    start = commands.index("  --- heartbeat | job.heartbeat\n")
    end = commands.index("  ['heartbeat'] = function")
    problems = contract_problems(commands[:start] + commands[end:], lua_strings())
    assert "command 'heartbeat'" in " ".join(problems)
    assert any("job.heartbeat" in problem for problem in problems)


def test_a_missing_field_is_found() -> None:
    commands = lua_text("commands.lua").replace(
        "  -- reply: the new lock expiry time (number)\n", "", 1
    )
    problems = contract_problems(commands, lua_strings())
    assert any("heartbeat" in problem and "reply" in problem for problem in problems)


def test_an_error_text_that_drifted_is_found() -> None:
    commands = lua_text("commands.lua").replace(
        'Heatbeat(): Arg "worker" missing', 'Heartbeat(): Arg "worker" missing', 1
    )
    problems = contract_problems(commands, lua_strings())
    assert any("Heartbeat(): Arg" in problem for problem in problems)


def test_a_header_of_an_unknown_command_is_found() -> None:
    commands = lua_text("commands.lua").replace("--- queues.names", "--- queues.list", 1)
    problems = contract_problems(commands, lua_strings())
    assert any("no command 'queues.list'" in problem for problem in problems)
    assert any("command 'queues.names'" in problem for problem in problems)


def test_error_texts_are_looked_for_in_the_code_not_in_the_comments() -> None:
    strings = lua_strings()
    assert 'Heatbeat(): Arg "worker" missing' in strings
    assert not any("; as put" in string or "contract: see" in string for string in strings)


def test_errors_of_another_header_must_name_one() -> None:
    commands = lua_text("commands.lua").replace("does not exist; as put", "does not exist; as putt")
    problems = contract_problems(commands, lua_strings())
    assert any("'as putt' names no header" in problem for problem in problems)
