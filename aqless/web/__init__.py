"""The web dashboard: ``create_app(client)`` (an ASGI app to serve or mount) and ``serve()``.

Needs ``pip install 'aqless[web]'``.
"""

from aqless.web.app import create_app
from aqless.web.server import serve

__all__ = ["create_app", "serve"]
