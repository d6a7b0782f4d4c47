"""What the config page shows beside each option: its meaning and unit (from the one table
of options, aqless.scripts.options)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aqless.scripts.options import OPTIONS, Option, describe

__all__ = ["documented"]


def _shown(option: Option) -> dict[str, str]:
    return {"description": option.description, "unit": option.unit}


def documented(options: Mapping[str, object]) -> dict[str, Any]:
    """What the config page adds to `options` (the server's): `docs`, each one's
    {description, unit} (absent for an unknown one), and `unset`, the known global options
    it lacks, with theirs."""
    docs = {name: _shown(found) for name in options if (found := describe(name)) is not None}
    unset = {name: _shown(found) for name, found in OPTIONS.items() if name not in options}
    return {"docs": docs, "unset": unset}
