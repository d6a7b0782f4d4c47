"""``python -m aqless.scripts`` prints the complete script for other clients and tools;
``python -m aqless.scripts --library`` prints the function library (FUNCTION LOAD)."""

import sys

from aqless.scripts import build, build_library

sys.stdout.write(build_library() if "--library" in sys.argv[1:] else build())
