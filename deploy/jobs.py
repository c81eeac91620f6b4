"""Run one suite variant or one terrain course of a sim-to-sim check and return its JSON section.

sim2sim.py runs these jobs in its own process or, with --jobs, in spawned worker processes
(run_in_worker reads the export and the model itself there).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from deploy.courses import Course, course_spec, parse_course
from deploy.episodes import RunOptions, plan_episodes, run_episodes
from deploy.metrics import Metrics
from deploy.perturb import VARIANTS, Variant, variant_model
from deploy.policy_io import OnnxPolicy, PolicySpec, load_policy
from deploy.robot_model import RobotModel, build_robot


def run_variant(spec: PolicySpec, policy: OnnxPolicy, robot: RobotModel, variant: Variant, opts: RunOptions,
                progress=None, frame_sink=None) -> dict[str, Any]:
    """Run one variant; returns its JSON section."""
    if variant.latency is not None:
        opts = dataclasses.replace(opts, latency=variant.latency)
    model = variant_model(robot, variant)
    plans = plan_episodes(opts, spec)
    start = time.perf_counter()
    metrics = run_episodes(robot, model, spec, policy, opts, plans, progress=progress, frame_sink=frame_sink)
    rows = metrics.per_episode()
    for row, plan in zip(rows, plans):
        row["heading_rad"] = plan.heading
        row["commands"] = str(plan.schedule)
        row["pushes_m_s"] = plan.kicks.tolist()
        row["push_times_s"] = [round((int(k) + 1) * spec.control_dt, 4) for k in plan.push_steps]
    return {"description": variant.description, "latency_steps": opts.latency, "summary": metrics.summary(),
            "wall_s": time.perf_counter() - start, "episodes": rows}


def run_course(spec: PolicySpec, policy: OnnxPolicy, robot: RobotModel, course: Course, opts: RunOptions,
               progress=None, frame_sink=None) -> dict[str, Any]:
    """Walk the robot across one course on the nominal model; returns its JSON section."""
    opts = dataclasses.replace(opts, course=course)
    plans = plan_episodes(opts, spec)
    start = time.perf_counter()
    layouts = course.layouts()  # episodes shared out in consecutive blocks, episode 0 (the video's) on the first
    blocks = np.array_split(np.arange(len(plans)), len(layouts))  # main() checked episodes >= layouts
    parts, seeds = [], []
    for layout, block in zip(layouts, blocks):
        terrain = course_spec(robot, layout)
        model = terrain.compile()  # main() compiled every course before the run: this cannot fail
        parts.append(run_episodes(robot, model, spec, policy, dataclasses.replace(opts, course=layout),
                                  [plans[i] for i in block], progress=progress,
                                  frame_sink=frame_sink if block[0] == 0 else None, terrain=terrain))
        seeds += [layout.options.get("seed")] * len(block)
    metrics = Metrics.concat(parts)
    rows = metrics.per_episode()
    for row, plan, seed in zip(rows, plans, seeds):
        row["spawn_xy_m"] = list(plan.start_xy)
        row["heading_rad"] = plan.heading
        if len(layouts) > 1:
            row["layout_seed"] = seed
    return {"course": course.kind, "value": course.value, "options": course.options, "goal_x_m": course.goal_x,
            "speed_m_s": opts.course_speed, "pushes": opts.push, "summary": metrics.summary(),
            "wall_s": time.perf_counter() - start, "episodes": rows}


def run_job(spec: PolicySpec, policy: OnnxPolicy, robot: RobotModel, job: tuple[str, str], opts: RunOptions,
            progress=None, frame_sink=None) -> dict[str, Any]:
    """One suite variant ("variant", name) or course ("course", text)."""
    kind, name = job
    if kind == "course":
        return run_course(spec, policy, robot, parse_course(name), dataclasses.replace(opts, push=opts.course_push),
                          progress, frame_sink)
    return run_variant(spec, policy, robot, VARIANTS[name], opts, progress, frame_sink)


def run_in_worker(job: tuple) -> tuple[tuple[str, str], dict[str, Any]]:
    """One variant or course in a worker process, which reads the export and the model itself."""
    export, model_path, task, opts = job
    spec, policy = load_policy(export)
    return task, run_job(spec, policy, build_robot(model_path, spec, opts.sim_dt), task, opts)
