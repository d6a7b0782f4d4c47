"""The contracts (aqless/scripts/contracts.py): every command of the dispatch table has one,
in the fixed form, right above the function that implements it; their error texts are the
code's; and the exceptions they name are the ones the client raises."""

from __future__ import annotations

import re

import pytest

from aqless import errors
from aqless._connection.protocol import _EXCEPTIONS, error_for
from aqless.scripts import MODULES
from aqless.scripts.contracts import FIELDS, Contract, contracts, lua_text, parse
from tests.scripts.test_script import CLASSIC_COMMANDS, REQLESS_COMMANDS

ENTRY = re.compile(r"^\s*\['([^']+)'\] = function")
PLACEHOLDER = re.compile(r"<[^>]*>|\{[^}]*\}")
# a Lua string literal, or a comment (which ends the line)
TOKEN = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|--.*$""", re.MULTILINE)
CRON_COMMANDS = ("setCron", "extendCron", "cronRefills", "nextRuns")


def lua_strings() -> list[str]:
    """The string literals of every module (comments, and so the contracts, left out)."""
    return [
        token[1:-1]
        for name in MODULES
        for token in TOKEN.findall(lua_text(name))
        if not token.startswith("--")
    ]


def dispatched(commands: str) -> set[str]:
    """The command names of the dispatch table in `commands` (the text of commands.lua)."""
    return {m.group(1) for line in commands.splitlines() if (m := ENTRY.match(line))}


def beside_a_body(text: str, contract: Contract) -> bool:
    """Whether `contract` (of the module text `text`) is followed, past other contracts and
    comments, by the definition of a function."""
    lines = text.splitlines()[contract.line - 1 :]
    inside = False
    for line in lines:
        if line.startswith("--[=["):
            inside = True
        elif line == "]=]":
            inside = False
        elif not inside and not line.startswith("--"):
            return line.startswith("function ")
    return False


def problems_of(found: list[Contract], texts: dict[str, str], strings: list[str]) -> list[str]:
    """What is wrong with the contracts `found` in the module texts `texts`, given the Lua
    string literals `strings` their error texts must occur in."""
    entries = dispatched(texts["commands.lua"])
    problems: list[str] = []
    named: dict[str, Contract] = {}
    for contract in found:
        problems += contract.problems
        if contract.order != list(FIELDS):
            problems.append(f"{contract.where}: fields {contract.order}, expected {list(FIELDS)}")
        problems += [
            f"{contract.where}: empty {name}" for name in FIELDS if not contract.fields.get(name)
        ]
        if not beside_a_body(texts[contract.module], contract):
            problems.append(f"{contract.where}: not above a function")
        for name in contract.names:
            if name not in entries:
                problems.append(f"{contract.where}: no command {name!r} in the table")
            if name in named:
                problems.append(f"{contract.where}: {name!r} already has a contract")
            named[name] = contract
        for refusal in contract.refusals:
            for fragment in PLACEHOLDER.split(refusal.text):
                if fragment.strip() and not any(fragment in string for string in strings):
                    problems.append(f"{contract.where}: error text {fragment!r} not in the code")
        for exception in [refusal.exception for refusal in contract.refusals] + [
            contract.cjson or "InvalidArgumentError"
        ]:
            if not isinstance(getattr(errors, exception, None), type):
                problems.append(f"{contract.where}: no exception {exception!r} in aqless.errors")
    for contract in found:
        for other in contract.same_as:
            if other not in named:
                problems.append(f"{contract.where}: 'as {other}' names no contract")
    problems += [f"command {name!r} has no contract" for name in sorted(entries - set(named))]
    return problems


def module_texts() -> dict[str, str]:
    return {name: lua_text(name) for name in MODULES}


def found_in(texts: dict[str, str]) -> list[Contract]:
    return [contract for name in MODULES for contract in parse(texts[name], name)]


def test_every_command_has_a_contract_in_the_fixed_form_beside_its_body() -> None:
    assert problems_of(list(contracts()), module_texts(), lua_strings()) == []


def test_the_table_is_what_the_contracts_cover() -> None:
    entries = dispatched(lua_text("commands.lua"))
    aqless_own = {"worker.offer", "worker.withdraw", "job.result", "queue.putDeduplicated"}
    aqless_own |= {"worker.takeBack", "queue.putNew"}
    aqless_own |= {"job.dedup"}
    aqless_own |= {f"recurringJob.{name}" for name in CRON_COMMANDS}
    aqless_own |= {f"rateLimit.{verb}" for verb in ("all", "delete", "get", "pop", "set")}
    aqless_own |= {"job.progress", "jobs.progress", "job.handBack"}
    aqless_own |= {"job.checkpoint", "jobs.checkpoints"}
    aqless_own |= {"queue.popAfter", "queue.upsertRecurring"}
    aqless_own |= {"batch.put", "batch.get", "batch.list"}
    aqless_own |= {"flow.put", "flow.children", "flow.tree"}
    aqless_own |= {"group.counts", "group.set"}
    aqless_own |= {"throttle.all", "throttle.index", "queue.failedJobs", "recurringJob.getMulti"}
    assert entries == set(CLASSIC_COMMANDS + REQLESS_COMMANDS) | aqless_own
    assert {name for contract in contracts() for name in contract.names} == entries


def test_the_dispatch_table_holds_no_contract() -> None:
    assert parse(lua_text("commands.lua"), "commands.lua") == []


def test_the_exceptions_named_are_the_ones_the_client_raises() -> None:
    named = {refusal.exception for contract in contracts() for refusal in contract.refusals}
    assert named <= set(_EXCEPTIONS)
    assert all(_EXCEPTIONS[name] is getattr(errors, name) for name in _EXCEPTIONS)
    assert {contract.cjson for contract in contracts()} <= {None, "InvalidArgumentError"}


@pytest.mark.parametrize("contract", contracts(), ids=lambda contract: contract.names[0])
def test_each_error_text_becomes_the_exception_its_contract_names(contract: Contract) -> None:
    for name in contract.names:
        for refusal in contract.refusals:
            text = PLACEHOLDER.sub("x1", refusal.text)
            raised = error_for(name, f"user_script:7: {text} script: 0123, on @user_script:7.")
            assert type(raised).__name__ == refusal.exception, (name, refusal.text)
            assert str(raised).endswith(text)


def test_a_text_no_contract_names_is_an_invalid_argument() -> None:
    raised = error_for("job.complete", "Expected value but found invalid token at character 1")
    assert type(raised) is errors.InvalidArgumentError


def test_a_command_may_raise_another_commands_errors() -> None:
    # queue.popAfter runs the outcome it is given: a complete's refusal is that of job.complete
    raised = error_for("queue.popAfter", "Complete(): Job 12 is not currently running: waiting")
    assert type(raised) is errors.LockLostError


def problems_after(module: str, old: str, new: str) -> list[str]:
    texts = module_texts()
    assert old in texts[module]
    texts[module] = texts[module].replace(old, new, 1)
    return problems_of(found_in(texts), texts, lua_strings())


def test_a_removed_contract_is_found() -> None:
    text = lua_text("lifecycle.lua")
    start = text.index("--[=[ heartbeat | job.heartbeat\n")
    end = text.index("]=]\n", start) + 4
    problems = problems_after("lifecycle.lua", text[start:end], "")
    assert "command 'heartbeat' has no contract" in problems
    assert "command 'job.heartbeat' has no contract" in problems


def test_a_missing_field_is_found() -> None:
    problems = problems_after("lifecycle.lua", "  Returns  the new lock expiry time (number)\n", "")
    assert any("heartbeat" in problem and "Returns" in problem for problem in problems)


def test_an_error_text_that_drifted_is_found() -> None:
    problems = problems_after(
        "lifecycle.lua",
        "'Heatbeat(): Arg \"worker\" missing'",
        "'Heartbeat(): Arg \"worker\" missing'",
    )
    assert any("Heartbeat(): Arg" in problem for problem in problems)


def test_an_unknown_exception_is_found() -> None:
    problems = problems_after(
        "lifecycle.lua",
        "'Heatbeat(): Arg \"worker\" missing'   InvalidArgumentError",
        "'Heatbeat(): Arg \"worker\" missing'   InvalidArgumentErr",
    )
    assert any("no exception 'InvalidArgumentErr'" in problem for problem in problems)


def test_a_contract_of_an_unknown_command_is_found() -> None:
    problems = problems_after("queue.lua", "--[=[ queues.names\n", "--[=[ queues.list\n")
    assert any("no command 'queues.list'" in problem for problem in problems)
    assert "command 'queues.names' has no contract" in problems


def test_a_contract_away_from_its_body_is_found() -> None:
    contract = next(c for c in contracts() if c.names[0] == "queues.names")
    text = lua_text("queue.lua")
    start = text.index("--[=[ queues.names\n")
    block = text[start : text.index("]=]\n", start) + 4]
    texts = module_texts()
    texts["queue.lua"] = text.replace(block, "", 1) + "\n" + block + "\nlocal moved = 1\n"
    problems = problems_of(found_in(texts), texts, lua_strings())
    assert any("(queues.names): not above a function" in problem for problem in problems)
    assert contract.module == "queue.lua"


def test_error_texts_are_looked_for_in_the_code_not_in_the_comments() -> None:
    strings = lua_strings()
    assert 'Heatbeat(): Arg "worker" missing' in strings
    assert not any("InvalidArgumentError" in string for string in strings)


def test_errors_of_another_contract_must_name_one() -> None:
    problems = problems_after("lifecycle.lua", "           as put\n", "           as putt\n")
    assert any("'as putt' names no contract" in problem for problem in problems)


def test_a_long_text_names_its_exception_on_the_next_line() -> None:
    cancel = next(c for c in contracts() if c.names[0] == "cancel")
    assert [refusal.exception for refusal in cancel.refusals] == [
        "JobDependedOnError",
        "FlowRunningError",
    ]
    problems = problems_after("job.lua", "             JobDependedOnError\n", "")
    assert any("(cancel | job.cancel): no exception for" in problem for problem in problems)
