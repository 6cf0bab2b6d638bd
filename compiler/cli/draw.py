"""`archcost diagram`: the computation graph as DOT, SVG or PNG."""

from __future__ import annotations

from pathlib import Path

from ..terms.letters import PHASES
from .common import Command, compile_spec, output_file, scenario, scenario_flags


def arguments(parser) -> None:
    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="FILE",
                        help=".dot, .svg or .png; `-` writes DOT to stdout")
    parser.add_argument("--layout", default=None, metavar="DEGREES",
                        help="mark the collectives a layout puts on the edges, e.g. tp=8,ep=8 (docs/layouts.md)")
    parser.add_argument("--blocks", action="store_true",
                        help="draw each block the model calls as one node: the whole model on one screen")
    parser.add_argument("--phase", choices=PHASES, default="prefill",
                        help="with --blocks: the call each block's FLOPs are given at (default prefill)")
    scenario_flags(parser, P=8192)


def run(args) -> int:
    from ..render import dot  # graphviz: for the command that draws only

    if str(args.output) == "-":  # DOT on stdout, for a pipe into Graphviz or a diff
        print(_source(compile_spec(args.spec, args), args), end="")
        return 0
    dot.drawable(args.output)  # a wrong suffix or output file is refused before the spec is compiled
    output_file(args.output, args.spec)
    dot.write_source(_source(compile_spec(args.spec, args), args), args.output)
    print(f"wrote {args.output}")
    return 0


def _source(compiled, args) -> str:
    from ..render import dot

    marks = None if args.layout is None else dot.layout_marks(compiled, args.layout)
    if args.blocks:
        from ..render.blocks import to_block_dot

        return to_block_dot(compiled, args.phase, scenario(args), marks)
    return dot.to_dot(compiled, marks)


COMMANDS = (Command("diagram", "draw the computation graph (.dot, .svg or .png)", arguments, run),)
