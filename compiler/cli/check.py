"""`archcost check` (validate, one-screen summary) and `archcost fmt` (canonical layout)."""

from __future__ import annotations

import sys
from pathlib import Path

from archcost.dsl.loader import display_name, load_file, read_source
from archcost.dsl.printer import canonical

from ..compilation import check_library
from ..numbers.evaluate import evaluate
from ..outputs import atomic_write
from ..render import listing
from ..render.units import grouped, human_bytes, human_count
from ..terms.scenario import Scenario
from .common import Command, compile_spec, counting_flags


def check_arguments(parser) -> None:
    parser.add_argument("specs", nargs="+", metavar="SPEC")
    parser.add_argument("--emit", choices=("summary", "ast", "graph"), default="summary",
                        help="what to print: the summary, the syntax tree (JSON), or the op graph")
    counting_flags(parser)  # --option chooses the execution path the summary's figures follow


def check(args) -> int:
    for path in args.specs:
        if args.emit == "ast":
            print(listing.ast_listing(load_file(path, args.allow_use_outside)), end="")
            continue
        library = check_library(path, args.allow_use_outside)
        if library is not None:
            print(f"{display_name(Path(path).resolve())}: ok, {_contents(library)}")
            continue
        compiled = compile_spec(path, args)
        if args.emit == "graph":
            print(listing.graph_listing(compiled), end="")
            continue
        print(_summary(compiled, path))
    return 0


def _summary(compiled, path: str) -> str:
    report = evaluate(compiled, "decode", Scenario())
    stacks = [c for c in compiled.ir.clusters.values() if c.kind in ("repeat", "loop")]
    rows = [(name, grouped(getattr(report, name)), human(getattr(report, name)))
            for name, human in (("params", human_count), ("params_active", human_count),
                                ("params_active_no_embedding", human_count),
                                ("params_active_no_vocabulary", human_count), ("weight_bytes", human_bytes),
                                ("kv_bytes_per_token", human_bytes))]
    rows.append(("ops", str(len(compiled.ir.nodes)),
                 "in " + (", ".join(f"{c.label} ×{c.times}" for c in stacks) or "no repeated stack")))
    return "\n".join([f"{compiled.name} ({path}): ok",
                      *(f"  {name:<27}{value:>20}   {shown}" for name, value, shown in rows)])


def _contents(module) -> str:
    """`3 blocks (gelu, relu, silu)`, `12 formats`: what a library file defines."""
    parts = [f"{len(items)} {kind}{'s' if len(items) != 1 else ''} ({', '.join(names)})"
             for kind, items, names in (("block", module.blocks, [b.name for b in module.blocks]),
                                        ("format", module.formats, [f.name for f in module.formats]),
                                        ("device", module.devices, [d.name for d in module.devices])) if items]
    return "; ".join(parts) or "nothing defined"


def fmt_arguments(parser) -> None:
    parser.add_argument("specs", nargs="+", metavar="SPEC")
    parser.add_argument("--check", action="store_true",
                        help="print nothing; exit 1 if a spec is not in canonical layout")
    parser.add_argument("--write", action="store_true", help="rewrite the files in place")


def fmt(args) -> int:
    unformatted = []
    for spec in args.specs:
        text = read_source(Path(spec))
        raw = Path(spec).read_bytes()  # what --write may replace: refused if the file changes meanwhile
        tidy = canonical(text, spec)
        if tidy != text:
            unformatted.append(spec)
        if args.check:
            continue
        if args.write:
            if tidy != text:
                atomic_write(Path(spec), lambda temporary, tidy=tidy: temporary.write_text(tidy, encoding="utf-8"),
                             expected=raw)
        else:
            print(tidy, end="")
    for spec in unformatted if args.check else ():
        print(f"would reformat {spec}", file=sys.stderr)
    return 1 if args.check and unformatted else 0


COMMANDS = (Command("check", "validate specs and print a one-screen summary", check_arguments, check),
            Command("fmt", "print a spec in canonical layout", fmt_arguments, fmt))
