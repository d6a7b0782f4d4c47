"""The examples run as they are, against a real server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parent.parent / "examples"


def run_example(name: str, server_url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        env={**os.environ, "AQLESS_URL": server_url, "COLUMNS": "120"},
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def test_the_demo_runs_every_job_to_the_end(server_url: str) -> None:
    result = run_example("demo.py", server_url)
    assert result.returncode == 0, result.stderr
    assert "11/11 jobs finished" in result.stdout
    assert "1 retried, 0 failed" in result.stdout  # flaky fails once
    # the worker completes profit (the gnomes' earlier steps complete themselves), stuffing,
    # turkey, flaky, and at least one tick
    completed = int(result.stdout.split(" completed,")[0].rsplit(" ", 1)[1])
    assert completed >= 8 + 3 + 1
    assert "aqless web --namespace aqless-demo" in result.stdout
