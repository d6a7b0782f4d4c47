"""Instructions a server process executes, counted by valgrind's callgrind: a figure that
does not depend on the machine's speed or on what else runs on its cores (hardware counters,
``perf stat -e instructions``, are often not there in a VM; callgrind always is).

Start each server under `wrapper(folder)` (about 50 times slower), then `zero` its counts
before the work and `read` them after.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path


def wrapper(folder: Path) -> tuple[str, ...]:
    """What a server is started under: callgrind, its dumps in `folder`, one set per pid."""
    return (
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={folder}/callgrind.%p",
        "--dump-instr=no",
        "--compress-strings=no",
    )


_SUMMARY = re.compile(r"^(?:summary|totals): (\d+)", re.MULTILINE)


def available() -> bool:
    return shutil.which("valgrind") is not None and shutil.which("callgrind_control") is not None


def zero(pid: int) -> None:
    """Zero process `pid`'s counts (it runs under `wrapper`)."""
    _control("--zero", pid)


def read(pid: int, folder: Path) -> int:
    """The instructions process `pid` executed since its last `zero`: dumped now, read from
    the newest of its dump files in `folder` (the one given to `wrapper`)."""
    _control("--dump", pid)
    dumps = sorted(folder.glob(f"callgrind.{pid}.*"), key=lambda path: int(path.suffix.lstrip(".")))
    if not dumps:
        raise RuntimeError(f"callgrind wrote no dump for process {pid} in {folder}")
    found = _SUMMARY.search(dumps[-1].read_text(errors="replace"))
    if found is None:
        raise RuntimeError(f"no instruction count in {dumps[-1]}")
    return int(found.group(1))


def _control(option: str, pid: int) -> None:
    control = shutil.which("callgrind_control")
    if control is None:
        raise RuntimeError("callgrind_control is not on the PATH (valgrind)")
    subprocess.run(  # noqa: S603  # our own arguments: an option and a pid
        [control, option, str(pid)],
        check=True,
        capture_output=True,
        timeout=60,
    )
