"""The terrain grid as one MuJoCo height field geom, sized so that its cells are exactly the grid's,
plus a box geom per rectangle of the grid's solid part (`env.terrain.boxes`), if it has one, and a convex
mesh geom per piece of its pyramid slope tiles (`env.terrain.slopes`).

MuJoCo spaces an hfield's ``ncol x nrow`` vertices evenly over ``2*size[0] x 2*size[1]``
(columns along x, rows along y) and scales its data, which the compiler normalises to
[0, 1], by ``size[2]``; the geom's z puts the lowest point back at its height.
"""

from __future__ import annotations

import mujoco
import numpy as np

from env.terrain.boxes import terrain_boxes
from env.terrain.grid import TerrainGrid
from env.terrain.slopes import pyramid_pieces

BASE_DEPTH = 1.0  # m, solid ground below the lowest point (MuJoCo's hfield "base")
CHECK = 2.0  # m, one repeat of the floor's checker texture (2 x 2 squares) on the terrain
MIN_RELIEF = 1e-3  # m, size[2] of an entirely flat grid (MuJoCo needs a positive elevation scale)


def add_height_field(spec: mujoco.MjSpec, grid: TerrainGrid, name: str, material: str, friction: list[float]) -> None:
    """Add ``grid`` to the world as hfield asset and geom ``name`` (the floor: collides with every robot geom),
    and its solid part as boxes ``name_box<k>`` and meshes ``name_slope<k>`` after it (same contact settings)."""
    heights = grid.field_heights
    nx, ny = heights.shape
    low, relief = float(heights.min()), float(heights.max() - heights.min())
    half = [(nx - 1) * grid.horizontal_scale / 2, (ny - 1) * grid.horizontal_scale / 2]
    data = (heights - low) / relief if relief > 0 else np.zeros_like(heights)
    spec.add_hfield(name=f"{name}_hfield", nrow=ny, ncol=nx, size=[half[0], half[1], max(relief, MIN_RELIEF), BASE_DEPTH],
                    userdata=data.T.ravel().tolist())  # row r (y), column c (x) at r * ncol + c
    centre = [grid.origin[0] + half[0], grid.origin[1] + half[1], low]
    # MuJoCo stretches a material's texture over the whole height field: repeat it once per metre instead,
    # so that steps and slopes read in pictures
    texture = spec.material(material).textures[mujoco.mjtTextureRole.mjTEXROLE_RGB]
    terrain_material = spec.add_material(name=f"{name}_material", texrepeat=[2 * half[0] / CHECK, 2 * half[1] / CHECK],
                                         texuniform=False, reflectance=0.0)
    terrain_material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = texture
    spec.worldbody.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname=f"{name}_hfield", pos=centre,
                            material=terrain_material.name, contype=1, conaffinity=0, condim=3, friction=friction)
    if grid.solid is not None:
        _add_boxes(spec, grid, name, material, friction, bottom=low - BASE_DEPTH)
        _add_slopes(spec, grid, name, material, friction, bottom=low - BASE_DEPTH)


def _add_boxes(spec: mujoco.MjSpec, grid: TerrainGrid, name: str, material: str, friction: list[float],
               bottom: float) -> None:
    """One box geom per rectangle of solid ground outside the pyramids, from its top down to the height field's base."""
    boxed = grid.solid & (grid.pyramid_of == 0)
    for k, box in enumerate(terrain_boxes(np.asarray(grid.heights), boxed, grid.origin, grid.horizontal_scale)):
        half_z = (box.top - bottom) / 2
        spec.worldbody.add_geom(name=f"{name}_box{k}", type=mujoco.mjtGeom.mjGEOM_BOX,
                                size=[box.half_x, box.half_y, half_z], pos=[box.x, box.y, box.top - half_z],
                                material=material, contype=1, conaffinity=0, condim=3, friction=friction)


def _add_slopes(spec: mujoco.MjSpec, grid: TerrainGrid, name: str, material: str, friction: list[float],
                bottom: float) -> None:
    """One convex mesh per piece of each pyramid inside the grid: its top polygon over a copy at ``bottom``."""
    h, (nx, ny) = grid.horizontal_scale, grid.heights.shape
    extent = (grid.origin[0] - h / 2, grid.origin[0] + (nx - 0.5) * h, grid.origin[1] - h / 2, grid.origin[1] + (ny - 0.5) * h)
    pieces = [piece for p in grid.pyramids for piece in pyramid_pieces(p, extent)]
    for k, top in enumerate(pieces):
        base = top.copy()
        base[:, 2] = bottom
        spec.add_mesh(name=f"{name}_slope{k}_mesh", uservert=np.concatenate([top, base]).ravel().tolist())
        spec.worldbody.add_geom(name=f"{name}_slope{k}", type=mujoco.mjtGeom.mjGEOM_MESH, meshname=f"{name}_slope{k}_mesh",
                                material=material, contype=1, conaffinity=0, condim=3, friction=friction)
