"""The page's requests as data: the spec text being edited, the counting conventions, the request shape.
Values are only typed here; the Python API checks them and says what is wrong, as the CLI does."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from archcost.dsl.loader import MAX_FILE_BYTES


class SpecText(BaseModel):
    """The editor's text, and the served spec file it stands for (its folder is where `use` reads)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(max_length=MAX_FILE_BYTES)
    file: str | None = None  # a real path, set by the server from the name the page sent, never by the page

    @property
    def shown(self) -> str:
        return shown(self.file)


def shown(file: str | None) -> str:
    """The name the compiler gives a spec text standing for `file` in its spans and errors."""
    return Path(file).name if file else "<text>"


class Conventions(BaseModel):
    """The counting conventions and the spec's options (the CLI's flags; docs/conventions.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ledger: str = "chapter"
    logits: str = "last"
    attention: str | None = None
    vector_params: str | None = None
    routing: str = "uniform"
    weights: str | None = None
    scales: str = "logical"
    options: dict[str, str] = {}

    def load_arguments(self) -> dict:
        return self.model_dump()


class Scenario(BaseModel):
    """One call's shape: the phase, B requests with S cached positions, P new ones, G generated."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    phase: str = "prefill"
    B: int = 1
    S: int = 0
    P: int | None = None
    G: int = 1

    def shape(self) -> dict:
        """B, S, P, G as the API takes them; P left out is the API's default (1 for decode, else 8192)."""
        shape = {"B": self.B, "S": self.S, "P": self.P, "G": self.G}
        return shape if self.P is not None else {k: v for k, v in shape.items() if k != "P"}
