"""Tables and the JSON report of deploy.sim2sim."""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any


def _fmt(value: Any, spec: str) -> str:
    """format(value, spec), or '-' right-aligned to the spec's width for a missing value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        width = spec.split(".")[0]
        return "-".rjust(int(width) if width.isdigit() else 1)
    return format(value, spec)


def episode_table(rows: list[dict[str, Any]], summary: dict[str, Any]) -> str:
    """One row per episode and an overall row (lin/yaw in m/s and rad/s, energy in J/m)."""
    head = f"{'episode':>7} {'heading':>7} {'fell at':>7} {'lin':>6} {'lin ss':>6} {'yaw':>6} {'yaw ss':>6} " \
           f"{'J/m':>6} {'dist m':>6}"
    lines = [head]
    for i, r in enumerate(rows):
        jpm = r["energy_J"] / r["distance_m"] if r["distance_m"] >= 0.1 else None
        lines.append(f"{i:>7} {_fmt(r.get('heading_rad'), '7.2f')} {_fmt(r['fall_time_s'], '7.2f')} "
                     f"{_fmt(r['lin_vel_rmse'], '6.3f')} {_fmt(r['lin_vel_rmse_steady'], '6.3f')} "
                     f"{_fmt(r['yaw_rate_rmse'], '6.3f')} {_fmt(r['yaw_rate_rmse_steady'], '6.3f')} "
                     f"{_fmt(jpm, '6.1f')} {_fmt(r['distance_m'], '6.2f')}")
    s = summary
    lines.append(f"{'all':>7} {'':>7} {str(s['falls']) + '/' + str(s['episodes']):>7} "
                 f"{_fmt(s['lin_vel_rmse'], '6.3f')} {_fmt(s['lin_vel_rmse_steady'], '6.3f')} "
                 f"{_fmt(s['yaw_rate_rmse'], '6.3f')} {_fmt(s['yaw_rate_rmse_steady'], '6.3f')} "
                 f"{_fmt(s['energy_per_metre'], '6.1f')} {_fmt(s['distance_m'], '6.2f')}")
    return "\n".join(lines)


def verdict(summary: dict[str, Any], max_fall_rate: float, max_lin_err: float) -> bool:
    """PASS: fall rate <= max_fall_rate and steady-state linear velocity RMSE <= max_lin_err (m/s)."""
    lin = summary.get("lin_vel_rmse_steady")
    return summary["fall_rate"] <= max_fall_rate + 1e-12 and lin is not None and lin <= max_lin_err


def suite_table(results: dict[str, dict[str, Any]], max_fall_rate: float, max_lin_err: float) -> str:
    width = max([7] + [len(n) for n in results])
    lines = [f"{'variant':<{width}} {'falls':>7} {'rate':>5} {'lin ss':>6} {'lin':>6} {'yaw':>6} {'J/m':>6}  result",
             f"{'':<{width}} {'':>7} {'':>5} {'m/s':>6} {'m/s':>6} {'rad/s':>6} {'':>6}"]
    for name, r in results.items():
        s = r["summary"]
        ok = verdict(s, max_fall_rate, max_lin_err)
        lines.append(f"{name:<{width}} {str(s['falls']) + '/' + str(s['episodes']):>7} {s['fall_rate']:5.2f} "
                     f"{_fmt(s['lin_vel_rmse_steady'], '6.3f')} {_fmt(s['lin_vel_rmse'], '6.3f')} "
                     f"{_fmt(s['yaw_rate_rmse'], '6.3f')} {_fmt(s['energy_per_metre'], '6.1f')}  "
                     f"{'PASS' if ok else 'FAIL'}")
    lines.append(f"PASS: falls <= {max_fall_rate:.0%} of episodes and steady-state lin vel RMSE <= {max_lin_err:g} m/s")
    return "\n".join(lines)


def course_verdict(summary: dict[str, Any], min_success: float) -> bool:
    """PASS: the fraction of episodes that reached the goal without a fall is at least min_success."""
    return summary["success_rate"] is not None and summary["success_rate"] >= min_success - 1e-12


def course_table(results: dict[str, dict[str, Any]], min_success: float) -> str:
    """One row per course: successes, falls, episodes out of time, mean time to the goal of the successes,
    and where the others stopped (median furthest base x) against the goal line."""
    width = max([6] + [len(n) for n in results])
    lines = [f"{'course':<{width}} {'reached':>7} {'rate':>5} {'falls':>7} {'timeout':>7} {'time s':>6} "
             f"{'stopped/goal m':>14}  result"]
    for name, r in results.items():
        s = r["summary"]

        def of_all(count: int | None) -> str:  # "k/episodes"; '-' for a count an older courses.json lacks
            return f"{_fmt(count, 'd')}/{s['episodes']}"

        stopped = f"{_fmt(s.get('stopped_at_m'), '.2f')}/{r['goal_x_m']:.2f}"
        lines.append(f"{name:<{width}} {of_all(s['successes']):>7} {s['success_rate']:5.2f} "
                     f"{of_all(s['falls']):>7} {of_all(s.get('timeouts')):>7} "
                     f"{_fmt(s['goal_time_s'], '6.1f')} {stopped:>14}  "
                     f"{'PASS' if course_verdict(s, min_success) else 'FAIL'}")
    lines.append(f"PASS: the base crosses the goal line without a fall in >= {min_success:.0%} of episodes "
                 "(timeout: neither reached nor fell; stopped: median furthest base x of the episodes that did "
                 "not reach the goal)")
    return "\n".join(lines)


def sim2sim_report(fmt: str, mode: str, spec: Any, robot: Any, opts: Any, args: Any, wall: float,
                   results: dict[str, dict[str, Any]], course_results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The JSON report of one deploy.sim2sim run (spec: the PolicySpec, robot: the RobotModel, opts: RunOptions)."""
    return {
        "format": fmt, "mode": mode, "export": str(spec.path), "config": spec.config,
        "model": str(robot.path), "wall_s": wall,
        "physics": {"sim_dt": robot.sim_dt, "substeps": robot.substeps, "control_dt": spec.control_dt,
                    "training_sim_dt": spec.sim_dt, "training_decimation": spec.decimation},
        "options": {**{k: v for k, v in opts.__dict__.items() if k != "schedule"},
                    "commands": str(opts.schedule) if opts.schedule else None, "jobs": args.jobs},
        "foot_geoms": [robot.geom_name(g) for g in robot.foot_geoms],
        "units": {"lin_vel_rmse": "m/s", "yaw_rate_rmse": "rad/s", "energy_J": "J", "distance_m": "m",
                  "energy_per_metre": "J/m", "episode_length_s": "s"},
        "pass_criteria": {"max_fall_rate": args.max_fall_rate, "max_lin_vel_rmse_steady": args.max_lin_err,
                          "course_min_success_rate": args.min_success},
        "results": {name: {**r, "pass": verdict(r["summary"], args.max_fall_rate, args.max_lin_err)}
                    for name, r in results.items()},
        "courses": {name: {**r, "pass": course_verdict(r["summary"], args.min_success)}
                    for name, r in course_results.items()},
    }


def clean(data: Any, digits: int = 6) -> Any:
    """JSON-safe copy: floats rounded, NaN/inf as null."""
    if isinstance(data, float):
        return None if math.isnan(data) or math.isinf(data) else round(data, digits)
    if isinstance(data, dict):
        return {str(k): clean(v, digits) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [clean(v, digits) for v in data]
    return data


def write_json(path: str | Path, report: dict[str, Any]) -> Path:
    """Write atomically: a temp file in the same folder, then rename."""
    return write_text(path, json.dumps(clean(report), indent=2, allow_nan=False) + "\n")


def write_text(path: str | Path, text: str) -> Path:
    """Write `text` to `path` atomically: a temp file in the same folder, then rename."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
