"""Reward terms for velocity-tracking locomotion.

Each term is a small function of the task returning an (N,) tensor; the config's
``rewards.scales.<name>`` weights it (per second; 0 drops it). Add a term by
writing a function here and naming it in a config.
"""

from __future__ import annotations

import torch


def _lin_vel_error_sq(task) -> torch.Tensor:
    """|v_xy,cmd - v_xy|^2 per env."""
    return torch.sum(torch.square(task.commands[:, :2] - task.env.base_lin_vel[:, :2]), dim=1)


def tracking_lin_vel(task) -> torch.Tensor:
    """exp(-|v_xy,cmd - v_xy|^2 / sigma): 1 at perfect tracking."""
    return torch.exp(-_lin_vel_error_sq(task) / task.cfg.rewards.tracking_sigma)


def tracking_lin_vel_wide(task) -> torch.Tensor:
    """exp(-|v_xy,cmd - v_xy|^2 / sigma_wide), a wide second kernel.

    A tight kernel (sigma 0.1) is flat at the errors a push leaves (1 m/s gives e^-10),
    so it pays nothing for recovering faster from one; this kernel still does.
    """
    return torch.exp(-_lin_vel_error_sq(task) / task.cfg.rewards.tracking_sigma_wide)


def tracking_ang_vel(task) -> torch.Tensor:
    """exp(-(yaw rate cmd - yaw rate)^2 / sigma_yaw): 1 at perfect tracking."""
    err = torch.square(task.commands[:, 2] - task.env.base_ang_vel[:, 2])
    sigma = task.cfg.rewards.tracking_sigma_yaw
    return torch.exp(-err / (task.cfg.rewards.tracking_sigma if sigma is None else sigma))


def lin_vel_z(task) -> torch.Tensor:
    return torch.square(task.env.base_lin_vel[:, 2])


def ang_vel_xy(task) -> torch.Tensor:
    return torch.sum(torch.square(task.env.base_ang_vel[:, :2]), dim=1)


def orientation(task) -> torch.Tensor:
    return torch.sum(torch.square(task.env.projected_gravity[:, :2]), dim=1)


def base_height(task) -> torch.Tensor:
    return torch.square(task.env.base_height - task.cfg.rewards.base_height_target)


def torques(task) -> torch.Tensor:
    return torch.sum(torch.square(task.env.torques), dim=1)


def dof_vel(task) -> torch.Tensor:
    return torch.sum(torch.square(task.env.dof_vel), dim=1)


def dof_acc(task) -> torch.Tensor:
    env = task.env
    return torch.sum(torch.square((env.last_dof_vel - env.dof_vel) / env.dt), dim=1)


def action_rate(task) -> torch.Tensor:
    return torch.sum(torch.square(task.env.last_actions - task.env.actions), dim=1)


def collision(task) -> torch.Tensor:
    env = task.env
    return torch.sum((env.penalized_forces > env.cfg.asset.contact_threshold).float(), dim=1)


def termination(task) -> torch.Tensor:
    return task.terminated.float()


def dof_pos_limits(task) -> torch.Tensor:
    """rad beyond the soft limits (a fraction soft_dof_pos_limit of each range, centred)."""
    env = task.env
    low, high = env.dof_pos_limits[:, 0], env.dof_pos_limits[:, 1]
    mid, half = (low + high) / 2, (high - low) / 2 * task.cfg.rewards.soft_dof_pos_limit
    below = (mid - half - env.dof_pos).clamp(min=0.0)
    above = (env.dof_pos - (mid + half)).clamp(min=0.0)
    return torch.sum(below + above, dim=1)


def feet_air_time(task) -> torch.Tensor:
    """At touchdown, air time minus the target, summed over feet; only while commanded to move."""
    env = task.env
    target = task.cfg.rewards.feet_air_time_target
    rew = torch.sum((env.feet_air_time_at_contact - target) * env.feet_first_contact, dim=1)
    return rew * (torch.norm(task.commands[:, :2], dim=1) > 0.1)


def foot_slip(task) -> torch.Tensor:
    """Squared horizontal speed of the feet that are on the ground."""
    env = task.env
    speed_sq = torch.sum(torch.square(env.foot_vel[:, :, :2]), dim=2)
    return torch.sum(speed_sq * env.foot_contact, dim=1)


def clearance_shortfall(task) -> torch.Tensor:
    """(N, num_feet) m: how far each foot is below rewards.foot_clearance_target above the ground under it (0 above)."""
    return (task.cfg.rewards.foot_clearance_target - task.env.foot_clearance()).clamp(min=0.0)


def feet_clearance(task) -> torch.Tensor:
    """Swing feet lower than rewards.foot_clearance_target above the ground under them, weighted by their
    horizontal speed: sum over feet of (target - height)^2 (0 above the target) * |v_xy|. A foot that
    moves forward low catches on a riser; one lifted higher than the target costs nothing."""
    shortfall = clearance_shortfall(task)
    return torch.sum(torch.square(shortfall) * torch.norm(task.env.foot_vel[..., :2], dim=-1), dim=1)


def feet_swing_height(task) -> torch.Tensor:
    """Feet the gait schedule has in swing that are lower than rewards.foot_clearance_target above the ground
    under them: sum over those feet of (target - height)^2 (0 above the target). Unlike feet_clearance it does
    not scale with the foot's speed, so slow feet do not escape it: with feet_clearance at -400, qmini_rough
    kept its 2.3 cm swing and stopped walking instead (docs/rough_terrain_trials.md, trials/qmini_rough_clear400)."""
    if task.gait is None:
        raise ValueError("rewards.scales.feet_swing_height needs commands.gait_phase = true")
    return torch.sum(torch.square(clearance_shortfall(task)) * ~task.gait.desired_contact(), dim=1)


def stumble(task) -> torch.Tensor:
    """Feet pushed mostly sideways by what they touch (|F_xy| > STUMBLE_RATIO |F_z|): a foot against a riser or
    an obstacle's side, not on top of it. Counts such feet."""
    force = task.env.foot_contact_force
    lateral = torch.norm(force[..., :2], dim=-1)
    touching = torch.norm(force, dim=-1) > task.env.cfg.asset.contact_threshold
    return torch.sum((lateral > STUMBLE_RATIO * torch.abs(force[..., 2])) & touching, dim=1).float()


STUMBLE_RATIO = 5.0  # legged_gym's: a contact force 5x more horizontal than vertical is a stumble; friction
# (at most 1.25 in the randomisation) cannot tilt a foot's force that far on ground it stands on


def gait_contact(task) -> torch.Tensor:
    """Fraction of feet whose ground contact matches the gait schedule (all feet down at zero command)."""
    if task.gait is None:
        raise ValueError("rewards.scales.gait_contact needs commands.gait_phase = true")
    return torch.mean((task.env.foot_contact == task.gait.desired_contact()).float(), dim=1)


def stand_still(task) -> torch.Tensor:
    env = task.env
    offset = torch.sum(torch.abs(env.dof_pos - env.default_dof_pos), dim=1)
    return offset * (torch.norm(task.commands, dim=1) < 0.1)


def joint_deviation(task) -> torch.Tensor:
    """Squared offset of the joints from the default pose, weighted per joint by rewards.joint_deviation_weights."""
    env = task.env
    return torch.sum(task.joint_deviation_weights * torch.square(env.dof_pos - env.default_dof_pos), dim=1)


def alive(task) -> torch.Tensor:
    return torch.ones(task.num_envs, device=task.device)


REWARDS = {fn.__name__: fn for fn in [
    tracking_lin_vel, tracking_lin_vel_wide, tracking_ang_vel, lin_vel_z, ang_vel_xy, orientation, base_height,
    torques, dof_vel, dof_acc, action_rate, collision, termination, dof_pos_limits, feet_air_time, foot_slip,
    feet_clearance, feet_swing_height, stumble, gait_contact, stand_still, joint_deviation, alive,
]}
