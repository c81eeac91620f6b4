"""The flat-topped parts of the terrain as MuJoCo boxes instead of height-field cells.

MuJoCo collides a height field as one triangular prism per half cell, each on its own:
a foot sphere on flat height field touches several prisms at once and, as soon as it
sinks a few millimetres, gets contacts on the prisms' vertical sides, with horizontal
normals and friction that holds the foot. On go2_rough's 2.5 cm cells the median
contact normal of a walking Go2's feet is horizontal, and a policy that never falls on
a plane falls in a third of its episodes on a flat height-field tile (README "Height
field contacts"). A box collides as one solid: a foot on its top gets one contact,
normal up, like on a plane, and a riser is a vertical face instead of a ramp.

Where ``TerrainGrid.solid`` is set (the tile types in ``terrain.box_tiles`` and the
flat border), `terrain_boxes` covers the ground with boxes: each vertex stands for the
square of side ``horizontal_scale`` around it, and equal-height runs of vertices merge
into rectangles (a stair ring is 4 boxes, a flat tile 1). `sunken_heights` lowers the
height field under the boxes so that it never reaches through them.

Boxes cost physics time (MuJoCo places every geom at every step; benchmarks/terrain_cost.py
measures it), so the decomposition keeps them few: use it for tiles made of flat faces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SINK = 0.05  # m, how far below the lowest ground the height field goes under the boxes
EDGE_DROP = 0.02  # m, the height field under a box's edge next to height-field ground: below where a foot sinks


@dataclass(frozen=True)
class Box:
    """An axis-aligned box of ground: world centre xy, half sizes xy and top height (m)."""

    x: float
    y: float
    half_x: float
    half_y: float
    top: float


def _runs(heights: np.ndarray, solid: np.ndarray) -> list[tuple[int, int, float]]:
    """(start, stop, height) of every maximal run of equal height along one row's solid vertices."""
    if not solid.any():
        return []
    change = np.ones(len(heights) + 1, dtype=bool)
    change[1:-1] = (heights[1:] != heights[:-1]) | (solid[1:] != solid[:-1])
    edges = np.flatnonzero(change)
    return [(int(a), int(b), float(heights[a])) for a, b in zip(edges[:-1], edges[1:]) if solid[a]]


def box_rectangles(heights: np.ndarray, solid: np.ndarray) -> list[tuple[int, int, int, int, float]]:
    """Rectangles (i0, i1, j0, j1, height) of vertices [i0:i1, j0:j1] that cover ``solid`` exactly once.

    Greedy: runs of equal height along y in each x row, merged with the identical run of the rows after it.
    """
    done: list[tuple[int, int, int, int, float]] = []
    open_rects: dict[tuple[int, int, float], int] = {}  # (j0, j1, height) -> first row
    for i in range(heights.shape[0]):
        runs = set(_runs(heights[i], solid[i]))
        for key in [k for k in open_rects if k not in runs]:
            done.append((open_rects.pop(key), i, key[0], key[1], key[2]))
        for key in runs:
            open_rects.setdefault(key, i)
    done += [(i0, heights.shape[0], j0, j1, h) for (j0, j1, h), i0 in open_rects.items()]
    return sorted(done)


def terrain_boxes(heights: np.ndarray, solid: np.ndarray, origin: tuple[float, float], scale: float) -> list[Box]:
    """The boxes that make the ``solid`` vertices' ground (vertex [i, j] at origin + (i, j) * scale)."""
    boxes = []
    for i0, i1, j0, j1, top in box_rectangles(heights, solid):
        boxes.append(Box(x=origin[0] + (i0 + i1 - 1) * scale / 2, y=origin[1] + (j0 + j1 - 1) * scale / 2,
                         half_x=(i1 - i0) * scale / 2, half_y=(j1 - j0) * scale / 2, top=top))
    return boxes


def sunken_heights(heights: np.ndarray, solid: np.ndarray) -> np.ndarray:
    """The height field's heights with the solid vertices lowered out of the boxes' way.

    A solid vertex next to a height-field vertex goes EDGE_DROP below the lowest height around it, so the
    height field meets the boxes with at most a shallow crack half a cell wide; the rest go SINK below the
    lowest ground.
    """
    out = heights.astype(np.float64, copy=True)
    if not solid.any():
        return out
    padded = np.pad(heights.astype(np.float64), 1, mode="edge")
    open_pad = np.pad(~solid, 1, mode="constant", constant_values=False)
    lowest, near_open = out.copy(), ~solid
    nx, ny = heights.shape
    for di in (0, 1, 2):  # the 3 x 3 neighbourhood, one shifted view at a time (go2_rough: 24 M vertices)
        for dj in (0, 1, 2):
            np.minimum(lowest, padded[di:di + nx, dj:dj + ny], out=lowest)
            near_open |= open_pad[di:di + nx, dj:dj + ny]
    out[solid] = np.where(near_open[solid], lowest[solid] - EDGE_DROP, float(heights.min()) - SINK)
    return out
