"""``client.throttles``: named concurrency limits (a throttle by name, no I/O)."""

from __future__ import annotations

from aqless.contracts import ScriptClient as Client
from aqless.contracts.derived import ThrottleScripted


class Throttle(ThrottleScripted):
    """A named concurrency limit (``client.throttles[name]``); jobs name it in `throttles`.

    Examples:
        ```python
        smtp = client.throttles["smtp"]
        await smtp.set(5)
        await client.queues["emails"].put(send_email, data, throttles=["smtp"])
        ```
    """

    def __init__(self, client: Client, name: str) -> None:
        self._client = client
        self.name = name


class Throttles:
    """Named throttles: ``client.throttles["smtp"]`` (no I/O).

    Examples:
        ```python
        info = await client.throttles["smtp"].get()
        ```
    """

    def __init__(self, client: Client) -> None:
        self._client = client

    def __getitem__(self, name: str) -> Throttle:
        return Throttle(self._client, name)
