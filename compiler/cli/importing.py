"""`archcost import`: a spec written with the stdlib's blocks from a Hugging Face config.json."""

from __future__ import annotations

import sys
from pathlib import Path

from ..outputs import atomic_write
from ..pipeline import compile_text
from ..render.units import human_count
from .common import Command, output_file


def arguments(parser) -> None:
    parser.add_argument("config", metavar="CONFIG.json")
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="SPEC.arch",
                        help="where to write the spec (default: print it)")
    parser.add_argument("--name", default=None, help="the model's name (default: from the config or its folder)")


def run(args) -> int:
    from ..importer import import_spec, read_config

    output_file(args.output, args.config)
    text, passed_over = import_spec(read_config(args.config), args.name)
    if passed_over:
        print(f"archcost import: passed over {len(passed_over)} field(s) that no transformers code reads for this "
              f"model type: {', '.join(passed_over)}", file=sys.stderr)
    compiled = compile_text(text, name="<imported spec>")  # not yet a file: a spec that does not compile is a bug
    output_file(args.output, args.config, *compiled.files_read())
    if args.output is None:
        print(text, end="")
        return 0
    atomic_write(args.output, lambda temporary: temporary.write_text(text, encoding="utf-8"))
    params = compiled.total("params")
    print(f"wrote {args.output} ({compiled.name}, {human_count(float(params))} parameters)")
    return 0


COMMANDS = (Command("import", "write a spec from a Hugging Face config.json", arguments, run),)
