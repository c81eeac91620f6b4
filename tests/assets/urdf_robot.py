"""A small URDF quadruped written for the tests, with mesh files we generate.

It uses example_quad's joint and link names, so config/example_quad.py drives it with
only ``asset.file`` changed; its geometry differs: the trunk and the calves are meshes
(binary STL boxes written here), the rest primitives, the feet links on fixed joints.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

LEGS = {"FL": (0.12, 0.075), "FR": (0.12, -0.075), "RL": (-0.12, 0.075), "RR": (-0.12, -0.075)}
_BOX_FACES = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1),
              (2, 3, 7), (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)]


def write_box_stl(path: Path, half: tuple[float, float, float], centre: tuple[float, float, float] = (0, 0, 0)) -> Path:
    """A binary STL of an axis-aligned box (12 triangles, outward normals)."""
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half + centre
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"test box".ljust(80, b"\0") + struct.pack("<I", len(_BOX_FACES)))
        for face in _BOX_FACES:
            a, b, c = corners[list(face)]
            normal = np.cross(b - a, c - a)
            f.write(struct.pack("<3f", *(normal / np.linalg.norm(normal))))
            for v in (a, b, c):
                f.write(struct.pack("<3f", *v))
            f.write(b"\0\0")
    return path


def _leg(leg: str, x: float, y: float) -> str:
    s = 1 if y > 0 else -1
    joint = '<joint name="{n}" type="revolute"><parent link="{p}"/><child link="{c}"/><origin xyz="{o}"/>' \
            '<axis xyz="{a}"/><limit lower="{lo}" upper="{hi}" effort="8" velocity="20"/></joint>'
    inertial = '<inertial><origin xyz="{o}"/><mass value="{m}"/><inertia ixx="{i}" ixy="0" ixz="0" iyy="{i}" iyz="0" izz="{i}"/></inertial>'
    return "\n".join([
        joint.format(n=f"{leg}_hip_joint", p="trunk", c=f"{leg}_hip", o=f"{x} {y} 0", a="1 0 0", lo=-0.6, hi=0.6),
        f'<link name="{leg}_hip">{inertial.format(o=f"0 {0.03 * s} 0", m=0.25, i=1e-4)}</link>',
        joint.format(n=f"{leg}_thigh_joint", p=f"{leg}_hip", c=f"{leg}_thigh", o=f"0 {0.06 * s} 0", a="0 1 0", lo=-1.2, hi=2.5),
        f'<link name="{leg}_thigh">{inertial.format(o="0 0 -0.075", m=0.35, i=7e-4)}'
        '<collision><origin xyz="0 0 -0.075"/><geometry><box size="0.03 0.03 0.15"/></geometry></collision></link>',
        joint.format(n=f"{leg}_calf_joint", p=f"{leg}_thigh", c=f"{leg}_calf", o="0 0 -0.15", a="0 1 0", lo=-2.6, hi=-0.6),
        f'<link name="{leg}_calf">{inertial.format(o="0 0 -0.075", m=0.12, i=2.3e-4)}'
        '<collision><geometry><mesh filename="package://tinyquad/meshes/calf.stl"/></geometry></collision></link>',
        f'<joint name="{leg}_foot_fixed" type="fixed"><parent link="{leg}_calf"/><child link="{leg}_foot"/>'
        '<origin xyz="0 0 -0.15"/></joint>',
        f'<link name="{leg}_foot">{inertial.format(o="0 0 0", m=0.03, i=4e-6)}'
        '<collision><geometry><sphere radius="0.018"/></geometry></collision></link>',
    ])


def write_quad_urdf(folder: Path, trunk_mesh: str = "package://tinyquad/meshes/trunk.stl") -> Path:
    """folder/tinyquad/{urdf/tinyquad.urdf, meshes/trunk.stl, meshes/calf.stl}; returns the URDF's path."""
    root = folder / "tinyquad"
    write_box_stl(root / "meshes" / "trunk.stl", (0.15, 0.075, 0.04))
    write_box_stl(root / "meshes" / "calf.stl", (0.01, 0.01, 0.075), centre=(0, 0, -0.075))
    body = "\n".join(_leg(leg, x, y) for leg, (x, y) in LEGS.items())
    urdf = f"""<?xml version="1.0"?>
<robot name="tinyquad">
<link name="trunk"><inertial><mass value="3.0"/><inertia ixx="0.0072" ixy="0" ixz="0" iyy="0.024" iyz="0" izz="0.028"/></inertial>
<collision><geometry><mesh filename="{trunk_mesh}"/></geometry></collision></link>
{body}
</robot>
"""
    path = root / "urdf" / "tinyquad.urdf"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(urdf)
    return path
