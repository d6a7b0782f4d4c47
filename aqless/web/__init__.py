"""The web dashboard: ``create_app(client)`` (an ASGI app to serve or mount) and ``serve()``.

Needs ``pip install 'aqless[web]'``.
"""

from aqless.errors import needs_extra

with needs_extra("web", "aqless.web"):
    import jinja2  # noqa: F401
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401

from aqless.web.app import create_app
from aqless.web.server import serve

__all__ = ["create_app", "serve"]
