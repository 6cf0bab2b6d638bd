"""`archcost layout` and `archcost layouts`: a model split over many cards, and the layouts that hold it."""

from __future__ import annotations

import json

from ..terms.letters import MAX_CARDS, PHASES, bad_value
from .common import (
    Command,
    byte_size,
    compile_spec,
    counting_flags,
    efficiency_flag,
    memory_flag,
    real,
    scenario,
    scenario_flags,
    weights_flag,
    whole,
)
from .throughput import engine_flags

LINKS_HELP = "nvlink3, nvlink4, nvlink5, nvlink4_h800, nvlink_bridge, pcie4, pcie5, ib_hdr, ib_ndr, roce_400g"




def layout_arguments(parser) -> None:
    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("--layout", required=True, metavar="DEGREES",
                        help="e.g. `tp=8,ep=8,pp=1,dp=1,cp=1`; mb=N micro-batches, sp sequence parallel, node=8 cards "
                             "per server, limit=4 servers per token, dispatch=fp8, imb=1.2 expert load imbalance")
    parser.add_argument("--phase", choices=PHASES, default="decode")
    scenario_flags(parser, P=1)
    parser.add_argument("--device", default=None, help="a device sheet, for time bounds")
    memory_flag(parser)
    parser.add_argument("--link", default=None, help=f"{LINKS_HELP} (default: the device's own inside a server)")
    parser.add_argument("--network", default=None, help="the link between servers (default: --link), e.g. ib_ndr")
    parser.add_argument("--compute", default=None, metavar="FORMAT",
                        help="the peak the matrix products run at, e.g. bf16, fp8, fp4 (default: the format the "
                             "spec's activations are stored in)")
    parser.add_argument("--keep", default="", metavar="DEGREES",
                        help="print per-card formulas with these degrees left as letters, e.g. tp,ep")
    weights_flag(parser)
    efficiency_flag(parser)
    parser.add_argument("--json", action="store_true")
    counting_flags(parser)


def run_layout(args) -> int:
    from ..cards.degrees import parse_layout
    from ..cards.layout import layout_report
    from ..front.hardware import device, link, server_link
    from ..render.layouts import layout_text

    layout = parse_layout(args.layout)
    compiled = compile_spec(args.spec, args)
    if args.keep:
        return _formulas(compiled, layout, args)
    sheet = device(args.device, args.memory) if args.device else None
    if sheet is None and args.link:
        raise bad_value("`--link` prices the collectives on a device: give `--device` too")
    wire = None if sheet is None else server_link(sheet, args.link)
    network = link(args.network) if args.network else None
    from ..cards.expected import table_for

    table = table_for(sheet, args.efficiency_table) if sheet is not None else None
    report = layout_report(compiled, layout, args.phase, scenario(args), sheet, wire, args.compute, network=network,
                           table=table)
    held = None
    if sheet is not None:
        from ..cards.fleet import held_at
        from ..render.layouts import capacity_text

        held = held_at(compiled, report, sheet)
    if args.json:
        print(json.dumps({**report.model_dump(), "capacity": held.model_dump() if held else None}, indent=2))
    else:
        print(layout_text(report) + (capacity_text(held) if held else ""), end="")
    return 0


def _formulas(compiled, layout, args) -> int:
    """Per-card closed forms with the kept degrees as letters (the first stage's card when pp is kept)."""
    import sympy as sp

    from ..cards.card import stage_cost
    from ..cards.degrees import refused
    from ..cards.placement import DEGREES, placed
    from ..terms.scenario import at_phase
    from ..terms.symbols import B

    kept = frozenset(name.strip() for name in args.keep.split(",") if name.strip())
    unknown = kept - set(DEGREES)
    if unknown:
        raise bad_value(f"`--keep`: {', '.join(sorted(unknown))} is not a degree ({', '.join(DEGREES)})")
    degrees = layout.degrees(kept, compiled.ir.formats)
    placement = placed(compiled, degrees)
    if "pp" in kept and not _even_stages(placed(compiled, layout.degrees(formats=compiled.ir.formats))):
        raise refused("`--keep pp`: these stages take the layers in order, not 1/pp of each stack",
                      "keep pp for a single stack that pp divides; print the numbers with `layout` alone")
    cost = stage_cost(compiled, degrees, "first" if "pp" in kept or layout.pp > 1 else "whole")
    sent = sp.Add(*(c.sent for c in placement.collectives))
    # a replica serves ⌈B/dp⌉ of the B requests (as layout_report evaluates): the formulas say so in B
    replica = {B: sp.ceiling(B / degrees.dp)} if "dp" in kept or layout.dp > 1 else {}
    print(f"{compiled.name}: one card of {layout.text()}, {', '.join(sorted(kept))} kept as letters")
    for name, expr in (("params", cost.params), ("weight_bytes", cost.weight_bytes),
                       ("state_bytes", cost.state_bytes), ("flops_matrix", cost.flops_matrix), ("sent_bytes", sent)):
        level = name in ("params", "weight_bytes", "state_bytes")
        closed = at_phase(expr, args.phase, compiled.conventions, level=level).xreplace(replica)
        print(f"  {name} = {sp.sstr(closed)}")
    return 0


def _even_stages(placement) -> bool:
    """Whether every stage holds 1/pp of every stack, as a kept `pp` letter says."""
    sizes = placement.stage_layers  # equal stages over one stack (no `select` arms): 1/pp of it each
    return not sizes or (len(set(sizes)) == 1 and len(set(placement.spans.values())) == 1)


def layouts_arguments(parser) -> None:
    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("--devices", required=True, metavar="NxDEVICE", help="e.g. 8xh100-sxm")
    memory_flag(parser)
    parser.add_argument("--link", default=None, help=f"{LINKS_HELP} (default: the device's own)")
    parser.add_argument("--compute", default=None, metavar="FORMAT",
                        help="the peak the matrix products run at, e.g. bf16, fp8, fp4 (default: the format the "
                             "spec's activations are stored in)")
    parser.add_argument("--context", type=whole(1, name="context"), default=None, metavar="H",
                        help="positions each request holds: which layouts hold the model (not with --ttft/--tpot)")
    parser.add_argument("--batch", type=whole(1, name="batch"), default=1)
    parser.add_argument("--workspace", type=byte_size, default=0, metavar="BYTES", help="kept free per card")
    parser.add_argument("--top", type=whole(1, name="top"), default=None, help="show only the best N")
    parser.add_argument("--plot", default=None, metavar="FILE", help="per-card memory by class (PNG or SVG)")
    parser.add_argument("--fewest", action="store_true",
                        help="also find the fewest cards of this kind that hold the model")
    slo = parser.add_argument_group("SLO search", "with --isl, --osl, --ttft and --tpot: the layouts and batches "
                                    "that meet both targets, by output tokens a second per card")
    slo.add_argument("--ttft", type=real(0, 1e6, low_open=True, name="--ttft"), default=None, metavar="SECONDS",
                     help="time to first token, at most")
    slo.add_argument("--tpot", type=real(0, 1e6, low_open=True, name="--tpot"), default=None, metavar="SECONDS",
                     help="time per output token, at most")
    slo.add_argument("--disaggregated", action="store_true",
                     help="also the best prefill and decode layouts run apart")
    slo.add_argument("--network", default=None, help="the link between servers (default: --link)")
    engine_flags(slo, shape_required=False)
    weights_flag(parser)
    parser.add_argument("--json", action="store_true")
    counting_flags(parser)


def run_layouts(args) -> int:
    slo = [name for name in ("isl", "osl", "ttft", "tpot") if getattr(args, name) is not None]
    if slo or args.disaggregated:
        return _slo_search(args, slo)
    _no_serving_flags(args)
    if args.context is None:
        raise bad_value("`layouts` needs `--context H` (the layouts that hold the model at H positions), or "
                        "`--isl`, `--osl`, `--ttft` and `--tpot` (the SLO search)")
    from ..cards.fleet import fewest_cards, plot, ranked
    from ..front.hardware import fleet, server_link
    from ..render.layouts import fits_text

    if args.plot is not None:
        from pathlib import Path

        from .common import output_file
        if Path(args.plot).suffix.lower() not in (".png", ".svg"):
            from ..outputs import unknown_format

            raise unknown_format(args.plot, (".png", ".svg"))
        output_file(Path(args.plot), args.spec)
    count, sheet = fleet(args.devices, args.memory, MAX_CARDS)
    wire = server_link(sheet, args.link)
    compiled = compile_spec(args.spec, args)
    from ..cards.expected import table_for

    fits = ranked(compiled, count, sheet, wire, args.context, args.batch, args.workspace,
                  args.compute, table_for(sheet), top=args.top)
    if args.plot:
        plot(fits, sheet, args.plot)
    if args.json:
        print(json.dumps([f.model_dump() for f in fits], indent=2))
    else:
        print(fits_text(compiled.name, fits, sheet, wire, args.context, args.batch), end="")
    if args.fewest:
        cards, best = fewest_cards(compiled, sheet, wire, args.context, args.batch, args.workspace)
        print(f"fewest: {cards} × {sheet.name} ({best.layout.text()})")
    return 0


def _no_serving_flags(args) -> None:
    """The serving model's flags mean nothing to the memory search: refused, not ignored."""
    stray = [flag for flag, value in (("--mtp", args.mtp), ("--acceptance", args.acceptance),
                                      ("--max-batch", args.max_batch), ("--max-num-tokens", args.max_num_tokens),
                                      ("--cached-fraction", args.cached_fraction), ("--network", args.network),
                                      ("--overlap-scheduler", args.overlap_scheduler),
                                      ("--efficiency-table", args.efficiency_table)) if value]
    if stray:
        raise bad_value(f"{', '.join(stray)} belong to the SLO search: give --isl, --osl, --ttft and --tpot too")


def _slo_search(args, given: list[str]) -> int:
    from ..front.hardware import fleet, link, server_link
    from ..render.layouts import slo_text
    from ..serving.slo import search
    from .throughput import serving_of

    missing = [f"--{name}" for name in ("isl", "osl", "ttft", "tpot") if name not in given]
    if missing:
        raise bad_value(f"the SLO search needs --isl, --osl, --ttft and --tpot: give {', '.join(missing)}")
    if args.context is not None or args.plot or args.fewest or args.workspace:
        raise bad_value("`--context`, `--plot`, `--fewest` and `--workspace` ask which layouts hold the model; the "
                        "SLO search (--ttft, --tpot) sizes the KV cache as the engine does: leave them out")
    cards, sheet = fleet(args.devices, args.memory, MAX_CARDS)
    wire = server_link(sheet, args.link)
    compiled = compile_spec(args.spec, args)
    serving = serving_of(args, compiled, sheet, wire, link(args.network) if args.network else wire)
    result = search(serving, cards, args.ttft, args.tpot, args.top or 10, args.disaggregated)
    if args.json:
        print(json.dumps(result.model_dump(), indent=2))
    else:
        print(slo_text(result), end="")
    return 0


COMMANDS = [
    Command("layout", "per-card M, F, R, collectives and time bounds of a model split over cards", layout_arguments,
            run_layout),
    Command("layouts", "the (TP, EP, PP, DP) layouts of N cards that hold a model at a context and batch",
            layouts_arguments, run_layouts),
]
