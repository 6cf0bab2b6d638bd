"""`archcost serve`: the playground — a local page to write a spec and watch its formulas, numbers,
diagram and plots change (docs/playground.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from .common import Command, whole


def arguments(parser) -> None:
    parser.add_argument("specs", nargs="*", metavar="SPEC", type=Path,
                        help="specs to open (the page also lists those archcost ships)")
    parser.add_argument("--port", type=whole(0, 65535, "--port"), default=8765,
                        help="TCP port (default 8765; 0 picks a free one)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default the loopback address: only this machine)")
    parser.add_argument("--no-browser", action="store_true", help="do not open the page in a browser")
    parser.add_argument("--time-limit", type=whole(1, 3600, "--time-limit"), default=60,
                        help="seconds one request may take before the compiler is stopped (E110)")


def run(args) -> int:
    from archcost.dsl.loader import read_source

    for spec in args.specs:  # a file that cannot be read is refused as every other command refuses it (E101)
        read_source(spec)
    import uvicorn

    from ..playground.app import LOOPBACK, create_app
    from ..playground.library import Library
    from ..playground.worker import Worker

    app = create_app(Library.of(list(args.specs)), Worker(float(args.time_limit)), (*LOOPBACK, args.host))
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    _announce_when_started(server, args.host, open_page=not args.no_browser)
    if args.host not in LOOPBACK:
        print(f"archcost serve: listening on {args.host}, not the loopback address: whoever reaches this machine "
              "can use the page and read the specs it serves", file=sys.stderr)
    server.run()
    return 0


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _announce_when_started(server, host: str, open_page: bool) -> None:
    """Once the server listens, print the page's address (with the port it bound, even for `--port 0`) and
    open it in the user's browser unless `--no-browser`."""
    import threading
    import time
    import webbrowser

    def wait() -> None:
        while not server.started:
            if server.should_exit:
                return
            time.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        address = f"http://{_shown(host)}:{port}/"
        print(f"archcost serve: {address} (Ctrl-C stops it)", file=sys.stderr, flush=True)
        if open_page:
            webbrowser.open(address)

    threading.Thread(target=wait, daemon=True).start()


COMMANDS = (Command("serve", "the playground: write a spec in a browser page and watch its costs", arguments, run),)
