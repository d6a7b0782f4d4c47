"""benchmarks/groups.py runs end to end at a tiny size: its fairness figures are exact (the
turns do not depend on the machine); its cost figures are only printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks import instructions
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


@pytest.mark.skipif(not instructions.available(), reason="valgrind (callgrind) is not installed")
def test_the_groups_benchmark_counts_instructions_per_lifecycle_under_callgrind() -> None:
    root = str(SCRIPT.parent.parent)
    arguments = ["--instructions", "--jobs", "50"]
    result = run_python(str(SCRIPT), *arguments, env={"PYTHONPATH": root}, timeout=110)
    out = result.stdout
    rows = re.findall(r"^\s+(plain|grouped)\s+(1|50)((?:\s+\d+\.\d){4})$", out, re.M)
    assert [(queue, batch) for queue, batch, _ in rows] == [
        ("plain", "1"),
        ("grouped", "1"),
        ("plain", "50"),
        ("grouped", "50"),
    ], out
    for _, _, figures in rows:
        put, pop, complete, lifecycle = (float(figure) for figure in figures.split())
        # each phase is a script call: many thousands of instructions per job
        assert min(put, pop, complete) > 10
        assert lifecycle == pytest.approx(put + pop + complete, abs=0.2)
    found = re.findall(r"groups cost [+-]\d+\.\d% server instructions per lifecycle", out)
    assert len(found) == 2, out
