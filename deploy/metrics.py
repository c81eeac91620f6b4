"""Per-episode tracking, fall and energy figures of a sim-to-sim run, and their summary.

Sampled once per control step after the physics steps (as play.py --eval does), from
robots still standing; the step in which a robot falls is not sampled:

    lin_vel_rmse          m/s    RMS over the episode of |(vx, vy)_base - (vx, vy)_cmd|, base-frame velocity
                                 = R^T * (free joint's world linear velocity)
    yaw_rate_rmse         rad/s  RMS of (base-frame z angular velocity - commanded yaw rate)
    *_steady              the same over samples at least settle_s after the last command change and
                                 after the last push (steady-state tracking)
    energy_J              J      sum over physics steps and joints of |actuator torque * joint velocity| * sim_dt
    distance_m            m      horizontal path length of the base
    fell                  1 if a termination body touched the ground, the base tilted beyond fall_tilt,
                                 dropped below fall_height or the state turned non-finite (or MuJoCo reset
                                 it) before the episode's end (deploy/falls.py)
    fall_cause            the first of deploy.falls.CAUSES that held when it fell (state, tilt, height,
                                 contact), None if it did not: "contact" is a fall only the contact rule saw
    goal_time_s           s      on a terrain course: when the base crossed the goal line (the episode ends
                                 there), None if it did not
    furthest_x_m          m      on a terrain course: the furthest the base got along the course (world x,
                                 the course's first edge at deploy.courses.APPROACH), while standing

Summary: each RMSE is the mean over episodes of the per-episode value (as play.py --eval);
fall_rate = falls / episodes, falls_by_cause counts them by fall_cause; on a course successes (goal reached without a fall), success_rate
and goal_time_s (mean over the successes), timeouts (neither reached nor fell: too slow or stuck) and
stopped_at_m (median furthest_x_m of the episodes that did not reach the goal, None if all did: where
the robots stopped or fell); energy_per_metre = total energy / total distance (null when
the robots moved less than MIN_DISTANCE_M per episode on average). fall_rate_ci95 (and on a course
success_rate_ci95) is the Wilson 95% interval of the rate: 7 falls in 128 episodes is 5.5%, anywhere from
2.7% to 10.9%, so a target near 5% takes several hundred episodes to settle.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from deploy.falls import CAUSES

MIN_DISTANCE_M = 0.1  # m per episode on average below which energy_per_metre is null
Z95 = 1.959964  # standard normal quantile of a two-sided 95% interval


def wilson_interval(count: int, n: int, z: float = Z95) -> list[float] | None:
    """[low, high] Wilson score interval of a rate count / n (None without episodes): unlike p +- z sqrt(p(1-p)/n)
    it stays inside [0, 1] and is not zero-width at 0 of n."""
    if n <= 0:
        return None
    p, z2 = count / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


class Metrics:
    def __init__(self, num: int, control_dt: float, course: bool = False):
        self.dt = float(control_dt)
        self.course = course
        self.goal_time = np.full(num, np.nan)
        self.furthest = np.full(num, np.nan)
        z = lambda: np.zeros(num)  # noqa: E731
        self.steps, self.samples, self.sq_lin, self.sq_yaw = z(), z(), z(), z()
        self.steady, self.sq_lin_steady, self.sq_yaw_steady = z(), z(), z()
        self.energy, self.distance = z(), z()
        self.fell = np.zeros(num, dtype=bool)
        self.fall_time = np.full(num, np.nan)
        self.fall_cause = np.full(num, -1)  # index into CAUSES

    @classmethod
    def concat(cls, parts: list[Metrics]) -> Metrics:
        """One Metrics holding the episodes of `parts` in order (a course run in several layouts)."""
        out = cls(0, parts[0].dt, course=parts[0].course)
        for name, value in vars(out).items():
            if isinstance(value, np.ndarray):
                setattr(out, name, np.concatenate([getattr(p, name) for p in parts]))
        return out

    def record(self, live: np.ndarray, fell: np.ndarray, cmd: np.ndarray, lin_xy: np.ndarray, yaw_rate: np.ndarray,
               steady: np.ndarray, moved: np.ndarray, t: float) -> np.ndarray:
        """One control step of the robots that were `live` before it; returns the robots still live after it."""
        self.steps += live
        fell = live & fell
        self.fell |= fell
        self.fall_time[fell] = t
        ok = live & ~fell
        lin = np.sum(np.square(np.nan_to_num(lin_xy) - cmd[:, :2]), axis=1)
        yaw = np.square(np.nan_to_num(yaw_rate) - cmd[:, 2])
        self.samples += ok
        self.sq_lin += np.where(ok, lin, 0.0)
        self.sq_yaw += np.where(ok, yaw, 0.0)
        ss = ok & steady
        self.steady += ss
        self.sq_lin_steady += np.where(ss, lin, 0.0)
        self.sq_yaw_steady += np.where(ss, yaw, 0.0)
        self.distance += np.where(ok, np.nan_to_num(moved), 0.0)
        return ok

    def note_fall_causes(self, fell: np.ndarray, cause: np.ndarray) -> None:
        """The cause (index into CAUSES) of the robots that fell in this step."""
        self.fall_cause[fell] = cause[fell]

    def reach(self, live: np.ndarray, x: np.ndarray, goal_x: float, t: float) -> np.ndarray:
        """Robots `live` whose base x is past the goal line succeed at time t; returns the robots still walking."""
        # fmax skips NaN, and NaN is never past the goal: a non-finite x is no progress
        self.furthest = np.where(live, np.fmax(self.furthest, x), self.furthest)
        done = live & (x >= goal_x)
        self.goal_time[done] = t
        return live & ~done

    def add_energy(self, rows: np.ndarray, joules: np.ndarray) -> None:
        self.energy[rows] += joules

    def per_episode(self) -> list[dict[str, Any]]:
        def rms(sq: np.ndarray, n: np.ndarray) -> list[float | None]:
            return [math.sqrt(s / k) if k > 0 else None for s, k in zip(sq, n)]

        cols = {
            "episode_length_s": list(self.steps * self.dt),
            "fell": [bool(v) for v in self.fell],
            "fall_time_s": [None if math.isnan(v) else float(v) for v in self.fall_time],
            "fall_cause": [CAUSES[c] if c >= 0 else None for c in self.fall_cause.tolist()],
            "lin_vel_rmse": rms(self.sq_lin, self.samples),
            "lin_vel_rmse_steady": rms(self.sq_lin_steady, self.steady),
            "yaw_rate_rmse": rms(self.sq_yaw, self.samples),
            "yaw_rate_rmse_steady": rms(self.sq_yaw_steady, self.steady),
            "energy_J": list(self.energy),
            "distance_m": list(self.distance),
        }
        if self.course:
            cols["goal_time_s"] = [None if math.isnan(v) else float(v) for v in self.goal_time]
            cols["furthest_x_m"] = [None if not math.isfinite(v) else float(v) for v in self.furthest]
        return [{k: (float(v[i]) if isinstance(v[i], (float, np.floating)) else v[i]) for k, v in cols.items()}
                for i in range(len(self.steps))]

    def summary(self) -> dict[str, Any]:
        rows = self.per_episode()
        n = len(rows)

        def mean(key: str) -> float | None:
            vals = [r[key] for r in rows if r[key] is not None]
            return float(np.mean(vals)) if vals else None

        total_distance = float(self.distance.sum())
        course = {}
        if self.course:
            reached = ~np.isnan(self.goal_time)
            others = self.furthest[~reached & np.isfinite(self.furthest)]
            course = {"successes": int(reached.sum()), "success_rate": float(reached.mean()) if n else None,
                      "success_rate_ci95": wilson_interval(int(reached.sum()), n),
                      "goal_time_s": float(np.mean(self.goal_time[reached])) if reached.any() else None,
                      "timeouts": int((~reached & ~self.fell).sum()),
                      "stopped_at_m": float(np.median(others)) if len(others) else None}
        return {
            "episodes": n,
            "falls": int(self.fell.sum()),
            "fall_rate": float(self.fell.mean()) if n else None,
            "fall_rate_ci95": wilson_interval(int(self.fell.sum()), n),
            "falls_by_cause": {c: int((self.fall_cause == k).sum()) for k, c in enumerate(CAUSES)},
            "episode_length_s": mean("episode_length_s"),
            "lin_vel_rmse": mean("lin_vel_rmse"),
            "lin_vel_rmse_steady": mean("lin_vel_rmse_steady"),
            "yaw_rate_rmse": mean("yaw_rate_rmse"),
            "yaw_rate_rmse_steady": mean("yaw_rate_rmse_steady"),
            "energy_J": mean("energy_J"),
            "distance_m": mean("distance_m"),
            "energy_per_metre": (float(self.energy.sum()) / total_distance
                                 if n and total_distance >= MIN_DISTANCE_M * n else None),
            **course,
        }
