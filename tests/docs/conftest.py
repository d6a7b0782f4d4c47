"""Prints the seed that shuffled the docs' code blocks (tests/docs/test_code_blocks.py)."""

from __future__ import annotations

import sys

import pytest

from tests.support.docs import seed


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    module = sys.modules.get("tests.docs.test_code_blocks")
    if module is not None:  # collected here: no pytest-xdist
        terminalreporter.write_line(module.pytest_terminal_summary_seed())
        return
    # under pytest-xdist the workers collect; their seed comes from the run's id
    session = terminalreporter.config.pluginmanager.getplugin("dsession")
    run = getattr(getattr(session, "nodemanager", None), "testrunuid", None)
    if run is not None:
        shown = seed(run)
        terminalreporter.write_line(f"docs code blocks shuffled with AQLESS_DOCS_SEED={shown}")
