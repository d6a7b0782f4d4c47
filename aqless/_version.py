"""The package version (one place: pyproject reads it too)."""

__version__ = "0.1.0.dev0"
"""The installed version of aqless (`aqless.__version__`)."""
