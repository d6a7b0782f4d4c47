"""README.md's Python example runs as it is, against a real server. (The guides' examples moved
to docs/ with their text: tests/docs/test_code_blocks.py runs them.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import redis

README = Path(__file__).parent.parent / "README.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_the_readme_has_snippets() -> None:
    assert len(SNIPPETS) == 1


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
@pytest.mark.deployments(
    "valkey9",
    reason="a Python process per snippet, for what the reader's code does; the calls it makes "
    "run on Valkey 9 and Redis 7 in the client and script tests",
)
def test_a_readme_snippet_runs(server_url: str, snippet: str) -> None:
    with redis.Redis.from_url(server_url) as connection:
        connection.flushall()
    environment = {**os.environ, "AQLESS_URL": server_url}
    result = subprocess.run(
        [sys.executable, "-c", snippet],
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
