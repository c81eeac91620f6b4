"""When a robot of a sim-to-sim run has fallen: the rule training ends its episodes by.

Training (env/tasks/locomotion.py, check_termination) ends an episode when a termination body
(asset.termination_bodies: Go2's trunk; Qmini's torso and shanks) touches something with more than
asset.contact_threshold N, when the base tilts past terminate_tilt, or when it sits below
terminate_height. The check here applies the same rule to the exported files: policy.yaml's
`training` block names the bodies and the threshold; exports that predate those two fields fall
back to the free joint's body (the base) and 1 N. A body touching the robot itself does not count.

Without the contact part a robot lying with its belly on a stair nosing, its base neither low above
the ground under it nor tilted, walked on as if standing.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from deploy.observation import quat_rotate_inverse

CAUSES = ("state", "tilt", "height", "contact")  # in the order a fall is put down to the first that holds
DEFAULT_CONTACT_FORCE = 1.0  # N, training's asset.contact_threshold default


def fall_causes(qpos: np.ndarray, qvel: np.ndarray, fq: int, fall_tilt: float,
                fall_height: float | np.ndarray) -> dict[str, np.ndarray]:
    """(B,) masks of the robots whose state is non-finite, whose base tilts beyond fall_tilt (rad), or sits below
    fall_height (m, one for all or (B,)); qpos/qvel (B, ...) with the free joint at qpos address fq."""
    finite = np.isfinite(qpos).all(axis=1) & np.isfinite(qvel).all(axis=1)
    quat = safe_quat(qpos[:, fq + 3:fq + 7])
    down = np.zeros((len(quat), 3))
    down[:, 2] = -1.0
    gz = quat_rotate_inverse(quat, down)[:, 2]  # -cos(tilt)
    low = np.nan_to_num(qpos[:, fq + 2], nan=-np.inf) < fall_height
    return {"state": ~finite, "tilt": gz > -math.cos(fall_tilt), "height": low}


def fallen(qpos: np.ndarray, qvel: np.ndarray, fq: int, fall_tilt: float,
           fall_height: float | np.ndarray) -> np.ndarray:
    """(B,) robots fallen by state, tilt or height (fall_causes, without contacts)."""
    return np.logical_or.reduce(list(fall_causes(qpos, qvel, fq, fall_tilt, fall_height).values()))


def first_cause(causes: dict[str, np.ndarray]) -> np.ndarray:
    """(B,) index into CAUSES of the first cause that holds for each robot, -1 where none does."""
    stacked = np.stack([causes[c] for c in CAUSES])
    return np.where(stacked.any(axis=0), np.argmax(stacked, axis=0), -1)


def safe_quat(quat: np.ndarray) -> np.ndarray:
    """Unit quaternions; non-finite rows become identity (their robot is counted as fallen anyway)."""
    q = np.where(np.isfinite(quat).all(axis=1, keepdims=True), quat, np.array([1.0, 0.0, 0.0, 0.0]))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def fall_body_ids(model: mujoco.MjModel, names: list[str] | tuple[str, ...], base_body: int) -> tuple[list[int], list[str]]:
    """Body ids of `names` in `model`, the base's alone where none is given or found; and the names it lacks."""
    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, n) for n in names]
    return [i for i in ids if i >= 0] or [int(base_body)], [n for n, i in zip(names, ids) if i < 0]


class ContactFall:
    """Whether any of `bodies` presses on something outside its own robot with more than `threshold` N."""

    def __init__(self, model: mujoco.MjModel, bodies: list[int], threshold: float):
        body_of = np.asarray(model.geom_bodyid)
        self.watched = np.isin(body_of, bodies)
        roots = np.unique(np.asarray(model.body_rootid)[bodies]) if bodies else np.zeros(0, dtype=int)
        self.own = np.isin(np.asarray(model.body_rootid)[body_of], roots)  # geoms of the watched bodies' robot
        self.threshold = float(threshold)
        self._force = np.zeros(6)

    def touching(self, model: mujoco.MjModel, data: mujoco.MjData) -> bool:
        if data.ncon == 0 or not self.watched.any():
            return False
        pairs = np.asarray(data.contact.geom).reshape(-1, 2)
        hit = (self.watched[pairs[:, 0]] & ~self.own[pairs[:, 1]]) | (self.watched[pairs[:, 1]] & ~self.own[pairs[:, 0]])
        for i in np.flatnonzero(hit):
            mujoco.mj_contactForce(model, data, int(i), self._force)
            if self._force[0] > self.threshold:  # the normal force
                return True
        return False

    def check(self, model: mujoco.MjModel, datas: list[mujoco.MjData], rows: np.ndarray) -> np.ndarray:
        """(B,) mask over `datas`: those among `rows` touching."""
        out = np.zeros(len(datas), dtype=bool)
        for i in np.flatnonzero(rows):
            out[i] = self.touching(model, datas[i])
        return out
