"""aqless in a Django project of one file: settings made in code, a view that puts a job and
one that reads it, through ``aqless.sync``.

    pip install 'aqless[embedded]' django
    python examples/django_app/app.py runserver 8000

    curl -X POST localhost:8000/signups -d email=ann@example.com      # {"jid": "..."}
    curl 'localhost:8000/jobs/<jid>?wait=5'   # {"state": "complete", ...} once a worker ran it

It uses AQLESS_URL (or the embedded Valkey). The project only enqueues; a worker runs the
jobs, their handler in examples/signups.py: ``aqless-run --path examples --handlers
signups:handlers -q signups``. One ``aqless.sync.Client`` per process serves every request
thread; under gunicorn ``--preload`` each forked worker process gets its own connections.
"""

from __future__ import annotations

import contextlib
import sys

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponseNotAllowed, JsonResponse
from django.urls import path

import aqless.sync

if not settings.configured:
    settings.configure(
        DEBUG=False,
        SECRET_KEY="an example's key: make your own",  # noqa: S106
        ALLOWED_HOSTS=["*"],
        ROOT_URLCONF=__name__,
        MIDDLEWARE=[],
    )

WELCOME = "signups.SendWelcome"  # the klass name jobs carry; any worker registering it runs them

# one per process, shared by every request thread; no I/O until the first call
client = aqless.sync.Client()


def signup(request: HttpRequest) -> JsonResponse | HttpResponseNotAllowed:
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    email = request.POST.get("email")
    if not email:
        return JsonResponse({"error": "an email is needed"}, status=422)
    return JsonResponse({"jid": client.queues["signups"].put(WELCOME, {"email": email})})


def job(request: HttpRequest, jid: str) -> JsonResponse:
    if "wait" in request.GET:  # block until it ends, up to that many seconds
        with contextlib.suppress(TimeoutError):  # then show it as it is
            client.wait(jid, timeout=float(request.GET["wait"]))
    found = client.jobs.get(jid)
    if not isinstance(found, aqless.sync.SyncJob):
        raise Http404(f"no job {jid}")
    return JsonResponse({"jid": found.jid, "state": str(found.state), "queue": found.queue_name})


urlpatterns = [path("signups", signup), path("jobs/<str:jid>", job)]

if __name__ == "__main__":
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
