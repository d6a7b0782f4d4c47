"""A table of many rows, drawn a line at a time.

rich's Table measures and wraps every cell, which takes about a second for a thousand rows.
A long listing is drawn here instead, in the same look (a bold header over a rule, columns
apart by spaces, numbers on the right): each column as wide as its widest cell, and the
widest columns cut short with an ellipsis when the lines would not fit the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

__all__ = ["LongTable"]

#: what a cut cell ends with
_ELLIPSIS = "…"
#: the narrowest a column is cut to
_NARROWEST = 4


@dataclass(frozen=True)
class LongTable:
    """`rows` under `columns` (and `title`); a column whose name ends with ``#`` aligns
    right."""

    title: str | None
    columns: Sequence[str]
    rows: Sequence[Sequence[str | Text]]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        names = [column.removesuffix("#") for column in self.columns]
        right = [column.endswith("#") for column in self.columns]
        widths = _fitted(_widths(names, self.rows), options.max_width)
        yield Text(self.title or "", style="italic", no_wrap=True)
        yield Text(_line(names, widths, right), style="bold", no_wrap=True)
        yield Text(" " + "─" * (sum(widths) + 3 * len(widths) - 1), no_wrap=True)
        for row in self.rows:
            yield _styled_line(row, widths, right)
        yield Text()


def _widths(names: Sequence[str], rows: Sequence[Sequence[str | Text]]) -> list[int]:
    widths = [cell_len(name) for name in names]
    for row in rows:
        for index, cell in enumerate(row):
            width = cell.cell_len if isinstance(cell, Text) else cell_len(cell)
            if width > widths[index]:
                widths[index] = width
    return widths


def _fitted(widths: list[int], most: int) -> list[int]:
    """`widths` with the widest cut, one cell at a time, until a line fits `most` cells."""
    fitted = list(widths)
    excess = sum(fitted) + 3 * len(fitted) + 1 - most
    while excess > 0:
        widest = max(range(len(fitted)), key=fitted.__getitem__)
        if fitted[widest] <= _NARROWEST:
            break
        fitted[widest] -= 1
        excess -= 1
    return fitted


def _fit(text: str, width: int, right: bool) -> str:
    if cell_len(text) > width:
        text = set_cell_size(text, width - 1) + _ELLIPSIS
    padding = " " * (width - cell_len(text))
    return padding + text if right else text + padding


def _line(cells: Sequence[str], widths: Sequence[int], right: Sequence[bool]) -> str:
    return "  " + "   ".join(
        _fit(cell, width, flush) for cell, width, flush in zip(cells, widths, right, strict=True)
    )


def _styled_line(row: Sequence[str | Text], widths: Sequence[int], right: Sequence[bool]) -> Text:
    """One row; a rich Text cell keeps its style."""
    if not any(isinstance(cell, Text) for cell in row):
        return Text(_line([str(cell) for cell in row], widths, right), no_wrap=True)
    line = Text("  ", no_wrap=True)
    for index, (cell, width, flush) in enumerate(zip(row, widths, right, strict=True)):
        if index:
            line.append("   ")
        if isinstance(cell, Text):
            line.append_text(_fitted_text(cell, width, flush))
        else:
            line.append(_fit(cell, width, flush))
    return line


def _fitted_text(cell: Text, width: int, right: bool) -> Text:
    fitted = cell.copy()
    fitted.truncate(width, overflow="ellipsis", pad=False)
    padding = width - fitted.cell_len
    if right:
        fitted.pad_left(padding)
    else:
        fitted.pad_right(padding)
    return fitted
