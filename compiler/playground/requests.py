"""The page's requests as data: the spec text being edited, the counting conventions, the request shape.
Values are only typed here; the Python API checks them and says what is wrong, as the CLI does."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from archcost.dsl.loader import MAX_FILE_BYTES


class SpecText(BaseModel):
    """The editor's text, and the served spec file it stands for (its folder is where `use` reads)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: StrictStr = Field(max_length=MAX_FILE_BYTES)
    file: StrictStr | None = None  # a real path, set by the server from the name the page sent, never by the page

    @property
    def shown(self) -> str:
        return shown(self.file)


def shown(file: str | None) -> str:
    """The name the compiler gives a spec text standing for `file` in its spans and errors."""
    return Path(file).name if file else "<text>"


class Settings(BaseModel):
    """How a model is loaded: the counting conventions and the spec's options, as the CLI's flags give them
    (docs/conventions.md); the request field `conventions` carries it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ledger: StrictStr = "chapter"
    logits: StrictStr = "last"
    attention: StrictStr | None = None
    vector_params: StrictStr | None = None
    routing: StrictStr = "uniform"
    weights: StrictStr | None = None
    kv: StrictStr | None = None
    scales: StrictStr = "logical"
    options: dict[StrictStr, StrictStr] = Field(default={}, max_length=64)

    def load_arguments(self) -> dict:
        return self.model_dump()


class Scenario(BaseModel):
    """One call's shape: the phase, B requests with S cached positions, P new ones, G generated."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    phase: StrictStr = "prefill"
    B: StrictInt = 1
    S: StrictInt = 0
    P: StrictInt | None = None
    G: StrictInt = 1

    def shape(self) -> dict:
        """B, S, P, G as the API takes them; P left out is the API's default (1 for decode, else 8192)."""
        shape = {"B": self.B, "S": self.S, "P": self.P, "G": self.G}
        return shape if self.P is not None else {k: v for k, v in shape.items() if k != "P"}


NAME = Field(default=None, max_length=200)  # a device, a link, a table, a layout, an op: short words


class Request(BaseModel):
    """One request of the page, every field typed: a field the method does not take, or one of the wrong type, is
    refused (E111) before anything is compiled."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: SpecText | None = None
    specs: list[SpecText] | None = Field(default=None, min_length=1, max_length=16)
    conventions: Settings = Settings()
    scenario: Scenario = Scenario()
    table: StrictStr = Field(default="summary", max_length=200)
    node: StrictStr | None = NAME
    blocks: StrictBool = False
    layout: StrictStr | None = NAME
    degrees: StrictStr = Field(default="", max_length=200)
    device: StrictStr | None = NAME
    link: StrictStr | None = NAME
    config: StrictStr | None = Field(default=None, max_length=MAX_FILE_BYTES)
    file: StrictStr = Field(default="config.json", max_length=1000)


# what each method needs and what it may be sent besides (the page's fields, docs/playground.md)
FIELDS = {
    "compile": ({"spec"}, {"conventions", "scenario"}),
    "evaluate": ({"spec"}, {"conventions", "scenario"}),
    "node": ({"spec", "node"}, {"conventions", "scenario"}),
    "formulas": ({"spec"}, {"conventions", "scenario"}),
    "diagram": ({"spec"}, {"conventions", "scenario", "blocks", "layout"}),
    "layout": ({"spec"}, {"conventions", "scenario", "degrees", "device", "link"}),
    "plots": ({"spec"}, {"conventions", "scenario", "device"}),
    "compare": ({"specs"}, {"conventions", "scenario", "table"}),
    "import": ({"config"}, {"file"}),
}


class Malformed(ValueError):
    """A request that lacks a field its method needs, or sends one it does not take."""


def request(method: str, payload: dict) -> Request:
    """The payload of `method` as a Request, or Malformed (or pydantic's ValidationError) naming the first field
    that is missing, not the
    method's, or of the wrong type."""
    needed, allowed = FIELDS[method]
    missing = sorted(field for field in needed if payload.get(field) is None)
    if missing:
        raise Malformed(f"`{method}` needs the field `{missing[0]}`")
    stray = sorted(set(payload) - needed - allowed)
    if stray:
        raise Malformed(f"`{method}` takes no field `{stray[0]}`"[:200])
    return Request(**payload)


def described(error) -> str:
    """A pydantic ValidationError as one line: the first field that is wrong, and what it should be."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the request"
    return f"`{where}`: {first['msg']}"[:300]
