"""Small pieces of the terminal views: times, durations, short texts, tables."""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from aqless.cli.long_table import LongTable
from aqless.ops.durations import duration as duration
from aqless.ops.durations import plural as plural
from aqless.ops.durations import relative


def moment(epoch: float) -> str:
    """Local date and time of an epoch, or ``-`` for none."""
    if not epoch:
        return "-"
    return datetime.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M:%S")


def ago(epoch: float) -> str:
    """``3 min 20 s ago`` or ``in 12 s``."""
    return relative(epoch - time.time())


def number(value: float) -> str:
    """An integer without its ``.0``; other numbers as they are."""
    return str(int(value)) if float(value).is_integer() else str(value)


def short(value: Any, width: int = 60) -> str:
    """A one-line text of at most `width` characters (JSON for non-strings)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def joined(values: Iterable[str]) -> str:
    return ", ".join(values) or "-"


#: what `table` draws
TableView = Table | LongTable

#: past this many rows a table is drawn a line at a time (aqless.cli.long_table)
LONG = 200


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> TableView:
    """A table; columns whose name ends with ``#`` hold numbers and align right."""
    cells = [[cell if isinstance(cell, Text) else str(cell) for cell in row] for row in rows]
    if len(cells) > LONG:
        return LongTable(title, columns, cells)
    view = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    for column in columns:
        if column.endswith("#"):
            view.add_column(column[:-1], justify="right")
        else:
            view.add_column(column)
    for row in cells:
        view.add_row(*row)
    return view


def fields(pairs: Iterable[tuple[str, Any]]) -> Table:
    """A two-column view of names and values."""
    view = Table.grid(padding=(0, 2))
    view.add_column(style="bold")
    view.add_column()
    for name, value in pairs:
        view.add_row(name, value if isinstance(value, Text) else str(value))
    return view
