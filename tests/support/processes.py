"""Python run in a fresh process by the tests: examples, the docs' code blocks, benchmarks."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import aqless

#: The checkout under test, first on the path of the processes: from a worktree, the
#: environment's editable install points at another checkout.
CHECKOUT = str(Path(aqless.__file__).resolve().parent.parent)


def run_python(
    *arguments: str, env: Mapping[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python <arguments>`` in this environment plus `env`, its output captured; the test
    fails, showing the process's stderr, unless it exits 0."""
    path = os.pathsep.join(filter(None, [CHECKOUT, os.environ.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, *arguments],
        env={**os.environ, "PYTHONPATH": path, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result
