"""A table a person reads, as text, Markdown or CSV; the API hands out the same object (`archcost.Table`)."""

from __future__ import annotations

import csv
import io
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
        widths = [max(len(r[i]) for r in [self.header, *self.cells]) for i in range(len(self.header))]
        line = lambda cells: "  ".join(c.ljust(w) if i < self.text_columns else c.rjust(w)  # noqa: E731
                                       for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()
        rule = "  ".join("-" * w for w in widths)
        body = [self.title, "", line(self.header), rule, *map(line, self.cells)]
        return "\n".join(body + ([""] + self.notes if self.notes else [])) + "\n"

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

    def rows(self) -> list[dict[str, str]]:
        """Each row as {column: cell}."""
        return [dict(zip(self.header, row, strict=True)) for row in self.cells]

    def __str__(self) -> str:
        return self.text()

    def _repr_markdown_(self) -> str:
        return self.markdown()
