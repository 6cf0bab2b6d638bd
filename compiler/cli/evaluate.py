"""`archcost eval` (every quantity for one request shape) and `archcost compare` (models side by side)."""

from __future__ import annotations

import json

from ..terms.letters import PHASES, bad_value
from .common import Command, cache_flag, compile_spec, counting_flags, print_result, scenario, scenario_flags

CHAPTER = ("architecture", "params", "prefill", "long-context", "request")  # what `--table chapter` prints


def eval_arguments(parser) -> None:
    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("--phase", choices=PHASES, required=True)
    scenario_flags(parser, P=1)
    parser.add_argument("--json", action="store_true",
                        help="machine output: base units, stable keys (= --format json)")
    parser.add_argument("--format", choices=("text", "json", "markdown", "csv"), default=None,
                        help="text (default), JSON, a Markdown table, or CSV rows of quantity, value, readable")
    parser.add_argument("--by-op", action="store_true", help="also list every op with its shape and FLOPs")
    cache_flag(parser)
    counting_flags(parser)


def run_eval(args) -> int:
    from ..numbers.evaluate import by_op, evaluate
    from ..render import tables
    from ..render.evaluation import print_report
    from .memory import remember

    compiled = compile_spec(args.spec, args)
    report = evaluate(compiled, args.phase, scenario(args))
    remember(args, compiled, args.phase)
    style = args.format or ("json" if args.json else "text")
    if not args.by_op:
        print_report(report.model_dump(exclude_none=True), style)
        return 0
    ops = by_op(compiled, args.phase, scenario(args))
    if style in ("markdown", "csv"):
        chosen = [tables.report_table(report, plain=style == "csv"), tables.by_op_table(ops, report)]
        print("\n".join(getattr(table, style)() for table in chosen), end="")
        return 0
    return print_result(style == "json", report.model_dump(exclude_none=True), tables.report_text(report),
                        ops, lambda: tables.by_op_table(ops, report).text())


COMPARE_DEFAULTS = {"phase": "prefill", "B": 1, "S": 0, "P": 8192, "G": 1}  # the summary table's call


def compare_arguments(parser) -> None:
    parser.add_argument("specs", nargs="+", metavar="SPEC")
    parser.add_argument("--phase", choices=PHASES, default=None, help="the call the summary table costs (prefill)")
    scenario_flags(parser, P=8192)
    parser.set_defaults(B=None, S=None, P=None, G=None)  # given or not: the chapter's tables fix their own
    parser.add_argument("--table", choices=("summary", "chapter", "architecture", "params", "prefill",
                                            "long-context", "stages", "request"),
                        default="summary", help="summary: size and cost of the call; the chapter's tables: "
                        "architecture (2-A), params (2-B), prefill (2-C), stages (2-D), long-context (2-E), "
                        "request (§2.6.3); chapter: 2-A, 2-B, 2-C, 2-E and the request table")
    parser.add_argument("--across", metavar="OPTION", default=None,
                        help="with --table stages: one column per word of this spec option, e.g. execution")
    parser.add_argument("--format", choices=("text", "markdown", "csv", "json"), default="text")
    cache_flag(parser)
    counting_flags(parser)


def told_apart(views: list, paths: list[str]) -> list:
    """Two rows of the same model name (two imports of one checkpoint) are named with their files too."""
    names = [view.name for view in views]
    for view, path in zip(views, paths, strict=True):
        if names.count(view.name) > 1:
            view.name = f"{view.name} ({path})"
            if hasattr(view, "compiled"):  # the stages table reads the compiled model's own name
                view.compiled.ir.name = view.name
    return views


def unused_flags(args) -> None:
    """The chapter's tables cost their own fixed scenarios: a flag they would ignore is refused, not dropped."""
    fixed = args.table != "summary" and args.format != "json"
    given = [f"--{name}" for name in COMPARE_DEFAULTS if getattr(args, name) is not None] if fixed else []
    if args.across is not None and args.table != "stages":
        given.append("--across")
    if given:
        raise bad_value(f"`--table {args.table}` does not use {', '.join(f'`{flag}`' for flag in given)}",
                         hint="--across goes with --table stages" if given == ["--across"]
                         else "the chapter's tables fix their scenarios; use --table summary for a call of your own")
    for name, default in COMPARE_DEFAULTS.items():
        setattr(args, name, default if getattr(args, name) is None else getattr(args, name))


def run_compare(args) -> int:
    from ..serving.views import CompiledView
    from .memory import remember_views

    unused_flags(args)
    reads = table_reads(args)
    views = told_apart([CompiledView(compile_spec(path, args), reads) for path in args.specs], args.specs)
    print_compare(args, views)
    remember_views(args, views)
    return 0


def table_reads(args) -> tuple[str, ...] | None:
    """What the tables `compare` prints read of each model's reports (chapter.reads_of); None for the summary
    and JSON, which print every quantity."""
    if args.format == "json" or args.table == "summary":
        return None
    from ..render.chapter import reads_of

    return reads_of(CHAPTER if args.table == "chapter" else (args.table,))


def print_compare(args, views: list) -> None:
    """The comparison of these model views: reports as JSON, the summary, or the chapter's tables."""
    from ..render import tables
    from ..render.chapter import chapter_table

    shape = {"B": args.B, "S": args.S, "P": args.P, "G": args.G}
    if args.format == "json":
        print(json.dumps([view.report(args.phase, **shape) for view in views], indent=2))
        return
    for index, name in enumerate(CHAPTER if args.table == "chapter" else (args.table,)):
        if name == "summary":
            table = tables.summary_table([view.report(args.phase, **shape) for view in views])
        else:
            table = chapter_table(name, [view.compiled for view in views] if name == "stages" else views,
                                  across=args.across)
        print(("\n" if index else "") + getattr(table, args.format)(), end="")


COMMANDS = (Command("eval", "evaluate every quantity for one request shape", eval_arguments, run_eval),
            Command("compare", "compare models side by side, one row per model", compare_arguments, run_compare))
