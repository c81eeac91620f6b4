"""Rough terrain: the height grid and its tile types (numpy), its MuJoCo height field, the torch height
lookup and scan, the level curriculum, and `Ground`, the one object the env talks to."""

from env.terrain.grid import TerrainGrid, column_types, generate_terrain
from env.terrain.ground import Ground, build_ground, terrain_grid
from env.terrain.tiles import TILE_TYPES, make_tile

__all__ = ["TILE_TYPES", "Ground", "TerrainGrid", "build_ground", "column_types", "generate_terrain", "make_tile", "terrain_grid"]
