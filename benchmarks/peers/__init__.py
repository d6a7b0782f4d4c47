"""Side-by-side runners: one module per job-queue library, the same workloads in each.

Each runner is started by ``benchmarks/compare.py`` in a process of its own, with the Python
of its library's venv (``.bench-venv/<library>/``, made by compare.py) because the peers pin
redis-py versions that cannot live together (arq wants redis<6, taskiq-redis redis>=8). The
runners import nothing from aqless but ``benchmarks.peers._common`` (stdlib only), except
the aqless runner, which runs with the Python that runs compare.py.
"""

from __future__ import annotations

# library -> the pip requirements of its venv (None: the interpreter running compare.py)
LIBRARIES: dict[str, list[str] | None] = {
    "aqless": None,
    "arq": ["arq==0.28.0"],
    "saq": ["saq[redis]==0.26.4", "typing-extensions"],  # saq imports it, undeclared
    "bullmq": ["bullmq==3.4.4"],
    "taskiq": ["taskiq==0.13.0", "taskiq-redis==1.2.4"],
    "streaq": ["streaq==7.2.0"],
    "reqless": ["reqless==0.13.3", "gevent"],  # its GeventWorker runs jobs concurrently
}
# every venv gets these too: uvloop for the asyncio peers, hiredis for redis-py's parser
SPEEDUPS = ["uvloop", "hiredis"]
# rows that run aqless's runner with features on in every run: name -> (runner, --features)
VARIANTS: dict[str, tuple[str, str]] = {"aqless+zstd": ("aqless", "zstd")}
