"""The rules of Age of Steam: pure, deterministic, no I/O at move time.

The public entry points live in :mod:`service.engine.game`.
"""

from service.engine import native

# Before any module of the engine is imported: a compiled module runs only if built from these
# very sources (native.py). NATIVE is what this process runs: "compiled", or the sources (the
# build "stale", "off" or "absent"), whatever is built after it started.
NATIVE = native.guard()
