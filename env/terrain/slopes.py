"""Pyramid slope tiles as convex MuJoCo meshes instead of height-field cells.

The reason is the one in `env.terrain.boxes`: a foot on MuJoCo's height field touches each
cell's prisms on their own and catches on their vertical sides, sloped or not. A
``slope_up`` or ``slope_down`` tile named in ``terrain.box_tiles`` is built from five convex
solids instead: its flat platform and its four planar faces, each the part of the tile between
the two diagonals through the platform's corners (a convex polygon), at the face's height over
a copy at the base. A foot on a face gets one contact with the face's normal, as on a tilted plane.

A `Pyramid` is one such tile in world coordinates; `Pyramid.height` is its exact surface, which the
height lookup (`env.terrain.heights`) uses where the ground is a pyramid. The tile covers the squares
around its vertices (as terrain boxes do), so its bounds are half a cell off the tile's vertex span.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_MIN_AREA = 1e-6  # m^2: pieces cut down to less than this are dropped (MuJoCo needs a solid hull)


@dataclass(frozen=True)
class Pyramid:
    """One pyramid tile: platform of half side ``half_platform`` at ``platform_z`` centred on ``centre`` (world xy),
    faces at signed ``grade`` (rise over run away from the platform), covering ``bounds`` (x0, x1, y0, y1)."""

    centre: tuple[float, float]
    half_platform: float
    platform_z: float
    grade: float
    bounds: tuple[float, float, float, float]

    def height(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Surface height (m) at world points ``x``, ``y`` (any shape) inside the bounds."""
        beyond = np.maximum(np.abs(np.asarray(x) - self.centre[0]), np.abs(np.asarray(y) - self.centre[1]))
        return self.platform_z + self.grade * np.maximum(beyond - self.half_platform, 0.0)

    def params(self) -> list[float]:
        """``[centre x, centre y, half_platform, platform_z, grade]``: what the height lookup needs."""
        return [self.centre[0], self.centre[1], self.half_platform, self.platform_z, self.grade]


def _clip(polygon: list[tuple[float, float]], a: float, b: float, c: float) -> list[tuple[float, float]]:
    """The part of a convex polygon where a*x + b*y <= c (Sutherland-Hodgman, one edge)."""
    out: list[tuple[float, float]] = []
    for k, p in enumerate(polygon):
        q = polygon[(k + 1) % len(polygon)]
        fp, fq = a * p[0] + b * p[1] - c, a * q[0] + b * q[1] - c
        if fp <= 0:
            out.append(p)
        if fp * fq < 0:
            t = fp / (fp - fq)
            out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
    return [p for k, p in enumerate(out) if not np.allclose(p, out[k - 1], rtol=0.0, atol=1e-12)]  # no repeated corner


def _area(polygon: list[tuple[float, float]]) -> float:
    if len(polygon) < 3:
        return 0.0
    xy = np.asarray(polygon)
    return 0.5 * abs(float(np.dot(xy[:, 0], np.roll(xy[:, 1], -1)) - np.dot(xy[:, 1], np.roll(xy[:, 0], -1))))


def _sectors(p: Pyramid) -> list[list[tuple[float, float, float]]]:
    """Half planes (a, b, c: a*x + b*y <= c) of the platform and of each face's part of the tile."""
    cx, cy, r = p.centre[0], p.centre[1], p.half_platform
    platform = [(1.0, 0.0, cx + r), (-1.0, 0.0, r - cx), (0.0, 1.0, cy + r), (0.0, -1.0, r - cy)]
    faces = []
    for ux, uy in ((1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)):  # u: out along the face, w: across it
        wx, wy = -uy, ux
        u0 = ux * cx + uy * cy
        w0 = wx * cx + wy * cy
        faces.append([(-ux, -uy, -(u0 + r)),  # u >= r
                      (wx - ux, wy - uy, w0 - u0),  # u >= w
                      (-wx - ux, -wy - uy, -w0 - u0)])  # u >= -w
    return [platform, *faces]


def pyramid_pieces(p: Pyramid, extent: tuple[float, float, float, float]) -> list[np.ndarray]:
    """The top polygons (k, 3) of the pyramid's convex pieces, counter-clockwise, inside ``extent`` too."""
    x0, x1 = max(p.bounds[0], extent[0]), min(p.bounds[1], extent[1])
    y0, y1 = max(p.bounds[2], extent[2]), min(p.bounds[3], extent[3])
    if x0 >= x1 or y0 >= y1:
        return []
    pieces = []
    for planes in _sectors(p):
        polygon = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
        for a, b, c in planes:
            polygon = _clip(polygon, a, b, c)
        if _area(polygon) < _MIN_AREA:
            continue
        xy = np.asarray(polygon)
        pieces.append(np.column_stack([xy, p.height(xy[:, 0], xy[:, 1])]))
    return pieces


def pyramid_index(pyramids: tuple[Pyramid, ...], shape: tuple[int, int], origin: tuple[float, float],
                  scale: float) -> np.ndarray:
    """(nx, ny) int16: 1 + the index of the pyramid whose bounds hold each vertex (world origin + (i, j) * scale), 0 none."""
    index = np.zeros(shape, dtype=np.int16)
    for k, p in enumerate(pyramids):
        (i0, i1), (j0, j1) = [[int(np.clip(np.ceil((edge - o) / scale - 1e-6), 0, n)) for edge in span]
                              for span, o, n in ((p.bounds[:2], origin[0], shape[0]), (p.bounds[2:], origin[1], shape[1]))]
        index[i0:i1, j0:j1] = k + 1
    return index
