"""`archcost throughput`: continuous batching's steady state on a layout, and the serving model's flags the SLO
search of `layouts` shares."""

from __future__ import annotations

from ..render import tables
from ..terms.letters import bad_value
from .common import (
    Command,
    compile_spec,
    counting_flags,
    efficiency_flag,
    memory_flag,
    real,
    show,
    weights_flag,
    whole,
)


def engine_flags(parser, shape_required: bool = True) -> None:
    """The serving model's words (`throughput` and the SLO search of `layouts`): the request shape, the engine
    and its caps, the drafts, the kernel table."""
    from ..serving.engines import ENGINES

    parser.add_argument("--isl", type=whole(1, name="--isl"), required=shape_required, default=None,
                        help="prompt tokens per request")
    parser.add_argument("--osl", type=whole(1, name="--osl"), required=shape_required, default=None,
                        help="output tokens per request")
    parser.add_argument("--engine", choices=ENGINES, default="vllm", help="whose defaults: caps, KV budget, pages")
    parser.add_argument("--max-batch", type=whole(1, name="--max-batch"), default=None)
    parser.add_argument("--max-num-tokens", type=whole(1, name="--max-num-tokens"), default=None)
    parser.add_argument("--overlap-scheduler", choices=("on", "off"), default=None,
                        help="the engine schedules the next step while one runs (default: the engine's)")
    parser.add_argument("--cached-fraction", type=real(0, 1, high_open=True, name="--cached-fraction"), default=0.0,
                        help="share of each prompt found in the prefix cache")
    parser.add_argument("--mtp", type=whole(1, 64, name="--mtp"), default=0, metavar="K",
                        help="tokens the spec's `mtp` stage drafts a step (with --acceptance)")
    parser.add_argument("--acceptance", type=real(0, 1, name="--acceptance"), default=None, metavar="A",
                        help="the chance each drafted token is accepted (with --mtp)")
    efficiency_flag(parser)


def serving_of(args, compiled, sheet, wire, network):
    """The Serving the flags describe; E401 for --mtp without --acceptance (or the other way round)."""
    from dataclasses import replace

    from ..cards.expected import table_for
    from ..serving.engines import preset
    from ..serving.steady import Serving
    from ..serving.throughput import no_table

    if (args.mtp == 0) != (args.acceptance is None):
        raise bad_value("`--mtp K` and `--acceptance A` go together: the tokens drafted a step and the chance "
                        "each is accepted")
    engine = preset(args.engine, sheet.memory, sheet.name.startswith("a100"),
                    None if args.overlap_scheduler is None else args.overlap_scheduler == "on")
    engine = replace(engine, **{k: v for k, v in (("max_batch", args.max_batch),
                                                  ("max_num_tokens", args.max_num_tokens)) if v})
    table = table_for(sheet, args.efficiency_table)
    if table is None:
        raise no_table(sheet)
    return Serving(compiled, sheet, wire, network, engine, table, args.compute, args.isl, args.osl,
                   args.cached_fraction, args.mtp, args.acceptance or 0.0)


def throughput_arguments(parser) -> None:
    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("--layout", default="tp=1", metavar="DEGREES", help="e.g. tp=8 or tp=4,dp=2")
    parser.add_argument("--device", required=True)
    memory_flag(parser)
    parser.add_argument("--link", default=None, help="the link inside a server (default: the device's own)")
    parser.add_argument("--network", default=None, help="the link between servers (default: --link)")
    engine_flags(parser)
    load = parser.add_mutually_exclusive_group()
    load.add_argument("--concurrency", type=whole(1, name="--concurrency"), default=None,
                      help="requests in flight (default: as many as the engine runs)")
    load.add_argument("--request-rate", type=real(0, 1e9, low_open=True, name="--request-rate"), default=None,
                      metavar="R", help="requests arriving a second: the concurrency they keep (Little's law)")
    parser.add_argument("--price-per-hour", type=real(0, 1e6, low_open=True, name="--price-per-hour"), default=None,
                        metavar="USD", help="a card's price an hour: the cost per million output tokens")
    parser.add_argument("--compute", default=None, metavar="FORMAT", help="the peak the products run at")
    weights_flag(parser)
    parser.add_argument("--json", action="store_true")
    counting_flags(parser)


def run_throughput(args) -> int:
    from ..cards.degrees import parse_layout
    from ..front.hardware import device, link, server_link
    from ..serving.throughput import served

    compiled, sheet = compile_spec(args.spec, args), device(args.device, args.memory)
    layout = parse_layout(args.layout)
    wire = server_link(sheet, args.link)
    serving = serving_of(args, compiled, sheet, wire, link(args.network) if args.network else wire)
    result = served(serving, layout, args.concurrency, args.price_per_hour, args.request_rate)
    return show(result, args, tables.throughput_text(result))


COMMANDS = (
    Command("throughput", "continuous batching's steady state: batch, TTFT, TPOT, tokens/s, cost", throughput_arguments,
            run_throughput),
)
