"""The ```python blocks of the docs site's pages (docs/**/*.md), for the tests that run them.

A block runs as it is unless the line right before its fence is an HTML comment:
``<!-- not run: reason -->`` skips it, ``<!-- cluster -->`` says it needs a Redis Cluster
(its first line names the test that runs it, through tests/support/sharding.py).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).parent.parent.parent / "docs"
FENCE = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)
MARKER = re.compile(r"<!--\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One ```python block: its page (relative to docs/), its rank there, its code and the
    HTML comment right before it ("" when none)."""

    page: str
    number: int
    code: str
    marker: str

    @property
    def name(self) -> str:
        return f"{self.page}:{self.number}"

    @property
    def needs_cluster(self) -> bool:
        return self.marker == "cluster"

    @property
    def skipped(self) -> bool:
        return self.marker.startswith("not run")


def seed(run: str | None) -> int:
    """The order's seed: AQLESS_DOCS_SEED, else one per run (`run`: pytest-xdist's test run
    id, the same in every worker of a run, which must collect the same order), else the
    clock."""
    given = os.environ.get("AQLESS_DOCS_SEED")
    if given:
        return int(given)
    if run:
        return int(run[:12], 16) % 1_000_000
    return time.time_ns() % 1_000_000


def blocks() -> list[Block]:
    """Every ```python block of the docs, page by page in path order."""
    found = []
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        for number, match in enumerate(FENCE.finditer(text), start=1):
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            comment = MARKER.match(before.strip())
            found.append(
                Block(
                    page=path.relative_to(DOCS).as_posix(),
                    number=number,
                    code=match.group(1),
                    marker=comment.group(1) if comment else "",
                )
            )
    return found


def cluster_block(runner: str) -> Block:
    """The one ``<!-- cluster -->`` block whose first line says that `runner` runs it."""
    (block,) = [
        block
        for block in blocks()
        if block.needs_cluster and f"{runner} runs it" in block.code.splitlines()[0]
    ]
    return block
