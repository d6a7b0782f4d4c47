"""aqless in a Flask app: jobs put and looked up from sync views through ``aqless.sync``.

    pip install 'aqless[embedded]' flask
    python examples/flask_app.py --port 8000       (or: flask --app examples/flask_app run)

    curl -X POST localhost:8000/signups -H 'content-type: application/json' \\
         -d '{"email": "ann@example.com"}'         # {"jid": "..."}
    curl 'localhost:8000/jobs/<jid>?wait=5'        # {"state": "complete", ...} once a worker ran it

It uses AQLESS_URL (or the embedded Valkey). The app only enqueues; a worker runs the jobs,
their handler in examples/signups.py: ``aqless-run --path examples --handlers
signups:handlers -q signups``.
One ``aqless.sync.Client`` serves every request thread: one loop, one set of connections.
"""

from __future__ import annotations

import argparse
import contextlib

from flask import Flask, abort, request

import aqless.sync

WELCOME = "signups.SendWelcome"  # the klass name jobs carry; any worker registering it runs them


def create_app(url: str | None = None) -> Flask:
    """The app; `url` names the server (default: AQLESS_URL, else the embedded one)."""
    app = Flask(__name__)
    client = aqless.sync.Client(url)  # no I/O yet: connects on the first call
    app.extensions["aqless"] = client

    @app.post("/signups")
    def signup() -> dict[str, str]:
        body = request.get_json(silent=True) or {}
        if not isinstance(body.get("email"), str):
            abort(422, "an email is needed")
        return {"jid": client.queues["signups"].put(WELCOME, {"email": body["email"]})}

    @app.get("/jobs/<jid>")
    def job(jid: str) -> dict[str, object]:
        if "wait" in request.args:  # block until it ends, up to that many seconds
            with contextlib.suppress(TimeoutError):  # then show it as it is
                client.wait(jid, timeout=float(request.args["wait"]))
        found = client.jobs.get(jid)
        if not isinstance(found, aqless.sync.SyncJob):
            abort(404, f"no job {jid}")
        return {"jid": found.jid, "state": str(found.state), "queue": found.queue_name}

    return app


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    options = parser.parse_args()
    create_app().run(host=options.host, port=options.port, threaded=True)
