"""benchmarks/groups.py runs end to end at a tiny size: its fairness figures are exact (the
turns do not depend on the machine); its cost figures are only printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.processes import run_python

pytestmark = pytest.mark.timeout(120)

SCRIPT = Path(__file__).parent.parent / "benchmarks" / "groups.py"


def test_the_groups_benchmark_prints_fairness_and_cost() -> None:
    root = str(SCRIPT.parent.parent)
    arguments = ["--jobs", "100", "--backlog", "200", "--repeat", "1"]
    result = run_python(str(SCRIPT), *arguments, env={"PYTHONPATH": root}, timeout=110)
    out = result.stdout
    started = dict(re.findall(r"^\s+(no groups|groups)\s+.* by pop (\d+)$", out, re.M))
    assert started == {"no groups": "290", "groups": "100"}, out
    assert "starts 300:100 = 3.000:1" in out
    costs = re.findall(r"^\s+(plain|grouped)\s+(1|50)\s+(\d+\.\d)\s+(\d+\.\d)$", out, re.M)
    assert [(queue, batch) for queue, batch, _, _ in costs] == [
        ("plain", "1"),
        ("grouped", "1"),
        ("plain", "50"),
        ("grouped", "50"),
    ], out
    assert len(re.findall(r"groups cost [+-]\d+\.\d% server CPU per lifecycle", out)) == 2
