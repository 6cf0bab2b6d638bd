"""The `archcost` command: check, formula, eval, compare, diagram."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic import BaseModel

from archcost.dsl.errors import ArchError
from archcost.dsl.loader import display_name, load_file

from .evaluate import by_op, evaluate
from .pipeline import Compiled, compile_file, check_library
from .render import formula, listing, tables
from .render.units import grouped, human_bytes, human_count
from .scenario import LEDGERS, PHASES, Options, Scenario, counting

EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 3


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except ArchError as error:
        print(error.render(), file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:
        return 0
    except Exception as error:  # a bug of ours: say so plainly, without a traceback
        print(f"archcost: internal error: {type(error).__name__}: {error}\n"
              "this is a bug in archcost, not in your spec; please report it with the spec", file=sys.stderr)
        return EXIT_INTERNAL_ERROR


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="archcost", description=__doc__)
    parser.add_argument("--allow-use-outside", action="store_true",
                        help="let `use \"PATH\"` reach files outside the spec's own folder")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="validate specs and print a one-screen summary")
    check.add_argument("specs", nargs="+", metavar="SPEC")
    check.add_argument("--emit", choices=("summary", "ast", "graph"), default="summary",
                       help="what to print: the summary, the syntax tree (JSON), or the op graph")
    check.set_defaults(run=_check)

    show = commands.add_parser("formula", help="print closed forms of M, F, R")
    show.add_argument("spec", metavar="SPEC")
    show.add_argument("--quantity", action="append", choices=("M", "F", "R"),
                      help="which of M (storage), F (FLOPs), R (bytes moved); repeatable; default all")
    show.add_argument("--phase", choices=PHASES, default="call")
    show.add_argument("--latex", action="store_true", help="LaTeX instead of plain text (= --format latex)")
    show.add_argument("--format", choices=("text", "latex", "markdown"), default=None,
                      help="plain text (default), LaTeX expressions, or Markdown with display math")
    show.add_argument("--keep", default="", metavar="NAMES",
                      help="comma-separated dimensions to leave symbolic, e.g. d,vocab")
    _options_flags(show)
    show.set_defaults(run=_formula)

    run = commands.add_parser("eval", help="evaluate every quantity for one request shape")
    run.add_argument("spec", metavar="SPEC")
    run.add_argument("--phase", choices=PHASES, required=True)
    _scenario_flags(run, P=1)
    run.add_argument("--json", action="store_true", help="machine output: base units, stable keys (= --format json)")
    run.add_argument("--format", choices=("text", "json", "markdown", "csv"), default=None,
                     help="text (default), JSON, a Markdown table, or CSV rows of quantity, value, readable")
    run.add_argument("--by-op", action="store_true", help="also list every op with its shape and FLOPs")
    _options_flags(run)
    run.set_defaults(run=_eval)

    compare = commands.add_parser("compare", help="compare models side by side, one row per model")
    compare.add_argument("specs", nargs="+", metavar="SPEC")
    compare.add_argument("--phase", choices=PHASES, default="prefill")
    _scenario_flags(compare, P=8192)
    compare.add_argument("--table", choices=("summary", "chapter", "architecture", "params", "prefill", "long-context",
                                             "stages", "request"),
                         default="summary", help="summary: size and cost of the call; the chapter's tables: "
                         "architecture (2-A), params (2-B), prefill (2-C), stages (2-D), long-context (2-E), "
                         "request (§2.6.3); chapter: 2-A, 2-B, 2-C, 2-E and the request table")
    compare.add_argument("--across", metavar="OPTION", default=None,
                         help="with --table stages: one column per word of this spec option, e.g. execution")
    compare.add_argument("--format", choices=("text", "markdown", "csv", "json"), default="text")
    _options_flags(compare)
    compare.set_defaults(run=_compare)

    state = commands.add_parser("state", help="context state against context length: fixed part, growth, H*")
    state.add_argument("specs", nargs="+", metavar="SPEC")
    state.add_argument("--H", type=int, nargs="+", default=[8192, 32768, 131072, 1048576], metavar="N",
                       help="context lengths to evaluate (default 8K, 32K, 128K, 1M)")
    state.add_argument("--budget", type=_bytes, default=None, metavar="BYTES",
                       help="find the longest context whose state fits, e.g. 256MiB or 24GB")
    state.add_argument("--json", action="store_true")
    _options_flags(state)
    state.set_defaults(run=_state)

    plot = commands.add_parser("plot", help="draw a figure with matplotlib (.png or .svg)")
    plot.add_argument("figure", choices=("state", "flops", "step", "roofline", "capacity"),
                      help="state or flops against context length, decode step time or capacity against batch and "
                      "context on --device, or the roofline with the call's ops on it")
    plot.add_argument("--device", default="rtx-4090", help="for step, roofline and capacity (default rtx-4090)")
    plot.add_argument("specs", nargs="+", metavar="SPEC")
    plot.add_argument("-o", "--output", required=True, type=Path, metavar="FILE")
    plot.add_argument("--from", dest="shortest", type=int, default=1024, help="shortest context (default 1K)")
    plot.add_argument("--to", dest="longest", type=int, default=2**20, help="longest context (default 1M)")
    _options_flags(plot)
    plot.set_defaults(run=_plot)

    fits = commands.add_parser("capacity", help="how many requests fit on a device (B_max), N_max and B*")
    fits.add_argument("spec", metavar="SPEC")
    fits.add_argument("--device", required=True, help="rtx-2080-ti, rtx-4090, rtx-6000-ada, a100, a100-40gb, "
                      "h100-sxm, h200")
    fits.add_argument("--context", type=int, required=True, metavar="H", help="positions each request holds")
    fits.add_argument("--workspace", type=_bytes, default=0, metavar="BYTES", help="kept free, e.g. 2GiB")
    fits.add_argument("--reserve", type=float, default=0.0, help="fraction of device memory kept free, e.g. 0.1")
    fits.add_argument("--batch", type=int, default=None, help="for N_max: the parameters that fit with B requests")
    fits.add_argument("--weights", default=None, metavar="FORMAT",
                      help="store matrix weights (not embedding, head, norms) as e.g. int8_g128, int4_g128, fp8")
    fits.add_argument("--json", action="store_true")
    _options_flags(fits)
    fits.set_defaults(run=_capacity)

    roof = commands.add_parser("roofline", help="arithmetic intensity, ridge point and the step-time bound")
    roof.add_argument("spec", metavar="SPEC")
    roof.add_argument("--device", required=True)
    roof.add_argument("--phase", choices=PHASES, default="decode")
    _scenario_flags(roof, P=1)
    roof.add_argument("--peak", default=None, metavar="FORMAT", help="the device peak to use, e.g. bf16, fp16")
    roof.add_argument("--activations", action="store_true", help="count activation traffic as moved bytes too")
    roof.add_argument("--weights", default=None, metavar="FORMAT")
    roof.add_argument("--by-op", action="store_true", help="also place every op on the roofline")
    roof.add_argument("--json", action="store_true")
    _options_flags(roof)
    roof.set_defaults(run=_roofline)

    ask = commands.add_parser("request", help="one request (S, P, G), or a conversation of turns")
    ask.add_argument("spec", metavar="SPEC")
    _scenario_flags(ask, P=128)
    ask.add_argument("--turns", default=None, metavar="P:G,P:G,…", help="a conversation: prompt and returned "
                     "tokens per turn, each turn after everything kept so far")
    ask.add_argument("--json", action="store_true")
    _options_flags(ask)
    ask.set_defaults(run=_request)

    draft = commands.add_parser("speculate", help="speculative decoding: tokens per round, time per output")
    draft.add_argument("--k", type=int, required=True, help="drafted tokens per round")
    draft.add_argument("--alpha", type=float, required=True, help="probability a drafted token is accepted")
    draft.add_argument("--round-ms", type=float, default=None, help="draft plus verification time, T_s + T_v")
    draft.add_argument("--decode-ms", type=float, default=None, help="a plain decode step, T_d")
    draft.add_argument("spec", nargs="?", metavar="SPEC", help="time the round from this spec's roofline instead")
    draft.add_argument("--device", default=None, help="with SPEC: the device the steps run on")
    draft.add_argument("--drafter", default="mtp", help="with SPEC: the stage that drafts (default mtp)")
    draft.add_argument("--B", type=int, default=1)
    draft.add_argument("--S", type=int, default=8192)
    draft.add_argument("--json", action="store_true")
    _options_flags(draft)
    draft.set_defaults(run=_speculate)

    grid = commands.add_parser("sweep", help="evaluate a grid of B, S, P, G at once (CSV or JSON)")
    grid.add_argument("spec", metavar="SPEC")
    grid.add_argument("--phase", choices=PHASES, default="decode")
    for letter, default in (("B", "1"), ("S", "0"), ("P", "1"), ("G", "1")):
        grid.add_argument(f"--{letter}", default=default, metavar="LIST",
                          help=f"values of {letter}: 1,8,64 or a range start:stop:step (default {default})")
    grid.add_argument("-o", "--output", type=Path, default=None, metavar="FILE.csv|FILE.json")
    _options_flags(grid)
    grid.set_defaults(run=_sweep)

    draw = commands.add_parser("diagram", help="draw the computation graph (.dot, .svg or .png)")
    draw.add_argument("spec", metavar="SPEC")
    draw.add_argument("-o", "--output", required=True, type=Path, metavar="FILE",
                      help=".dot, .svg or .png; `-` writes DOT to stdout")
    draw.set_defaults(run=_diagram)

    bring = commands.add_parser("import", help="write a spec from a Hugging Face config.json")
    bring.add_argument("config", metavar="CONFIG.json")
    bring.add_argument("-o", "--output", type=Path, default=None, metavar="SPEC.arch",
                       help="where to write the spec (default: print it)")
    bring.add_argument("--name", default=None, help="the model's name (default: from the config or its folder)")
    bring.set_defaults(run=_import)

    tidy = commands.add_parser("fmt", help="print a spec in canonical layout")
    tidy.add_argument("specs", nargs="+", metavar="SPEC")
    tidy.add_argument("--check", action="store_true", help="print nothing; exit 1 if a spec is not in canonical layout")
    tidy.add_argument("--write", action="store_true", help="rewrite the files in place")
    tidy.set_defaults(run=_fmt)
    return parser


def _scenario_flags(parser: argparse.ArgumentParser, P: int) -> None:
    parser.add_argument("--B", type=int, default=1, help="requests in the batch (default 1)")
    parser.add_argument("--S", type=int, default=0, help="positions already cached per request (default 0)")
    parser.add_argument("--P", type=int, default=P, help=f"new tokens per request in the call (default {P})")
    parser.add_argument("--G", type=int, default=1, help="tokens returned per request, for --phase request")


def _options_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--logits", choices=("last", "all"), default="last",
                        help="rows through the vocabulary head: the last token of each request, or all")
    parser.add_argument("--attention", choices=("as_written", "causal", "rectangle", "half_rectangle"),
                        default=None, help="pairs an attention computes: as each spec says (default), "
                        "causal-effective, the full rectangle, or half of it")
    parser.add_argument("--vector-params", choices=("nonmatrix", "matrix"), default=None,
                        help="count norm scales and biases as non-matrix work (default) or as 2 matrix FLOPs each")
    parser.add_argument("--routing", choices=("uniform", "concentrated", "random"), default="uniform",
                        help="which experts a batch's tokens touch: spread evenly, all the same k, or at random")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=WORD",
                        help="choose one of the spec's execution paths, e.g. mla_cache=expanded; repeatable")
    parser.add_argument("--ledger", choices=tuple(LEDGERS), default="chapter",
                        help="a source's counting conventions in one word: chapter (seed 002, default) or "
                        "kipply (seed 000's 2N-per-token ledger); explicit flags override it")


def _options(args) -> Options:
    return counting(args.ledger, args.attention, args.vector_params, logits=args.logits, routing=args.routing,
                    paths=_paths(args.option), weights=getattr(args, "weights", None))


def _paths(given: list[str]) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in given:
        name, sep, word = item.partition("=")
        if not sep or not name.strip() or not word.strip():
            from archcost.dsl.errors import Diagnostic

            raise ArchError([Diagnostic(code="E401", message=f"`--option {item}`: write NAME=WORD, "
                                                             "e.g. mla_cache=expanded")])
        pairs.append((name.strip(), word.strip()))
    return tuple(pairs)


def _scenario(args) -> Scenario:
    return Scenario(B=args.B, S=args.S, P=args.P, G=args.G)


def _compile(path: str, args=None, keep: frozenset[str] = frozenset()) -> Compiled:
    options = _options(args) if args is not None and hasattr(args, "logits") else Options()
    allow = bool(getattr(args, "allow_use_outside", False))
    return compile_file(path, options=options, keep=keep, allow_outside=allow)


def _check(args) -> int:
    for path in args.specs:
        if args.emit == "ast":
            print(listing.ast_listing(load_file(path, args.allow_use_outside)), end="")
            continue
        library = check_library(path, args.allow_use_outside)
        if library is not None:
            print(f"{display_name(Path(path).resolve())}: ok, {_contents(library)}")
            continue
        compiled = _compile(path, args)
        if args.emit == "graph":
            print(listing.graph_listing(compiled), end="")
            continue
        report = evaluate(compiled, "decode", Scenario())
        stacks = [c for c in compiled.ir.clusters.values() if c.kind == "repeat"]
        print(f"{compiled.name} ({path}): ok")
        print(f"  params              {grouped(report.params):>20}   {human_count(report.params)}")
        print(f"  weight_bytes        {grouped(report.weight_bytes):>20}   {human_bytes(report.weight_bytes)}")
        print(f"  kv_bytes_per_token  {grouped(report.kv_bytes_per_token):>20}   "
              f"{human_bytes(report.kv_bytes_per_token)}")
        print(f"  ops                 {len(compiled.ir.nodes):>20}   in "
              + (", ".join(f"{c.label} ×{c.times}" for c in stacks) or "no repeated stack"))
    return 0


def _contents(module) -> str:
    """`3 blocks (gelu, relu, silu)`, `12 formats`: what a library file defines."""
    parts = [f"{len(items)} {kind}{'s' if len(items) != 1 else ''} ({', '.join(names)})"
             for kind, items, names in (("block", module.blocks, [b.name for b in module.blocks]),
                                        ("format", module.formats, [f.name for f in module.formats]),
                                        ("device", module.devices, [d.name for d in module.devices])) if items]
    return "; ".join(parts) or "nothing defined"


def _formula(args) -> int:
    keep = frozenset(n.strip() for n in args.keep.split(",") if n.strip())
    compiled = _compile(args.spec, args, keep)
    quantities = args.quantity or ["M", "F", "R"]
    style = args.format or ("latex" if args.latex else "text")
    if style == "markdown":
        print(formula.markdown(compiled, quantities, args.phase), end="")
    else:
        print(formula.render(compiled, quantities, args.phase, style == "latex"), end="")
    return 0


def _eval(args) -> int:
    compiled = _compile(args.spec, args)
    report = evaluate(compiled, args.phase, _scenario(args))
    ops = by_op(compiled, args.phase, _scenario(args)) if args.by_op else None
    style = args.format or ("json" if args.json else "text")
    if style in ("markdown", "csv"):
        chosen = [tables.report_table(report, plain=style == "csv")] + ([tables.by_op_table(ops, report)] if ops is not None else [])
        print("\n".join(getattr(table, style)() for table in chosen), end="")
        return 0
    return _print_result(style == "json", report.model_dump(exclude_none=True), tables.report_text(report),
                         ops, lambda: tables.by_op_table(ops, report).text())


def _print_result(as_json: bool, data: dict, text: str, ops: list | None, ops_text) -> int:
    """A result as JSON (with its `by_op` list when asked for) or as text followed by its op table."""
    if as_json:
        if ops is not None:
            data["by_op"] = [o.model_dump() for o in ops]
        print(json.dumps(data, indent=2))
    else:
        print(text, end="")
        if ops is not None:
            print("\n" + ops_text(), end="")
    return 0


def _compare(args) -> int:
    from .render.chapter import chapter_table

    models = [_compile(path, args) for path in args.specs]
    if args.format == "json":
        reports = [evaluate(model, args.phase, _scenario(args)) for model in models]
        print(json.dumps([r.model_dump(exclude_none=True) for r in reports], indent=2))
        return 0
    names = ("architecture", "params", "prefill", "long-context", "request") if args.table == "chapter" \
        else (args.table,)
    for index, name in enumerate(names):
        if name == "summary":
            table = tables.summary_table([evaluate(model, args.phase, _scenario(args)) for model in models])
        else:
            table = chapter_table(name, models, across=args.across)
        print(("\n" if index else "") + {"text": table.text, "markdown": table.markdown, "csv": table.csv}[args.format](),
              end="")
    return 0


UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
         "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def _bytes(text: str) -> int:
    """`256MiB`, `24GB`, `1_000_000`: a byte count with an optional unit (GB = 10^9, GiB = 2^30)."""
    digits = text.strip().replace("_", "")
    number = digits.rstrip("KMGTBkmgtiI")
    unit = digits[len(number):].upper()
    try:
        value = float(number)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a size; write e.g. 256MiB or 24GB") from None
    if unit not in UNITS or value < 0:
        raise argparse.ArgumentTypeError(f"`{text}`: units are B, KB, MB, GB, TB, KiB, MiB, GiB, TiB")
    return int(value * UNITS[unit])


def _state(args) -> int:
    from .state import profile

    profiles = [profile(_compile(path, args), args.H, args.budget) for path in args.specs]
    if args.json:
        print(json.dumps([p.model_dump() for p in profiles], indent=2))
        return 0
    print(tables.state_table(profiles).text(), end="")
    return 0


def _plot(args) -> int:
    from .render import plot

    if args.output.suffix.lower() not in (".png", ".svg"):
        from archcost.dsl.errors import Diagnostic

        raise ArchError([Diagnostic(code="E401", message=f"cannot draw `{args.output}`: use .png or .svg")])
    models = [_compile(path, args) for path in args.specs]
    if args.figure == "state":
        plot.state_vs_context(models, args.output, args.shortest, args.longest)
    elif args.figure == "flops":
        plot.flops_vs_context(models, args.output, args.shortest, args.longest)
    else:
        from .hardware import device

        draw = {"step": plot.step_vs_batch, "roofline": plot.roofline_chart, "capacity": plot.capacity_vs_context}
        draw[args.figure](models, device(args.device), args.output)
    print(f"wrote {args.output}")
    return 0


def _show(model: BaseModel, args, text: str) -> int:
    print(json.dumps(model.model_dump(), indent=2) if args.json else text, end="" if not args.json else "\n")
    return 0


def _capacity(args) -> int:
    from .hardware import device
    from .serving import capacity

    result = capacity(_compile(args.spec, args), device(args.device), args.context, args.workspace, args.reserve,
                      args.batch)
    return _show(result, args, tables.capacity_text(result))


def _roofline(args) -> int:
    from .hardware import device
    from .serving import roofline

    from .serving import roofline_by_op

    compiled, hardware = _compile(args.spec, args), device(args.device)
    result = roofline(compiled, hardware, args.phase, _scenario(args), args.peak, args.activations)
    ops = roofline_by_op(compiled, hardware, args.phase, _scenario(args), args.peak) if args.by_op else None
    return _print_result(args.json, result.model_dump(), tables.roofline_text(result),
                         ops, lambda: tables.roofline_ops_table(ops, result).text())


def _request(args) -> int:
    from .serving import conversation, prefix_reuse

    compiled = _compile(args.spec, args)
    if args.turns:
        turns = [tuple(int(x) for x in turn.split(":")) for turn in args.turns.split(",")]
        result = conversation(compiled, turns, batch=args.B, cached=args.S)
        if args.json:
            print(json.dumps([t.model_dump(exclude_none=True) for t in result], indent=2))
        else:
            print(tables.conversation_table(result).text(), end="")
        return 0
    report = evaluate(compiled, "request", _scenario(args))
    reuse = prefix_reuse(compiled, _scenario(args)) if args.S else None
    if args.json:
        data = report.model_dump(exclude_none=True)
        if reuse is not None:
            data["prefix_reuse"] = reuse.model_dump()
        print(json.dumps(data, indent=2))
        return 0
    print(tables.report_text(report), end="")
    if reuse is not None:
        print(f"\n  prefix reuse: {reuse.cached:,} cached positions save {reuse.rows_saved:,} projection rows, "
              f"{reuse.pairs_saved:,} causal pairs and {reuse.flops_saved / 1e12:,.3f} matrix TFLOPs")
    return 0


def _speculate(args) -> int:
    from .serving import speculate

    round_s = None if args.round_ms is None else args.round_ms / 1000
    decode_s = None if args.decode_ms is None else args.decode_ms / 1000
    if args.spec is not None:
        from .hardware import device
        from .serving import draft_timing

        if args.device is None:
            from archcost.dsl.errors import Diagnostic

            raise ArchError([Diagnostic(code="E401", message="`speculate SPEC` needs --device to time its steps")])
        round_s, decode_s, _ = draft_timing(_compile(args.spec, args), device(args.device), args.k,
                                            Scenario(B=args.B, S=args.S), args.drafter)
    result = speculate(args.k, args.alpha, round_s, decode_s)
    return _show(result, args, tables.speculation_text(result))


def _sweep(args) -> int:
    from .sweep import grid, sweep, write

    values = {letter: grid(getattr(args, letter), letter) for letter in "BSPG"}
    table = sweep(_compile(args.spec, args), args.phase, values)
    text = write(table, args.output)
    if args.output is None:
        print(text, end="")
    else:
        print(f"wrote {args.output} ({len(table['B']):,} points)")
    return 0


def _diagram(args) -> int:
    from .render import dot

    if str(args.output) == "-":  # DOT on stdout, for a pipe into Graphviz or a diff
        print(dot.to_dot(_compile(args.spec, args)), end="")
        return 0
    dot.drawable(args.output)  # a wrong suffix is refused before the spec is compiled
    dot.write(_compile(args.spec, args), args.output)
    print(f"wrote {args.output}")
    return 0


def _import(args) -> int:
    from .importer import import_config, read_config
    from .pipeline import compile_text
    from .render.files import atomic_write

    text = import_config(read_config(args.config), args.name)
    compiled = compile_text(text, name=str(args.output or "<imported spec>"))  # a spec that does not compile is a bug
    if args.output is None:
        print(text, end="")
        return 0
    atomic_write(args.output, lambda temporary: temporary.write_text(text, encoding="utf-8"))
    params = compiled.total("params")
    print(f"wrote {args.output} ({compiled.name}, {human_count(float(params))} parameters)")
    return 0


def _fmt(args) -> int:
    from archcost.dsl.loader import read_source
    from archcost.dsl.printer import canonical

    from .render.files import atomic_write

    unformatted = []
    for spec in args.specs:
        text = read_source(Path(spec))
        tidy = canonical(text, spec)
        if tidy != text:
            unformatted.append(spec)
        if args.check:
            continue
        if args.write:
            if tidy != text:
                atomic_write(Path(spec), lambda temporary, tidy=tidy: temporary.write_text(tidy, encoding="utf-8"))
        else:
            print(tidy, end="")
    for spec in unformatted if args.check else ():
        print(f"would reformat {spec}", file=sys.stderr)
    return 1 if args.check and unformatted else 0

if __name__ == "__main__":
    sys.exit(main())
