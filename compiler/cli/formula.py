"""`archcost formula`: closed forms of M, F and R."""

from __future__ import annotations

from ..render import formula as closed_forms
from ..terms.letters import PHASES
from .common import Command, compile_spec, counting_flags


def arguments(parser) -> None:
    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("--quantity", action="append", choices=("M", "F", "R"),
                        help="which of M (storage), F (FLOPs), R (bytes moved); repeatable; default all")
    parser.add_argument("--phase", choices=PHASES, default="call")
    parser.add_argument("--latex", action="store_true", help="LaTeX instead of plain text (= --format latex)")
    parser.add_argument("--format", choices=("text", "latex", "markdown"), default=None,
                        help="plain text (default), LaTeX expressions, or Markdown with display math")
    parser.add_argument("--keep", default="", metavar="NAMES",
                        help="comma-separated dimensions to leave symbolic, e.g. d,vocab")
    counting_flags(parser)


def run(args) -> int:
    keep = frozenset(n.strip() for n in args.keep.split(",") if n.strip())
    compiled = compile_spec(args.spec, args, keep)
    quantities = args.quantity or ["M", "F", "R"]
    style = args.format or ("latex" if args.latex else "text")
    if style == "markdown":
        print(closed_forms.markdown(compiled, quantities, args.phase), end="")
    else:
        print(closed_forms.render(compiled, quantities, args.phase, style == "latex"), end="")
    return 0


COMMANDS = (Command("formula", "print closed forms of M, F, R", arguments, run),)
