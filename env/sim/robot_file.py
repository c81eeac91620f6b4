"""Read the robot description (URDF or MJCF) into an `MjSpec`, ready to be put into a scene.

Only the robot: its bodies, joints, inertias and collision geometry. What the
training scene adds (floor, free joint, actuators, sensors, options) is
`env.sim.scene`'s job. Here:

- ``.urdf`` and ``.xml`` files both load through MuJoCo's own parsers;
- mesh files are resolved (URDF ``package://pkg/dir/file.stl`` is looked up next to
  the URDF and in the folders above it), and a missing one is one clear error naming it;
- links joined by fixed joints stay separate bodies (a URDF's foot links are what
  the config names as feet; MuJoCo would otherwise fuse them into the shank);
- the config's joint dynamics (armature, damping, friction loss) override the file's,
  because URDFs carry no armature and rarely real damping;
- mesh collision of named links can be replaced by a primitive fitted to the mesh.
"""

from __future__ import annotations

from pathlib import Path

import mujoco

from utils.yaml import Cfg

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ROBOT_SUFFIXES = (".urdf", ".xml")
PRIMITIVES = {"sphere": mujoco.mjtGeom.mjGEOM_SPHERE, "capsule": mujoco.mjtGeom.mjGEOM_CAPSULE,
              "box": mujoco.mjtGeom.mjGEOM_BOX, "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
              "ellipsoid": mujoco.mjtGeom.mjGEOM_ELLIPSOID}
_PACKAGE_PARENTS = 4  # folders above the URDF searched for package://PKG/... meshes


class RobotFileError(ValueError):
    """The robot file or a part it needs is missing or unusable; the message is one line."""


def asset_path(file: str) -> Path:
    """``asset.file`` as an absolute path (relative paths are relative to the project root)."""
    path = Path(file)
    if not path.is_absolute():
        path = PROJECT_ROOT / path
    if path.suffix.lower() not in ROBOT_SUFFIXES:
        raise RobotFileError(f"asset.file must be a URDF (.urdf) or an MJCF (.xml), got '{file}'")
    if not path.is_file():
        raise RobotFileError(f"robot model not found: {path} (asset.file is relative to the project root {PROJECT_ROOT})")
    return path


def load_robot_spec(asset: Cfg) -> mujoco.MjSpec:
    """The robot of ``asset.file`` as an MjSpec, with the config's joint and collision settings applied."""
    path = asset_path(asset.file)
    try:
        spec = mujoco.MjSpec.from_file(str(path))
    except Exception as err:  # noqa: BLE001 - MuJoCo reports parse errors as ValueError or its own types
        raise RobotFileError(f"cannot read {path}: {_one_line(err)}") from None
    spec.compiler.fusestatic = False  # keep fixed-joint links (feet) as bodies the config can name
    # the URDF parser has already dropped <visual> geoms; left on, discardvisual would also drop the scene's floor texture
    spec.compiler.discardvisual = False
    resolve_mesh_files(spec, path)
    apply_joint_dynamics(spec, asset)
    replace_mesh_collision(spec, dict(getattr(asset, "collision_primitives", {}) or {}))
    return spec


def _one_line(err: Exception) -> str:
    return " ".join(str(err).split())[:240]


def resolve_mesh_files(spec: mujoco.MjSpec, robot_path: Path) -> None:
    """Point every file-based mesh at an existing absolute path, or raise naming the first one missing."""
    base = robot_path.parent / (spec.meshdir or "")
    for mesh in spec.meshes:
        if not mesh.file:
            continue  # an inline mesh (vertex list in the MJCF)
        candidates = mesh_candidates(mesh.file, base)
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            looked = ", ".join(str(c) for c in candidates[:3]) + (" ..." if len(candidates) > 3 else "")
            raise RobotFileError(f"{robot_path.name}: mesh file '{mesh.file}' (mesh '{mesh.name}') not found; looked in {looked}")
        mesh.file = str(found.resolve())
    spec.meshdir = ""


def mesh_candidates(file: str, base: Path) -> list[Path]:
    """Where a mesh reference may point: as given, or for ``package://pkg/rel`` a folder ``pkg`` above the file."""
    if file.startswith("package://"):
        package, _, rel = file[len("package://"):].partition("/")
        out = []
        for folder in [base, *list(base.parents)[:_PACKAGE_PARENTS]]:
            out += [folder / package / rel, folder / rel]
            if folder.name == package:
                out.insert(0, folder / rel)
        return out
    path = Path(file[len("file://"):] if file.startswith("file://") else file)
    return [path] if path.is_absolute() else [base / path]


def by_substring(names: list[str], table: dict[str, float]) -> dict[str, float]:
    """Resolve a {substring: value} table to {name: value}; the longest matching key wins."""
    out = {}
    for name in names:
        keys = [k for k in table if k in name]
        if keys:
            out[name] = float(table[max(keys, key=len)])
    return out


def check_keys_match(what: str, table: dict, names: list[str]) -> None:
    """Every key of a {substring: value} table must match one of `names` (a typo would silently do nothing)."""
    unmatched = [k for k in table if not any(k in n for n in names)]
    if unmatched:
        raise RobotFileError(f"{what} key(s) {', '.join(repr(k) for k in unmatched)} match nothing; "
                             f"names: {', '.join(names)}")


def apply_joint_dynamics(spec: mujoco.MjSpec, asset: Cfg) -> None:
    """Override armature, damping and friction loss of the joints matched by the config's tables."""
    joints = [j for j in spec.joints if j.type in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)]
    names = [j.name for j in joints]
    for field, attr in (("joint_armature", "armature"), ("joint_damping", "damping"), ("joint_friction", "frictionloss")):
        table = dict(getattr(asset, field, {}) or {})
        check_keys_match(f"asset.{field}", table, names)
        values = by_substring(names, table)
        for joint in joints:
            if joint.name in values:
                if attr == "damping":
                    joint.damping[0] = values[joint.name]
                else:
                    setattr(joint, attr, values[joint.name])


def replace_mesh_collision(spec: mujoco.MjSpec, table: dict[str, str]) -> None:
    """Replace the mesh collision geoms of bodies matched by {body substring: primitive} with the fitted primitive.

    MuJoCo fits a primitive geom that names a mesh to that mesh (``fitaabb`` off: to its
    equivalent-inertia box), so the geom keeps the mesh's placement and rough size.
    """
    bad = {k: v for k, v in table.items() if v not in PRIMITIVES}
    if bad:
        raise RobotFileError(f"asset.collision_primitives values must be one of {', '.join(PRIMITIVES)}; got {bad}")
    bodies = [b.name for b in spec.bodies if b.name != "world"]
    check_keys_match("asset.collision_primitives", table, bodies)
    kinds = {name: table[max((k for k in table if k in name), key=len)] for name in bodies
             if any(k in name for k in table)}
    for body in spec.bodies:
        if body.name not in kinds:
            continue
        for geom in body.geoms:
            if geom.type == mujoco.mjtGeom.mjGEOM_MESH and (geom.contype or geom.conaffinity):
                geom.type = PRIMITIVES[kinds[body.name]]
