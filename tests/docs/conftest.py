"""Prints the seed that shuffled the docs' code blocks (tests/docs/test_code_blocks.py)."""

from __future__ import annotations

import sys

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    module = sys.modules.get("tests.docs.test_code_blocks")
    if module is not None:
        terminalreporter.write_line(module.pytest_terminal_summary_seed())
