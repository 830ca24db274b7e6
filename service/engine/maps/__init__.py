"""The five maps as data, and the one loader that reads them all."""

from service.engine.maps.loader import MAP_IDS, City, MapData, load_map

__all__ = ["MAP_IDS", "City", "MapData", "load_map"]
