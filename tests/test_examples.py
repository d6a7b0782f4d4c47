"""The examples run as they are, against a real server."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.processes import run_python

EXAMPLES = Path(__file__).parent.parent / "examples"


def run_example(name: str, server_url: str) -> subprocess.CompletedProcess[str]:
    return run_python(
        str(EXAMPLES / name), env={"AQLESS_URL": server_url, "COLUMNS": "120"}, timeout=90
    )


def test_the_demo_runs_every_job_to_the_end(server_url: str) -> None:
    result = run_example("demo.py", server_url)
    assert "11/11 jobs finished" in result.stdout
    assert "1 retried, 0 failed" in result.stdout  # flaky fails once
    # the worker completes profit (the gnomes' earlier steps complete themselves), stuffing,
    # turkey, flaky, and at least one tick
    completed = int(result.stdout.split(" completed,")[0].rsplit(" ", 1)[1])
    assert completed >= 8 + 3 + 1
    assert "aqless web --namespace aqless-demo" in result.stdout
