"""``python -m aqless.cli``: the same as the ``aqless`` command."""

from aqless.cli import main

main()
