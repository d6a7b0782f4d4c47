"""The contracts (aqless/scripts/contracts.py): every command file opens with one, in the
fixed form, right above its handler, whose parameters are what its Args declare; their error
texts are the code's; and the exceptions they name are the ones the client raises. The
dispatch table is generated from them: its names are the contracts' names."""

from __future__ import annotations

import re

import pytest

from aqless import errors
from aqless._connection.protocol import _EXCEPTIONS, error_for
from aqless.scripts import build
from aqless.scripts.contracts import CLASSIC_NAMES, FIELDS, Contract, contracts, parse
from aqless.scripts.sources import command_files, library_files, lua_text
from tests.scripts.test_script import CLASSIC_COMMANDS, REQLESS_COMMANDS

HANDLER = re.compile(r"^Commands\['(?P<name>[^']+)'\] = function\(D, now(?P<params>[^)]*)\)$")
ENTRY = re.compile(r"^  \['([^']+)'\] = \{'[^']+', (?:CLASSIC|REQLESS), '\d+ \w+'\},$")
PLACEHOLDER = re.compile(r"<[^>]*>|\{[^}]*\}")
# a Lua string literal, or a comment (which ends the line)
TOKEN = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|--.*$""", re.MULTILINE)
CRON_COMMANDS = ("setCron", "extendCron", "cronRefills", "nextRuns", "backfill")
HEARTBEAT = "commands/job.heartbeat.lua"


def lua_strings() -> list[str]:
    """The string literals of every Lua file (comments, and so the contracts, left out)."""
    return [
        token[1:-1]
        for text in module_texts().values()
        for token in TOKEN.findall(text)
        if not token.startswith("--")
    ]


def dispatched(script: str) -> set[str]:
    """The command names of the generated dispatch table in the assembled `script`."""
    return {m.group(1) for line in script.splitlines() if (m := ENTRY.match(line))}


def handler_after(text: str, contract: Contract) -> re.Match[str] | None:
    """The handler definition that follows `contract` (of the file text `text`), past
    comments; None when code of another kind comes first."""
    lines = text.splitlines()[contract.line - 1 :]
    inside = False
    for line in lines:
        if line.startswith("--[=["):
            inside = True
        elif line == "]=]":
            inside = False
        elif not inside and line and not line.startswith("--"):
            return HANDLER.match(line)
    return None


def parameter_problem(contract: Contract, params: str) -> str | None:
    """Why the handler's parameters (after D, now) are not what its Args declare, or None."""
    names = [name.strip() for name in params.split(",") if name.strip()]
    shape = contract.arguments
    wanted = shape.single + {"none": 0, "rest": 1, "list": 2}[shape.tail]
    if len(names) != wanted or (shape.tail == "list" and names[-2:] != ["a", "first"]):
        return f"{contract.where}: handler takes {names}, Args declare {shape}"
    return None


def file_problems(path: str, text: str, found: list[Contract]) -> list[str]:
    """What is wrong with the command file `path`: one contract, first, above its handler."""
    stem = path.removeprefix("commands/").removesuffix(".lua")
    if len(found) != 1:
        return [f"{path}: {len(found)} contracts, expected one"]
    contract = found[0]
    problems = []
    if contract.line != 1 or contract.names[0] != stem:
        problems.append(f"{contract.where}: the file of {stem!r} must open with its contract")
    handler = handler_after(text, contract)
    if handler is None or handler["name"] != stem:
        problems.append(f"{contract.where}: not above its handler Commands['{stem}']")
    elif (problem := parameter_problem(contract, handler["params"])) is not None:
        problems.append(problem)
    return problems


def contract_problems(contract: Contract, strings: list[str]) -> list[str]:
    """What is wrong with one contract's fields, error texts and exceptions."""
    problems = list(contract.problems)
    if contract.order != list(FIELDS):
        problems.append(f"{contract.where}: fields {contract.order}, expected {list(FIELDS)}")
    problems += [
        f"{contract.where}: empty {name}" for name in FIELDS if not contract.fields.get(name)
    ]
    for refusal in contract.refusals:
        for fragment in PLACEHOLDER.split(refusal.text):
            if fragment.strip() and not any(fragment in string for string in strings):
                problems.append(f"{contract.where}: error text {fragment!r} not in the code")
    for exception in [refusal.exception for refusal in contract.refusals] + [
        contract.cjson or "InvalidArgumentError"
    ]:
        if not isinstance(getattr(errors, exception, None), type):
            problems.append(f"{contract.where}: no exception {exception!r} in aqless.errors")
    return problems


def problems_of(texts: dict[str, str]) -> list[str]:
    """What is wrong with the contracts of the Lua files `texts` (path -> text)."""
    strings = lua_strings()
    problems: list[str] = []
    named: dict[str, Contract] = {}
    for path, text in texts.items():
        found = parse(text, path)
        if not path.startswith("commands/"):
            problems += [f"{c.where}: a contract outside lua/commands/" for c in found]
            continue
        problems += file_problems(path, text, found)
        for contract in found:
            problems += contract_problems(contract, strings)
            for name in contract.names:
                if name in named:
                    problems.append(f"{contract.where}: {name!r} already has a contract")
                named[name] = contract
    for contract in named.values():
        for other in contract.same_as:
            if other not in named:
                problems.append(f"{contract.where}: 'as {other}' names no contract")
    missing = sorted(set(CLASSIC_COMMANDS + REQLESS_COMMANDS) - set(named))
    problems += [f"command {name!r} has no contract" for name in missing]
    return problems


def module_texts() -> dict[str, str]:
    return {path: lua_text(path) for path in (*library_files(), *command_files())}


def test_every_command_file_opens_with_its_contract_above_its_handler() -> None:
    assert problems_of(module_texts()) == []


def test_the_table_is_what_the_contracts_cover() -> None:
    entries = dispatched(build())
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
    aqless_own |= {"job.sleep", "job.awaitSignal", "job.signal", "job.awaitChildren"}
    aqless_own |= {"job.awaitFirst"}
    aqless_own |= {"throttle.all", "throttle.index", "queue.failedJobs", "recurringJob.getMulti"}
    aqless_own |= {"queue.latency", "jobs.outcomes", "jobs.puts"}
    assert entries == set(CLASSIC_COMMANDS + REQLESS_COMMANDS) | aqless_own
    assert {name for contract in contracts() for name in contract.names} == entries
    assert set(CLASSIC_COMMANDS) == CLASSIC_NAMES


def test_the_shared_modules_hold_no_contract() -> None:
    assert [parse(lua_text(path), path) for path in library_files()] == [[]] * len(library_files())


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


def problems_after(path: str, old: str, new: str) -> list[str]:
    texts = module_texts()
    assert old in texts[path]
    texts[path] = texts[path].replace(old, new, 1)
    return problems_of(texts)


def test_a_removed_contract_is_found() -> None:
    text = lua_text(HEARTBEAT)
    problems = problems_after(HEARTBEAT, text[: text.index("]=]\n") + 4], "")
    assert f"{HEARTBEAT}: 0 contracts, expected one" in problems
    assert "command 'heartbeat' has no contract" in problems
    assert "command 'job.heartbeat' has no contract" in problems


def test_a_command_file_without_a_handler_is_found() -> None:
    problems = problems_after(HEARTBEAT, "Commands['job.heartbeat'] =", "Commands['job.beat'] =")
    assert any("not above its handler Commands['job.heartbeat']" in p for p in problems)


def test_a_handler_whose_parameters_drifted_from_its_args_is_found() -> None:
    problems = problems_after(HEARTBEAT, "worker, data, attempt)", "worker, data)")
    assert any("handler takes ['jid', 'worker', 'data'], Args declare" in p for p in problems)


def test_a_contract_outside_the_commands_is_found() -> None:
    texts = module_texts()
    texts["lib/job.lua"] += lua_text(HEARTBEAT)
    assert any("lib/job.lua" in p and "outside lua/commands/" in p for p in problems_of(texts))


def test_a_missing_field_is_found() -> None:
    problems = problems_after(HEARTBEAT, "  Returns  the new lock expiry time (number)\n", "")
    assert any("heartbeat" in problem and "Returns" in problem for problem in problems)


def test_an_error_text_that_drifted_is_found() -> None:
    problems = problems_after(
        HEARTBEAT,
        "'Heatbeat(): Arg \"worker\" missing'",
        "'Heartbeat(): Arg \"worker\" missing'",
    )
    assert any("Heartbeat(): Arg" in problem for problem in problems)


def test_an_unknown_exception_is_found() -> None:
    problems = problems_after(
        HEARTBEAT,
        "'Heatbeat(): Arg \"worker\" missing'   InvalidArgumentError",
        "'Heatbeat(): Arg \"worker\" missing'   InvalidArgumentErr",
    )
    assert any("no exception 'InvalidArgumentErr'" in problem for problem in problems)


def test_a_contract_of_another_command_is_found() -> None:
    path = "commands/queues.names.lua"
    problems = problems_after(path, "--[=[ queues.names\n", "--[=[ queues.list\n")
    assert any("the file of 'queues.names' must open with its contract" in p for p in problems)


def test_error_texts_are_looked_for_in_the_code_not_in_the_comments() -> None:
    strings = lua_strings()
    assert 'Heatbeat(): Arg "worker" missing' in strings
    assert not any("InvalidArgumentError" in string for string in strings)


def test_errors_of_another_contract_must_name_one() -> None:
    path = "commands/job.requeue.lua"
    problems = problems_after(path, "           as put\n", "           as putt\n")
    assert any("'as putt' names no contract" in problem for problem in problems)


def test_a_long_text_names_its_exception_on_the_next_line() -> None:
    cancel = next(c for c in contracts() if c.names[0] == "job.cancel")
    assert [refusal.exception for refusal in cancel.refusals] == [
        "JobDependedOnError",
        "FlowRunningError",
    ]
    path = "commands/job.cancel.lua"
    problems = problems_after(path, "             JobDependedOnError\n", "")
    assert any("(job.cancel | cancel): no exception for" in problem for problem in problems)
