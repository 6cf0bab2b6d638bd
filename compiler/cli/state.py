"""`archcost state` (state against context length), `archcost plot` and `archcost sweep` (grids of shapes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..render import tables
from ..terms.letters import PHASES, bad_value
from .common import Command, byte_size, cache_flag, compile_spec, counting_flags, memory_flag, output_file, whole

FIGURES = ("state", "flops", "step", "roofline", "capacity")


def state_arguments(parser) -> None:
    parser.add_argument("specs", nargs="+", metavar="SPEC")
    parser.add_argument("--H", type=whole(1, name="H"), nargs="+", default=(8192, 32768, 131072, 1048576), metavar="N",
                        help="context lengths to evaluate (default 8K, 32K, 128K, 1M)")
    parser.add_argument("--budget", type=byte_size, default=None, metavar="BYTES",
                        help="find the longest context whose state fits, e.g. 256MiB or 24GB")
    parser.add_argument("--json", action="store_true")
    counting_flags(parser)


def run_state(args) -> int:
    from ..serving.state import profile

    profiles = [profile(compile_spec(path, args), args.H, args.budget) for path in args.specs]
    if args.json:
        print(json.dumps([p.model_dump() for p in profiles], indent=2))
        return 0
    print(tables.state_table(profiles).text(), end="")
    return 0


def plot_arguments(parser) -> None:
    parser.add_argument("figure", choices=FIGURES,
                        help="state or flops against context length, decode step time or capacity against batch "
                        "and context on --device, or the roofline with the call's ops on it")
    parser.add_argument("--device", default="rtx-4090", help="for step, roofline and capacity (default rtx-4090)")
    memory_flag(parser)
    parser.add_argument("specs", nargs="+", metavar="SPEC")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="FILE")
    parser.add_argument(
        "--from", dest="shortest", type=whole(1, name="from"), default=1024, help="shortest context (default 1K)"
    )
    parser.add_argument(
        "--to", dest="longest", type=whole(1, name="to"), default=2**20, help="longest context (default 1M)"
    )
    counting_flags(parser)


def run_plot(args) -> int:
    from ..render import plot

    if args.output.suffix.lower() not in (".png", ".svg"):
        from ..outputs import unknown_format

        raise unknown_format(args.output, (".png", ".svg"))
    output_file(args.output, *args.specs)
    if args.shortest >= args.longest:
        raise bad_value(f"`--from {args.shortest}` must be shorter than `--to {args.longest}`")
    models = [compile_spec(path, args) for path in args.specs]
    if args.figure in ("state", "flops"):
        against_context = plot.state_vs_context if args.figure == "state" else plot.flops_vs_context
        against_context(models, args.output, args.shortest, args.longest)
    else:
        from ..front.hardware import device

        draw = {"step": plot.step_vs_batch, "roofline": plot.roofline_chart, "capacity": plot.capacity_vs_context}
        notes = draw[args.figure](models, device(args.device, args.memory), args.output) or []
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    print(f"wrote {args.output}")
    return 0


def sweep_arguments(parser) -> None:
    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("--phase", choices=PHASES, default="decode")
    for letter, default in (("B", "1"), ("S", "0"), ("P", "1"), ("G", "1")):
        parser.add_argument(f"--{letter}", default=default, metavar="LIST",
                            help=f"values of {letter}: 1,8,64 or a range start:stop:step (default {default})")
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="FILE.csv|FILE.json")
    cache_flag(parser)
    counting_flags(parser)


def run_sweep(args) -> int:
    from ..serving.sweep import check_axes, check_output_format, check_size, grid, write
    from .memory import remember

    output_file(args.output, args.spec)
    check_output_format(args.output)
    values = {letter: grid(getattr(args, letter), letter) for letter in "BSPG"}
    check_axes(values, args.phase)
    check_size(values)
    compiled = compile_spec(args.spec, args)
    points = write(compiled, args.phase, values, args.output)
    remember(args, compiled, args.phase)
    if args.output is not None:
        print(f"wrote {args.output} ({points:,} point{'s' if points != 1 else ''})")
    return 0


COMMANDS = (
    Command("state", "context state against context length: fixed part, growth, H*", state_arguments, run_state),
    Command("plot", "draw a figure with matplotlib (.png or .svg)", plot_arguments, run_plot),
    Command("sweep", "evaluate a grid of B, S, P, G at once (CSV or JSON)", sweep_arguments, run_sweep),
)
