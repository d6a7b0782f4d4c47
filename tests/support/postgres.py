"""A real PostgreSQL for the tests: Debian's ``postgresql`` package, a cluster of its own in
a temporary folder (initdb and pg_ctl, run as the ``postgres`` user since the tests run as
root), on a free port of 127.0.0.1, with trust authentication for local connections."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: CI installs PostgreSQL: there its absence fails the tests instead of skipping them.
REQUIRE_POSTGRES = os.environ.get("AQLESS_REQUIRE_POSTGRES") == "1"

USER = "postgres"


def binaries() -> Path | None:
    """The folder of initdb and pg_ctl: the newest of Debian's /usr/lib/postgresql/*/bin,
    else the one on PATH."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parent.parent.name),
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def missing() -> str | None:
    """Why no cluster can be started here, or None when one can."""
    if binaries() is None:
        return "PostgreSQL is not installed (apt-get install postgresql)"
    if shutil.which("runuser") is None:
        return "runuser is missing (util-linux): initdb must run as the postgres user"
    try:
        import pwd

        pwd.getpwnam(USER)
    except KeyError:
        return "there is no postgres user (Debian's postgresql package makes it)"
    if os.geteuid() != 0:
        return "the tests start PostgreSQL as the postgres user, which needs root"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _as_postgres(*command: str) -> None:
    subprocess.run(
        ["runuser", "-u", USER, "--", *command], check=True, capture_output=True, text=True
    )


@contextmanager
def cluster() -> Iterator[str]:
    """Start a throwaway cluster; yield the URL of its ``postgres`` database as SQLAlchemy
    names it with psycopg (``postgresql+psycopg://postgres@127.0.0.1:PORT/postgres``)."""
    folder = binaries()
    assert folder is not None, missing()
    with tempfile.TemporaryDirectory(prefix="aqless-postgres-") as temporary:
        root = Path(temporary)
        data, sockets = root / "data", root / "sockets"
        sockets.mkdir()
        shutil.chown(root, USER)
        shutil.chown(sockets, USER)
        _as_postgres(
            str(folder / "initdb"), "-D", str(data), "--auth=trust", "-U", USER, "--no-sync"
        )
        port = _free_port()
        options = (
            f"-p {port} -c listen_addresses=127.0.0.1 -k {sockets} -c fsync=off"
            " -c max_connections=60"
        )
        _as_postgres(
            str(folder / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"),
            "-w", "start",
        )  # fmt: skip
        try:
            yield f"postgresql+psycopg://{USER}@127.0.0.1:{port}/postgres"
        finally:
            _as_postgres(str(folder / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
