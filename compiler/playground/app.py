"""The playground's HTTP server (Starlette, run by uvicorn): the page, its vendored assets, and a JSON API
over the Python API — compile, evaluate, formulas, diagram, layouts, compare, plots, import.

What it reads is fixed when it starts: the specs named on the command line, the specs and standard library
the package ships, and its own page. A request names a spec by the name the server listed, never by a path;
any other name is refused (E112)."""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
from pathlib import Path

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from archcost.dsl.errors import ArchError, Diagnostic

from .library import Library
from .session import problem
from .worker import METHODS, Worker

STATIC = Path(__file__).parent / "static"
UNTITLED = "untitled.arch"  # what new text stands for (docs/playground.md): a file in an empty folder
MAX_BODY = 8 * 1024 * 1024  # a request holds at most a spec (4 MiB) or a config, and their names


def refused(code: str, message: str, status: int) -> JSONResponse:
    return JSONResponse({"problem": problem(ArchError([Diagnostic(code=code, message=message)]), "")},
                        status_code=status)


def _with_files(payload: dict, library: Library, scratch: Path) -> dict:
    """The page's spec names turned into the files they stand for; text with no name stands for a file in
    an empty folder of the server's, so its `use` lines reach the standard library only."""
    def resolved(spec: dict) -> dict:
        if not isinstance(spec, dict):
            return spec
        name = spec.get("source")
        file = library.path(name) if name and name != UNTITLED else scratch / UNTITLED
        return {"text": spec.get("text", ""), "file": str(file)}

    if "spec" in payload:
        payload = {**payload, "spec": resolved(payload["spec"])}
    if isinstance(payload.get("specs"), list):
        payload = {**payload, "specs": [resolved(s) for s in payload["specs"]]}
    return payload


async def _payload(request: Request, library: Library, scratch: Path) -> dict | Response:
    """The request's JSON object with its spec names resolved, or the refusal to send back."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return refused("E111", "the API takes `Content-Type: application/json` only", 415)
    body = await request.body()
    if len(body) > MAX_BODY:
        return refused("E113", f"a request is larger than {MAX_BODY:,} bytes", 413)
    if _nesting(body) > MAX_JSON_DEPTH:
        return refused("E111", f"the request's JSON nests more than {MAX_JSON_DEPTH} deep", 400)
    try:
        payload = json.loads(body or b"{}")
        if not isinstance(payload, dict):
            raise ValueError("not an object")
        return _with_files(payload, library, scratch)
    except LookupError as error:
        return refused("E112", str(error.args[0]), 404)
    except ValueError as error:
        return refused("E111", f"the request is not a JSON object: {error}"[:300], 400)


MAX_JSON_DEPTH = 32  # the page's requests nest 3 deep; json.loads would recurse once per bracket
_JSON_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(rb"[\[\]{}]")


def _nesting(body: bytes) -> int:
    """How deep the body's brackets nest, strings left out, counted without recursion (and so before json.loads
    could recurse 200,000 deep)."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_JSON_STRINGS.sub(b"", body)):
        depth += 1 if bracket in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


LOOPBACK = ("127.0.0.1", "localhost")


def create_app(library: Library, worker: Worker, hosts: tuple[str, ...] = LOOPBACK) -> Starlette:
    """The server's app. Only requests addressed to one of `hosts` are answered (another name pointing at
    this machine, DNS rebinding, gets 400), and the API takes JSON only: a page of another site can neither
    read it nor post to it without the browser's CORS preflight, which this server never grants."""
    scratch = Path(tempfile.mkdtemp(prefix="archcost-page-"))

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    async def catalogue(request: Request) -> Response:
        # the stdlib's texts and device sheets are read (compiled, when no cache holds them) off the event loop
        return JSONResponse(await anyio.to_thread.run_sync(library.catalogue))

    async def call(request: Request) -> Response:
        method = request.path_params["method"]
        if method not in METHODS:
            return refused("E111", f"the server has no method `{method}`", 404)
        payload = await _payload(request, library, scratch)
        if isinstance(payload, Response):
            return payload
        answer = await anyio.to_thread.run_sync(worker.call, method, payload)
        return JSONResponse(answer, status_code=500 if "internal" in answer else 200)

    routes = [Route("/", index), Route("/api/catalogue", catalogue), Route("/api/{method}", call, methods=["POST"]),
              Mount("/static", StaticFiles(directory=STATIC, follow_symlink=False), name="static")]
    @contextlib.asynccontextmanager
    async def lifespan(app):
        await anyio.to_thread.run_sync(worker.start)  # the compiler's imports are paid before the first request
        yield
        worker.close()

    return Starlette(routes=routes, lifespan=lifespan,
                     middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))])
