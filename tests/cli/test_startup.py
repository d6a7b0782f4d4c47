"""`aqless --version` and `aqless --help` start without importing any command's module (nor
the client, redis-py, anyio or rich): the catalog lists the commands and their short help,
and it is what the modules define."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys

import click
import pytest

import aqless.cli
from aqless.cli import catalog

#: Modules a start-up must not import (the client and what it stands on, the views).
HEAVY = ("redis", "anyio", "rich", "aqless.client", "aqless.worker", "aqless.cli.runtime")

LOADED = """
import json, sys
from aqless.cli import main
sys.argv = ["aqless", *{args}]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""


def loaded_by(*args: str) -> list[str]:
    """The modules a fresh interpreter holds after running `aqless args...`."""
    code = LOADED.format(args=list(args))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return list(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize("args", [("--version",), ("--help",)], ids=" ".join)
def test_starting_up_imports_no_command_module(args: tuple[str, ...]) -> None:
    modules = loaded_by(*args)
    heavy = [m for m in modules if any(m == h or m.startswith(f"{h}.") for h in HEAVY)]
    assert heavy == []
    commands = [m for m in modules if m.startswith("aqless.cli.")]
    assert sorted(commands) == ["aqless.cli.app", "aqless.cli.basics", "aqless.cli.catalog"]


def test_a_command_runs_once_its_module_is_imported() -> None:
    assert "aqless.cli.throttle" in loaded_by("throttle", "--help")


def test_the_catalog_is_what_the_command_modules_define() -> None:
    defined: set[tuple[str, str]] = set()
    for info in pkgutil.iter_modules(aqless.cli.__path__):
        if info.name == "__main__":  # runs the command
            continue
        module = importlib.import_module(f"aqless.cli.{info.name}")
        for command in getattr(module, "COMMANDS", ()):
            attribute = next(n for n, v in vars(module).items() if v is command)
            defined.add((info.name, attribute))
    assert {(entry.module, entry.attribute) for entry in catalog.ENTRIES} == defined
    for entry in catalog.ENTRIES:
        command = getattr(importlib.import_module(f"aqless.cli.{entry.module}"), entry.attribute)
        assert isinstance(command, click.Command)
        assert command.get_short_help_str(1000) == entry.short_help, entry.name
        if entry.name != "unfail":  # qless's name for `retry`
            assert command.name == entry.name
