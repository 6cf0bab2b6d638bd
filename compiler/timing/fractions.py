"""What fraction of its own roofline a kernel reaches, from the measured points of an efficiency table.

Each point is one kernel of a known shape. Its roofline time is the larger of its FLOPs at the device's peak for
its format and the bytes the graph's op of that kind counts at the device's bandwidth (a GEMM its weights, an
expert GEMM the experts it reaches, attention the keys and values it reads: activations stay on chip in fused
kernels, as the roofline counts them); its efficiency is that time over the measured one, at most 1. Between points the
efficiency is interpolated linearly in the logarithm of the size that moves it most (rows of a GEMM, tokens per
expert, sequence length, context read, message size) among the points of the nearest other dimensions; past
the measured range it is held at the end point. No point is fitted to anything."""

from __future__ import annotations

import math

from .tables import Point, Table, refused_point

# a measured kernel's operand width in its format; Blackwell's FP4 tensor cores take block-scaled values, and the
# FP4 points are AIConfigurator's NVFP4 kernels: 4 bits and one FP8 scale per 16 values (stdlib/formats.arch's
# fp4_b16), 0.5625 bytes
BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "fp4": 0.5625, "int4": 0.5}
# for each kind: the shape value interpolated along, and the shape fields that pick the nearest points
AXES = {"gemm": ("m", ("n", "k")), "grouped_gemm": ("tokens_per_expert", ("hidden", "inter", "experts")),
        "attention_prefill": ("seq", ("head_dim",)), "attention_decode": ("kv_read", ("head_dim",)),
        "attention_fwd": ("seq", ("head_dim",)), "attention_fwd_bwd": ("seq", ("head_dim",)),
        "allreduce": ("bytes", ("ranks",)), "allgather": ("bytes", ("ranks",)),
        "reducescatter": ("bytes", ("ranks",)), "alltoall": ("bytes", ("ranks",))}
# a kernel kind a table may not measure → the kind and shape of the measured kernel it is made of: a grouped GEMM
# runs each expert's GEMM of its tokens (rows), its hidden width (depth) and the expert's width (columns), whose
# flops and weight bytes stand in the same ratio as the whole call's
MADE_OF = {"grouped_gemm": ("gemm", lambda s: {"m": s["tokens_per_expert"], "n": s["inter"], "k": s["hidden"]})}
# FlashAttention's benchmark counts 4·b·s²·h·d for the forward (halved when causal) and 2.5 × that for the
# backward: the passes archcost counts (the backward twice the forward) and the ones its TFLOPs/s divide by
TRAINING_PASSES = {"attention_fwd": 1, "attention_fwd_bwd": 3}
BENCHMARK_PASSES = {"attention_fwd": 1.0, "attention_fwd_bwd": 3.5}
# the bus factor NCCL's tests divide a collective's bytes by (nccl-tests doc/PERFORMANCE.md): 2(n−1)/n for
# all-reduce, (n−1)/n for all-gather, reduce-scatter and all-to-all
BUS = {"allreduce": lambda n: 2 * (n - 1) / n, "allgather": lambda n: (n - 1) / n,
       "reducescatter": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n}


def roofline_seconds(kind: str, fmt: str | None, shape: dict, device, link=None) -> float:
    """The least time a kernel of this kind and shape takes on the device: max(F / peak, R / bandwidth)."""
    width = BYTES.get(fmt or "bf16", 2)
    peak = device.peak_for(_peak_format(device, fmt)) if fmt else None
    if kind == "gemm":
        m, n, k = shape["m"], shape["n"], shape["k"]
        flops, moved = 2 * m * n * k, k * n * width  # the weights once: what the graph's linear op moves
    elif kind == "grouped_gemm":
        t, d, f, top, experts = (shape[x] for x in ("tokens", "hidden", "inter", "topk", "experts"))
        touched = min(experts, t * top)  # the experts a batch reaches, each read once
        flops, moved = 6 * t * top * d * f, touched * 3 * d * f * width  # the experts' weights, as the op moves
    elif kind == "attention_prefill":
        b, s, h, g, hd = (shape[x] for x in ("batch", "seq", "heads", "kv_heads", "head_dim"))
        pairs = s * (s + 1) / 2 if shape.get("causal", True) else s * s
        flops, moved = 4 * b * h * hd * pairs, b * s * 2 * g * hd * 2  # the keys and values, as `attend` reads
    elif kind in TRAINING_PASSES:  # our count: the forward's pairs, the backward twice them
        b, s, h, hd = (shape[x] for x in ("batch", "seq", "heads", "head_dim"))
        pairs = s * (s + 1) / 2 if shape.get("causal", True) else s * s
        flops, moved = TRAINING_PASSES[kind] * 4 * b * h * hd * pairs, 0.0
    elif kind == "attention_decode":
        b, kv, h, g, hd = (shape[x] for x in ("batch", "kv_len", "heads", "kv_heads", "head_dim"))
        flops, moved = 4 * b * h * hd * kv, b * kv * 2 * g * hd * width
    elif kind == "memcopy":
        return 1.0 / device.bandwidth  # a byte at the sheet's bandwidth: the point gives bytes per second
    elif kind in BUS:
        if link is None:
            return math.nan
        return shape["bytes"] * bus_factor(kind, shape["ranks"], link) / link.bandwidth
    else:
        raise KeyError(kind)
    return max(flops / peak if peak else 0.0, moved / device.bandwidth)


def bus_factor(kind: str, ranks: int, link) -> float:
    """The bytes a card must send per byte of the buffer. An NVLink switch that reduces in the switch (NVLS,
    NVLink 4 and 5) lets an all-reduce send the buffer once (NCCL's NVLS algorithm), where a ring sends
    2(n − 1)/n of it: the least of the two is the roofline (an 8-card H200 all-reduce measured at 1.02 × the
    ring's bus bandwidth is NVLS)."""
    ring = BUS[kind](ranks)
    return min(ring, 1.0) if kind == "allreduce" and link.nvls and ranks > 2 else ring


def _peak_format(device, fmt: str) -> str:
    return fmt if fmt in device.peak else ("bf16" if "bf16" in device.peak else device.preferred_peak())


def point_efficiency(point: Point, table: Table, device, link=None) -> float:
    """The fraction of its roofline the point's kernel reached; E412 when it claims more than the roofline."""
    if point.kind == "memcopy":
        value = point.measured["gbps"] * 1e9 / device.bandwidth
    elif point.kind in BENCHMARK_PASSES:
        value = roofline_seconds(point.kind, point.format, _shape_of(point), device) / _benchmark_seconds(point)
    else:
        value = roofline_seconds(point.kind, point.format, _shape_of(point), device, link) / (
            point.measured["latency_us"] * 1e-6)
    if value > 1 + 1e-9:
        raise refused_point(table, point, f"this `{point.kind}` point is {value:.2f} × faster than the roofline of "
                                          f"`{device.name}` allows (a fraction above 1)")
    return value


def _benchmark_seconds(point: Point) -> float:
    """The time FlashAttention's benchmark measured: its FLOPs over the TFLOPs/s it printed."""
    shape = point.shape
    forward = 4 * shape["batch"] * shape["seq"] ** 2 * shape["heads"] * shape["head_dim"]
    forward /= 2 if shape.get("causal", False) else 1
    return BENCHMARK_PASSES[point.kind] * forward / (point.measured["tflops"] * 1e12)


def _shape_of(point: Point) -> dict:
    shape = dict(point.shape)
    if point.kind == "grouped_gemm":
        shape["tokens_per_expert"] = shape["tokens"] * shape["topk"] / shape.get("experts")
    if point.kind == "attention_decode":
        shape["kv_read"] = shape["batch"] * shape["kv_len"]
    return shape


def fraction(table: Table, kind: str, fmt: str | None, shape: dict, device, link=None) -> tuple[float, str] | None:
    """(the interpolated efficiency of a kernel of this kind and shape, what it was read from), or None when the
    table holds no point of that kind nor of the kernel it is made of (MADE_OF). Kept on the table per device,
    link and shape: a layout search asks the same shapes again and again."""
    memo = table.memo()
    key = ("fraction", kind, fmt, tuple(sorted(shape.items())), identity_in(memo, device), identity_in(memo, link))
    if key not in memo:
        memo[key] = _fraction(table, kind, fmt, shape, device, link)
    return memo[key]


def identity_in(memo: dict, sheet) -> tuple | None:
    """identity(sheet), kept in a memo by the object itself (held there, so its id names no other object while
    the memo lives): a layout search asks it of the same sheets for every collective of every layout."""
    if sheet is None:
        return None
    found = memo.get(("sheet", id(sheet)))
    if found is None or found[0] is not sheet:
        found = memo["sheet", id(sheet)] = (sheet, identity(sheet))
    return found[1]


def identity(sheet) -> tuple | None:
    """A device or link sheet as a memo's key: every figure on it (two spellings of one sheet are one), read
    field by field (a layout search asks it for every layout: a JSON dump of the sheet cost more than the rest)."""
    if sheet is None:
        return None
    fields = type(sheet).model_fields
    return (type(sheet).__name__, *(_frozen(value) for name, value in sheet.__dict__.items()
                                    if name != "name" and name in fields))


def _frozen(value):
    """A sheet's field as a hashable value: a table of figures (a device's peaks) as its sorted items."""
    return tuple(sorted(value.items())) if isinstance(value, dict) else value


def _fraction(table: Table, kind: str, fmt: str | None, shape: dict, device, link=None) -> tuple[float, str] | None:
    points = table.of(kind)
    if fmt is not None:
        same = [p for p in points if p.format == fmt]
        points = same or [p for p in points if BYTES.get(p.format or "", 0) == BYTES.get(fmt, -1)] or points
    if "causal" in shape:  # a causal kernel skips half the tiles: its points are not a full square's
        points = [p for p in points if p.shape.get("causal", True) == shape["causal"]] or points
    if not points:
        return _made_of(table, kind, fmt, shape, device, link)
    if kind == "memcopy":
        values = [point_efficiency(p, table, device) for p in points]
        return sum(values) / len(values), f"{table.file}: memcopy, {len(values)} point(s)"
    axis, near = AXES[kind]
    wanted = {**shape}
    targets = {f: math.log(max(wanted[f], 1)) for f in near if f in wanted}
    series = _series(table, (kind, fmt, shape.get("causal")), points, targets, device, link)
    distances = [(sum(abs(own[f] - targets[f]) for f in own), index) for index, (own, _, _) in enumerate(series)]
    best = min(d for d, _ in distances)
    nearest = [index for d, index in distances if d == best]
    if len(nearest) == 1:  # one series of measured points along the axis: the usual case, read as prepared
        _, group, (xs, ys) = series[nearest[0]]
    else:  # equally near series: their points together, in the table's order along the axis
        group = sorted((p for p in points if _near_logs(p, near, targets) in [series[i][0] for i in nearest]),
                       key=lambda p: _shape_of(p)[axis])
        xs = [math.log(max(_shape_of(p)[axis], 1e-9)) for p in group]
        ys = [point_efficiency(p, table, device, link) for p in group]
    x = math.log(max(wanted[axis], 1e-9))
    value = _interpolate(xs, ys, x)
    first = group[0]
    dims = ", ".join(f"{f} {_shape_of(first)[f]:,}" for f in near)
    return value, f"{table.file}: {kind} {first.format or ''} at {dims}, {len(group)} point(s) along {axis}".replace(
        "  ", " ")


def _made_of(table: Table, kind: str, fmt: str | None, shape: dict, device, link=None) -> tuple[float, str] | None:
    """Where a table measures no kernel of this kind, the measured kernel it runs at its shape (MADE_OF: a grouped
    GEMM's one expert GEMM); None where there is none either."""
    if kind not in MADE_OF:
        return None
    part, part_shape = MADE_OF[kind]
    found = fraction(table, part, fmt, part_shape(shape), device, link)
    return None if found is None else (found[0], f"{found[1]} (no {kind} measured: one of the {part}s it runs)")


def _near_logs(point: Point, near: tuple, targets: dict) -> dict:
    return {f: math.log(v) for f, v in _shape_of(point).items() if f in near and f in targets}


def _series(table: Table, chosen: tuple, points: list[Point], targets: dict, device, link) -> list:
    """The points a lookup chooses among, grouped by their values of the kind's nearest-dimension fields (one
    measured series each): (those values' logarithms, the series' points sorted along the axis, their axis
    logarithms and efficiencies). Prepared once per table, the lookup that chose the points (`chosen`: kind,
    format, causal mask), device and link: a table of thousands of points is asked for hundreds of shapes by one
    search."""
    key = ("series", chosen, tuple(sorted(targets)), identity(device), identity(link))
    memo = table.memo()
    if key not in memo:
        axis, near = AXES[chosen[0]]
        grouped: dict[tuple, list[Point]] = {}
        for point in points:
            grouped.setdefault(tuple(sorted(_near_logs(point, near, targets).items())), []).append(point)
        memo[key] = [(dict(logs), group, ([math.log(max(_shape_of(p)[axis], 1e-9)) for p in group],
                                          [point_efficiency(p, table, device, link) for p in group]))
                     for logs, members in grouped.items()
                     for group in [sorted(members, key=lambda p: _shape_of(p)[axis])]]
    return memo[key]


def _interpolate(xs: list[float], ys: list[float], x: float) -> float:
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return ys[-1]
