"""``client.config``: the deployment's settings, each value checked by its rule."""

from __future__ import annotations

from aqless.contracts import ScriptClient as Client
from aqless.contracts.derived import ConfigScripted
from aqless.scripts.options import checked_value


class Config(ConfigScripted):
    """The deployment's settings (`heartbeat`, `grace-period`, `jobs-history`...):
    ``client.config``.

    Examples:
        ```python
        await client.config.set("heartbeat", 120)  # seconds
        print(await client.config.get("heartbeat"))  # "120"
        await client.config.unset("heartbeat")  # back to the default
        ```
    """

    def __init__(self, client: Client) -> None:
        self._client = client

    async def get(self, option: str) -> str | None:
        """An option's value, as text (its default when not set), or None for an unknown
        one.

        Args:
            option: the option's name (``heartbeat``, ``<queue>-heartbeat``...).

        Examples:
            ```python
            seconds = float(await client.config.get("heartbeat") or 60)
            ```
        """
        value = await self._client.protocol.call("config.get", option)
        return None if value is None else str(value)

    async def set(self, option: str, value: str | float, *, force: bool = False) -> None:
        """Set a configuration option (e.g. ``heartbeat``, ``<queue>-heartbeat``).
        ConfigValueError, before anything is sent, for a value outside the option's rule
        (`aqless.rules`: a positive number of seconds for ``heartbeat``, a whole number from
        0 for ``jobs-history-count``...), or for a name the scripts do not read unless
        `force` (another qless client's own option: then any value is stored).

        Args:
            option: the option's name.
            value: its value, a number or text (``"120"`` keeps a number's rule too);
                durations in seconds.
            force: store an option the scripts do not read, with any value (default
                False).

        Raises:
            ConfigValueError: `value` outside the option's rule, or `option` unknown
                without `force`; nothing sent.

        Examples:
            ```python
            await client.config.set("heartbeat", 120)  # seconds
            await client.config.set("emails-heartbeat", 30)  # the queue emails only
            await client.config.set("my-tool-colour", "blue", force=True)
            ```
        """
        checked = checked_value(option, value, force=force)
        await self._client.protocol.call("config.set", option, checked)

    async def all(self) -> dict[str, str]:
        """Every option: the defaults overlaid with what was set, values as text.

        Examples:
            ```python
            for option, value in (await client.config.all()).items():
                print(option, value)
            ```
        """
        reply = await self._client.protocol.json("config.getAll")
        return {str(name): str(value) for name, value in reply.items()}
