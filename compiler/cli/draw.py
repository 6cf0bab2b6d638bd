"""`archcost diagram`: the computation graph as DOT, SVG or PNG."""

from __future__ import annotations

from pathlib import Path

from .common import Command, compile_spec, output_file


def arguments(parser) -> None:
    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="FILE",
                        help=".dot, .svg or .png; `-` writes DOT to stdout")
    parser.add_argument("--layout", default=None, metavar="DEGREES",
                        help="mark the collectives a layout puts on the edges, e.g. tp=8,ep=8 (docs/layouts.md)")


def run(args) -> int:
    from ..render import dot  # graphviz: for the command that draws only

    if str(args.output) == "-":  # DOT on stdout, for a pipe into Graphviz or a diff
        compiled = compile_spec(args.spec, args)
        print(dot.to_dot(compiled, _traffic(compiled, args.layout)), end="")
        return 0
    dot.drawable(args.output)  # a wrong suffix or output file is refused before the spec is compiled
    output_file(args.output, args.spec)
    compiled = compile_spec(args.spec, args)
    dot.write(compiled, args.output, _traffic(compiled, args.layout))
    print(f"wrote {args.output}")
    return 0


def _traffic(compiled, layout_text: str | None) -> dict[tuple[str, str], str] | None:
    """The collective each edge carries on a layout, as the diagram labels it."""
    if layout_text is None:
        return None
    from ..cards.degrees import parse_layout
    from ..cards.placement import placed

    layout = parse_layout(layout_text)
    placement = placed(compiled, layout.degrees(formats=compiled.ir.formats))
    marks: dict[tuple[str, str], str] = {}
    for collective in placement.collectives:
        name = f"{collective.kind.replace('_', '-')} over {collective.group}"
        marks[collective.edge] = f"{marks[collective.edge]}, {name}" if collective.edge in marks else name
    return marks


COMMANDS = (Command("diagram", "draw the computation graph (.dot, .svg or .png)", arguments, run),)
