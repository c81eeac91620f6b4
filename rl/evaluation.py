"""Evaluate a policy (and baselines) on fixed velocity commands: the numbers behind ``play.py --eval``.

Each of N parallel envs runs one episode holding one command (a grid over the
config's command ranges when N allows, random otherwise, or a scripted
schedule shared by all envs). Metrics per episode, then averaged:

    episode_length_s   s, until termination, timeout or the horizon
    fall               1 if the episode ended by termination (a fall), not by timeout
    lin_vel_rmse       m/s, RMS over time of |(vx, vy)_base - (vx, vy)_cmd|
    yaw_rate_rmse      rad/s, RMS over time of yaw rate - commanded yaw rate
    lin_vel_offset, yaw_rate_offset   the steady part of those errors: the size of the episode's mean error
                       vector (m/s, rad/s); the rest of the RMSE is oscillation (the gait's sway, jitter) and
                       transients (the start, pushes)
    task_reward        sum over the episode of the task's unshaped task_rew (1 per step = perfect tracking)
    energy_J           J, sum over time and joints of |torque * joint velocity| * dt
    distance_m         m, horizontal path length of the base
    displacement_m     m, horizontal distance from the spawn point to where the episode ended: a robot stepping
                       in place at a stair edge adds path length, not displacement (the terrain curriculum's measure)
    energy_per_metre   J/m, total energy / total distance over all episodes (cost of transport x weight);
                       null when the robots moved less than MIN_DISTANCE_M per episode on average
    swing_height_m     m, median height of the swinging feet (off the ground, moving faster than SWING_SPEED
                       horizontally) above the ground under them: the foot site's centre, as
                       rewards.feet_clearance measures it; swing_height_p10_m its 10th percentile (the low
                       swings that catch on a riser). Null when no foot swung.
    step_frequency_hz, gait_match   how the feet step while walking (rl/gait_metrics.py)
    fall_causes        falls per termination condition the task reports (a locomotion task: "contact" of a
                       termination body, "tilt", "height"); one fall can count under several

Velocities and power are sampled once per policy step, after the physics step;
the step that ends an episode is counted in its length and task reward but not
sampled (the env has already reset that robot).
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from rl.gait_metrics import GaitMetrics

Policy = Callable[[torch.Tensor], torch.Tensor]
BASELINES = ("zero", "random")
POLICY_CHOICES = ("trained",) + BASELINES
RANGE_FIELDS = ("lin_vel_x", "lin_vel_y", "ang_vel_yaw")
MIN_DISTANCE_M = 0.1  # m per episode on average below which energy_per_metre is reported as null
SWING_SPEED = 0.2  # m/s, horizontal foot speed above which a foot off the ground counts as swinging

EVAL_UNITS = {"episode_length_s": "s", "lin_vel_rmse": "m/s", "yaw_rate_rmse": "rad/s", "lin_vel_offset": "m/s",
              "yaw_rate_offset": "rad/s",
              "task_reward": "sum of task_rew per episode", "energy_J": "J", "distance_m": "m", "displacement_m": "m",
              "energy_per_metre": "J/m", "swing_height_m": "m",
              "swing_height_p10_m": "m", "step_frequency_hz": "touchdowns per foot per s of walking",
              "gait_match": "fraction of foot samples matching the gait clock"}  # units eval.json states beside them

# Rows of the printed table: (key in the summary, label, format)
TABLE_ROWS = [
    ("episode_length_s", "episode length (s)", "{:.2f}"),
    ("fall_rate", "fall rate", "{:.2f}"),
    ("lin_vel_rmse", "lin vel RMSE (m/s)", "{:.3f}"),
    ("yaw_rate_rmse", "yaw rate RMSE (rad/s)", "{:.3f}"),
    ("lin_vel_offset", "lin vel offset (m/s)", "{:.3f}"),
    ("yaw_rate_offset", "yaw rate offset (rad/s)", "{:.3f}"),
    ("task_reward", "task reward / episode", "{:.1f}"),
    ("energy_per_metre", "energy (J/m)", "{:.1f}"),
    ("distance_m", "distance (m)", "{:.2f}"),
    ("displacement_m", "displacement (m)", "{:.2f}"),
    ("swing_height_m", "swing foot height (m)", "{:.3f}"),
    ("step_frequency_hz", "steps per foot (Hz)", "{:.2f}"),
    ("gait_match", "gait clock match", "{:.2f}"),
]


# ----------------------------------------------------------------------------- commands
def apply_zero_threshold(commands: torch.Tensor, threshold: float) -> torch.Tensor:
    """As in training: a planar command with norm < threshold becomes 0, a yaw rate with |.| < threshold too."""
    out = commands.clone()
    out[torch.norm(out[:, :2], dim=1) < threshold, :2] = 0.0
    out[torch.abs(out[:, 2]) < threshold, 2] = 0.0
    return out


def eval_commands(commands_cfg: Any, num: int, generator: torch.Generator | None = None) -> tuple[torch.Tensor, str]:
    """`num` commands (num, 3) over the config's ranges and how they were chosen.

    A grid of k points per varying axis (k^d <= num, k >= 2) when num allows; the
    envs left over, or all of them when num < 2^d, get uniform random commands.
    Commands below ``commands.zero_threshold`` become 0, as in training.
    """
    ranges = [tuple(float(v) for v in getattr(commands_cfg, f)) for f in RANGE_FIELDS]
    axes = [i for i, (lo, hi) in enumerate(ranges) if hi > lo]
    base = torch.tensor([lo for lo, _ in ranges])
    out = base.repeat(num, 1)
    mode = "fixed"
    filled = 0
    if axes:
        k = int(math.floor(num ** (1.0 / len(axes)) + 1e-9))
        if k >= 2:
            values = [torch.linspace(ranges[i][0], ranges[i][1], k) for i in axes]
            grid = torch.tensor(list(itertools.product(*[v.tolist() for v in values])))
            out[: len(grid), axes] = grid
            filled = len(grid)
            mode = "grid" if filled == num else f"grid {filled} + random {num - filled}"
        else:
            mode = "random"
        rest = num - filled
        if rest:
            lo = torch.tensor([ranges[i][0] for i in axes])
            hi = torch.tensor([ranges[i][1] for i in axes])
            out[filled:, axes] = lo + (hi - lo) * torch.rand(rest, len(axes), generator=generator)
    threshold = float(getattr(commands_cfg, "zero_threshold", 0.0))
    return apply_zero_threshold(out, threshold), mode


# ----------------------------------------------------------------------------- baselines
def zero_policy(num_actions: int) -> Policy:
    """Actions 0: the PD controllers hold the default pose."""
    return lambda obs: torch.zeros(obs.shape[0], num_actions, device=obs.device)


def random_policy(std: torch.Tensor | float, num_actions: int, seed: int = 0) -> Policy:
    """Gaussian actions N(0, std): the untrained policy's exploration noise (std per action)."""
    std_t = torch.as_tensor(std, dtype=torch.float32).expand(num_actions).clone()
    gen = torch.Generator().manual_seed(seed)

    def act(obs: torch.Tensor) -> torch.Tensor:
        noise = torch.randn(obs.shape[0], num_actions, generator=gen)
        return (noise * std_t).to(obs.device)

    return act


# ----------------------------------------------------------------------------- metrics
class EpisodeMetrics:
    """Accumulates each env's first episode, one policy step at a time (all tensors (N, ...))."""

    def __init__(self, num_envs: int, dt: float, base_xy: torch.Tensor):
        dev = base_xy.device
        zeros = lambda dtype=torch.float32: torch.zeros(num_envs, device=dev, dtype=dtype)  # noqa: E731
        self.dt = float(dt)
        self.active = torch.ones(num_envs, dtype=torch.bool, device=dev)
        self.steps = zeros(torch.long)
        self.fell = zeros(torch.bool)
        self.timed_out = zeros(torch.bool)
        self.task_reward = zeros()
        self.samples = zeros()
        self.sq_lin = zeros()
        self.sq_yaw = zeros()
        self.sum_err = torch.zeros(num_envs, 3, device=dev)  # summed (vx, vy, yaw rate) - command
        self.energy = zeros()
        self.distance = zeros()
        self.prev_xy = base_xy[:, :2].clone().float()  # the last sampled position
        self.start_xy = self.prev_xy.clone()
        self.swing_heights: list[torch.Tensor] = []  # per step, the heights of the feet that swung
        self.fell_now = zeros(torch.bool)  # envs whose first episode ended by a fall at the last step
        self.fall_causes: dict[str, torch.Tensor] = {}  # condition -> (N,) bool, set at the fall

    def step(self, commands: torch.Tensor, lin_vel_xy: torch.Tensor, yaw_rate: torch.Tensor,
             torques: torch.Tensor, dof_vel: torch.Tensor, base_xy: torch.Tensor, task_rew: torch.Tensor,
             done: torch.Tensor, time_outs: torch.Tensor) -> torch.Tensor:
        """Record one policy step; returns the mask of envs whose state was sampled (alive after the step)."""
        live = self.active
        done = done.bool()
        self.steps += live.long()
        self.task_reward += torch.where(live, task_rew.float(), torch.zeros_like(self.task_reward))
        ended = live & done
        self.fell_now = ended & ~time_outs.bool()
        self.fell |= self.fell_now
        self.timed_out |= ended & time_outs.bool()
        ok = live & ~done
        okf = ok.float()
        self.samples += okf
        err = torch.cat([lin_vel_xy.float(), yaw_rate.float().unsqueeze(1)], dim=1) - commands[:, :3].float()
        self.sq_lin += okf * torch.sum(torch.square(err[:, :2]), dim=1)
        self.sq_yaw += okf * torch.square(err[:, 2])
        self.sum_err += okf.unsqueeze(1) * err
        power = torch.sum(torch.abs(torques.float() * dof_vel.float()), dim=1)  # W
        self.energy += okf * power * self.dt
        xy = base_xy[:, :2].float()
        self.distance += okf * torch.norm(xy - self.prev_xy, dim=1)
        self.prev_xy = torch.where(ok.unsqueeze(1), xy, self.prev_xy)
        self.active = live & ~done
        return ok

    def add_swing(self, clearance: torch.Tensor, contact: torch.Tensor, foot_vel: torch.Tensor,
                  sampled: torch.Tensor) -> None:
        """Record the heights (N, feet) of the feet swinging now (off the ground, moving faster than SWING_SPEED
        horizontally) in the envs `sampled` (N,) by this step."""
        swinging = ~contact & (torch.norm(foot_vel[..., :2], dim=-1) > SWING_SPEED) & sampled.unsqueeze(1)
        self.swing_heights.append(clearance[swinging].float().cpu())

    def add_fall_causes(self, causes: dict[str, torch.Tensor]) -> None:
        """Record which of the task's termination conditions (name -> (N,) bool, this step's) ended the falls
        of the last `step`."""
        for name, mask in causes.items():
            hit = self.fall_causes.setdefault(name, torch.zeros_like(self.fell_now))
            hit |= mask.bool() & self.fell_now

    def per_env(self) -> dict[str, torch.Tensor]:
        n = self.samples.clamp(min=1.0)
        nan = torch.full_like(self.samples, float("nan"))
        has = self.samples > 0
        return {
            "episode_length_s": self.steps.float() * self.dt,
            "fell": self.fell.float(),
            "lin_vel_rmse": torch.where(has, torch.sqrt(self.sq_lin / n), nan),
            "yaw_rate_rmse": torch.where(has, torch.sqrt(self.sq_yaw / n), nan),
            "lin_vel_offset": torch.where(has, torch.norm(self.sum_err[:, :2], dim=1) / n, nan),
            "yaw_rate_offset": torch.where(has, torch.abs(self.sum_err[:, 2]) / n, nan),
            "task_reward": self.task_reward.clone(),
            "energy_J": self.energy.clone(),
            "distance_m": self.distance.clone(),
            "displacement_m": torch.norm(self.prev_xy - self.start_xy, dim=1),
        }

    def summary(self) -> dict[str, float | None]:
        env = self.per_env()
        total_distance = float(self.distance.sum())

        def mean(t: torch.Tensor) -> float | None:
            t = t[~torch.isnan(t)]
            return float(t.mean()) if len(t) else None

        swing = torch.cat(self.swing_heights) if self.swing_heights else torch.zeros(0)
        return {
            "episodes": int(len(self.steps)),
            "episode_length_s": mean(env["episode_length_s"]),
            "fall_rate": mean(env["fell"]),
            "timeout_rate": mean(self.timed_out.float()),
            "lin_vel_rmse": mean(env["lin_vel_rmse"]),
            "yaw_rate_rmse": mean(env["yaw_rate_rmse"]),
            "lin_vel_offset": mean(env["lin_vel_offset"]),
            "yaw_rate_offset": mean(env["yaw_rate_offset"]),
            "task_reward": mean(env["task_reward"]),
            "energy_J": mean(env["energy_J"]),
            "distance_m": mean(env["distance_m"]),
            "displacement_m": mean(env["displacement_m"]),
            # A robot that stays put (< MIN_DISTANCE_M per episode on average) has no meaningful J/m.
            "energy_per_metre": (float(self.energy.sum()) / total_distance
                                 if total_distance >= MIN_DISTANCE_M * len(self.steps) else None),
            "swing_height_m": float(swing.median()) if len(swing) else None,
            "swing_height_p10_m": float(swing.quantile(0.1)) if len(swing) else None,
            "fall_causes": {name: int(mask.sum()) for name, mask in self.fall_causes.items()},
        }


@dataclass
class EvalResult:
    summary: dict[str, Any]
    per_env: dict[str, list]
    commands: torch.Tensor  # (N, 3) at the start
    trace_t: list[float] = field(default_factory=list)  # s
    trace_cmd: torch.Tensor | None = None  # (T, k, 3) commanded vx, vy, yaw rate of the traced envs
    trace_meas: torch.Tensor | None = None  # (T, k, 3) achieved (NaN after the episode ended)


def evaluate(env: Any, policy: Policy, driver: Any, commands: torch.Tensor | None, steps: int,
             schedule: Any = None, trace_envs: int = 4) -> EvalResult:
    """Run each env's first episode (at most `steps` policy steps) holding `commands` (N, 3), or `schedule`.

    `driver` is a `CommandDriver` on the env's task (the task must not resample).
    """
    robot, dt, n = env.robot, env.robot.dt, env.num_envs
    driver.set(schedule.at(0.0) if schedule is not None else commands)
    start_commands = driver.target.clone()
    obs, _ = env.reset()
    metrics = EpisodeMetrics(n, dt, robot.base_pos)
    gait = GaitMetrics(n, robot.foot_contact.shape[1], dt, robot.base_pos.device)
    clock = getattr(env.task, "gait", None)
    k = min(trace_envs, n)
    t_list: list[float] = []
    cmd_rows, meas_rows = [], []
    with torch.inference_mode():
        for step in range(steps):
            if schedule is not None:
                driver.set(schedule.at(step * dt))
            cmd_now = env.task.commands.clone()
            actions = policy(obs)
            obs, _, _, done, info, task_rew = env.step(actions)
            ok = metrics.step(cmd_now, robot.base_lin_vel[:, :2], robot.base_ang_vel[:, 2], robot.torques,
                              robot.dof_vel, robot.base_pos, task_rew, done, info["time_outs"])
            metrics.add_swing(robot.foot_clearance(), robot.foot_contact, robot.foot_vel, ok)
            metrics.add_fall_causes(getattr(env.task, "termination_causes", {}))
            gait.step(robot.foot_contact, None if clock is None else clock.desired_contact(), cmd_now, ok)
            meas = torch.stack([robot.base_lin_vel[:k, 0], robot.base_lin_vel[:k, 1], robot.base_ang_vel[:k, 2]], 1)
            meas = torch.where(ok[:k].unsqueeze(1), meas, torch.full_like(meas, float("nan")))
            t_list.append((step + 1) * dt)
            cmd_rows.append(cmd_now[:k].cpu())
            meas_rows.append(meas.cpu())
            if not metrics.active.any():
                break
    per_env = {key: [None if math.isnan(v) else round(v, 6) for v in t.cpu().tolist()]
               for key, t in metrics.per_env().items()}
    per_env["command"] = [[round(v, 4) for v in row] for row in start_commands.cpu().tolist()]
    return EvalResult({**metrics.summary(), **gait.summary()}, per_env, start_commands.cpu(), t_list,
                      torch.stack(cmd_rows) if cmd_rows else None, torch.stack(meas_rows) if meas_rows else None)


# ----------------------------------------------------------------------------- reporting
def format_table(summaries: dict[str, dict[str, Any]]) -> str:
    """One row per metric, one column per policy."""
    names = list(summaries)
    width = max([10] + [len(n) for n in names])
    label_w = max(len(label) for _, label, _ in TABLE_ROWS)
    lines = [" " * label_w + "".join(f"  {n:>{width}}" for n in names)]
    for key, label, fmt in TABLE_ROWS:
        cells = []
        for n in names:
            value = summaries[n].get(key)
            cells.append(f"  {'-' if value is None else fmt.format(value):>{width}}")
        lines.append(f"{label:<{label_w}}" + "".join(cells))
    return "\n".join(lines)


def format_fall_causes(summaries: dict[str, dict[str, Any]]) -> str:
    """One line per policy that fell: its falls by termination condition."""
    lines = []
    for name, summary in summaries.items():
        causes = summary.get("fall_causes") or {}
        if any(causes.values()):
            lines.append(f"{name}: falls by cause (one fall can have several): "
                         + ", ".join(f"{cause} {count}" for cause, count in causes.items()))
    return "\n".join(lines)


def write_json(path: str | Path, report: dict[str, Any]) -> Path:
    from utils.files import atomic_write_text

    return atomic_write_text(path, json.dumps(report, indent=2, allow_nan=False) + "\n")


def parse_policy_list(text: str) -> list[str]:
    """"trained,zero,random" -> names; unknown or repeated names raise ValueError."""
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise ValueError(f"--policy needs at least one of {', '.join(POLICY_CHOICES)}")
    bad = [n for n in names if n not in POLICY_CHOICES]
    if bad:
        raise ValueError(f"unknown policy '{bad[0]}' in --policy; choose from {', '.join(POLICY_CHOICES)}")
    if len(set(names)) != len(names):
        raise ValueError(f"--policy lists a policy twice: {text}")
    return names


def round_floats(data: Any, digits: int = 6) -> Any:
    if isinstance(data, float):
        return None if math.isnan(data) or math.isinf(data) else round(data, digits)
    if isinstance(data, dict):
        return {k: round_floats(v, digits) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [round_floats(v, digits) for v in data]
    return data

