"""`archcost eval` served from the compiled-formula cache, before the compiler (sympy, networkx, lark) is imported.

Anything out of the ordinary (a flag it cannot parse, --help, --by-op, no entry, a number not vouched for)
returns None, and the program runs the compiler as usual, which prints the same bytes or says what is wrong.
"""

from __future__ import annotations

import argparse

from ..numbers import cache as warm
from .common import cache_key, caching


class _Refused(Exception):
    pass


class _Quiet(argparse.ArgumentParser):
    """A parser that hands every problem back instead of printing usage and exiting."""

    def error(self, message):
        raise _Refused(message)

    def exit(self, status=0, message=None):
        raise _Refused(message)


def served(argv: list[str]) -> int | None:
    """The exit code of a command answered from the cache, or None when the compiler must run."""
    if not argv or argv[0] not in ("eval", "compare", "sweep", "capacity", "request") or {"-h", "--help"} & set(argv):
        return None
    from . import evaluate, serving, state
    from .commands import parser

    try:
        args = parser([*evaluate.COMMANDS, *state.COMMANDS, *serving.COMMANDS], kind=_Quiet).parse_args(argv)
    except Exception:  # noqa: BLE001  (a flag's parser refuses with an ArchError: the full program says it)
        return None
    if not caching(args):
        return None
    if argv[0] != "eval":
        return {"compare": _compared, "sweep": _swept}.get(argv[0], _served_view)(args)
    if args.by_op:
        return None
    entry = warm.load(cache_key(args.spec, args))
    data = warm.report(entry, args.phase, {"B": args.B, "S": args.S, "P": args.P, "G": args.G}) if entry else None
    if data is None:
        return None
    from ..render.evaluation import print_report

    print_report(data, args.format or ("json" if args.json else "text"))
    return 0


def _compared(args) -> int | None:
    """`compare` from the cache entries of every spec."""
    from .evaluate import print_compare, table_reads, told_apart, unused_flags

    if args.table == "stages":
        return None

    def answer() -> bool:
        unused_flags(args)
        entries = [warm.load(cache_key(spec, args)) for spec in args.specs]
        if any(entry is None for entry in entries):
            return False
        reads = table_reads(args)
        print_compare(args, told_apart([warm.CachedView(entry, reads) for entry in entries], args.specs))
        return True
    return _printed_whole(answer)


def _served_view(args) -> int | None:
    """`capacity` and `request` from the cache entry of the spec."""
    from .serving import print_capacity, print_request, run_capacity

    def answer() -> bool:
        if args.run is not run_capacity and getattr(args, "device", None) is not None:
            return False  # a timed request needs the compiled model's ops
        entry = warm.load(cache_key(args.spec, args))
        if entry is None:
            return False
        if args.run is run_capacity:
            from ..front.hardware import device

            print_capacity(args, warm.CachedView(entry), device(args.device, args.memory))
        else:
            print_request(args, warm.CachedView(entry))
        return True
    return _printed_whole(answer)


def _printed_whole(answer) -> int | None:
    """Run `answer` with its output held back and print it only once all of it is made; None (the compiler
    runs, and says why) when it cannot answer or anything goes wrong."""
    import contextlib
    import io

    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            if not answer():
                return None
    except Exception:  # noqa: BLE001  (anything the cache cannot answer: the compiler runs and says why)
        return None
    print(buffer.getvalue(), end="")
    return 0


SMALL_GRID = 200_000  # a grid printed to standard output is made whole first, so a refusal prints nothing


def _swept(args) -> int | None:
    """`sweep` from the cache entry's forms, to its file (written atomically) or, when small, to stdout."""
    import io
    import math
    import sys

    from ..serving.sweep import check_axes, check_output_format, check_size, grid, stdout_bytes, write_forms
    from .common import output_file

    try:
        output_file(args.output, args.spec)
        check_output_format(args.output)
        values = {letter: grid(getattr(args, letter), letter) for letter in "BSPG"}
        check_axes(values, args.phase)
        check_size(values)
        entry = warm.load(cache_key(args.spec, args))
        phase_forms = entry["phases"].get(args.phase) if entry else None
        if entry is not None:
            output_file(args.output, args.spec, *warm.files_read(entry))
        if phase_forms is None or (args.output is None and math.prod(map(len, values.values())) > SMALL_GRID):
            return None
        buffer = io.BytesIO()
        points = write_forms(phase_forms, args.phase, values, args.output, out=buffer)
    except Exception:  # noqa: BLE001  (anything the cache cannot answer: the compiler runs and says why)
        return None
    if args.output is None:
        sys.stdout.flush()
        out = stdout_bytes()
        out.write(buffer.getvalue())
        out.flush()
    else:
        print(f"wrote {args.output} ({points:,} point{'s' if points != 1 else ''})")
    return 0
