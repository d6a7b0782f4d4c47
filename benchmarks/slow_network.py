"""Issue 20's slow-network figure: a drain of 5,000 jobs (0.1-2 s each) by two in-process
workers of 25 slots, through a loopback proxy adding 50 ms ± 25 ms each way and resetting a
connection at 1% of the chunks it carries (tests/faults/netem.py), with 3 s locks and no
grace period. Prints the jobs lost, the duplicates, the lock losses (``timed-out`` entries),
the worst time a job's code ran on past the loss of its lock, and the time.

Uses its own Valkey (the embedded binary, on a free loopback port and a temporary folder).

    python benchmarks/slow_network.py [--jobs 5000] [--stall-chance 0.002]
        [--stall-seconds 1.5] [--seed 20]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.faults.netem import Conditions  # noqa: E402
from tests.faults.slow_drain import slow_drain  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5_000)
    parser.add_argument("--reset-chance", type=float, default=0.01)
    parser.add_argument("--stall-chance", type=float, default=0.002)
    parser.add_argument("--stall-seconds", type=float, default=1.5)
    parser.add_argument("--seed", type=int, default=20)
    options = parser.parse_args()
    conditions = Conditions(
        delay=0.05,
        jitter=0.025,
        reset_chance=options.reset_chance,
        stall_chance=options.stall_chance,
        stall_seconds=options.stall_seconds,
        seed=options.seed,
    )
    drain = anyio.run(lambda: slow_drain(options.jobs, conditions, timeout=1_800))
    print(  # noqa: T201
        f"{options.jobs} jobs in {drain.seconds:.1f} s: lost {len(drain.report.lost)}, "
        f"duplicated {drain.report.duplicates}, lock losses {drain.lock_losses} (runs "
        f"cancelled {drain.worker_lost}), worst run past its lost lock "
        f"{max(drain.overruns, default=0.0):.2f} s (bound {drain.renewal:.2f} s), "
        f"invariant violations {len(drain.report.violations)}; network: {drain.tally}"
    )


if __name__ == "__main__":
    main()
