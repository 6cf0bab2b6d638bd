"""The `archcost` command: check, formula, eval, compare, diagram, and the serving arithmetic.

Each command lives in one module of this package with its arguments declared beside the function that
reads them (`COMMANDS`: name, help, arguments, run); this module only assembles them and prints errors.
"""

from __future__ import annotations

import sys

EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C
EXIT_TERMINATED = 143   # 128 + SIGTERM


class Terminated(BaseException):
    """SIGTERM, raised where the program stands so that every `finally` runs (a half-written file beside its
    target is removed) before the process ends."""


# the stops this process was asked for (SIGTERM, Ctrl-C), kept by their signal handlers: a handler is the
# process's, and so is this record. A library can swallow the exception a handler raises (Python drops one raised
# in a finalizer; pydantic-core turns one raised while it builds a validator into a SchemaError): the program
# still ends as the signal asked, whatever became of the exception
_STOPS: list[type[BaseException]] = []


def _terminate(signum, frame) -> None:
    _STOPS.append(Terminated)
    raise Terminated


def _interrupt(signum, frame) -> None:
    _STOPS.append(KeyboardInterrupt)
    raise KeyboardInterrupt


def _quiet_stops(previous):
    """sys.unraisablehook for the program: a stop dropped where Python cannot pass it on (an object's finalizer,
    a weakref callback) is not printed with a traceback; the handler recorded it (_STOPS)."""
    def hook(unraisable) -> None:
        if unraisable.exc_type not in (Terminated, KeyboardInterrupt):
            previous(unraisable)
    return hook


def entry() -> None:
    """The `archcost` program: main() with the garbage collector off (a short-lived process only pays for it),
    then an exit that skips the interpreter's final sweep of every object."""
    import gc
    import os
    import signal

    signal.signal(signal.SIGTERM, _terminate)  # first: a signal during the imports below ends as cleanly
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # left ignored where the shell ignores it
        signal.signal(signal.SIGINT, _interrupt)
    sys.unraisablehook = _quiet_stops(sys.unraisablehook)
    gc.disable()
    try:
        from .cached import served

        code = served(sys.argv[1:])  # a cached evaluation, printed before the compiler is imported
        code = main() if code is None else code
        if _STOPS:  # the command finished its files; it still ends as the signal asked
            raise _STOPS[0]
    except BrokenPipeError:  # the reader went away (`| head`): what it read is all it wanted
        os._exit(0)
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback; files being written were removed on the way out
        print("archcost: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    except Terminated:
        print("archcost: terminated", file=sys.stderr)
        code = EXIT_TERMINATED
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):
        pass
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    import warnings

    with warnings.catch_warnings():
        # the libraries' own warnings (transformers' and torch's FutureWarnings while a config is imported,
        # matplotlib's) are not the user's to act on: the output is archcost's, and its notes are said as notes
        warnings.simplefilter("ignore")
        return _main(argv)


def parser():
    """The program's argument parser (built once per process: commands.parser)."""
    from .commands import parser as built

    return built()


def _main(argv: list[str] | None) -> int:
    from archcost.dsl.errors import ArchError, Diagnostic

    try:
        from .commands import parser_for

        argv = sys.argv[1:] if argv is None else argv
        args = parser_for(argv).parse_args(argv)  # a flag's parser raises ArchError (E401) for a value out of range
        return args.run(args)
    except ArchError as error:
        print(error.render(), file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:
        return 0
    except OSError as error:  # the file system said no (disk full, permissions): the user's to fix, not a bug
        print(ArchError([Diagnostic(code="E108", message=f"cannot complete: {error.strerror or error}"
                                    + (f" (`{error.filename}`)" if error.filename else ""))]).render(), file=sys.stderr)
        return EXIT_USER_ERROR
    except Exception as error:  # a bug of ours: say so plainly, without a traceback
        if _STOPS:  # not a bug: a library wrapped the stop a signal raised (_STOPS)
            raise _STOPS[0] from None
        print(f"archcost: internal error: {type(error).__name__}: {error}\n"
              "this is a bug in archcost, not in your spec; please report it with the spec", file=sys.stderr)
        return EXIT_INTERNAL_ERROR


__all__ = ["entry", "main", "parser"]
