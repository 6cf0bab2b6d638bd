"""The compiler off the server's request threads: one process holds the page's compiled models and answers
one request at a time. A request that runs past the time limit (a spec that makes the compiler work for
minutes) ends that process — a thread cannot be stopped, a process can — and the next request starts a
fresh one, so no spec can hang the server (issue 30).

The process is `python -I -m archcost.compiler.playground.worker`, one JSON document a line through its stdin
and stdout. Nothing between the two is pickled (multiprocessing's spawn start pickles the process object and
its pipe's messages, and unpickles them in the other process), and `-I` keeps the current folder and the
PYTHON* variables off its path: only the installed package's code runs there."""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import threading
import time

from pydantic import ValidationError

from archcost.dsl.errors import ArchError, Diagnostic

from .requests import Malformed, Request, described, request, shown

TIME_LIMIT = 60.0  # seconds one request may take: the largest spec in specs/ compiles cold in a few
START_LIMIT = 120.0  # seconds a new compiler process may take to import what it needs, on a busy machine


def _answer(workspace, method: str, asked: Request) -> dict:
    """One request, answered by the workspace; the page's methods and their arguments."""
    from .session import import_config

    settings, scenario, spec = asked.conventions, asked.scenario, asked.spec
    if method == "import":
        return import_config(asked.config, asked.file)
    if method == "compare":
        return workspace.compare(list(asked.specs), settings, asked.table, scenario)
    calls = {
        "compile": lambda: workspace.summary(spec, settings),
        "evaluate": lambda: workspace.evaluate(spec, settings, scenario),
        "node": lambda: workspace.node(spec, settings, scenario, asked.node),
        "formulas": lambda: workspace.formulas(spec, settings, scenario.phase),
        "diagram": lambda: workspace.diagram(spec, settings, asked.blocks, asked.layout),
        "layout": lambda: workspace.layout(spec, settings, scenario, asked.degrees, asked.device, asked.link),
        "plots": lambda: workspace.plots(spec, settings, asked.device or "h100_sxm", scenario),
    }
    return calls[method]()


METHODS = ("compile", "evaluate", "node", "formulas", "diagram", "layout", "plots", "compare", "import")


def answer(workspace, method: str, payload: dict) -> dict:
    """{"ok": data}, or {"problem": ...} with the CLI's diagnostics for bad input."""
    from .session import problem

    file = payload["spec"].get("file") if isinstance(payload.get("spec"), dict) else None
    try:
        asked = request(method, payload)
    except ValidationError as error:
        return {"problem": _malformed(described(error))}
    except Malformed as error:
        return {"problem": _malformed(str(error))}
    try:
        return {"ok": _answer(workspace, method, asked)}
    except ArchError as error:
        return {"problem": problem(error, shown(file))}
    except Exception as error:  # a bug of ours, said as the CLI says it, never a traceback
        return {"internal": f"archcost: internal error: {type(error).__name__}: {error}\n"
                            "this is a bug in archcost, not in your spec; please report it with the spec"}


def _malformed(message: str) -> dict:
    from .session import problem

    return problem(ArchError([Diagnostic(code="E111", message=f"a malformed request: {message}")]), "")


def _line(message) -> bytes:
    """A message as one line of JSON text (json.dumps escapes every newline inside strings)."""
    return json.dumps(message).encode("utf-8") + b"\n"


class _Lines:
    """The JSON lines a pipe brings, each read within a deadline."""

    TIMED_OUT = object()

    def __init__(self, stream) -> None:
        self.fd, self.pending = stream.fileno(), b""

    def read(self, seconds: float):
        """The next message, TIMED_OUT when none is whole within `seconds`; EOFError when the pipe closed."""
        deadline = time.monotonic() + seconds
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return self.TIMED_OUT
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                raise EOFError
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return json.loads(line)


def _serve() -> None:
    """The compiler process: requests in on stdin, answers out on stdout, until the server closes stdin. What
    a library prints goes to stderr: stdout carries the answers alone."""
    import gc

    from .session import Workspace

    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    gc.freeze()
    workspace = Workspace()

    def send(message) -> None:
        answers.write(_line(message))
        answers.flush()
    send("ready")  # the compiler's imports are paid: a request's time limit starts now
    for line in sys.stdin.buffer:
        method, payload = json.loads(line)
        send(answer(workspace, method, payload))


class Worker:
    """The process that compiles for the server, started on first use and again after a timeout."""

    def __init__(self, limit: float = TIME_LIMIT) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._process = None
        self._answers = None

    def start(self) -> None:
        with self._lock:
            self._ensure()

    def _ensure(self) -> None:
        if self._process is not None and self._process.poll() is None:
            return
        self._process = subprocess.Popen([sys.executable, "-I", "-m", __name__], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE)
        self._answers = _Lines(self._process.stdout)
        try:
            ready = self._answers.read(START_LIMIT)
        except (EOFError, ValueError):
            ready = None
        if ready != "ready":
            self._stop()
            raise RuntimeError("the compiler process did not start")

    def call(self, method: str, payload: dict) -> dict:
        """The answer to one request, or E110 when it runs past the limit (the worker is then stopped)."""
        with self._lock:
            self._ensure()
            try:
                self._process.stdin.write(_line([method, payload]))
                self._process.stdin.flush()
                found = self._answers.read(self.limit)
            except (EOFError, OSError):  # the process died (out of memory, a crash in a native library)
                self._stop()
                return {"internal": "archcost: the compiler process ended while answering; it restarts "
                                    "with the next request"}
            if found is not _Lines.TIMED_OUT:
                return found
            self._stop()
        from .session import problem

        late = Diagnostic(code="E110", message=f"the request ran past the server's limit of {self.limit:g} s",
                          hint="the compiler was stopped and starts afresh with the next request")
        return {"problem": problem(ArchError([late]), "")}

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait(5)
            for stream in (self._process.stdin, self._process.stdout):
                with contextlib.suppress(OSError):  # a request left unread in a pipe nobody reads any more
                    stream.close()
        self._process = self._answers = None

    def close(self) -> None:
        with self._lock:
            self._stop()


if __name__ == "__main__":
    _serve()
