"""Each suite variant differs from the nominal compiled MjModel exactly in the fields it names."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from deploy.perturb import (ELLIPTIC_IMPRATIO, HEAVY_BASE_FRACTION, LOW_FRICTION, SOFT_TIMECONST, STIFF_TIMECONST,
                            VARIANTS, WEAK_MOTOR_FACTOR, parse_variants, variant_model)
from deploy.policy_io import DeployError, read_policy_yaml
from deploy.robot_model import build_robot
from tests.deploy.conftest import GO2_MODEL

# What MuJoCo's compiler derives from the edited fields (mass matrix at qpos0, its inverse weights, totals).
INERTIA_DERIVED = {"actuator_acc0", "body_invweight0", "dof_M0", "dof_invweight0", "stat.meaninertia"}
MASS_DERIVED = INERTIA_DERIVED | {"body_subtreemass", "light_poscom0", "stat.meanmass"}

NAMED = {
    "nominal": set(),
    "damping_x10": {"dof_damping"},
    "damping_x0.1": {"dof_damping"},
    "no_frictionloss": {"dof_frictionloss"},
    "armature_x0": {"dof_armature"},
    "armature_x2": {"dof_armature"},
    "stiff_feet": {"geom_solref"},
    "soft_feet": {"geom_solref"},
    "heavy_base": {"body_mass", "body_inertia"},
    "weak_motors": {"actuator_forcerange"},
    "low_friction": {"geom_friction"},
    "elliptic_cone": {"opt.cone"},  # opt.impratio too where ELLIPTIC_IMPRATIO is not the file's (1)
    "latency_2": set(),
}
DERIVED = {"armature_x0": INERTIA_DERIVED, "armature_x2": INERTIA_DERIVED, "heavy_base": MASS_DERIVED,
           "elliptic_cone": {"opt.impratio"}}


def model_fields(m: mujoco.MjModel) -> dict[str, np.ndarray]:
    """Every array of the model, and the numeric fields of opt and stat."""
    out = {}
    for name in dir(m):
        if not name.startswith("_"):
            value = getattr(m, name, None)
            if isinstance(value, np.ndarray):
                out[name] = value.copy()
    for section in ("opt", "stat"):
        obj = getattr(m, section)
        for name in dir(obj):
            value = getattr(obj, name, None)
            if not name.startswith("_") and isinstance(value, (int, float, np.ndarray)):
                out[f"{section}.{name}"] = np.array(value, dtype=np.float64)
    return out


def changed(a: mujoco.MjModel, b: mujoco.MjModel) -> set[str]:
    fa, fb = model_fields(a), model_fields(b)
    assert fa.keys() == fb.keys()
    return {k for k in fa if fa[k].shape != fb[k].shape or not np.array_equal(fa[k], fb[k], equal_nan=True)}


@pytest.fixture(scope="module")
def robot(go2_export):
    return build_robot(GO2_MODEL, read_policy_yaml(go2_export))


def test_suite_lists_the_issue_variants():
    assert list(NAMED) == list(VARIANTS)


@pytest.mark.parametrize("name", list(NAMED))
def test_variant_differs_in_exactly_what_it_names(robot, name):
    nominal = robot.spec.copy().compile()
    variant = variant_model(robot, VARIANTS[name])
    diff = changed(nominal, variant)
    assert NAMED[name] <= diff, f"{name} does not change {NAMED[name] - diff}"
    assert diff <= NAMED[name] | DERIVED.get(name, set()), f"{name} also changes {diff - NAMED[name]}"


def _others(n: int, rows) -> np.ndarray:
    mask = np.ones(n, dtype=bool)
    mask[list(rows)] = False
    return mask


def test_variant_values(robot):
    nom, dofs = robot.model, robot.qvel_idx
    m = variant_model(robot, VARIANTS["damping_x10"])
    np.testing.assert_allclose(m.dof_damping[dofs], 10 * nom.dof_damping[dofs])
    np.testing.assert_array_equal(m.dof_damping[_others(nom.nv, dofs)], nom.dof_damping[_others(nom.nv, dofs)])
    m = variant_model(robot, VARIANTS["no_frictionloss"])
    assert (nom.dof_frictionloss[dofs] > 0).all() and (m.dof_frictionloss[dofs] == 0).all()
    m = variant_model(robot, VARIANTS["armature_x2"])
    np.testing.assert_allclose(m.dof_armature[dofs], 2 * nom.dof_armature[dofs])

    contact = robot.foot_geoms + robot.floor_geoms
    assert len(robot.foot_geoms) == 4
    m = variant_model(robot, VARIANTS["stiff_feet"])
    np.testing.assert_allclose(m.geom_solref[contact, 0], STIFF_TIMECONST)  # = 2 x dt 0.005, MuJoCo's minimum
    m = variant_model(robot, VARIANTS["soft_feet"])
    np.testing.assert_allclose(m.geom_solref[contact, 0], SOFT_TIMECONST)
    np.testing.assert_array_equal(m.geom_solref[:, 1], nom.geom_solref[:, 1])
    rest = _others(nom.ngeom, contact)
    np.testing.assert_array_equal(m.geom_solref[rest], nom.geom_solref[rest])

    m = variant_model(robot, VARIANTS["heavy_base"])
    b = robot.base_body
    np.testing.assert_allclose(m.body_mass[b], (1 + HEAVY_BASE_FRACTION) * nom.body_mass[b])
    np.testing.assert_allclose(m.body_inertia[b], (1 + HEAVY_BASE_FRACTION) * nom.body_inertia[b])
    rest = _others(nom.nbody, [b])
    np.testing.assert_array_equal(m.body_mass[rest], nom.body_mass[rest])

    m = variant_model(robot, VARIANTS["weak_motors"])
    np.testing.assert_allclose(m.actuator_forcerange, WEAK_MOTOR_FACTOR * nom.actuator_forcerange)

    m = variant_model(robot, VARIANTS["low_friction"])
    touching = robot.floor_geoms + robot.robot_geoms
    np.testing.assert_allclose(m.geom_friction[touching, 0], LOW_FRICTION)
    np.testing.assert_array_equal(m.geom_friction[:, 1:], nom.geom_friction[:, 1:])
    rest = _others(nom.ngeom, touching)
    np.testing.assert_array_equal(m.geom_friction[rest], nom.geom_friction[rest])

    m = variant_model(robot, VARIANTS["elliptic_cone"])
    assert nom.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL and m.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
    assert m.opt.impratio == ELLIPTIC_IMPRATIO and m.opt.iterations == nom.opt.iterations

    assert variant_model(robot, VARIANTS["latency_2"]) is robot.model and VARIANTS["latency_2"].latency == 2


def test_parse_variants():
    assert [v.name for v in parse_variants("soft_feet,nominal")] == ["soft_feet", "nominal"]
    assert len(parse_variants(None)) == len(VARIANTS)
    for bad in ("nominal,bogus", "", "nominal,nominal"):
        with pytest.raises(DeployError):
            parse_variants(bad)
