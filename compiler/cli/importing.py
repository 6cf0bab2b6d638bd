"""`archcost import`: a spec written with the stdlib's blocks from a Hugging Face config.json."""

from __future__ import annotations

import sys
from pathlib import Path

from ..compilation import compile_text
from ..outputs import atomic_write
from ..render.units import human_count
from .common import Command, output_file


def arguments(parser) -> None:
    parser.add_argument("config", metavar="CONFIG.json")
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="SPEC.arch",
                        help="where to write the spec (default: print it)")
    parser.add_argument("--name", default=None, help="the model's name (default: from the config or its folder)")
    parser.add_argument("--from-modeling-code", action="store_true",
                        help="read the model transformers builds from the config (on the meta device), whatever "
                             "schema archcost has, and check the spec against it (needs the hf extra: "
                             'pip install "archcost[hf]"); a model type archcost has no schema for is read this way')


def run(args) -> int:
    from ..importer import import_spec, read_config

    output_file(args.output, args.config)
    text, passed_over, checked = import_spec(read_config(args.config), args.name, args.from_modeling_code)
    if checked:
        print("archcost import: read from the modeling code and checked against the model it built:\n  "
              + "\n  ".join(checked), file=sys.stderr)
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
