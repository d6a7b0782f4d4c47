"""benchmarks/compare.py's two-process pickup workload (issue 21): the aqless runner starts
its worker, a producer process of its own puts, and the run reports the pickup's p50 and p99
from the put times the producer wrote into the jobs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

import pytest

from benchmarks import compare
from tests.support import servers
from tests.test_bench_compare import arguments as compare_arguments

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def own_valkey() -> Iterator[str]:
    """A server of the test's own: the workload flushes it."""
    with servers.valkey9() as url:
        yield url


def arguments(rate: float, seconds: float) -> argparse.Namespace:
    """compare.py's options (every one its tables read), with this run's rate and length."""
    return compare_arguments(
        jobs=0, scale_jobs=0, rate=rate, seconds=seconds, timeout=60.0, budget=10.0
    )


def test_the_two_process_pickup_runs_the_producer_apart_and_reports_p50_and_p99(
    own_valkey: str,
) -> None:
    library = compare.Library("aqless", python=sys.executable)
    run = compare.Run("latency_2proc")
    assert run in compare.runs_for(["latency", "latency_2proc"])

    result = compare.run_one(library, run, own_valkey, arguments(rate=50, seconds=0.4))

    assert "error" not in result, result
    assert result["workload"] == "latency_2proc"
    assert result["jobs"] == 20
    assert result["extra"]["samples"] == 20  # every put's job started, and was timed
    # put-to-start delays: positive, and far below the run's own length
    assert 0 < result["p50_ms"] <= result["p99_ms"] < 2000
    library.results[run.key] = [result]
    table = compare.tables([library], arguments(50, 0.4))
    assert "pickup 2-proc p50 ms | pickup 2-proc p99 ms" in table
    assert f"{result['p99_ms']:.2f}" in table
