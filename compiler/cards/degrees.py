"""A layout as data: the parallel degrees and the words that go with them, read from `tp=8,ep=8,pp=2` text."""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

import sympy as sp
from pydantic import BaseModel, ConfigDict, Field, model_validator

from archcost.dsl.errors import ArchError, Diagnostic, did_you_mean

from .symbolic import SymbolicLayout

Degree = Field(1, ge=1, le=100_000)


# cards a server holds where a layout names no `node`: an HGX board's 8, which the cards without NVLink share too
# (they talk over the --link given, PCIe)
SERVER = 8


class Layout(BaseModel):
    """Parallel degrees: tensor (TP), expert (EP), pipeline (PP), context (CP) and data (DP) parallel. A model
    replica spans TP × PP × CP cards; DP replicas serve B/DP requests each; EP groups are built from the
    TP × DP cards of a pipeline stage (DeepSeek-V3's layout: attention data parallel, experts over EP)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tp: int = Degree
    ep: int = Degree
    pp: int = Degree
    dp: int = Degree
    cp: int = Degree
    vp: int = Degree                  # model chunks per card: the interleaved schedule of a training step
    sequence_parallel: bool = False   # Megatron-SP: each all-reduce as a reduce-scatter and an all-gather
    micro_batches: int = Field(1, ge=1, le=100_000)
    node: int = Field(SERVER, ge=1, le=100_000)      # cards per server (or the device's: on_device)
    limit: int | None = Field(None, ge=1, le=100_000)  # servers a token is sent to at most (node-limited routing)
    dispatch: str | None = None       # the format tokens travel to their experts in, e.g. fp8
    imbalance: float = Field(1.0, ge=1.0, le=100_000)  # tokens of the busiest expert card over the average
    # copies of experts held beyond the model's own, spread over the EP group to even out the load (DeepSeek-V3
    # §3.4: 32 redundant experts for prefill, each card "8 original experts and one additional redundant")
    redundant: int = Field(0, ge=0, le=100_000)
    # expert tensor parallel: each expert's matrices split over etp cards of its EP rank (Megatron-Core's
    # expert_tensor_parallel_size); an EP group is then ep × etp of a stage's tp × dp cards
    etp: int = Degree
    # layers of the first and of the last pipeline stage, the rest split evenly (Megatron-LM's
    # --decoder-first/last-pipeline-num-layers; Llama 3 §3.3.2 puts one fewer layer on each)
    first: int | None = Field(None, ge=1, le=100_000)
    last: int | None = Field(None, ge=1, le=100_000)

    @model_validator(mode="after")
    def _expert_groups(self) -> Layout:
        if (self.tp * self.dp) % (self.ep * self.etp):
            group = f"ep × etp = {self.ep * self.etp}" if self.etp > 1 else f"ep = {self.ep}"
            raise ValueError(f"{group} does not divide the tp × dp = {self.tp * self.dp} cards of a pipeline stage")
        if self.etp > 1 and self.ep == 1:
            raise ValueError("etp splits each expert over the cards of an EP rank: give ep > 1 (with ep = 1 the "
                             "experts already split over tp)")
        if self.vp > 1 and self.pp == 1:
            raise ValueError("vp interleaves model chunks over pipeline stages: give pp > 1")
        if (self.first or self.last) and self.pp == 1:
            raise ValueError("first and last give the layers of a pipeline's end stages: give pp > 1")
        if self.redundant and self.ep == 1:
            raise ValueError("redundant experts are copies spread over an expert-parallel group: give ep > 1")
        if self.limit is not None and self.ep > self.node and self.ep % self.node:
            raise ValueError(f"ep = {self.ep} is not a whole number of servers of {self.node} cards")
        return self

    @property
    def cards(self) -> int:
        return self.tp * self.pp * self.cp * self.dp

    def degrees(self, keep: frozenset[str] = frozenset(), formats: dict | None = None) -> SymbolicLayout:
        """The degrees as sympy values; those in `keep` stay symbols (`--keep tp,ep`)."""
        def value(name: str):
            return sp.Symbol(name, positive=True, integer=True) if name in keep else sp.Integer(getattr(self, name))
        dispatch = None
        if self.dispatch is not None:
            if self.dispatch not in (formats or {}):
                raise ArchError([Diagnostic(code="E405", message=f"layout: unknown dispatch format `{self.dispatch}`",
                                            hint=did_you_mean(self.dispatch, formats or {}) or "e.g. fp8, bf16")])
            dispatch = formats[self.dispatch]
        return SymbolicLayout(tp=value("tp"), ep=value("ep"), pp=value("pp"), dp=value("dp"), cp=value("cp"),
                       sequence_parallel=self.sequence_parallel, node_cards=sp.Integer(self.node),
                       node_limit=None if self.limit is None else sp.Integer(self.limit), dispatch=dispatch,
                       imbalance=sp.Integer(1) if self.imbalance == 1 else
                       sp.Rational(*Fraction(repr(self.imbalance)).as_integer_ratio()),
                       expert_parallel=self.ep > 1, redundant=sp.Integer(self.redundant), etp=sp.Integer(self.etp),
                       first_layers=self.first, last_layers=self.last)

    def text(self) -> str:
        extra = "".join(f", {word}" for word, on in (("SP", self.sequence_parallel), (f"CP {self.cp}", self.cp > 1),
                                                      (f"VP {self.vp}", self.vp > 1),
                                                      (f"{self.redundant} redundant experts", self.redundant),
                                                      (f"ETP {self.etp}", self.etp > 1),
                                                      (f"≤ {self.limit} servers a token", self.limit),
                                                      (f"servers of {self.node}", self.node != SERVER)) if on)
        cards = f"{self.cards} card" + ("s" if self.cards != 1 else "")
        return f"TP {self.tp} × EP {self.ep} × PP {self.pp} × DP {self.dp}{extra} ({cards})"


def server_cards(device) -> int:
    """The cards one server of `device` holds: its NVLink domain where that is wider than a board (a GB200
    NVL72's 72 GPUs are one domain, stdlib/hardware.arch), else SERVER."""
    return SERVER if device is None else max(SERVER, device.domain)


def on_device(layout: Layout, device) -> Layout:
    """The layout with the device's servers (server_cards) unless it names `node` itself: a collective over 16
    GB200 cards stays inside their NVLink domain instead of crossing the network."""
    node = server_cards(device)
    # node-limited routing counts servers as the layout names them (DeepSeek-V3's of 8)
    if "node" in layout.model_fields_set or layout.limit is not None or layout.node == node:
        return layout
    return layout.model_copy(update={"node": node})


WORDS = {"mb": "micro_batches", "imb": "imbalance", "sp": "sequence_parallel"}


SWITCH = {"": True, "1": True, "true": True, "on": True, "0": False, "false": False, "off": False}


def refused(message: str, hint: str | None = None) -> ArchError:
    """A layout no card arrangement makes, or one written wrongly (E405)."""
    return ArchError([Diagnostic(code="E405", message=message, hint=hint)])


def _word_value(name: str, value: str, part: str):
    """One word's value: ASCII digits only (`²` passes str.isdigit), a switch from its words, a format's name."""
    if name == "sequence_parallel":
        if value not in SWITCH:
            raise refused(f"layout `{part}`: sp is on or off", "write sp, sp=on or sp=off")
        return SWITCH[value]
    if name == "dispatch":
        return value
    if name == "imbalance" and re.fullmatch(r"[0-9]{1,6}(\.[0-9]{1,6})?", value):
        return float(value)
    if re.fullmatch(r"[0-9]{1,6}", value):
        return int(value)
    if re.fullmatch(r"[0-9]+", value):
        raise refused(f"layout `{part}`: {int(value):,} is more than a degree may be (at most 999,999)")
    raise refused(f"layout `{part}`: give NAME=whole number, e.g. tp=8")


@lru_cache(maxsize=1024)
def parse_layout(text: str) -> Layout:
    """`tp=8,ep=8,pp=2` (or spaces) as a Layout; never evaluated: whole numbers, `imb` a decimal, `dispatch`
    a format's name, `sp` a switch. Kept per text (a Layout is frozen; a refusal is raised anew each time): a
    notebook or the playground asks the same few layouts again and again."""
    values: dict[str, object] = {}
    for part in text.replace(",", " ").split():
        written, _, value = part.partition("=")
        name = WORDS.get(written, written)
        if name not in Layout.model_fields:
            from archcost.dsl.errors import did_you_mean

            known = [*WORDS, *(w for w in Layout.model_fields if w not in WORDS.values())]
            raise refused(f"layout `{part}`: `{written}` is not a degree" if written else
                          f"layout `{part}`: a degree's name is missing before `=`",
                          did_you_mean(written, known) or DEGREES_HINT)
        if name in values:  # `tp=2,tp=4`: which one was meant is not ours to guess
            raise refused(f"layout `{text}` gives `{written}` twice")
        values[name] = _word_value(name, value, part)
    try:
        return Layout(**values)
    except ValueError as error:
        first = error.errors()[0] if hasattr(error, "errors") else {"msg": str(error), "loc": ()}
        where = ".".join(str(p) for p in first["loc"])
        text = str(first["msg"]).removeprefix("Value error, ")  # pydantic's prefix for a validator's refusal
        raise ArchError([Diagnostic(code="E405", message=f"layout {where + ': ' if where else ''}{text}",
                                    hint=DEGREES_HINT)]) from None


DEGREES_HINT = ("degrees: tp, ep, pp, dp, cp, vp; mb (micro-batches), sp (sequence parallel), node (cards per server), "
                "limit (servers per token), dispatch (a format), imb (expert load imbalance), redundant (expert "
                "copies), etp (expert tensor parallel), first/last (layers of the end stages)")
