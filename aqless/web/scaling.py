"""``GET /api/scaling``: the queues' scaling signals as flat JSON, for an autoscaler such as
KEDA's metrics-api scaler (``valueLocation: slots``).

``?queue=NAME`` answers that queue's `QueueScaling` as one flat object; without it, the
totals of every queue (``slots``, ``waiting``, ``running``) and each queue's object under
``queues.<name>``. ``?target=SECONDS`` is the p95 wait to meet (default 2), ``?window=``
the seconds the throughput is taken over (default 60; the app keeps each queue's recent
readings for it, so the first answers cover the day so far and the time since the first).
"""

from __future__ import annotations

import math
from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from aqless.errors import ConnectionLostError, InvalidArgumentError
from aqless.ops import known
from aqless.scaling import ScalingWindow
from aqless.web.condition import unavailable
from aqless.web.pages import dashboard

DEFAULT_TARGET: Final = 2.0
DEFAULT_WINDOW: Final = 60.0
MOST_WINDOWS: Final = 8  # distinct ?window= values one app keeps readings for


def _windows(request: Request) -> dict[float, ScalingWindow]:
    found: dict[float, ScalingWindow] | None = getattr(request.app.state, "scaling_windows", None)
    if found is None:
        found = request.app.state.scaling_windows = {}
    return found


def _seconds(request: Request, name: str, default: float) -> float:
    text = request.query_params.get(name)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise InvalidArgumentError("scaling", f"{name} must be a positive number of seconds")
    return value


def _bad(message: str, status: int) -> JSONResponse:
    return JSONResponse({"ok": False, "error": message}, status_code=status)


async def endpoint(request: Request) -> Response:
    board = dashboard(request)
    if not await board.may(request, "view"):
        return _bad("forbidden", 403)
    try:
        target = _seconds(request, "target", DEFAULT_TARGET)
        length = _seconds(request, "window", DEFAULT_WINDOW)
        windows = _windows(request)
        if length not in windows and len(windows) >= MOST_WINDOWS:
            return _bad(f"at most {MOST_WINDOWS} distinct windows", 400)
        window = windows.setdefault(length, ScalingWindow(length))
        name = request.query_params.get("queue")
        if name:
            await known.require(board.client, "queue", name)
            reading = window.update(await board.client.queues[name].scaling(target))
            return JSONResponse(reading.as_dict())
        readings = await window.read(board.client.queues, target)
    except InvalidArgumentError as error:
        return _bad(error.detail, 400)
    except known.UnknownNameError as missing:
        return _bad(str(missing), 404)
    except ConnectionLostError as error:
        return JSONResponse(unavailable(error), status_code=503)
    return JSONResponse(
        {
            "target_p95": target,
            "slots": sum(reading.slots for reading in readings),
            "waiting": sum(reading.waiting for reading in readings),
            "running": sum(reading.running for reading in readings),
            "queues": {reading.queue: reading.as_dict() for reading in readings},
        }
    )
