"""The compiler off the server's request threads: one process holds the page's compiled models and answers
one request at a time. A request that runs past the time limit (a spec that makes the compiler work for
minutes) ends that process — a thread cannot be stopped, a process can — and the next request starts a
fresh one, so no spec can hang the server (issue 30)."""

from __future__ import annotations

import json
import multiprocessing
import threading

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


def _send(connection, message) -> None:
    """A message through the pipe as JSON text: Connection.send would pickle it, and Connection.recv unpickle
    whatever comes back, code included; requests and answers are JSON data the page sends and reads anyway."""
    connection.send_bytes(json.dumps(message).encode("utf-8"))


def _received(connection):
    return json.loads(connection.recv_bytes().decode("utf-8"))


def _serve(connection) -> None:
    """The worker's loop: requests in, answers out, until the server closes the pipe."""
    import gc

    from .session import Workspace

    gc.freeze()
    workspace = Workspace()
    _send(connection, "ready")  # the compiler's imports are paid: a request's time limit starts now
    while True:
        try:
            method, payload = _received(connection)
        except (EOFError, OSError):
            return
        _send(connection, answer(workspace, method, payload))


class Worker:
    """The process that compiles for the server, started on first use and again after a timeout."""

    def __init__(self, limit: float = TIME_LIMIT) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._process = None
        self._connection = None

    def start(self) -> None:
        with self._lock:
            self._ensure()

    def _ensure(self) -> None:
        if self._process is not None and self._process.is_alive():
            return
        context = multiprocessing.get_context("spawn")  # a fresh interpreter: no server threads inherited
        ours, theirs = context.Pipe()
        self._process = context.Process(target=_serve, args=(theirs,), daemon=True, name="archcost-compiler")
        self._process.start()
        theirs.close()
        self._connection = ours
        if not ours.poll(START_LIMIT) or _received(ours) != "ready":
            self._stop()
            raise RuntimeError("the compiler process did not start")

    def call(self, method: str, payload: dict) -> dict:
        """The answer to one request, or E110 when it runs past the limit (the worker is then stopped)."""
        with self._lock:
            self._ensure()
            _send(self._connection, [method, payload])
            if self._connection.poll(self.limit):
                try:
                    return _received(self._connection)
                except EOFError:  # the process died (out of memory, a crash in a native library)
                    self._stop()
                    return {"internal": "archcost: the compiler process ended while answering; it restarts "
                                        "with the next request"}
            self._stop()
        from .session import problem

        late = Diagnostic(code="E110", message=f"the request ran past the server's limit of {self.limit:g} s",
                          hint="the compiler was stopped and starts afresh with the next request")
        return {"problem": problem(ArchError([late]), "")}

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join(5)
        if self._connection is not None:
            self._connection.close()
        self._process = self._connection = None

    def close(self) -> None:
        with self._lock:
            self._stop()
