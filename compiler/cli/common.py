"""What several commands share: the scenario and counting flags, compiling a spec, printing a result."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from ..terms.letters import LEDGERS, MAX_COUNT, bad_value

if TYPE_CHECKING:  # the compiler is imported by the commands that compile, not by the warm path
    from pydantic import BaseModel

    from ..compilation import Compiled
    from ..terms.conventions import Conventions, Scenario


class Command(NamedTuple):
    """One `archcost` subcommand: its name and help, the flags it declares, and the function that runs it."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def whole(low: int, high: int = MAX_COUNT, name: str = "value"):
    """A flag's parser for a whole number from `low` to `high`; anything else is an E401 naming the flag."""
    def parse(text: str) -> int:
        digits = text.strip().replace("_", "")
        if not digits.lstrip("-").isdigit() or len(digits) > 16:
            raise bad_value(f"`{name}` = `{text[:40]}`: write a whole number from {low} to {high:,}")
        value = int(digits)
        if value < low:
            raise bad_value(f"`{name}` = {value}; it must be at least {low}")
        if value > high:
            raise bad_value(f"`{name}` = {value:,}; it must be at most {high:,}")
        return value
    return parse


def real(low: float, high: float, low_open: bool = False, high_open: bool = False, name: str = "value"):
    """A flag's parser for a finite number in [low, high] (open at either end when asked)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise bad_value(f"`{name}` = `{text[:40]}` is not a number") from None
        inside = (low < value if low_open else low <= value) and (value < high if high_open else value <= high)
        if not (math.isfinite(value) and inside):
            shown = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
            raise bad_value(f"`{name}` = {text[:40]} is out of range {shown}")
        return value
    return parse


def scenario_flags(parser: argparse.ArgumentParser, P: int) -> None:
    parser.add_argument("--B", type=whole(1, name="B"), default=1, help="requests in the batch (default 1)")
    parser.add_argument("--S", type=whole(0, name="S"), default=0,
                        help="positions already cached per request (default 0)")
    parser.add_argument("--P", type=whole(1, name="P"), default=P,
                        help=f"new tokens per request in the call (default {P})")
    parser.add_argument("--G", type=whole(1, name="G"), default=1,
                        help="tokens returned per request, for --phase request")


def cache_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-cache", action="store_true", help="compile the spec even when the formula cache "
                        "holds it, and keep nothing (so does ARCHCOST_NO_CACHE=1)")


def efficiency_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--efficiency-table", default=None, metavar="FILE.toml",
                        help="kernel measurements of your own for the expected time (default: stdlib/efficiency's "
                             "table of the device, where there is one)")


def memory_flag(parser: argparse.ArgumentParser) -> None:
    """`--memory`, beside every `--device`: which of the sheet's capacities the command uses."""
    parser.add_argument("--memory", choices=("reported", "nominal"), default="reported",
                        help="the device's capacity as it reports it (default) or the vendor's figure")


def weights_flag(parser: argparse.ArgumentParser) -> None:
    """`--weights FORMAT`: the run's storage format for matrix weights (seed 002 §2.6.2's quantized weights)."""
    parser.add_argument("--weights", default=None, metavar="FORMAT",
                        help="store matrix weights (not embedding, head, norms) as e.g. int8_g128, int4_g128, fp8")
    parser.add_argument("--kv", default=None, metavar="FORMAT",
                        help="store the KV cache (the spec's `kv` format) as e.g. fp8, whatever the spec says")


def counting_flags(parser: argparse.ArgumentParser) -> None:
    """The counting conventions (`--attention`, `--ledger`, ...) and the spec's execution paths (`--option`)."""
    parser.add_argument("--logits", choices=("last", "all"), default="last",
                        help="rows through the vocabulary head: the last token of each request, or all")
    parser.add_argument("--attention", choices=("as_written", "causal", "rectangle", "half_rectangle"),
                        default=None, help="pairs an attention computes: as each spec says (default), "
                        "causal-effective, the full rectangle, or half of it")
    parser.add_argument("--vector-params", choices=("nonmatrix", "matrix"), default=None,
                        help="count norm scales and biases as non-matrix work (default) or as 2 matrix FLOPs each")
    parser.add_argument("--routing", choices=("uniform", "concentrated", "random"), default="uniform",
                        help="which experts a batch's tokens touch: spread evenly, all the same k, or at random")
    parser.add_argument("--scales", choices=("logical", "stored"), default="logical",
                        help="parameters as the model's values (default), or as a checkpoint stores them: block "
                        "scales of FP8 and grouped formats counted too (a safetensors total)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=WORD",
                        help="choose one of the spec's execution paths, e.g. mla_cache=expanded; repeatable")
    parser.add_argument("--ledger", choices=tuple(LEDGERS), default="chapter",
                        help="a source's counting conventions in one word: chapter (seed 002, default) or "
                        "kipply (seed 000's 2N-per-token ledger); explicit flags override it")


def options(args) -> Conventions:
    from ..terms.conventions import Conventions

    return Conventions(**conventions_of(args))


def conventions_of(args) -> dict:
    """The counting flags as data (letters.conventions, no pydantic): what `options` models and the cache keys on."""
    from ..terms.letters import conventions

    return conventions(args.ledger, args.attention, args.vector_params, logits=args.logits, routing=args.routing,
                       paths=execution_paths(args.option), weights=getattr(args, "weights", None),
                       kv=getattr(args, "kv", None),
                       scales=getattr(args, "scales", "logical"))


def execution_paths(given: list[str]) -> tuple[tuple[str, str], ...]:
    """`--option NAME=WORD`, repeated: the spec's own execution paths."""
    pairs = []
    for item in given:
        name, sep, word = item.partition("=")
        if not sep or not name.strip() or not word.strip():
            raise bad_value(f"`--option {item}`: write NAME=WORD, e.g. mla_cache=expanded")
        pairs.append((name.strip(), word.strip()))
    return tuple(pairs)


def scenario(args) -> Scenario:
    from ..terms.scenario import Scenario

    return Scenario(B=args.B, S=args.S, P=args.P, G=args.G)


def cache_key(path: str, args) -> dict:
    """The formula cache's key for a spec under these flags: data, the same the API builds from its keywords."""
    from ..numbers import cache

    return cache.key(path, conventions_of(args), bool(getattr(args, "allow_use_outside", False)))


def caching(args) -> bool:
    from ..numbers import cache

    return cache.enabled(bool(getattr(args, "no_cache", False)))


def compile_spec(path: str, args=None, keep: frozenset[str] = frozenset()) -> Compiled:
    from ..compilation import compile_file
    from ..terms.conventions import Conventions

    chosen = options(args) if args is not None and hasattr(args, "logits") else Conventions()
    allow = bool(getattr(args, "allow_use_outside", False))
    compiled = compile_file(path, conventions=chosen, keep=keep, allow_outside=allow)
    for flag in ("output", "plot"):  # the command's output file may be none of the files the compile read
        output_file(getattr(args, flag, None), path, *compiled.files_read())
    return compiled


def print_result(as_json: bool, data: dict, text: str, ops: list | None, ops_text) -> int:
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


def output_file(path, *inputs) -> None:
    """Refuse an output before any work: an input of the command, a device or FIFO, a read-only file, a folder."""
    from ..outputs import check_output

    if path is not None and str(path) != "-":
        check_output(path, [str(p) for p in inputs])


def show(model: BaseModel, args, text: str) -> int:
    print(json.dumps(model.model_dump(), indent=2) if args.json else text, end="" if not args.json else "\n")
    return 0


UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
         "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def byte_size(text: str) -> int:
    """`256MiB`, `24GB`, `1_000_000`: a byte count with an optional unit (GB = 10^9, GiB = 2^30)."""
    digits = text.strip().replace("_", "")
    number = digits.rstrip("KMGTBkmgtiI")
    unit = digits[len(number):].upper()
    try:
        value = float(number)
    except ValueError:
        raise bad_value(f"`{text[:40]}` is not a size; write e.g. 256MiB or 24GB") from None
    if unit not in UNITS:
        raise bad_value(f"`{text[:40]}`: units are B, KB, MB, GB, TB, KiB, MiB, GiB, TiB")
    if not (math.isfinite(value) and 0 <= value * UNITS[unit] <= MAX_BYTES):
        raise bad_value(f"`{text[:40]}` is out of range: 0 to 1 EB")
    return int(value * UNITS[unit])


MAX_BYTES = 10**18
