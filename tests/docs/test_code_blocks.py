"""Every ```python block of the docs site (docs/**/*.md) runs as it is, in a process of its
own, against one shared Valkey 9: each block on its own database, flushed before it runs, so
the blocks pass in any order. Their order is shuffled: the seed is printed at the end of the
run, and AQLESS_DOCS_SEED=<seed> repeats an order.

Blocks marked ``<!-- cluster -->`` run on a Cluster in the test their first line names
(tests/support/sharding.py, run_docs_snippet); ``<!-- not run: reason -->`` skips one."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.support import servers
from tests.support.docs import Block, blocks
from tests.support.processes import run_python


def _seed() -> int:
    """The order's seed: AQLESS_DOCS_SEED, else one per run (the same in every pytest-xdist
    worker of a run, which must collect the same order), else the clock."""
    given = os.environ.get("AQLESS_DOCS_SEED")
    if given:
        return int(given)
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run:
        return int(run[:12], 16) % 1_000_000
    return time.time_ns() % 1_000_000


SEED = _seed()
ALL = blocks()
RUN = [block for block in ALL if not block.needs_cluster and not block.skipped]
random.Random(SEED).shuffle(RUN)  # noqa: S311 (an order, not a secret)
#: databases 1..15 of the server, one per block in turn (each flushed before its block)
DATABASES = 15


def pytest_terminal_summary_seed() -> str:
    return f"docs code blocks shuffled with AQLESS_DOCS_SEED={SEED}"


@pytest.fixture(scope="module")
def docs_server() -> Iterator[str]:
    """One Valkey 9 for every block of this module."""
    with servers.valkey9() as url:
        yield url


def test_the_docs_have_code_blocks() -> None:
    assert len(RUN) >= 30
    assert {block.page for block in ALL} >= {"guides/worker.md", "troubleshooting.md"}


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


@pytest.mark.parametrize("block", RUN, ids=[block.name for block in RUN])
def test_a_docs_code_block_runs(docs_server: str, block: Block) -> None:
    database = RUN.index(block) % DATABASES + 1
    with redis.Redis.from_url(docs_server, db=database) as connection:
        connection.flushdb()
    url = f"{docs_server}?db={database}"
    try:
        run_python("-c", block.code, env={"AQLESS_URL": url}, timeout=60)
    except AssertionError as error:
        raise AssertionError(f"{block.name} (AQLESS_DOCS_SEED={SEED}): {error}") from None
