"""The rules of Age of Steam: pure, deterministic, no I/O at move time.

The public entry points live in :mod:`service.engine.game`.
"""
