"""What the config page shows beside each option: its meaning, unit and what its value must
be (from its rule, aqless.rules, as aqless.scripts.options finds it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aqless.rules import Rule
from aqless.scripts.options import OPTIONS, describe

__all__ = ["documented"]


def _shown(option: Rule) -> dict[str, str]:
    return {"description": option.meaning, "unit": option.unit, "expected": option.expected()}


def documented(options: Mapping[str, object]) -> dict[str, Any]:
    """What the config page adds to `options` (the server's): `docs`, each one's
    {description, unit, expected} (absent for an unknown one), and `unset`, the known global options
    it lacks, with theirs."""
    docs = {name: _shown(found) for name in options if (found := describe(name)) is not None}
    unset = {name: _shown(found) for name, found in OPTIONS.items() if name not in options}
    return {"docs": docs, "unset": unset}
