"""The board as SVG, drawn from the engine's game view and map data."""

from .board import board_svg

__all__ = ["board_svg"]
