"""``python -m aqless.scripts`` prints the complete script for other clients and tools."""

import sys

from aqless.scripts import build

sys.stdout.write(build())
