"""The program's flags and its commands, assembled from the command modules' `COMMANDS`."""

from __future__ import annotations

import argparse
import functools

from .common import Command

DESCRIPTION = "The `archcost` command: check, formula, eval, compare, diagram, and the serving arithmetic."
MODULES = (
    "check",
    "formula",
    "evaluate",
    "state",
    "serving",
    "throughput",
    "layouts",
    "disaggregation",
    "training",
    "draw",
    "importing",
    "playground",
)  # `archcost --help`'s order


# the module of each command, so that a run builds its own command's flags alone (argparse makes a formatter and
# checks every flag it adds: the twelve modules' 340 flags were a tenth of a cold `eval`'s own time);
# tests/test_cli.py holds it equal to the modules' COMMANDS
COMMAND_MODULES = {"check": "check", "fmt": "check", "formula": "formula", "eval": "evaluate", "compare": "evaluate",
                   "state": "state", "plot": "state", "sweep": "state", "capacity": "serving", "roofline": "serving",
                   "request": "serving", "speculate": "serving", "throughput": "throughput", "layout": "layouts",
                   "layouts": "layouts", "disaggregate": "disaggregation", "train": "training", "diagram": "draw",
                   "import": "importing", "serve": "playground"}
TOP_FLAGS_THAT_STOP = ("-h", "--help", "--version")  # answered by the program's own parser, before any command


def parser_for(argv: list[str]) -> argparse.ArgumentParser:
    """The parser a run needs: the program's flags and the one command `argv` names (its first word that is not a
    flag), or every command when it names none, names an unknown one, or asks the program for help first."""
    import importlib

    for word in argv:
        if word in TOP_FLAGS_THAT_STOP or not word.startswith("-"):
            break
    else:
        return parser()
    if word not in COMMAND_MODULES:
        return parser()
    found = importlib.import_module(f"{__package__}.{COMMAND_MODULES[word]}").COMMANDS
    return parser([command for command in found if command.name == word])


def parser(commands_wanted: list[Command] | None = None, kind=argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The program's flags and its commands (all of them, or those given): built once per process and kind,
    and only read after (parse_args keeps its results in the namespace it makes); an API user, the tests and
    the fuzzer's flag target call the program many times in one process."""
    return _built(None if commands_wanted is None else tuple(commands_wanted), kind)


@functools.cache
def _built(commands_wanted: tuple[Command, ...] | None, kind) -> argparse.ArgumentParser:
    top = kind(prog="archcost", description=DESCRIPTION)
    top.add_argument("--allow-use-outside", action="store_true",
                     help="let `use \"PATH\"` reach files outside the spec's own folder")
    top.add_argument("--version", action="version", version=f"archcost {_version()}")
    commands = top.add_subparsers(required=True, metavar="COMMAND")
    for command in commands_in_order() if commands_wanted is None else commands_wanted:
        sub = commands.add_parser(command.name, help=command.help)
        command.arguments(sub)
        sub.set_defaults(run=command.run)
    return top


def _version() -> str:
    """The installed distribution's version (pyproject.toml's), or `unknown` when run from an uninstalled tree."""
    from importlib import metadata

    try:
        return metadata.version("archcost")
    except metadata.PackageNotFoundError:
        return "unknown"


def commands_in_order() -> list[Command]:
    import importlib

    return [command for name in MODULES for command in importlib.import_module(f"{__package__}.{name}").COMMANDS]
