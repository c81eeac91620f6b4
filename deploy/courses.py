"""Terrain courses for the sim-to-sim check, built from box geoms in the robot's scene.

    stairs_up:H[,tread=T][,steps=N]     N risers of H m (default 8 of them, treads T = 0.30 m), then a platform
    stairs_down:H[,tread=T][,steps=N]   the same walked down, from a platform N*H m high
    slope_up:G[,length=L]               a ramp of grade G (rise over run) over L m of run (default 3), then a platform
    slope_down:G[,length=L]             the same walked down, from the platform at the top
    boxes:H[,cell=C][,length=L][,seed=S][,layouts=N]  a field L m long (default 4) of C m square boxes (0.4),
                                        each of a height drawn uniformly in [0, H] (generator seeded with S,
                                        default 0); with layouts=N the episodes are shared out over N fields,
                                        seeded S .. S+N-1 (default 1: every episode on the same field)

Every course is APPROACH m ahead of the spawn point along +x, WIDTH m wide, centred on y = 0,
and ends at a goal line GOAL_MARGIN m past its last edge (the base past it: every foot of a
Go2 or a Qmini is over the far side). Boxes and ramps, not a height field: a policy whose
skill is tied to how the training terrain was represented (hfield triangles, its cell size)
shows it here. Each geom collides as the scene's floor does.

A robot walks a course at `speed` m/s straight ahead; its yaw-rate command steers towards
the course's axis as the training's heading command does (HEADING_GAIN rad/s per rad of
heading error, clipped to the trained yaw range), the heading aimed back at y = 0 when the
robot drifts sideways. Success: the base crosses the goal line within the episode without a
fall; falls count the base height above the course's ground under the base, not above z = 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import mujoco
import numpy as np

from deploy.policy_io import DeployError

APPROACH = 1.0  # m, flat ground between the spawn point and the course
WIDTH = 4.0  # m, across the course (y)
GOAL_MARGIN = 0.6  # m, past the course's last edge
TOP_LENGTH = 3.0  # m, the platform at the top (up) or the start (down), and beyond the goal
BOX_DEPTH = 0.1  # m, below z = 0 every box reaches (no gap at the floor, no edge at z = 0)
HEADING_GAIN = 0.5  # 1/s, yaw-rate command per rad of heading error (the training's commands.heading_gain)
LATERAL_GAIN = 0.5  # rad per m: the heading aims back at the axis by this much per m of sideways drift
MAX_AIM = 0.3  # rad, the largest heading offset the lateral correction asks for
SPAWN_X = (-0.3, 0.0)  # m, spawn x drawn uniformly: robots meet the first edge at every phase of the gait
SPAWN_Y = 0.2  # m, spawn y drawn uniformly in +-SPAWN_Y
SPAWN_YAW = 0.1  # rad, spawn heading drawn uniformly in +-SPAWN_YAW

KINDS = {  # kind: (name of its number, unit, defaults of its options)
    "stairs_up": ("step height", "m", {"tread": 0.30, "steps": 8}),
    "stairs_down": ("step height", "m", {"tread": 0.30, "steps": 8}),
    "slope_up": ("grade", "rise over run", {"length": 3.0}),
    "slope_down": ("grade", "rise over run", {"length": 3.0}),
    "boxes": ("max height", "m", {"cell": 0.4, "length": 4.0, "seed": 0, "layouts": 1}),
}


@dataclass(frozen=True)
class Course:
    kind: str
    value: float  # step height (m), grade (rise over run) or max box height (m)
    options: dict = field(default_factory=dict)  # tread, steps, length, cell, seed, layouts (KINDS defaults filled in)

    @property
    def name(self) -> str:
        extra = [f"{k}={v:g}" for k, v in self.options.items() if v != KINDS[self.kind][2][k]]
        return ",".join([f"{self.kind}:{self.value:g}"] + extra)

    def layouts(self) -> list[Course]:
        """The fields the episodes are shared out over: one course per layout seed (itself if it has one)."""
        n = int(self.options.get("layouts", 1))
        if n == 1:
            return [self]
        return [Course(self.kind, self.value, {**self.options, "seed": int(self.options["seed"]) + k, "layouts": 1})
                for k in range(n)]

    @property
    def descending(self) -> bool:
        return self.kind.endswith("_down")

    @property
    def run_length(self) -> float:
        """m along x from the course's first edge to its last."""
        o = self.options
        if self.kind.startswith("stairs"):
            return (o["steps"] - 1) * o["tread"]
        return float(o["length"])

    @property
    def rise(self) -> float:
        """m between the low and the high end (0 for the box field)."""
        if self.kind.startswith("stairs"):
            return self.options["steps"] * self.value
        if self.kind.startswith("slope"):
            return self.value * self.options["length"]
        return 0.0

    @property
    def goal_x(self) -> float:
        return APPROACH + self.run_length + GOAL_MARGIN

    @property
    def start_height(self) -> float:
        """m, the ground under the spawn point."""
        return self.rise if self.descending else 0.0

    def box_heights(self) -> np.ndarray:
        """(rows along x, cols along y) m, the box field's heights (boxes only)."""
        o = self.options
        rows, cols = int(round(o["length"] / o["cell"])), int(round(WIDTH / o["cell"]))
        return np.random.default_rng(int(o["seed"])).uniform(0.0, self.value, size=(rows, cols))

    def ground_height(self, xy: np.ndarray) -> np.ndarray:
        """(B,) m, the course's ground height under world points xy (B, 2)."""
        x, y = xy[:, 0] - APPROACH, xy[:, 1]
        o = self.options
        if self.kind.startswith("stairs"):
            steps, tread = int(o["steps"]), o["tread"]
            passed = np.where(x < 0, 0, np.minimum(np.floor(x / tread) + 1, steps))  # risers behind x
            return (steps - passed if self.descending else passed) * self.value
        if self.kind.startswith("slope"):
            along = np.clip(x, 0.0, o["length"]) * self.value
            return self.rise - along if self.descending else along
        heights = self.box_heights()
        row = np.floor(x / o["cell"]).astype(int)
        col = np.floor((y + WIDTH / 2) / o["cell"]).astype(int)
        inside = (row >= 0) & (row < heights.shape[0]) & (col >= 0) & (col < heights.shape[1])
        out = np.zeros(len(xy))
        out[inside] = heights[row[inside], col[inside]]
        return out

    def boxes(self) -> list[tuple[list[float], list[float], float]]:
        """The course as boxes: (centre xyz, half sizes, pitch in rad about y), in metres."""
        o, half_w = self.options, WIDTH / 2
        out = []

        def slab(x0: float, x1: float, top: float) -> None:  # a box from below z=0 up to `top` over [x0, x1]
            out.append(([(x0 + x1) / 2, 0.0, (top - BOX_DEPTH) / 2], [(x1 - x0) / 2, half_w, (top + BOX_DEPTH) / 2],
                        0.0))

        a = APPROACH
        if self.kind.startswith("stairs"):
            steps, tread, h = int(o["steps"]), o["tread"], self.value
            if self.descending:
                slab(-TOP_LENGTH, a, steps * h)
                for i in range(steps - 1):
                    slab(a + i * tread, a + (i + 1) * tread, (steps - 1 - i) * h)
            else:
                for i in range(steps - 1):
                    slab(a + i * tread, a + (i + 1) * tread, (i + 1) * h)
                slab(a + (steps - 1) * tread, self.goal_x + TOP_LENGTH, steps * h)
        elif self.kind.startswith("slope"):
            length, top = o["length"], self.rise
            angle = math.atan(self.value)
            sign = -1.0 if self.descending else 1.0  # the top face rises (+1) or falls (-1) along +x
            thick = 0.2  # m, the ramp's thickness; its top face runs from x = a to a + length
            normal = np.array([-sign * math.sin(angle), math.cos(angle)])  # (x, z) of the top face's normal
            centre = np.array([a + length / 2, top / 2]) - normal * thick / 2
            pitch = -sign * angle  # MuJoCo's rotation about +y tips +x down
            if self.descending:
                slab(-TOP_LENGTH, a, top)
            else:
                slab(a + length, self.goal_x + TOP_LENGTH, top)
            out.append(([float(centre[0]), 0.0, float(centre[1])], [math.hypot(length, top) / 2, half_w, thick / 2],
                        pitch))
        else:
            heights, cell = self.box_heights(), o["cell"]
            for r, c in np.ndindex(heights.shape):
                x0, y0 = a + r * cell, -half_w + c * cell
                h = float(heights[r, c])
                out.append(([x0 + cell / 2, y0 + cell / 2, (h - BOX_DEPTH) / 2], [cell / 2, cell / 2, (h + BOX_DEPTH) / 2],
                            0.0))
        return out

    def add_to(self, spec: mujoco.MjSpec, contype: int, conaffinity: int, friction: list[float]) -> None:
        """Add the course's boxes to the world body of `spec`, colliding as the floor (contype, conaffinity)."""
        for i, (pos, size, pitch) in enumerate(self.boxes()):
            geom = spec.worldbody.add_geom(name=f"course_{i}", type=mujoco.mjtGeom.mjGEOM_BOX, pos=pos, size=size,
                                           contype=contype, conaffinity=conaffinity, condim=3, friction=friction,
                                           rgba=[0.55, 0.5, 0.45, 1] if i % 2 else [0.6, 0.56, 0.5, 1])
            if pitch:
                geom.quat = [math.cos(pitch / 2), 0.0, math.sin(pitch / 2), 0.0]

    def spawn(self, rng: np.random.Generator) -> tuple[float, float, float]:
        """Spawn x, y (m) and heading (rad) of one episode."""
        return (float(rng.uniform(*SPAWN_X)), float(rng.uniform(-SPAWN_Y, SPAWN_Y)),
                float(rng.uniform(-SPAWN_YAW, SPAWN_YAW)))

    def commands(self, xy: np.ndarray, yaw: np.ndarray, speed: float, yaw_range: tuple[float, float]) -> np.ndarray:
        """(B, 3) commands: `speed` ahead, no sideways speed, a yaw rate steering along the course's axis."""
        aim = np.clip(-LATERAL_GAIN * xy[:, 1], -MAX_AIM, MAX_AIM)
        error = np.remainder(aim - yaw + math.pi, 2 * math.pi) - math.pi
        out = np.zeros((len(xy), 3))
        out[:, 0] = speed
        out[:, 2] = np.clip(HEADING_GAIN * error, *yaw_range)
        return out


def parse_course(text: str) -> Course:
    """'stairs_up:0.10' or 'boxes:0.08,cell=0.3,seed=2' -> Course; DeployError (one line) on anything else."""
    head, _, rest = text.strip().partition(",")
    kind, sep, number = head.partition(":")
    if kind not in KINDS or not sep:
        raise DeployError(f"--course {text!r}: expected KIND:VALUE[,option=value...] with KIND one of "
                          f"{', '.join(KINDS)}, e.g. stairs_up:0.10")
    what, unit, defaults = KINDS[kind]
    value = _positive_number(number, f"--course {text!r}: {kind}'s {what} ({unit})")
    options = dict(defaults)
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, raw = item.partition("=")
        if key not in defaults or not eq:
            raise DeployError(f"--course {text!r}: unknown option {item!r}; {kind} takes "
                              f"{', '.join(f'{k}=' for k in defaults)}")
        if key in ("steps", "seed", "layouts"):
            try:
                options[key] = int(raw)
            except ValueError:
                raise DeployError(f"--course {text!r}: {key} must be an integer, got {raw!r}") from None
            if key in ("steps", "layouts") and options[key] < 1:
                raise DeployError(f"--course {text!r}: {key} must be >= 1, got {raw}")
        else:
            options[key] = _positive_number(raw, f"--course {text!r}: {key} (m)")
    if kind == "boxes" and options["cell"] > options["length"]:
        raise DeployError(f"--course {text!r}: cell {options['cell']:g} m is longer than the field "
                          f"({options['length']:g} m)")
    return Course(kind, value, options)


def _positive_number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and value > 0):
        raise DeployError(f"{what} must be a positive number, got {text!r}")
    return value


def course_spec(robot, course: Course) -> mujoco.MjSpec:
    """A copy of the robot's re-actuated spec (deploy.robot_model.RobotModel) with `course` added, colliding as
    its floor does."""
    floor, m = robot.floor_geoms[0], robot.model
    spec = robot.spec.copy()
    course.add_to(spec, int(m.geom_contype[floor]), int(m.geom_conaffinity[floor]),
                  [float(v) for v in m.geom_friction[floor]])
    return spec


def course_model(robot, course: Course) -> mujoco.MjModel:
    """The compiled course_spec."""
    spec = course_spec(robot, course)
    try:
        return spec.compile()
    except Exception as err:  # noqa: BLE001 - MuJoCo reports compile errors as ValueError or its own types
        raise DeployError(f"course {course.name} does not compile: {' '.join(str(err).split())[:200]}") from None
