"""benchmarks/workflow_timers.py, small: it parks workflows (checking they hold no slot),
signals them, fires timers, and prints each figure."""

from __future__ import annotations

import argparse

import pytest

from benchmarks import workflow_timers

pytestmark = pytest.mark.timeout(60)


async def test_the_workflow_benchmark_prints_its_figures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    options = argparse.Namespace(
        parked=20, timers=20, spread=0.5, lead=1.5, concurrency=10, interval=5.0
    )
    await workflow_timers.run(options)
    printed = capsys.readouterr().out
    assert "parked: 20 workflows" in printed
    assert "none holds a slot" in printed
    assert "memory per parked workflow" in printed
    assert "signal to resume, 10 signals" in printed
    assert "timers: 20 over 0.5 s" in printed
