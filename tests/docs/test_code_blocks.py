"""Every ```python block of the docs site (docs/**/*.md) runs twice, as it is, on one
embedded Valkey server that is never flushed: as a reader who pastes the blocks in any order
into the server ``Client()`` starts. So each block must use names of its own, assert only
what it made and undo what it changes for everyone (limits, settings).

The runs (two per block) are shuffled: the seed is printed at the end of the run, and
AQLESS_DOCS_SEED=<seed> repeats an order. The pytest-xdist workers of a run share the
server (in the run's temporary folder; the last worker done stops it), and a block's two
runs never overlap. Each run is a fork of one process that imported the blocks' modules
once (tests/support/block_runner.py).

Blocks marked ``<!-- cluster -->`` run on a Cluster in the test their first line names
(tests/support/sharding.py, run_docs_snippet); ``<!-- not run: reason -->`` skips one."""

from __future__ import annotations

import fcntl
import hashlib
import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from aqless import embedded
from tests.support.block_runner import BlockRunner, imported_modules
from tests.support.docs import Block, blocks, seed
from tests.support.processes import CHECKOUT

SEED = seed(os.environ.get("PYTEST_XDIST_TESTRUNUID"))
ALL = blocks()
RUN = [block for block in ALL if not block.needs_cluster and not block.skipped]
ROUNDS = [(block, round_) for block in RUN for round_ in (1, 2)]
random.Random(SEED).shuffle(ROUNDS)  # noqa: S311 (an order, not a secret)
# a round 2 before its round 1 would only swap names: number them in the order they run
_seen: set[str] = set()
for _index, (_block, _) in enumerate(ROUNDS):
    ROUNDS[_index] = (_block, 2 if _block.name in _seen else 1)
    _seen.add(_block.name)


def pytest_terminal_summary_seed() -> str:
    return f"docs code blocks shuffled with AQLESS_DOCS_SEED={SEED}"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="module")
def docs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The folder of the embedded server every block of the run uses: one for all the
    pytest-xdist workers (their temporary folders' parent), started by the first, stopped
    by the last (its data stays on disk until pytest deletes old temporary folders)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "docs-server"
    folder.mkdir(exist_ok=True)
    user = folder / f"user-{os.getpid()}"
    with _locked(folder / "users.lock"):
        user.touch()
        embedded.start(folder)
    yield folder
    with _locked(folder / "users.lock"):
        user.unlink()
        if not any(folder.glob("user-*")):
            embedded.stop(folder)


@pytest.fixture(scope="module")
def runner() -> Iterator[BlockRunner]:
    path = os.pathsep.join(filter(None, [CHECKOUT, os.environ.get("PYTHONPATH")]))
    with BlockRunner(imported_modules(block.code for block in RUN), path) as started:
        yield started


def test_the_docs_have_code_blocks() -> None:
    assert len(RUN) >= 30
    assert {block.page for block in ALL} >= {"guides/worker.md", "troubleshooting.md"}
    runs = sorted((block.name, round_) for block, round_ in ROUNDS)
    assert runs == sorted((block.name, round_) for block in RUN for round_ in (1, 2))


def test_every_cluster_block_is_run_by_the_test_it_names() -> None:
    root = Path(__file__).parent.parent.parent
    cluster = [block for block in ALL if block.needs_cluster]
    assert len(cluster) >= 2
    for block in cluster:
        first = block.code.splitlines()[0]
        assert first.startswith("# needs a Cluster: "), block.name
        assert first.endswith(" runs it"), block.name
        runner = first.removeprefix("# needs a Cluster: ").removesuffix(" runs it")
        source = (root / runner).read_text(encoding="utf-8")
        assert f'run_docs_snippet(cluster, "{runner}"' in source, block.name


@pytest.mark.parametrize(
    ("block", "round_"), ROUNDS, ids=[f"{block.name}#{round_}" for block, round_ in ROUNDS]
)
def test_a_docs_code_block_runs(
    docs_server: Path, runner: BlockRunner, block: Block, round_: int
) -> None:
    url = embedded.start(docs_server).url  # the same server, found again
    lock = docs_server / f"{hashlib.sha256(block.name.encode()).hexdigest()[:16]}.lock"
    env = {"AQLESS_URL": url, "AQLESS_HOME": str(docs_server)}
    with _locked(lock):  # its other run, on another worker, is done
        returncode, output = runner.run(block.name, block.code, env, timeout=60)
    assert returncode == 0, f"{block.name} run {round_} (AQLESS_DOCS_SEED={SEED}):\n{output}"
