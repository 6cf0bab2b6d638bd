"""`archcost diagram`: the computation graph as DOT, SVG or PNG."""

from __future__ import annotations

from pathlib import Path

from .common import Command, bad_value, compile_spec, output_file


def arguments(parser) -> None:
    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="FILE",
                        help=".dot, .svg or .png; `-` writes DOT to stdout")
    parser.add_argument("--layout", default=None, metavar="DEGREES",
                        help="mark the collectives a layout puts on the edges, e.g. tp=8,ep=8 (docs/layouts.md)")
    parser.add_argument("--blocks", action="store_true",
                        help="draw each block the model calls as one node: the whole model on one screen")


def run(args) -> int:
    from ..render import dot  # graphviz: for the command that draws only

    if args.blocks and args.layout:
        raise bad_value("`--blocks` draws blocks, `--layout` marks the edges between ops: choose one")
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

    if args.blocks:
        from ..render.blocks import to_block_dot

        return to_block_dot(compiled)
    return dot.to_dot(compiled, _traffic(compiled, args.layout))


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
