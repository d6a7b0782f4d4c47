"""benchmarks/sharded.py runs end to end at a tiny size (its figures are not checked: the
machine running tests is busy)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks import instructions
from tests.support.processes import run_python

pytestmark = pytest.mark.timeout(120)

TINY = "--jobs 60 --shards 1,3 --idle 0 --processes 1 --concurrency 6"
#: the script calls that carry a job's outcome: alone, with the next pop, several together
OUTCOME_CALLS = ("job.complete", "queue.popAfter", "jobs.outcomes")
SCRIPT = Path(__file__).parent.parent.parent / "benchmarks" / "sharded.py"


def test_the_sharded_benchmark_prints_its_three_figures_for_each_shard_count() -> None:
    result = run_python(str(SCRIPT), *TINY.split(), timeout=110)
    sections = re.split(r"^\n(?=per job on|µs CPU|the workers' script)", result.stdout, flags=re.M)
    figures, alone, counts, calls = sections
    rows = re.findall(r"^\s+([13])\s+(\d+\.\d+)\s+(.*)$", figures, re.MULTILINE)
    assert [row[0] for row in rows] == ["1", "3"], result.stdout
    one, three = rows
    assert float(one[1]) == 1.0  # one shard holds every job
    assert float(three[1]) < 3.0
    assert len(three[2].split()) == 3 + 3 + 3  # CPU and FCALL on each primary, three rates
    # commands, FCALLs, reads, waits and preemptions per job on each primary
    rows = re.findall(r"^\s+([13])\s+(\d.*)$", counts, re.MULTILINE)
    assert [(shards, len(row.split())) for shards, row in rows] == [("1", 5), ("3", 15)]
    commands, fcalls = (float(figure) for figure in rows[0][1].split()[:2])
    # the puts and the outcomes go as script calls, each of many jobs at most (put_many's
    # runs of puts, the worker's outcomes), which run commands
    assert commands > fcalls > 0
    # each primary's CPU per job with the jobs on its shard alone: three shards, three figures
    assert [len(row.split()) for row in re.findall(r"^\s+3\s+(\d.*)$", alone, re.M)] == [3]
    # the workers' script calls per job: each job's outcome alone, with the next pop, or
    # several outcomes in one call (jobs.outcomes): at most one call a job, and some
    for shards in ("1", "3"):
        (line,) = re.findall(rf"^\s+{shards}\s+(.*)$", calls, re.MULTILINE)
        sent = {name: float(n) for name, n in (part.rsplit(" ", 1) for part in line.split("  "))}
        outcomes = sum(sent.get(name, 0) for name in OUTCOME_CALLS)
        assert 0 < outcomes <= 1 + 1e-6, sent
    assert "drained 60/60" in result.stderr
    assert "3 shard(s): the busiest primary's CPU per job is" in result.stdout


def test_the_sharded_pickup_benchmark_times_both_kinds_of_worker() -> None:
    arguments = ["--jobs", "12", "--rate", "50", "--repeat", "1"]
    result = run_python(str(SCRIPT.parent / "sharded_pickup.py"), *arguments, timeout=110)
    rows = re.findall(
        r"^(pushed jobs|put event \+ pop)\s+1\s+(\d+)\s+(\S+)\s+(\S+)$", result.stdout, re.M
    )
    assert [(label, int(started)) for label, started, _, _ in rows] == [
        ("pushed jobs", 12),
        ("put event + pop", 12),
    ], result.stdout
    for _, _, p50, p99 in rows:
        assert 0 < float(p50) <= float(p99)


@pytest.mark.skipif(not instructions.available(), reason="valgrind (callgrind) is not installed")
def test_the_sharded_benchmark_counts_instructions_per_job_under_callgrind() -> None:
    arguments = "--jobs 40 --shards 1,2 --idle 0 --processes 1 --concurrency 6 --no-alone"
    result = run_python(str(SCRIPT), *arguments.split(), "--instructions", "20", timeout=110)
    counted = result.stdout.split("instructions per job on each primary", 1)[1]
    rows = re.findall(r"^\s+([12])\s+([\d ]+?)\s+busiest (\d+\.\d+)x", counted, re.MULTILINE)
    assert [(shards, len(figures.split())) for shards, figures, _ in rows] == [
        ("1", 1),
        ("2", 2),
    ], result.stdout
    assert float(rows[0][2]) == 1.0
    # a job's put, pop and complete are scripts: many thousands of instructions each
    assert all(int(figure) > 10_000 for _, figures, _ in rows for figure in figures.split())
    assert "projected drain" in counted
