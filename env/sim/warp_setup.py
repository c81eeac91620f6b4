"""Importing and configuring Warp for the warp backend, and sizing its buffers.

Warp compiles every kernel on first use and caches the result. The cache lives
in Warp's usual place (``WARP_CACHE_PATH``, else the user's cache folder), so a
second run, or a second CI run on a machine that keeps that folder, reuses it.
CPU kernels are compiled for a generic x86-64/ARM target rather than the host's
own (``-march=native`` is part of Warp's cache key): a cache built on one CI
machine then serves the next. The CPU device is for development and CI only,
where compile time dominates; GPUs compile with Warp's defaults.
"""

from __future__ import annotations

import os

import mujoco

# Model fields mjw.set_const derives from the fields randomised per env; they must be batched alongside.
_INERTIAL = ["body_subtreemass", "body_invweight0", "dof_invweight0", "tendon_invweight0", "actuator_acc0"]
DERIVED_FROM: dict[str, list[str]] = {
    "body_mass": _INERTIAL, "body_inertia": _INERTIAL, "body_ipos": _INERTIAL, "body_iquat": _INERTIAL,
    "dof_armature": _INERTIAL,
}

_configured = False


def import_warp():
    """(warp, mujoco_warp), configured once; ImportError with the install command if the gpu extra is missing."""
    global _configured
    try:
        import warp as wp

        if not _configured:  # before mujoco_warp's import initialises Warp
            wp.config.log_level = wp.LOG_WARNING  # no banner and no line per loaded module; warnings still show
            wp.config.cpu_compiler_flags = ""  # generic CPU target: a portable kernel cache (see the module docstring)
            # the first CUDA graph capture compiles every loaded module (force_load): on all cores, not one by one
            wp.config.load_module_max_workers = min(os.cpu_count() or 1, 16)
            _configured = True
        import mujoco_warp as mjw

        wp.init()  # a no-op once initialised
    except ImportError as err:
        raise ImportError(f"the warp backend needs the gpu extra: pip install -e '.[gpu]' ({err})") from err
    return wp, mjw


# Contacts MuJoCo makes at most between a plane and one geom of each type (mjc_Plane* collision functions).
_PLANE_CONTACTS = {mujoco.mjtGeom.mjGEOM_SPHERE: 1, mujoco.mjtGeom.mjGEOM_ELLIPSOID: 1, mujoco.mjtGeom.mjGEOM_CAPSULE: 2,
                   mujoco.mjtGeom.mjGEOM_CYLINDER: 4, mujoco.mjtGeom.mjGEOM_BOX: 4, mujoco.mjtGeom.mjGEOM_MESH: 4}

HFIELD_CONTACTS = 4  # mujoco_warp's height-field collision keeps the deepest contact and up to 3 spread around it


def buffer_sizes(model: mujoco.MjModel, nconmax: int, njmax: int) -> tuple[int, int]:
    """Contacts and constraint rows to allocate per world: the config's values, or (0) what the robot can need.

    The automatic contact budget is the most contacts the robot's collision geoms can
    make with the floor all at once (1 per sphere, 2 per capsule, 4 per box, cylinder
    or convex mesh; 4 per geom on a height field, and twice the plane's on terrain boxes or slope pieces), plus a quarter for self-collisions where those are on. Each
    contact takes 2*(condim-1) rows in a pyramidal cone (condim 3: 4), at most 6 rows
    in an elliptic one; each joint may add a limit and a friction-loss row.
    """
    robot = [g for g in range(model.ngeom) if model.geom_bodyid[g] != 0 and (model.geom_contype[g] or model.geom_conaffinity[g])]
    # mujoco_warp keeps at most HFIELD_CONTACTS contacts per geom touching a height field (rough terrain)
    hfield = any(model.geom_type[g] == mujoco.mjtGeom.mjGEOM_HFIELD for g in range(model.ngeom) if model.geom_bodyid[g] == 0)
    solids = (int(mujoco.mjtGeom.mjGEOM_BOX), int(mujoco.mjtGeom.mjGEOM_MESH))  # terrain boxes and slope pieces
    on_solids = any(model.geom_type[g] in solids for g in range(model.ngeom) if model.geom_bodyid[g] == 0)
    plane = [_PLANE_CONTACTS.get(mujoco.mjtGeom(model.geom_type[g]), 4) for g in robot]
    # on terrain boxes and slope pieces (terrain.box_tiles) a geom may straddle the edge of two
    floor = (HFIELD_CONTACTS * len(robot) if hfield else 0) + sum(plane) * (2 if on_solids else 0 if hfield else 1)
    self_collisions = any(model.geom_contype[a] & model.geom_conaffinity[b] for a in robot for b in robot
                          if model.geom_bodyid[a] != model.geom_bodyid[b])
    con = nconmax or max(1, floor + (floor // 4 if self_collisions else 0))
    rows_per_contact = 4 if model.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL else 6
    return int(con), int(njmax or con * rows_per_contact + 2 * model.nv)
