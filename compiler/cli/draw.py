"""`archcost diagram`: the computation graph as DOT, SVG or PNG."""

from __future__ import annotations

from pathlib import Path

from .common import Command, compile_spec, output_file


def arguments(parser) -> None:
    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="FILE",
                        help=".dot, .svg or .png; `-` writes DOT to stdout")


def run(args) -> int:
    from ..render import dot  # graphviz: for the command that draws only

    if str(args.output) == "-":  # DOT on stdout, for a pipe into Graphviz or a diff
        print(dot.to_dot(compile_spec(args.spec, args)), end="")
        return 0
    dot.drawable(args.output)  # a wrong suffix or output file is refused before the spec is compiled
    output_file(args.output, args.spec)
    dot.write(compile_spec(args.spec, args), args.output)
    print(f"wrote {args.output}")
    return 0


COMMANDS = (Command("diagram", "draw the computation graph (.dot, .svg or .png)", arguments, run),)
