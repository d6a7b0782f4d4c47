"""The ACL users of SECURITY.md, read from the file itself, so the tests create exactly what
the documentation tells operators to copy."""

from __future__ import annotations

import re
from pathlib import Path

SECURITY = Path(__file__).resolve().parents[2] / "SECURITY.md"
PASSWORD = "test-password-1234"  # noqa: S105  # a test server's user
ROLES = ("deployer", "producer", "worker", "dashboard", "viewer")


def documented() -> dict[str, list[str]]:
    """role -> the words after ``ACL SETUSER aqless-<role>`` in SECURITY.md."""
    rules: dict[str, list[str]] = {}
    for line in SECURITY.read_text().splitlines():
        match = re.match(r"^ACL SETUSER aqless-(\w+) (.*)$", line)
        if match:
            rules[match.group(1)] = match.group(2).split()
    return rules


def rules_for(role: str, namespace: str | None = None) -> list[str]:
    """The documented rule of `role`, with the test password and, for a namespace, the
    documented substitution of ``ql:`` by ``<namespace>:ql:`` in the patterns."""
    prefix = f"{namespace}:ql:" if namespace else "ql:"
    words = []
    for word in documented()[role]:
        if word == ">CHANGE-ME":
            word = f">{PASSWORD}"
        elif word[:1] in "~&%" and "ql:" in word:
            word = word.replace("ql:", prefix)
        words.append(word)
    return words


def commands(role: str) -> set[str]:
    """The commands (and subcommands) the role's rule allows, lower case."""
    return {word[1:].lower() for word in documented()[role] if word.startswith("+")}
