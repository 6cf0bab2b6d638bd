"""One training step of a spec on a layout: per card its model states, activations, FLOPs and traffic; the
step's FLOPs, bounds and MFU.

A step is `global_batch` sequences of `seq` tokens, in micro-batches of `micro_batch` per data-parallel
replica: m = global_batch / (dp · micro_batch) of them through the pipeline. Each micro-batch is a prefill of
`micro_batch` requests with every position's logits; its backward pass costs twice its forward's matrix FLOPs,
the gradients with respect to the inputs and to the weights (Narayanan et al. 2021, Appendix), and takes part
in the same collectives again; recomputation runs forward passes again (full: every layer's, with their
collectives; selective: the attention's score products, Korthikanti et al. 2022 §5). Model FLOPs leave the
recomputation out (Chowdhery et al. 2022 §4.1: MFU; HFU counts what the hardware runs).
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp
from pydantic import BaseModel

from archcost.dsl.errors import ArchError, Diagnostic

from ..cards.card import group_rows, on_card
from ..cards.degrees import Layout, on_device
from ..cards.pipeline import stage_index, stage_keys
from ..cards.placement import placed
from ..graph.ir import outermost
from ..numbers.plain import PlainEvaluator
from ..terms.scenario import Scenario
from . import saved as keep
from .bounds import TrainTimes, kernel_mix, step_times
from .communication import Traffic, step_traffic
from .optimizer import OPTIMIZERS
from .schedule import SCHEDULES, in_flight
from .states import card_states

RECOMPUTE = ("none", "selective", "full")
Number = int | float


class TrainCard(BaseModel):
    """One card of a pipeline stage over one step (the busiest of each stage's cards)."""

    stage: str
    params: Number
    weight_bytes: Number
    gradient_bytes: Number
    optimizer_bytes: Number
    activation_bytes: Number           # kept for the backward passes of every micro-batch it holds at once
    activation_bytes_per_layer: Number  # one micro-batch, one layer of its largest stack
    recompute_bytes: Number            # full recomputation: the layer being recomputed, held again
    micro_batches_held: float          # micro-batches' worth of its layers' activations at its fullest
    memory_bytes: Number
    flops_matrix: Number               # the step's, with backward passes and recomputation
    flops_nonmatrix: Number
    traffic: list[Traffic]


class TrainReport(BaseModel):
    model: str
    layout: Layout
    seq: int
    global_batch: int
    micro_batch: int
    micro_batches: int
    schedule: str
    recompute: str
    zero: int
    optimizer: str
    grad_format: str
    dropout: bool
    tokens: int
    model_flops: Number                # per step over all cards: 3 × the forward's matrix FLOPs
    flops_matrix: Number               # per step over all cards, with recomputation
    cards: list[TrainCard]
    busiest: str
    times: TrainTimes | None = None


class TrainSetup(BaseModel):
    """Everything a step is asked under, besides the model and its layout."""

    seq: int
    global_batch: int
    micro_batch: int = 1
    recompute: str = "none"
    zero: int = 0
    optimizer: str = "adamw"
    grad_format: str = "fp32"
    dropout: bool = False
    schedule: str | None = None        # default: interleaved when vp > 1, else 1f1b
    # the attention kernel: FlashAttention (Dao et al. 2022) keeps no score matrix, only each row's softmax
    # statistics, and draws its dropout mask again in the backward; `eager` keeps the scores, as Korthikanti et
    # al. 2022's Megatron did (their Table 2)
    attention_kernel: str = "flash"


def refused(message: str, hint: str | None = None) -> ArchError:
    return ArchError([Diagnostic(code="E409", message=message, hint=hint)])


def micro_batches(layout: Layout, setup: TrainSetup) -> int:
    """m = global batch / (dp · micro-batch), a whole number; interleaving needs a multiple of pp."""
    replicas = layout.dp * setup.micro_batch
    if setup.global_batch % replicas:
        raise refused(f"a global batch of {setup.global_batch:,} does not split into micro-batches of "
                      f"{setup.micro_batch} on dp = {layout.dp} replicas",
                      "choose --global-batch a multiple of dp × --micro-batch")
    count = setup.global_batch // replicas
    if _schedule(layout, setup) == "interleaved" and count % layout.pp:
        raise refused(f"the interleaved schedule runs micro-batches in groups of pp = {layout.pp}; "
                      f"{count} do not", "Narayanan et al. 2021 §2.2.2: m a multiple of p")
    return count


def _schedule(layout: Layout, setup: TrainSetup) -> str:
    return setup.schedule or ("interleaved" if layout.vp > 1 else "1f1b")


def check_setup(compiled, layout: Layout, setup: TrainSetup) -> None:
    """Words and degrees a step cannot run under, refused before anything is placed."""
    if setup.recompute not in RECOMPUTE or setup.optimizer not in OPTIMIZERS or setup.zero not in (0, 1, 2, 3) \
            or setup.attention_kernel not in ("flash", "eager"):
        raise refused("unknown recompute, optimizer or ZeRO stage",
                      f"recompute: {', '.join(RECOMPUTE)}; optimizer: {', '.join(OPTIMIZERS)}; zero: 0-3")
    schedule = _schedule(layout, setup)
    if schedule not in SCHEDULES or (schedule == "interleaved") != (layout.vp > 1):
        raise refused(f"schedule `{schedule}` with vp = {layout.vp}",
                      "vp > 1 is the interleaved schedule; 1f1b and gpipe have one chunk per card")
    if layout.micro_batches != 1:
        raise refused("a training step's micro-batches follow from the batch: leave `mb` out of the layout",
                      "m = --global-batch / (dp × --micro-batch)")
    if layout.cp > setup.seq:
        raise refused(f"cp = {layout.cp} splits {setup.seq:,} positions: a card would hold none")


def _chunks_fit(placement, layout: Layout) -> None:
    """Under the interleaved schedule each stage's layers split into vp model chunks, as evenly as its count
    allows (torchtitan's interleaved 1F1B runs Llama 3.1 405B's 126 layers on pp 8 × vp 8): every chunk needs a
    layer. The bubble, (p − 1)/(v·m), is then the even split's."""
    short = [(index, size) for index, size in enumerate(placement.stage_layers) if size < layout.vp]
    if layout.vp > 1 and short:
        index, size = short[0]
        raise refused(f"stage {index} holds {size} layer{'s' if size != 1 else ''}: fewer than vp = {layout.vp} "
                      "model chunks", f"choose vp of at most {min(placement.stage_layers)}, or give that stage "
                      "more layers with first= / last=")


def train_report(compiled, layout: Layout, setup: TrainSetup, sheets=None, step_time: float | None = None,
                 efficiency: float | None = None, peak_format: str | None = None, table=None) -> TrainReport:
    """One step of `setup` on `layout`; with sheets (device, link, network) its bounds and MFU."""
    from archcost.compiler.terms.letters import contradiction

    if step_time is not None and efficiency is not None:
        raise contradiction("a measured step time and an efficiency that predicts it answer one question: give "
                            "one of them")
    if sheets is None and (step_time is not None or efficiency is not None):
        raise contradiction("a step time or an efficiency is read against a device's peak: give the device and "
                            "the link with it")
    layout = on_device(layout, None if sheets is None else sheets[0])
    check_setup(compiled, layout, setup)
    count = micro_batches(layout, setup)
    degrees = layout.degrees(formats=compiled.ir.formats)
    placement = placed(compiled, degrees)
    _chunks_fit(placement, layout)
    micro = PlainEvaluator(compiled, "prefill", Scenario(B=setup.micro_batch, S=0, P=setup.seq))
    stages = stage_keys(placement, layout.pp)
    cards = [_card(compiled, placement, degrees, layout, setup, stage, count, micro, sheets, table)
             for stage in stages]
    busiest = max(cards, key=lambda card: (card.memory_bytes, card.flops_matrix))
    model_flops, hardware = step_flops(compiled, setup)
    report = TrainReport(model=compiled.name, layout=layout, seq=setup.seq, global_batch=setup.global_batch,
                         micro_batch=setup.micro_batch, micro_batches=count, schedule=_schedule(layout, setup),
                         recompute=setup.recompute, zero=setup.zero, optimizer=setup.optimizer,
                         grad_format=setup.grad_format, dropout=setup.dropout,
                         tokens=setup.global_batch * setup.seq, model_flops=model_flops, flops_matrix=hardware,
                         cards=cards, busiest=busiest.stage)
    if sheets is not None:
        kernels = None if table is None else kernel_mix(compiled, setup, sheets[0], peak_format, table, degrees)
        report.times = step_times(report, sheets, step_time, efficiency, peak_format, kernels,
                                  None if table is None else table.file)
    return report



def step_flops(compiled, setup: TrainSetup) -> tuple[Number, Number]:
    """(model FLOPs, hardware matrix FLOPs) of the step over all cards: 3 × the forward, plus what
    recomputation runs again."""
    whole = PlainEvaluator(compiled, "prefill", Scenario(B=setup.global_batch, S=0, P=setup.seq))
    again = recomputed(compiled, setup)
    forward = whole(compiled.total("flops_matrix"), "flops_matrix")
    repeated = whole(compiled.total("flops_matrix", lambda op: op.id in again), "flops_matrix") if again else 0
    return 3 * forward, 3 * forward + repeated


def recomputed(compiled, setup: TrainSetup) -> frozenset[str]:
    """The ops whose forward recomputation runs again: every layer's under `full` (not the embedding and the
    head), under `selective` those whose score-sized tensors it drops."""
    key = ("recomputed", setup.recompute, setup.dropout, setup.attention_kernel)
    if key not in compiled.memo:
        graph = compiled.graph
        if setup.recompute == "full":
            found = {node_id for node_id in graph.nodes if keep.in_layers(graph, node_id)}
        elif setup.recompute == "selective":
            rules = keep.saved_rules(compiled, setup.dropout, setup.attention_kernel)
            found = {n for n, rule in rules.items() if rule.scores != 0}
        else:
            found = set()
        compiled.memo[key] = frozenset(found)
    return compiled.memo[key]


def _card(compiled, placement, degrees, layout: Layout, setup: TrainSetup, stage: str, count: int,
          micro: PlainEvaluator, sheets, table=None) -> TrainCard:
    rank = stage_index(stage, layout.pp)
    held = in_flight(_schedule(layout, setup), rank, layout.pp, layout.vp, count)
    kept = keep.on_one_card(compiled, placement, degrees, stage, setup.dropout, setup.attention_kernel)
    acts, per_layer, working = _activations(compiled, kept, setup, micro, (degrees, stage))
    states = card_states(compiled, placement, degrees, layout, setup, stage, micro)
    forward, nonmatrix, repeated = _card_flops(compiled, placement, degrees, stage, setup, micro)
    activation = _number(acts * held)
    memory = states.total + activation + working
    factor = 3 * count
    return TrainCard(stage=stage, params=states.params, weight_bytes=states.weight_bytes,
                     gradient_bytes=states.gradient_bytes, optimizer_bytes=states.optimizer_bytes,
                     activation_bytes=activation, activation_bytes_per_layer=per_layer, recompute_bytes=working,
                     micro_batches_held=float(held), memory_bytes=_number(memory),
                     flops_matrix=_number(factor * forward + count * repeated),
                     flops_nonmatrix=_number(factor * nonmatrix),
                     traffic=step_traffic(compiled, placement, degrees, layout, setup, stage, count, states, micro,
                                          sheets, table))


def _activations(compiled, kept, setup: TrainSetup, micro: PlainEvaluator, where: tuple) -> tuple:
    """(one micro-batch's activations on the card, one layer's, the recomputed layer's working set)."""
    graph = compiled.graph
    parts = {"selective": lambda k: k.tensors + k.own, "none": lambda k: k.whole}
    inside = [(copies, k) for node_id, copies, k in kept if keep.in_layers(graph, node_id)]
    outside = [(copies, k) for node_id, copies, k in kept if not keep.in_layers(graph, node_id)]
    mode = "none" if setup.recompute == "none" else "selective"
    body = parts[mode] if setup.recompute != "full" else (lambda k: k.layer_input)
    between = sp.Add(*(k.boundary for _, k in inside)) if setup.recompute != "full" else 0
    rest = parts[mode] if setup.recompute != "full" else (lambda k: k.tensors_outside + k.own)
    total = sp.Add(*(c * body(k) for c, k in inside), *(c * rest(k) for c, k in outside), between)
    layers = _per_layer(compiled, kept, body)
    full_layer = _per_layer(compiled, kept, parts["none"]) if setup.recompute == "full" else []
    values = micro.many(("train activations", *where, setup.recompute, setup.dropout, setup.attention_kernel),
                        [(total, "flops_matrix"), *((e, "flops_matrix") for e in layers + full_layer)])
    per_layer = max(values[1:1 + len(layers)], default=0)
    working = max(values[1 + len(layers):], default=0)
    return values[0], _number(per_layer), _number(working)


def _per_layer(compiled, kept, part) -> list[sp.Expr]:
    """One iteration of each model-level block or stack on the card: Σ of what its ops keep, per copy."""
    clusters = compiled.graph.graph["clusters"]
    layers: dict[str, sp.Expr] = {}
    for node_id, _copies, k in kept:
        if not keep.in_layers(compiled.graph, node_id):
            continue
        op = compiled.graph.nodes[node_id]["op"]
        layer = outermost(clusters, op.cluster)
        layers[layer.id] = layers.get(layer.id, 0) + op.multiplicity / layer.times * part(k)
    return list(layers.values())


def _card_flops(compiled, placement, degrees, stage: str, setup: TrainSetup, micro) -> tuple:
    """(forward matrix FLOPs, forward non-matrix FLOPs, recomputed matrix FLOPs) of one micro-batch on the card."""
    graph = compiled.graph
    again = recomputed(compiled, setup)
    forward, nonmatrix, repeated = [], [], []
    for node_id, copies in on_card(graph, placement, degrees, stage):
        given, cost = placement.shares[node_id], graph.nodes[node_id]["cost"]
        rows = group_rows(given, degrees)
        share = given.work * copies
        matrix = cost.flops_matrix.xreplace(rows) * share
        forward.append(matrix)
        nonmatrix.append(cost.flops_nonmatrix.xreplace(rows) * share)
        if node_id in again:
            repeated.append(matrix)
    return tuple(micro.many(("train flops", degrees, stage, setup.recompute, setup.dropout,
                             setup.attention_kernel), [
        (sp.Add(*forward), "flops_matrix"), (sp.Add(*nonmatrix), "flops_matrix"),
        (sp.Add(*repeated), "flops_matrix")]))


def _number(value) -> Number:
    """An exact figure as an int where it is whole."""
    if isinstance(value, Fraction):
        value = value.numerator / value.denominator if value.denominator != 1 else value.numerator
    return int(value) if float(value).is_integer() else float(value)
