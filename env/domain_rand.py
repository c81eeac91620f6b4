"""Per-env physics randomisation, written into the backend's per-env model fields.

What real robots get wrong in a model is drawn per env on every reset (a robot
does not change mass mid-episode): ground and foot friction, contact softness
and bounciness, link masses, payload and centre of mass, motor strength and PD
gains, the joints' passive damping, armature and friction loss, and the control
latency. The drawn values are kept as tensors so that the critic can see them
(`privileged_obs`). A randomisation that is switched off keeps its nominal
value there, so the privileged observation has the same size whatever is on.

Every draw has a config switch and range in `domain_rand` (config/base.py), and
the nominal model value is the base of every scale factor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import torch

from env.sim.base import PhysicsBackend
from env.utils.math import sample_uniform
from utils.yaml import Cfg


@dataclass(frozen=True)
class Draw:
    """One randomised quantity: its switch and range in `domain_rand`, how it is drawn, its width per env."""

    key: str
    switch: str
    range_field: str
    law: str = "uniform"  # "uniform", "log_uniform" (uniform in log: for scales over decades) or "int"
    width: int = 1


DRAWS = [
    Draw("friction", "randomize_friction", "friction_range"),
    Draw("restitution", "randomize_restitution", "restitution_range"),
    Draw("contact_timeconst", "randomize_contact_softness", "contact_timeconst_range"),
    Draw("contact_dmin", "randomize_contact_softness", "contact_dmin_range"),
    Draw("payload", "randomize_base_mass", "added_mass_range"),
    Draw("com", "randomize_com", "com_offset_range", width=3),
    Draw("motor_strength", "randomize_motor_strength", "motor_strength_range"),
    Draw("kp_scale", "randomize_gains", "kp_range"),
    Draw("kd_scale", "randomize_gains", "kd_range"),
    Draw("joint_friction_scale", "randomize_joint_friction", "joint_friction_range"),
    Draw("joint_damping_scale", "randomize_joint_damping", "joint_damping_range", law="log_uniform"),
    Draw("armature_scale", "randomize_armature", "armature_range"),
]
# Privileged observation: these keys in this order, then one mass scale per link (bodies with mass), then latency.
PRIVILEGED_KEYS = [d.key for d in DRAWS]


def restitution_to_dampratio(e: torch.Tensor) -> torch.Tensor:
    """Damping ratio of MuJoCo's spring-damper contact that bounces back with restitution e.

    A damped oscillator of ratio z returns with e = exp(-z pi / sqrt(1 - z^2)),
    so z = -ln e / sqrt(pi^2 + ln^2 e); e -> 0 gives z = 1 (no bounce).
    """
    log_e = torch.log(e.clamp(1e-4, 0.99))
    z = -log_e / torch.sqrt(math.pi**2 + log_e**2)
    return torch.where(e <= 1e-4, torch.ones_like(z), z)


def sample(law: str, bounds: list[float], shape: tuple[int, ...], device: torch.device) -> torch.Tensor:
    lo, hi = float(bounds[0]), float(bounds[1])
    if law == "log_uniform":
        return torch.exp(sample_uniform(math.log(lo), math.log(hi), shape, device))
    return sample_uniform(lo, hi, shape, device)


class DomainRandomizer:
    def __init__(self, cfg: Cfg, sim: PhysicsBackend, model: mujoco.MjModel, base_body_id: int, device: torch.device):
        self.cfg = cfg.domain_rand
        self.sim = sim
        self.device = device
        self.num_envs = n = sim.num_envs
        self.base_body_id = base_body_id
        # Nominal model values, the base of every scaling, on the device and in the precision of the
        # backend's model fields (host float64 on the mujoco backend, float32 on warp's device).
        self.sim_device, self.sim_dtype = sim.qpos.device, sim.qpos.dtype
        # links: every body with mass (massless welded bodies, e.g. feet that only carry a geom, have nothing to scale)
        self.link_ids = torch.tensor([b for b in range(1, model.nbody) if model.body_mass[b] > 0], dtype=torch.long,
                                     device=self.sim_device)
        self.num_links = len(self.link_ids)
        self.nominal = {name: torch.tensor(getattr(model, name), dtype=self.sim_dtype, device=self.sim_device) for name in
                        ["body_mass", "body_inertia", "body_ipos", "actuator_gainprm", "actuator_biasprm",
                         "actuator_forcerange", "dof_frictionloss", "dof_damping", "dof_armature", "geom_solref",
                         "geom_solimp"]}
        nominal_value = {
            "friction": float(cfg.terrain.static_friction), "restitution": float(cfg.terrain.restitution),
            # the ground's contact parameters (geom 0 is the floor in every scene we build)
            "contact_timeconst": float(model.geom_solref[0, 0]), "contact_dmin": float(model.geom_solimp[0, 0]),
            "payload": 0.0, "com": 0.0,
        }
        self.params = {d.key: torch.full((n, d.width), nominal_value.get(d.key, 1.0), device=device) for d in DRAWS}
        self.params["link_mass_scale"] = torch.ones(n, self.num_links, device=device)
        self.params["latency_steps"] = torch.zeros(n, 1, device=device)

        c = self.cfg
        on = lambda switch: bool(getattr(c, switch, False))  # noqa: E731  (older saved configs lack new switches)
        self.enabled = {d.key: on(d.switch) for d in DRAWS}
        self.randomize_link_mass = on("randomize_link_mass")
        # Expand only the fields that are randomised: expanding costs memory per env.
        wanted = {
            "geom_friction": on("randomize_friction"),
            "geom_solref": on("randomize_restitution") or on("randomize_contact_softness"),
            "geom_solimp": on("randomize_contact_softness"),
            "body_mass": self.randomize_link_mass or on("randomize_base_mass") or on("randomize_com"),
            "actuator_gainprm": on("randomize_motor_strength") or on("randomize_gains"),
            "dof_frictionloss": on("randomize_joint_friction"),
            "dof_damping": on("randomize_joint_damping"),
            "dof_armature": on("randomize_armature"),
        }
        companions = {"body_mass": ["body_inertia", "body_ipos"], "actuator_gainprm": ["actuator_biasprm", "actuator_forcerange"]}
        self.fields: dict[str, torch.Tensor] = {}
        for name, needed in wanted.items():
            if needed:
                for field in [name] + companions.get(name, []):
                    self.fields[field] = sim.expand(field)
        # Masses and armature feed the constants MuJoCo derives at compile time (subtree masses, invweights).
        self.needs_set_const = "body_mass" in self.fields or "dof_armature" in self.fields

    @property
    def num_privileged(self) -> int:
        return sum(d.width for d in DRAWS) + self.num_links + 1

    def privileged_names(self) -> list[str]:
        """Names of the privileged observation's columns, in order."""
        names = []
        for d in DRAWS:
            names += [d.key] if d.width == 1 else [f"{d.key}_{k}" for k in "xyz"[: d.width]]
        return names + [f"link_mass_scale_{i}" for i in range(1, self.num_links + 1)] + ["latency_steps"]

    def privileged_obs(self) -> torch.Tensor:
        """(N, num_privileged) drawn parameters in `privileged_names` order."""
        p = self.params
        return torch.cat([p[d.key] for d in DRAWS] + [p["link_mass_scale"], p["latency_steps"]], dim=1)

    def randomize(self, env_ids: torch.Tensor) -> None:
        """Draw new parameters for env_ids and write them into their simulations."""
        c, n, dev, p = self.cfg, len(env_ids), self.device, self.params
        for d in DRAWS:
            if self.enabled[d.key]:
                p[d.key][env_ids] = sample(d.law, getattr(c, d.range_field), (n, d.width), dev)
        if self.randomize_link_mass:
            p["link_mass_scale"][env_ids] = sample("uniform", c.link_mass_range, (n, self.num_links), dev)
        if c.max_action_latency > 0:
            p["latency_steps"][env_ids] = torch.randint(0, c.max_action_latency + 1, (n, 1), device=dev).float()
        self._write(env_ids)

    def _write(self, env_ids: torch.Tensor) -> None:
        f, nom = self.fields, self.nominal
        ids = env_ids.to(self.sim_device)
        drawn = lambda key: self.params[key][env_ids].to(self.sim_device, self.sim_dtype)  # noqa: E731
        if "geom_friction" in f:
            # Every geom of the env gets the same coefficient, so the contact's
            # (max-combined) friction is exactly the drawn value.
            f["geom_friction"][ids, :, 0] = drawn("friction")
        if "geom_solref" in f:
            # Same contact parameters on every geom, so that the mixed contact gets exactly these.
            solref = nom["geom_solref"].expand(len(env_ids), -1, -1).clone()
            if self.enabled["contact_timeconst"]:
                solref[:, :, 0] = drawn("contact_timeconst")
            if self.enabled["restitution"]:
                solref[:, :, 1] = restitution_to_dampratio(self.params["restitution"][env_ids]).to(self.sim_device, self.sim_dtype)
            f["geom_solref"][ids] = solref
        if "geom_solimp" in f:
            dmin = drawn("contact_dmin")
            solimp = nom["geom_solimp"].expand(len(env_ids), -1, -1).clone()
            solimp[:, :, 0] = dmin
            solimp[:, :, 1] = torch.maximum(solimp[:, :, 1], dmin)  # dmax >= dmin: impedance rises with depth
            f["geom_solimp"][ids] = solimp
        if "body_mass" in f:
            self._write_masses(env_ids, ids)
        if "actuator_gainprm" in f:
            strength = drawn("motor_strength")
            kp = nom["actuator_gainprm"][:, 0] * strength * drawn("kp_scale")
            kd = -nom["actuator_biasprm"][:, 2] * strength * drawn("kd_scale")
            f["actuator_gainprm"][ids, :, 0] = kp
            f["actuator_biasprm"][ids, :, 1] = -kp
            f["actuator_biasprm"][ids, :, 2] = -kd
            f["actuator_forcerange"][ids] = nom["actuator_forcerange"] * strength.unsqueeze(-1)
        for field, key in [("dof_frictionloss", "joint_friction_scale"), ("dof_damping", "joint_damping_scale"),
                           ("dof_armature", "armature_scale")]:
            if field in f:
                # free-joint dofs have none of these (0 stays 0): the scale reaches the robot's joints
                f[field][ids] = nom[field] * drawn(key)
        if self.needs_set_const:
            self.sim.commit_model_changes(ids)

    def _write_masses(self, env_ids: torch.Tensor, ids: torch.Tensor) -> None:
        f, nom = self.fields, self.nominal
        scale = torch.ones(len(env_ids), nom["body_mass"].shape[0], dtype=self.sim_dtype, device=self.sim_device)
        scale[:, self.link_ids] = self.params["link_mass_scale"][env_ids].to(self.sim_device, self.sim_dtype)
        mass = nom["body_mass"] * scale
        inertia = nom["body_inertia"] * scale.unsqueeze(-1)
        base = self.base_body_id
        # a payload at the base's COM adds its mass and, as a point mass there, no inertia about it
        mass[:, base] += self.params["payload"][env_ids, 0].to(self.sim_device, self.sim_dtype)
        ipos = nom["body_ipos"].expand(len(env_ids), -1, -1).clone()
        ipos[:, base] += self.params["com"][env_ids].to(self.sim_device, self.sim_dtype)
        f["body_mass"][ids] = mass
        f["body_inertia"][ids] = inertia
        f["body_ipos"][ids] = ipos
