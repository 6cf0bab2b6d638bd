"""The expected time of one call on one card: each op's own bound, max(F / peak, R / bandwidth), divided by the
fraction of that bound the kernel its op kind runs (OpSpec.timing) reaches at its shape on the device
(fractions.py); ops in sequence, as a step's kernels run. An op whose kernel kind the table lacks, and every op
without a kernel of its own (norms, activations, caches, lookups), is timed at the device's measured copy
bandwidth. Bytes are the roofline's (weights, rows gathered, state read and written: fused kernels keep
activations on chip), so the ops' bounds add up to at least the call's. Since each fraction is at most 1 and a
sum of maxima is at least the maximum of the sums, the expected time is never below the call's bound. On a card
of a layout each op counts its share of the work at the shape that card runs (OpSpec.card_shape: a TP card's
GEMMs are 1/tp as wide)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from archcost.dsl.errors import ArchError, Diagnostic

from ..timing import fractions, tables


class OpTime(BaseModel):
    op: str
    kind: str
    kernel: str
    bound_seconds: float
    expected_seconds: float
    efficiency: float
    basis: str


class Expected(BaseModel):
    """A call's expected time beside its bound, and what each op contributes."""

    device: str
    table: str
    peak_format: str
    bound_seconds: float
    expected_seconds: float
    ops: list[OpTime]


def table_for(device, given: str | Path | None = None) -> tables.Table | None:
    """The user's table when given (it must be for this device), else the one archcost ships, else None."""
    from ..front.hardware import sheet_key

    table = tables.shipped(sheet_key(device.name)) if given is None else tables.read(Path(given))
    if table is None:
        return None
    if sheet_key(table.device) != sheet_key(device.name):
        raise ArchError([Diagnostic(code="E412", message=f"the efficiency table `{table.file}` is for "
                                                         f"`{table.device}`, not `{device.name}`",
                                    hint="give a table measured on the device the command costs")])
    for point in table.points:  # every point at most its roofline (a collective's is checked with its link)
        if point.kind not in fractions.BUS:
            fractions.point_efficiency(point, table, device)
    return table


def copy_fraction(table: tables.Table, device) -> tuple[float, str]:
    """The fraction of the sheet's bandwidth a memory-bound kernel reaches: the measured copy bandwidth, or where a
    table has none, that of its largest one-row GEMM (which only streams its weights)."""
    found = fractions.fraction(table, "memcopy", None, {}, device)
    streaming = [p for p in table.of("gemm") if p.shape["m"] == 1] if found is None else []
    if found is None and streaming:
        widest = max(streaming, key=lambda p: (p.shape["n"] * p.shape["k"], p.format or ""))
        return (fractions.point_efficiency(widest, table, device),
                f"{table.file}: no copy measured; a one-row {widest.format} GEMM of {widest.shape['k']:,} × "
                f"{widest.shape['n']:,} (its weights streamed)")
    if found is None:
        raise ArchError([Diagnostic(code="E412", message=f"the efficiency table `{table.file}` holds no memcopy "
                                                         "point: the time of memory-bound kernels is unknown",
                                    hint="add a [[memcopy]] point (a measured copy bandwidth, with its source)")])
    return found


# Kernel kinds whose products run in the call's compute format (`--compute`), whatever the weights are stored in:
# FP8 training keeps BF16 weights and multiplies in FP8 (Transformer Engine), a weight-only format multiplies in
# the activations' format. Other kernels run in the format their timing hook names (attention: BF16, as
# FlashAttention runs unless FP8 attention is asked for).
COMPUTE_FORMAT_KINDS = ("gemm", "grouped_gemm")


def expected_call(compiled, device, phase: str, scenario, peak_format: str, table: tables.Table,
                  bound_seconds: float, training: bool = False, eager: dict | None = None,
                  degrees=None) -> Expected:
    """Every op of the compiled model at this call, timed; `bound_seconds` is the call's own bound (roofline).
    With `training` (a training step's forward and backward, timed at the forward's shapes): the ops without a
    kernel of their own (norms, activation functions, residual adds) read and write their activations in
    memory, as a training step's unfused kernels do, and attention runs its backward kernel too
    (`training_attention`); with `eager` (the step's conventions: `attention_kernel = eager`, `dropout`), an op
    with unfused kernels runs those instead (`unfused_training`). With a layout's `degrees` each op is timed as
    one card of its tensor-parallel group runs it: its share of the FLOPs and bytes, its products at the card's
    shape (the op's `card_shape`: a TP card's GEMMs are 1/tp as wide, and reach less of the peak)."""
    from archcost.compiler.numbers.plain import PlainEvaluator

    value = PlainEvaluator(compiled, phase, scenario)
    copy = copy_fraction(table, device)
    shares = card_shares(compiled, degrees, value)
    timing = (phase, value, table, device, peak_format, copy, training, eager)
    figures = _op_figures(compiled, phase, scenario, value)
    rows = [row for node_id, data in compiled.graph.nodes(data=True)
            if (row := _op_time(compiled, node_id, data, figures[node_id], timing, shares.get(node_id))) is not None]
    total = max(sum(r.expected_seconds for r in rows), bound_seconds)
    return Expected(device=device.name, table=table.file, peak_format=peak_format, bound_seconds=bound_seconds,
                    expected_seconds=total, ops=rows)


def _op_figures(compiled, phase: str, scenario, value) -> dict[str, tuple]:
    """Each op's (layers, FLOPs and bytes moved a layer, activation bytes a layer, its kernel's timing kind, format
    and shape numbers or None) at a call: what every layout of a search asks again at the same call."""
    from archcost.compiler.ops import REGISTRY
    from archcost.compiler.terms.quantities import ACTIVATION_TRAFFIC, MOVED

    from .values import REMEMBERED_SHAPES

    remembered = compiled.memo.setdefault(("op figures",), {})
    key = (phase, scenario)
    if key not in remembered:
        if len(remembered) >= REMEMBERED_SHAPES:
            remembered.clear()  # a long session's calls: the older ones are forgotten, as values.values_at does
        found = {}
        for node_id, data in compiled.graph.nodes(data=True):
            op, cost = data["op"], data["cost"]
            timing = REGISTRY[op.kind].timing
            kernel = None
            if timing is not None:
                kind, fmt, shape = timing(op.args, phase)
                kernel = (kind, fmt, {name: float(value(expr, "flops_matrix")) for name, expr in shape.items()})
            found[node_id] = (value(op.multiplicity, "params"), value(cost.flops_matrix, "flops_matrix"),
                              sum(value(getattr(cost, f), f) for f in MOVED),
                              sum(value(getattr(cost, f), f) for f in ACTIVATION_TRAFFIC), kernel)
        remembered[key] = found
    return remembered[key]


def _op_time(compiled, node_id: str, data: dict, figures: tuple, timing: tuple, split: tuple | None) -> OpTime | None:
    """One op's row of expected_call (`figures`: _op_figures'; `timing`: its call's phase, evaluator, table,
    device, format, copy fraction, training and eager conventions), or None for an op that takes no time."""
    from archcost.compiler.ops import REGISTRY

    phase, value, table, device, peak_format, copy, training, eager = timing
    op = data["op"]
    layers = figures[0] * (split[1] if split else 1)
    flops = layers * figures[1]
    moved = layers * figures[2]
    if not flops and not moved and not training:
        return None
    bound = max(flops / device.peak_for(peak_format), moved / device.bandwidth)
    if training and eager and REGISTRY[op.kind].unfused is not None:
        seconds, basis = unfused_training(compiled, op, value, table, device, copy, eager)
        return _unfused_row(node_id, op.kind, bound, layers * seconds, basis)
    kernel, efficiency, basis, own = _kernel(op, figures[4], table, device, peak_format, (flops, moved, bound),
                                             copy, training, split)
    if kernel == "memory" and training:
        own = max(own, layers * figures[3] / device.bandwidth)
    if not bound and not own:
        return None
    return OpTime(op=node_id, kind=op.kind, kernel=kernel, bound_seconds=bound, expected_seconds=own / efficiency,
                  efficiency=efficiency, basis=basis)


def card_shares(compiled, degrees, value) -> dict[str, tuple[str, float, float]]:
    """Each op's (shard word, part of its work one card does, cards its positions split over) on a tensor-parallel
    group of the layout's `degrees` (placement.py); none without a layout, or for ops split over experts (their
    grouped GEMMs run the tokens their EP group sends them, as the op's own shape says)."""
    if degrees is None:
        return {}
    from .placement import placed

    found = {}
    for node_id, share in placed(compiled, degrees).shares.items():
        work = float(value(share.work, "flops_matrix"))
        if share.group == "tp" and work < 1:
            found[node_id] = (compiled.graph.nodes[node_id]["op"].shard[0], work,
                              float(value(share.positions, "flops_matrix")))
    return found


def _kernel(op, timed: tuple | None, table: tables.Table, device, peak_format: str, figures: tuple[float, float, float],
            copy: tuple[float, str], training: bool = False, split: tuple[str, float, float] | None = None
            ) -> tuple[str, float, str, float]:
    """(the kernel an op runs, its efficiency, where that was read, the op's roofline in that kernel's format):
    its own kernel where its kind has a timing hook (`timed`: its kind, format and shape at the call) and the
    table a point, else a memory-bound copy. `figures` are the op's FLOPs, bytes and bound at the call's peak
    (one card's part, with `split`: its shard word and that part)."""
    from archcost.compiler.ops import REGISTRY

    flops, moved, bound = figures
    spec = REGISTRY[op.kind]
    if timed is None:
        return "memory", *copy, bound
    kind, fmt, numbers = timed
    fmt = peak_format if kind in COMPUTE_FORMAT_KINDS else fmt
    if split is not None and spec.card_shape is not None:
        numbers = spec.card_shape(numbers, *split)
    found = fractions.fraction(table, kind, fmt, numbers, device) if all(numbers.values()) else None
    if found is None:
        return "memory", *copy, bound
    if training and kind == "attention_prefill":
        found = training_attention(table, numbers, device, found)
    peak = device.peak_for(peak_format)
    slower = device.peak_for(fmt) if fmt in device.peak else peak
    return kind, *found, max(flops / min(peak, slower), moved / device.bandwidth)


def _unfused_row(node_id: str, kind: str, bound: float, seconds: float, basis: str) -> OpTime:
    expected = max(seconds, bound)
    return OpTime(op=node_id, kind=kind, kernel="unfused", bound_seconds=bound, expected_seconds=expected,
                  efficiency=bound / expected if bound else 1.0, basis=basis)


def unfused_training(compiled, op, value, table: tables.Table, device, copy: tuple[float, str],
                     conventions: dict) -> tuple[float, str]:
    """(seconds a layer, where read) of an op's unfused training kernels (its definition's `unfused`): their matrix
    products at the BF16 GEMM fraction of one product of all their rows (a batched product of B·heads matrices
    fills the device as their stacked rows do), and the tensors between the kernels at the measured copy
    bandwidth. Returned as a third of the forward and backward together, as the step's ratio (× 3 the forward)
    reads an op's forward."""
    from archcost.compiler.ops import REGISTRY, CostContext

    context = CostContext(act_bytes=compiled.ir.act_format, conventions={
        **compiled.conventions.cost_conventions(), **conventions})
    flops, moved, gemm_shape = REGISTRY[op.kind].unfused(op.args, context)
    flops, moved = float(value(flops, "flops_matrix")), float(value(moved, "flops_matrix"))
    shape = {name: float(value(expr, "flops_matrix")) for name, expr in gemm_shape.items()}
    found = fractions.fraction(table, "gemm", "bf16", shape, device) if all(shape.values()) else None
    gemm, gemm_basis = found if found is not None else copy
    seconds = flops / (device.peak_for("bf16") * gemm) + moved / 3 / (device.bandwidth * copy[0])
    return seconds, (f"unfused kernels: products at {gemm_basis}; score tensors, {moved / 3:,.0f} bytes a pass, at "
                     f"{copy[1]}")


def training_attention(table: tables.Table, shape: dict, device, forward: tuple[float, str]) -> tuple[float, str]:
    """A training step's attention efficiency: its forward kernel's, times what one implementation's forward and
    backward reach over its forward alone at the shape (FlashAttention's figures; the backward recomputes the
    scores, 2.5 × the forward's FLOPs where archcost counts 2 ×); where the table has no forward of that
    implementation, its forward and backward measured together; where it has neither, the forward's alone."""
    causal = {**shape, "causal": True}
    both = fractions.fraction(table, "attention_fwd_bwd", None, causal, device)
    if both is None:
        return forward
    alone = fractions.fraction(table, "attention_fwd", None, causal, device)
    if alone is None:
        return both[0], f"{both[1]} (forward and backward, measured together)"
    ratio = min(1.0, both[0] / alone[0])
    return forward[0] * ratio, f"{forward[1]}, × {ratio:.3f} for the backward ({both[1]}; {alone[1]})"


def kernel_ratio(compiled, device, phase: str, scenario, peak_format: str, table: tables.Table,
                 training: bool = False, eager: dict | None = None, degrees=None) -> float:
    """Σ of the ops' expected times over Σ of their bounds at this call: how much longer than its bound the mix of
    kernels of a call runs (at least 1), which a card of a layout (its `degrees`) applies to its own bound."""
    split = None if degrees is None else degrees.within_a_stage()  # a card's shares depend on no more (placement)
    key = ("kernel ratio", fractions.identity_in(compiled.memo, device), phase, scenario, peak_format, table.file,
           training, tuple(sorted((eager or {}).items())), split)
    if key not in compiled.memo:  # layouts that share a replica's shape and its split over a stage share it
        timed = expected_call(compiled, device, phase, scenario, peak_format, table, 0.0, training, eager,
                              degrees).ops
        bound = sum(t.bound_seconds for t in timed)
        compiled.memo[key] = max(1.0, sum(t.expected_seconds for t in timed) / bound) if bound else 1.0
    return compiled.memo[key]
