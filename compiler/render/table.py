"""A table a person reads, as text, Markdown or CSV; the API hands out the same object (`archcost.Table`)."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass


@dataclass
class Table:
    """A title, a header and rows of cells (text), and notes under them; a notebook shows its Markdown."""

    title: str
    header: list[str]
    cells: list[list[str]]
    notes: list[str]
    text_columns: int = 1  # leading columns of words, aligned left; the numbers after them right

    def text(self) -> str:
        """The table in at most WIDTH columns where it can be: a wider one wraps its headers at spaces and its
        cells at their ` + ` and `, ` joins, each row as tall as its tallest cell; notes wrap at WIDTH."""
        widths, gap = _widths(self.header, self.cells)
        body = [self.title, ""]
        for index, row in enumerate([self.header, *self.cells]):
            cells = [_wrapped(c, w, words=index == 0) for c, w in zip(row, widths, strict=True)]
            height = max(len(c) for c in cells)
            cells = [([""] * (height - len(c)) + c) if index == 0 else c + [""] * (height - len(c)) for c in cells]
            for depth in range(height):
                body.append(gap.join(c[depth].ljust(w) if i < self.text_columns else c[depth].rjust(w)
                                      for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip())
            if index == 0:
                body.append(gap.join("-" * w for w in widths))
        notes = [line for note in self.notes for line in _note_lines(note)]
        return "\n".join(body + ([""] + notes if notes else [])) + "\n"

    def markdown(self) -> str:
        out = [f"**{self.title}**", "", "| " + " | ".join(self.header) + " |",
               "|" + "|".join("---" if i == 0 else "---:" for i in range(len(self.header))) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in self.cells]
        return "\n".join(out + ([""] + self.notes if self.notes else [])) + "\n"

    def csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerows([self.header, *self.cells])
        return buffer.getvalue()

    def rows(self) -> list[dict[str, str | int | float]]:
        """Each row as {column: value}: a cell that prints a number is that number (`19,793.63` is 19793.63,
        `41.5%` is 41.5; the unit stays in the column's name, as the header prints it), any other its text."""
        return [{name: number_of(cell) for name, cell in zip(self.header, row, strict=True)} for row in self.cells]

    def to_pandas(self):
        """The rows as a pandas DataFrame (pandas is not a dependency of archcost: `pip install pandas`)."""
        return pandas().DataFrame(self.rows(), columns=self.header)

    def __str__(self) -> str:
        return self.text()

    def _repr_markdown_(self) -> str:
        return self.markdown()


WIDTH = 120  # columns of a terminal a table keeps within where its cells allow
JOINS = re.compile(r"(?<=[+,]) ")  # where a cell may break: after ` +` or `,`


def _widths(header: list[str], cells: list[list[str]]) -> tuple[list[int], str]:
    """Each column's width and the gap between columns: its widest cell, or where the row is wider than WIDTH,
    no narrower than its longest unbreakable piece (a header word, a cell's part between joins), the room left
    going whole to the columns that need least of it; the gap narrows to one space where two leave no room."""
    natural = [max(len(r[i]) for r in [header, *cells]) for i in range(len(header))]
    least = [max([*(len(w) for w in header[i].split()), *(len(p) for r in cells for p in JOINS.split(r[i]))] or [1])
             for i in range(len(header))]
    for gap in ("  ", " "):
        room = WIDTH - len(gap) * (len(header) - 1)
        if sum(natural) <= room:
            return natural, gap
        if sum(least) <= room:
            break
    spare, widths = max(0, room - sum(least)), list(least)
    for index in sorted(range(len(widths)), key=lambda i: natural[i] - least[i]):  # the least wrapping first
        given = min(spare, natural[index] - least[index])
        widths[index] += given
        spare -= given
    return widths, gap


def _wrapped(text: str, width: int, words: bool) -> list[str]:
    """A cell in lines of at most `width` (a header at its spaces, a cell at its joins); a piece longer than the
    width keeps its own line."""
    if len(text) <= width:
        return [text]
    pieces = text.split() if words else JOINS.split(text)
    lines = [pieces[0]]
    for piece in pieces[1:]:
        if len(lines[-1]) + 1 + len(piece) <= width:
            lines[-1] += " " + piece
        else:
            lines.append(piece)
    return lines


def _note_lines(note: str) -> list[str]:
    import textwrap

    return textwrap.wrap(note, WIDTH, break_long_words=False, break_on_hyphens=False) or [note]


NUMBER = re.compile(r"[+\-−]?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?%?")


def number_of(cell: str) -> str | int | float:
    """A printed number as the number it prints (thousands separators and a trailing % dropped), else the text."""
    text = cell.strip()
    if not NUMBER.fullmatch(text):
        return cell
    plain = text.replace(",", "").replace("−", "-").rstrip("%")
    return int(plain) if plain.lstrip("+-").isdigit() else float(plain)


def pandas():
    """pandas, imported when a frame is asked for: an optional library, named in the error when it is missing."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_pandas() needs pandas, which archcost does not install: pip install pandas") from None
    return pd
