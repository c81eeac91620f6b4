"""Per-env physics randomisation, written into the backend's per-env model fields.

Values are re-drawn for the envs being reset (where that is physical: a robot
does not change mass mid-episode) and kept as tensors so that the critic can
see them (`privileged_obs`). Disabled randomisations keep their nominal value,
so the privileged observation has the same size whatever is switched on.
"""

from __future__ import annotations

import math

import mujoco
import torch

from env.sim.base import PhysicsBackend
from env.utils.math import sample_uniform
from utils.yaml import Cfg

PRIVILEGED_PARAMS = ["friction", "restitution", "payload", "com_x", "com_y", "com_z", "motor_strength",
                     "kp_scale", "kd_scale", "joint_friction_scale", "joint_damping_scale", "latency_steps"]


def restitution_to_dampratio(e: torch.Tensor) -> torch.Tensor:
    """Damping ratio of MuJoCo's spring-damper contact that bounces back with restitution e.

    A damped oscillator of ratio z returns with e = exp(-z pi / sqrt(1 - z^2)),
    so z = -ln e / sqrt(pi^2 + ln^2 e); e -> 0 gives z = 1 (no bounce).
    """
    log_e = torch.log(e.clamp(1e-4, 0.99))
    z = -log_e / torch.sqrt(math.pi**2 + log_e**2)
    return torch.where(e <= 1e-4, torch.ones_like(z), z)


class DomainRandomizer:
    def __init__(self, cfg: Cfg, sim: PhysicsBackend, model: mujoco.MjModel, base_body_id: int, device: torch.device):
        self.cfg = cfg.domain_rand
        self.sim = sim
        self.device = device
        self.num_envs = sim.num_envs
        self.base_body_id = base_body_id
        self.ground_friction = float(cfg.terrain.static_friction)
        self.ground_restitution = float(cfg.terrain.restitution)
        n = self.num_envs
        ones = lambda: torch.ones(n, 1, device=device)  # noqa: E731
        self.params = {
            "friction": torch.full((n, 1), self.ground_friction, device=device),
            "restitution": torch.full((n, 1), self.ground_restitution, device=device),
            "payload": torch.zeros(n, 1, device=device),
            "com": torch.zeros(n, 3, device=device),
            "motor_strength": ones(), "kp_scale": ones(), "kd_scale": ones(),
            "joint_friction_scale": ones(), "joint_damping_scale": ones(),
            "latency_steps": torch.zeros(n, 1, device=device),
        }
        # Nominal model values, the base of every scaling.
        self.nominal = {
            "body_mass": torch.tensor(model.body_mass), "body_inertia": torch.tensor(model.body_inertia),
            "body_ipos": torch.tensor(model.body_ipos), "gainprm": torch.tensor(model.actuator_gainprm[:, 0]),
            "biasprm": torch.tensor(model.actuator_biasprm[:, 1:3]), "forcerange": torch.tensor(model.actuator_forcerange),
            "dof_frictionloss": torch.tensor(model.dof_frictionloss), "dof_damping": torch.tensor(model.dof_damping),
            "solref": torch.tensor(model.geom_solref),
        }
        c = self.cfg
        # Expand only the fields that are randomised: expanding costs memory per env.
        self.fields = {}
        if c.randomize_friction:
            self.fields["geom_friction"] = sim.expand("geom_friction")
        if c.randomize_restitution:
            self.fields["geom_solref"] = sim.expand("geom_solref")
        if c.randomize_link_mass or c.randomize_base_mass or c.randomize_com:
            for name in ["body_mass", "body_inertia", "body_ipos"]:
                self.fields[name] = sim.expand(name)
        if c.randomize_motor_strength or c.randomize_gains:
            for name in ["actuator_gainprm", "actuator_biasprm", "actuator_forcerange"]:
                self.fields[name] = sim.expand(name)
        if c.randomize_joint_friction:
            self.fields["dof_frictionloss"] = sim.expand("dof_frictionloss")
        if c.randomize_joint_damping:
            self.fields["dof_damping"] = sim.expand("dof_damping")
        self.needs_set_const = c.randomize_link_mass or c.randomize_base_mass or c.randomize_com

    def privileged_obs(self) -> torch.Tensor:
        """(N, 12) drawn parameters in PRIVILEGED_PARAMS order."""
        p = self.params
        return torch.cat([p["friction"], p["restitution"], p["payload"], p["com"], p["motor_strength"], p["kp_scale"],
                          p["kd_scale"], p["joint_friction_scale"], p["joint_damping_scale"], p["latency_steps"]], dim=1)

    def randomize(self, env_ids: torch.Tensor) -> None:
        """Draw new parameters for env_ids and write them into their simulations."""
        c, n, dev = self.cfg, len(env_ids), self.device
        p, cpu_ids = self.params, env_ids.cpu()

        def draw(enabled: bool, bounds: list[float], key: str, width: int = 1) -> None:
            if enabled:
                p[key][env_ids] = sample_uniform(bounds[0], bounds[1], (n, width), dev)

        draw(c.randomize_friction, c.friction_range, "friction")
        draw(c.randomize_restitution, c.restitution_range, "restitution")
        draw(c.randomize_base_mass, c.added_mass_range, "payload")
        draw(c.randomize_com, c.com_offset_range, "com", 3)
        draw(c.randomize_motor_strength, c.motor_strength_range, "motor_strength")
        draw(c.randomize_gains, c.kp_range, "kp_scale")
        draw(c.randomize_gains, c.kd_range, "kd_scale")
        draw(c.randomize_joint_friction, c.joint_friction_range, "joint_friction_scale")
        draw(c.randomize_joint_damping, c.joint_damping_range, "joint_damping_scale")
        if c.max_action_latency > 0:
            p["latency_steps"][env_ids] = torch.randint(0, c.max_action_latency + 1, (n, 1), device=dev).float()

        f = self.fields
        if "geom_friction" in f:
            # Every geom of the env gets the same coefficient, so the contact's
            # (max-combined) friction is exactly the drawn value.
            f["geom_friction"][cpu_ids, :, 0] = p["friction"][env_ids].cpu().double()
        if "geom_solref" in f:
            f["geom_solref"][cpu_ids, :, 1] = restitution_to_dampratio(p["restitution"][env_ids]).cpu().double()
        if "body_mass" in f:
            self._write_masses(env_ids, cpu_ids, n)
        if "actuator_gainprm" in f:
            strength = p["motor_strength"][env_ids].cpu().double()
            kp = self.nominal["gainprm"] * strength * p["kp_scale"][env_ids].cpu().double()
            kd = -self.nominal["biasprm"][:, 1] * strength * p["kd_scale"][env_ids].cpu().double()
            f["actuator_gainprm"][cpu_ids, :, 0] = kp
            f["actuator_biasprm"][cpu_ids, :, 1] = -kp
            f["actuator_biasprm"][cpu_ids, :, 2] = -kd
            f["actuator_forcerange"][cpu_ids] = self.nominal["forcerange"] * strength.unsqueeze(-1)
        if "dof_frictionloss" in f:
            f["dof_frictionloss"][cpu_ids] = self.nominal["dof_frictionloss"] * p["joint_friction_scale"][env_ids].cpu().double()
        if "dof_damping" in f:
            f["dof_damping"][cpu_ids] = self.nominal["dof_damping"] * p["joint_damping_scale"][env_ids].cpu().double()
        if self.needs_set_const:
            self.sim.commit_model_changes(cpu_ids)

    def _write_masses(self, env_ids: torch.Tensor, cpu_ids: torch.Tensor, n: int) -> None:
        c, f, nom = self.cfg, self.fields, self.nominal
        nbody = nom["body_mass"].shape[0]
        scale = torch.ones(n, nbody, dtype=torch.float64)
        if c.randomize_link_mass:
            scale[:, 1:] = sample_uniform(*c.link_mass_range, (n, nbody - 1), torch.device("cpu")).double()
        mass = nom["body_mass"] * scale
        inertia = nom["body_inertia"] * scale.unsqueeze(-1)
        base = self.base_body_id
        payload = self.params["payload"][env_ids, 0].cpu().double()
        # a payload at the base's COM adds its mass and, as a point mass there, no inertia about it
        mass[:, base] += payload
        ipos = nom["body_ipos"].expand(n, -1, -1).clone()
        ipos[:, base] += self.params["com"][env_ids].cpu().double()
        f["body_mass"][cpu_ids] = mass
        f["body_inertia"][cpu_ids] = inertia
        f["body_ipos"][cpu_ids] = ipos
