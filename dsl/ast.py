"""The syntax tree of a `.arch` file: plain pydantic data with source spans, no sympy."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from .errors import Span


class Node(BaseModel):
    """Equality and dumps ignore spans and notes: the same text anywhere in a file is the same tree."""

    # each class's validator is built when the class is first used, not at import: a cold `eval` builds those its
    # spec's syntax uses (a few milliseconds of the 32 classes' 36)
    model_config = ConfigDict(frozen=True, defer_build=True)

    span: Span | None = Field(default=None, repr=False, exclude=True)
    # a comment a generated tree carries for the printer (the importer cites config fields); the parser
    # leaves it empty: a parsed file's comments are placed from the source text
    note: str | None = Field(default=None, repr=False, exclude=True)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.model_dump() == other.model_dump()

    def __hash__(self) -> int:
        return hash(repr(self.model_dump()))


# --- expressions -------------------------------------------------------------------------


class Num(Node):
    kind: Literal["num"] = "num"
    text: str  # digits as written, underscores removed: exact, never a float


class Name(Node):
    kind: Literal["name"] = "name"
    id: str


class Bool(Node):
    kind: Literal["bool"] = "bool"
    value: bool


class BinOp(Node):
    kind: Literal["binop"] = "binop"
    op: Literal["+", "-", "*", "/", "//", "^", "==", "!=", "<", "<=", ">", ">="]
    left: Expr
    right: Expr


class Neg(Node):
    kind: Literal["neg"] = "neg"
    operand: Expr


class Call(Node):
    kind: Literal["call"] = "call"
    func: str
    args: list[Expr]


class Tuple(Node):
    kind: Literal["tuple"] = "tuple"
    items: list[Expr]


Expr = Annotated[Num | Name | Bool | BinOp | Neg | Call | Tuple, Field(discriminator="kind")]


# --- arguments ---------------------------------------------------------------------------


class Positional(Node):
    kind: Literal["positional"] = "positional"
    value: Expr


class Keyword(Node):
    kind: Literal["keyword"] = "keyword"
    name: str
    value: Expr


class Signature(Node):
    """`in -> out`: the width a matrix-like op reads and the width it writes."""

    kind: Literal["signature"] = "signature"
    source: Expr
    target: Expr


Arg = Annotated[Positional | Keyword | Signature, Field(discriminator="kind")]


# --- statements --------------------------------------------------------------------------


class Binding(Node):
    kind: Literal["binding"] = "binding"
    name: str
    value: Expr


class Setting(Node):
    role: str
    format: str


class Option(Node):
    """`option mla_cache = compressed`: a named execution path, overridable per run."""

    kind: Literal["option"] = "option"
    name: str
    value: str
    alternatives: list[str] = []  # the other words a run may choose


class Precision(Node):
    kind: Literal["precision"] = "precision"
    settings: list[Setting]


class Component(Node):
    kind: Literal["component"] = "component"
    name: str


class Replay(Node):
    """`replay 128`: the scope runs on the last min(P, 128) new positions of each request only."""

    kind: Literal["replay"] = "replay"
    tail: Expr


class Require(Node):
    """`require window >= 0, "..."`: a block's check of its arguments; false at a call is an error there."""

    kind: Literal["require"] = "require"
    condition: Expr
    message: str


class Repeat(Node):
    """`repeat N { ... }`: N layers, each its own weights; `loop N { ... }` (shared): the body's weights held once
    and run N times over (a looped or recurrent-depth model's passes)."""

    kind: Literal["repeat"] = "repeat"
    count: Expr
    label: str | None = None
    body: list[Stmt]
    shared: bool = False


class Arm(Node):
    count: Expr
    label: str
    body: list[Stmt]


class Select(Node):
    kind: Literal["select"] = "select"
    arms: list[Arm]


class If(Node):
    kind: Literal["if"] = "if"
    condition: Expr
    body: list[Stmt]
    orelse: list[Stmt] = []


class BlockCall(Node):
    kind: Literal["block_call"] = "block_call"
    name: str
    args: list[Arg]
    label: str | None = None
    shares: str | None = None  # `shares NAME`: every call sharing NAME runs one set of weights


class Op(Node):
    kind: Literal["op"] = "op"
    op: str
    label: str | None = None
    args: list[Arg]


Stmt = Annotated[
    Binding | Option | Precision | Component | Replay | Require | Repeat | Select | If | BlockCall | Op,
    Field(discriminator="kind")
]


# --- top level ---------------------------------------------------------------------------


class Param(Node):
    name: str
    default: Expr | None = None


class BlockDef(Node):
    name: str
    params: list[Param]
    body: list[Stmt]


class FormatDef(Node):
    """`format NAME { bits = ..., scale_bits = ..., block = ..., align = ..., parts = ... }`."""

    name: str
    args: list[Arg]


class DeviceDef(Node):
    """`device NAME { memory = ..., bandwidth = ..., <format> = peak FLOPS, ... }`: a hardware sheet."""

    name: str
    args: list[Arg]


class LinkDef(Node):
    """`link NAME { bandwidth = ..., latency = ... }`: an interconnect sheet (per card, each direction)."""

    name: str
    args: list[Arg]


class ModelDef(Node):
    name: str
    body: list[Stmt]


class Use(Node):
    target: str  # `std.attention.gqa` or a relative path such as `./blocks.arch`
    is_path: bool


class Module(Node):
    path: str
    uses: list[Use] = []
    formats: list[FormatDef] = []
    devices: list[DeviceDef] = []
    links: list[LinkDef] = []
    blocks: list[BlockDef] = []
    models: list[ModelDef] = []


for _cls in (BinOp, Neg, Call, Tuple, Require, Repeat, Arm, Select, If):
    _cls.model_rebuild()
