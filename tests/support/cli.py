"""Running the CLI in tests: in-process through click's CliRunner (in a worker thread,
since each command runs its own event loop), or as the installed `aqless` process."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio.to_thread
from click.testing import CliRunner

from aqless.cli import cli

# Wide enough that rich never wraps a table cell the tests look for.
ENVIRONMENT = {"COLUMNS": "250"}


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        assert self.code == 0, self.stderr
        return json.loads(self.stdout)


class Cli:
    """``await run_cli("queues")``: the CLI against the test server, in-process."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def __call__(self, *args: str, input: str | None = None) -> Outcome:
        runner = CliRunner(env=ENVIRONMENT)
        invoke = partial(runner.invoke, cli, ["--url", self.url, *args], input=input)
        result = await anyio.to_thread.run_sync(invoke)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception  # a crash, not an exit code
        return Outcome(result.exit_code, result.stdout, result.stderr)


def entry_point() -> str:
    """The installed `aqless` console script of this environment."""
    script = Path(sys.executable).with_name("aqless")
    assert script.exists(), f"{script} is missing: pip install -e . installs it"
    return str(script)


def run_process(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [entry_point(), "--url", url, *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
