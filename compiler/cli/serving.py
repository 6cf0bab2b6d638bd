"""`archcost capacity`, `roofline`, `request` and `speculate`: the serving arithmetic on one device."""

from __future__ import annotations

import json

from ..render import tables
from ..terms.letters import PHASES, bad_value
from .common import (
    Command,
    byte_size,
    cache_flag,
    compile_spec,
    counting_flags,
    efficiency_flag,
    memory_flag,
    print_result,
    real,
    scenario,
    scenario_flags,
    show,
    weights_flag,
    whole,
)

DEVICES_HELP = ("rtx-2080-ti, rtx-4090, rtx-6000-ada, a100, a100-40gb, h100-sxm, h200, h20, b200, b300, gb200, "
                "l40s, mi300x, mi325x")


def capacity_arguments(parser) -> None:
    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("--device", required=True, help=DEVICES_HELP)
    memory_flag(parser)
    parser.add_argument(
        "--context", type=whole(1, name="context"), required=True, metavar="H", help="positions each request holds"
    )
    parser.add_argument("--workspace", type=byte_size, default=0, metavar="BYTES", help="kept free, e.g. 2GiB")
    parser.add_argument(
        "--reserve",
        type=real(0, 1, high_open=True, name="reserve"),
        default=0.0,
        help="fraction of device memory kept free (default 0: none is kept; 0.1 keeps a tenth)",
    )
    parser.add_argument(
        "--batch", type=whole(1, name="batch"), default=None, help="for N_max: the parameters that fit with B requests"
    )
    weights_flag(parser)
    parser.add_argument("--json", action="store_true")
    cache_flag(parser)
    counting_flags(parser)


def run_capacity(args) -> int:
    from ..front.hardware import device
    from ..serving.views import CompiledView
    from .memory import remember_view

    view = CompiledView(compile_spec(args.spec, args))
    code = print_capacity(args, view, device(args.device, args.memory))
    remember_view(args.spec, args, view)
    return code


def print_capacity(args, view, sheet) -> int:
    """B_max and N_max of a model view (compiled, or from the formula cache) on a device sheet."""
    from ..serving.capacity import capacity

    result = capacity(view, sheet, args.context, args.workspace, args.reserve, args.batch)
    return show(result, args, tables.capacity_text(result))


def roofline_arguments(parser) -> None:
    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("--device", required=True)
    memory_flag(parser)
    parser.add_argument("--phase", choices=PHASES, default="decode")
    scenario_flags(parser, P=1)
    parser.add_argument("--compute", "--peak", dest="peak", default=None, metavar="FORMAT",
                        help="the peak the matrix products run at, e.g. bf16, fp8 (as `layout` and `train` take it; "
                             "--peak is the older name)")
    parser.add_argument("--activations", action="store_true", help="count activation traffic as moved bytes too")
    weights_flag(parser)
    parser.add_argument("--by-op", action="store_true", help="also place every op on the roofline")
    efficiency_flag(parser)
    parser.add_argument("--json", action="store_true")
    counting_flags(parser)


def run_roofline(args) -> int:
    from ..cards.expected import table_for
    from ..front.hardware import device
    from ..serving.capacity import roofline, roofline_by_op

    compiled, hardware = compile_spec(args.spec, args), device(args.device, args.memory)
    table = table_for(hardware, args.efficiency_table)
    result = roofline(compiled, hardware, args.phase, scenario(args), args.peak, args.activations, table)
    ops = roofline_by_op(compiled, hardware, args.phase, scenario(args), args.peak, table) if args.by_op else None
    return print_result(args.json, result.model_dump(), tables.roofline_text(result),
                        ops, lambda: tables.roofline_ops_table(ops, result).text())


MAX_TURNS = 1000


def turns(text: str) -> list[tuple[int, int]]:
    """`512:128,64:256`: each turn's prompt P and returned G, at most MAX_TURNS of them."""
    parts = text.split(",")
    if len(parts) > MAX_TURNS:
        raise bad_value(f"`--turns`: more than {MAX_TURNS} turns")
    pairs = [part.split(":") for part in parts]
    if any(len(pair) != 2 for pair in pairs):
        raise bad_value(f"`--turns {text[:60]}`: write each turn as P:G, e.g. 512:128,64:256")
    return [(whole(1, name="P")(prompt), whole(1, name="G")(returned)) for prompt, returned in pairs]


def request_arguments(parser) -> None:
    parser.add_argument("spec", metavar="SPEC")
    scenario_flags(parser, P=128)
    parser.add_argument(
        "--turns",
        type=turns,
        default=None,
        metavar="P:G,P:G,…",
        help="a conversation: prompt and returned tokens per turn, each turn after everything kept so far",
    )
    parser.add_argument("--device", default=None, help="also the request's time on this device: bound and "
                                                       "expected")
    memory_flag(parser)
    parser.add_argument("--compute", default=None, metavar="FORMAT", help="with --device: the peak the products "
                                                                          "run at")
    efficiency_flag(parser)
    parser.add_argument("--json", action="store_true")
    cache_flag(parser)
    counting_flags(parser)


def run_request(args) -> int:
    from ..serving.views import CompiledView
    from .memory import remember_view

    compiled = compile_spec(args.spec, args)
    if args.device is not None:
        return _timed_request(args, compiled)
    view = CompiledView(compiled)
    code = print_request(args, view)
    remember_view(args.spec, args, view)
    return code


def _timed_request(args, compiled) -> int:
    """`request --device`: the request's report and its time (prefill and decodes, bound and expected)."""
    from ..cards.expected import table_for
    from ..front.hardware import device
    from ..serving.capacity import request_times
    from ..serving.views import CompiledView

    if args.turns:
        raise bad_value("`--device` times one request: leave out --turns")
    sheet = device(args.device, args.memory)
    timed = request_times(compiled, sheet, scenario(args), args.compute, table_for(sheet, args.efficiency_table))
    data = CompiledView(compiled).report("request", B=args.B, S=args.S, P=args.P, G=args.G)
    if args.json:
        print(json.dumps({**data, "times": timed.times, "timing": timed.model_dump()}, indent=2))
        return 0
    print(tables.report_text(data), end="")
    print(tables.request_times_text(timed), end="")
    return 0


def print_request(args, view) -> int:
    """One request (with what its cached prefix saves) or a conversation, of a model view."""
    from ..serving.capacity import conversation, prefix_reuse

    if args.turns:
        result = conversation(view, args.turns, batch=args.B, cached=args.S)
        if args.json:
            print(json.dumps([t.model_dump(exclude_none=True) for t in result], indent=2))
        else:
            print(tables.conversation_table(result).text(), end="")
        return 0
    data = view.report("request", B=args.B, S=args.S, P=args.P, G=args.G)
    reuse = prefix_reuse(view, args) if args.S else None
    if args.json:
        if reuse is not None:
            data["prefix_reuse"] = reuse.model_dump()
        print(json.dumps(data, indent=2))
        return 0
    print(tables.report_text(data), end="")
    if reuse is not None:
        print(f"\n  prefix reuse: {reuse.cached:,} cached positions save {reuse.rows_saved:,} projection rows, "
              f"{reuse.pairs_saved:,} causal pairs and {reuse.flops_saved / 1e12:,.3f} matrix TFLOPs")
    return 0


def speculate_arguments(parser) -> None:
    parser.add_argument("--k", type=whole(1, 1000, name="k"), required=True, help="drafted tokens per round")
    parser.add_argument(
        "--alpha", type=real(0, 1, name="alpha"), required=True, help="probability a drafted token is accepted"
    )
    parser.add_argument(
        "--round-ms",
        type=real(0, 1e9, low_open=True, name="round-ms"),
        default=None,
        help="draft plus verification time, T_s + T_v",
    )
    parser.add_argument(
        "--decode-ms", type=real(0, 1e9, low_open=True, name="decode-ms"), default=None, help="a plain decode step, T_d"
    )
    parser.add_argument("spec", nargs="?", metavar="SPEC", help="time the round from this spec's roofline instead")
    parser.add_argument("--device", default=None, help="with SPEC: the device the steps run on")
    memory_flag(parser)
    parser.add_argument("--drafter", default="mtp", help="with SPEC: the stage that drafts (default mtp)")
    parser.add_argument("--B", type=whole(1, name="B"), default=1)
    parser.add_argument("--S", type=whole(0, name="S"), default=8192)
    parser.add_argument("--json", action="store_true")
    counting_flags(parser)


def run_speculate(args) -> int:
    from ..serving.capacity import speculate

    round_s = None if args.round_ms is None else args.round_ms / 1000
    decode_s = None if args.decode_ms is None else args.decode_ms / 1000
    if args.spec is not None:
        from ..front.hardware import device
        from ..serving.capacity import draft_timing
        from ..terms.scenario import Scenario

        if args.device is None:
            raise bad_value("`speculate SPEC` needs --device to time its steps")
        round_s, decode_s, _ = draft_timing(compile_spec(args.spec, args), device(args.device, args.memory), args.k,
                                            Scenario(B=args.B, S=args.S), args.drafter)
    result = speculate(args.k, args.alpha, round_s, decode_s)
    return show(result, args, tables.speculation_text(result))


COMMANDS = (
    Command("capacity", "how many requests fit on a device (B_max), N_max and B*", capacity_arguments, run_capacity),
    Command("roofline", "arithmetic intensity, ridge point and the step-time bound", roofline_arguments,
            run_roofline),
    Command("request", "one request (S, P, G), or a conversation of turns", request_arguments, run_request),
    Command("speculate", "speculative decoding: tokens per round, time per output", speculate_arguments,
            run_speculate),
)
