"""aqless: an asyncio-native client and worker for the qless job-queue protocol."""

__version__ = "0.1.0.dev0"

__all__ = ["__version__"]
