"""``python -m aqless.web [--url URL] [--host H] [--port P] [--read-only] [--namespace NS]``"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Sequence

import anyio

from aqless.web.server import serve


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m aqless.web", description="Serve the aqless web dashboard."
    )
    parser.add_argument(
        "--url", help="the server's URL (default: AQLESS_URL, REDIS_URL, else embedded Valkey)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on")
    parser.add_argument("--read-only", action="store_true", help="show, never change")
    parser.add_argument("--namespace", help="the deployment's key namespace")
    args = parser.parse_args(argv)
    run = functools.partial(
        serve,
        args.url,
        host=args.host,
        port=args.port,
        read_only=args.read_only,
        namespace=args.namespace,
    )
    anyio.run(run)


if __name__ == "__main__":
    main()
