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
from dataclasses import dataclass, replace

import mujoco
import torch

from env.sim.base import PhysicsBackend
from utils.yaml import Cfg


@dataclass(frozen=True)
class Draw:
    """One randomised quantity: its switch and range in `domain_rand`, how it is drawn, its width per env."""

    key: str
    switch: str
    range_field: str
    law: str = "uniform"  # "uniform", "log_uniform" (uniform in log: for scales over decades) or "int" (whole numbers)
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


@dataclass(frozen=True)
class Column:
    """Columns of the parameter table: one drawn quantity, its nominal value, and its range (None: not drawn)."""

    key: str
    width: int
    nominal: float
    law: str
    bounds: list[float] | None

    def bound(self, i: int) -> float:
        """Lower (0) or upper (1) bound of the uniform draw: in log for a log-uniform quantity."""
        x = float(self.bounds[i])
        return math.log(x) if self.law == "log_uniform" else x


def restitution_to_dampratio(e: torch.Tensor) -> torch.Tensor:
    """Damping ratio of MuJoCo's spring-damper contact that bounces back with restitution e.

    A damped oscillator of ratio z returns with e = exp(-z pi / sqrt(1 - z^2)),
    so z = -ln e / sqrt(pi^2 + ln^2 e); e -> 0 gives z = 1 (no bounce).
    """
    log_e = torch.log(e.clamp(1e-4, 0.99))
    z = -log_e / torch.sqrt(math.pi**2 + log_e**2)
    return torch.where(e <= 1e-4, torch.ones_like(z), z)


def contact_timeconst_floor(model: mujoco.MjModel) -> float:
    """The shortest contact time constant MuJoCo simulates: 2 physics steps (its "refsafe" rule), 0 when disabled.

    A softness draw below it acts as the floor; at go2_rough's dt 0.01 the default 0.02 s already is the floor.
    """
    if model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_REFSAFE:
        return 0.0
    return 2.0 * float(model.opt.timestep)


def _effective_timeconst(solref0: float, floor: float) -> float:
    """A positive solref[0] is a time constant, raised to the floor; a negative one is a stiffness, kept."""
    return max(solref0, floor) if solref0 > 0 else solref0


class DomainRandomizer:
    """Draws every randomised parameter of the envs being reset in one call and writes it into their model fields.

    The drawn values live in one (N, num_privileged) table, laid out as the privileged
    observation; `params[key]` are column views of it. A reset draws all switched-on
    columns with one `torch.rand`, writes them with one indexed store, then writes each
    randomised model field once for all reset envs and commits them in one backend call.
    """

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
        self.timeconst_floor = contact_timeconst_floor(model)
        nominal_value = {
            "friction": float(cfg.terrain.static_friction), "restitution": float(cfg.terrain.restitution),
            # the ground's contact parameters (geom 0 is the floor in every scene we build)
            "contact_timeconst": _effective_timeconst(float(model.geom_solref[0, 0]), self.timeconst_floor),
            "contact_dmin": float(model.geom_solimp[0, 0]),
            "payload": 0.0, "com": 0.0,
        }
        c = self.cfg
        on = lambda switch: bool(getattr(c, switch, False))  # noqa: E731  (older saved configs lack new switches)
        self.enabled = {d.key: on(d.switch) for d in DRAWS}
        self.randomize_link_mass = on("randomize_link_mass")
        columns = [Column(d.key, d.width, nominal_value.get(d.key, 1.0), d.law,
                          getattr(c, d.range_field) if self.enabled[d.key] else None) for d in DRAWS]
        columns.append(Column("link_mass_scale", self.num_links, 1.0, "uniform",
                              c.link_mass_range if self.randomize_link_mass else None))
        # latency: uniform over [0, max + 1), floored to whole steps 0..max
        latency = int(c.max_action_latency)
        columns.append(Column("latency_steps", 1, 0.0, "int", [0, latency + 1] if latency > 0 else None))
        self._init_table(columns, n)
        self.fields = self._expand_fields(sim)
        # Masses and armature feed the constants MuJoCo derives at compile time (subtree masses, invweights).
        self.needs_set_const = "body_mass" in self.fields or "dof_armature" in self.fields

    def _init_table(self, columns: list[Column], n: int) -> None:
        """The parameter table at nominal values, its column views, and what one draw needs: columns, bounds, laws."""
        self.table = torch.cat([torch.full((n, c.width), float(c.nominal), device=self.device) for c in columns], dim=1)
        starts = torch.tensor([0] + [c.width for c in columns]).cumsum(0).tolist()
        self._columns = {c.key: slice(a, a + c.width) for c, a in zip(columns, starts)}
        self.params = {key: self.table[:, cols] for key, cols in self._columns.items()}
        self._drawn = [(a + k, c) for c, a in zip(columns, starts) if c.bounds is not None for k in range(c.width)]
        dev = self.device
        self._draw_cols = torch.tensor([col for col, _ in self._drawn], dtype=torch.long, device=dev)
        self._draw_log = torch.tensor([c.law == "log_uniform" for _, c in self._drawn], device=dev)
        self._draw_int = torch.tensor([c.law == "int" for _, c in self._drawn], device=dev)
        self._set_draw_bounds()

    def _set_draw_bounds(self) -> None:
        low, high = [torch.tensor([c.bound(i) for _, c in self._drawn], device=self.device) for i in (0, 1)]
        self._draw_low, self._draw_span = low, high - low
        self._draw_top = high - 1  # an "int" column's largest whole value
        # the time constants MuJoCo would raise to its floor are recorded at the floor, as the physics uses them
        self._draw_floor = torch.tensor([self.timeconst_floor if c.key == "contact_timeconst" else -math.inf
                                         for _, c in self._drawn], device=self.device)

    def set_range(self, range_field: str, bounds: list[float], check_only: bool = False) -> None:
        """Draw `range_field` (e.g. "joint_damping_range") from `bounds` at each env's next reset (a training stage)."""
        draw = next((d for d in DRAWS if d.range_field == range_field), None)
        if draw is None:
            names = ", ".join(d.range_field for d in DRAWS)
            raise ValueError(f"domain_rand.{range_field} cannot change during a run; the drawn ranges are: {names}")
        if not self.enabled[draw.key]:
            raise ValueError(f"domain_rand.{range_field} changes a draw that is switched off; "
                             f"set domain_rand.{draw.switch} = true")
        if check_only:
            return
        self._drawn = [(col, replace(c, bounds=list(bounds)) if c.key == draw.key else c) for col, c in self._drawn]
        self._set_draw_bounds()

    def _expand_fields(self, sim: PhysicsBackend) -> dict[str, torch.Tensor]:
        """Per-env views of the model fields that are randomised; only those (expanding costs memory per env)."""
        on = lambda switch: bool(getattr(self.cfg, switch, False))  # noqa: E731
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
        return {field: sim.expand(field) for name, needed in wanted.items() if needed
                for field in [name] + companions.get(name, [])}

    @property
    def num_privileged(self) -> int:
        return self.table.shape[1]

    def privileged_names(self) -> list[str]:
        """Names of the privileged observation's columns, in order."""
        names = []
        for d in DRAWS:
            names += [d.key] if d.width == 1 else [f"{d.key}_{k}" for k in "xyz"[: d.width]]
        return names + [f"link_mass_scale_{i}" for i in range(1, self.num_links + 1)] + ["latency_steps"]

    def privileged_obs(self) -> torch.Tensor:
        """(N, num_privileged) drawn parameters in `privileged_names` order."""
        return self.table.clone()

    def randomize(self, env_ids: torch.Tensor) -> None:
        """Draw new parameters for env_ids and write them into their simulations."""
        if len(self._draw_cols):
            u = torch.rand(len(env_ids), len(self._draw_cols), device=self.device)
            values = self._draw_low + self._draw_span * u
            values = torch.where(self._draw_log, values.exp(), values)
            values = torch.where(self._draw_int, torch.minimum(values.floor(), self._draw_top), values)
            values = torch.maximum(values, self._draw_floor)
            self.table[env_ids.to(self.device).unsqueeze(1), self._draw_cols] = values
        self.apply(env_ids)

    def apply(self, env_ids: torch.Tensor) -> None:
        """Write the parameters in `params` of env_ids into their simulations' model fields, and commit them."""
        f, nom, on = self.fields, self.nominal, self.enabled
        ids = env_ids.to(self.sim_device)
        drawn = self.table[env_ids.to(self.device)].to(self.sim_device, self.sim_dtype)
        col = {key: drawn[:, cols] for key, cols in self._columns.items()}
        # Fields are written only where they differ from nominal; the rest of each expanded field keeps the
        # model's value, which nothing else writes.
        if "geom_friction" in f:
            # Every geom of the env gets the same coefficient, so the contact's
            # (max-combined) friction is exactly the drawn value.
            f["geom_friction"][ids, :, 0] = col["friction"]
        # Same contact parameters on every geom, so that the mixed contact gets exactly these.
        if on["contact_timeconst"]:
            f["geom_solref"][ids, :, 0] = col["contact_timeconst"]
        if on["restitution"]:
            f["geom_solref"][ids, :, 1] = restitution_to_dampratio(col["restitution"])
        if "geom_solimp" in f:
            dmin = col["contact_dmin"]
            f["geom_solimp"][ids, :, 0] = dmin
            # dmax >= dmin: impedance rises with depth
            f["geom_solimp"][ids, :, 1] = torch.maximum(nom["geom_solimp"][:, 1], dmin)
        if "body_mass" in f:
            self._apply_masses(ids, col)
        if "actuator_gainprm" in f:
            strength = col["motor_strength"]
            kp = nom["actuator_gainprm"][:, 0] * strength * col["kp_scale"]
            kd = -nom["actuator_biasprm"][:, 2] * strength * col["kd_scale"]
            f["actuator_gainprm"][ids, :, 0] = kp
            f["actuator_biasprm"][ids, :, 1] = -kp
            f["actuator_biasprm"][ids, :, 2] = -kd
            f["actuator_forcerange"][ids] = nom["actuator_forcerange"] * strength.unsqueeze(-1)
        for field, key in [("dof_frictionloss", "joint_friction_scale"), ("dof_damping", "joint_damping_scale"),
                           ("dof_armature", "armature_scale")]:
            if field in f:
                # free-joint dofs have none of these (0 stays 0): the scale reaches the robot's joints
                f[field][ids] = nom[field] * col[key]
        if self.needs_set_const:
            self.sim.commit_model_changes(ids)

    def _apply_masses(self, ids: torch.Tensor, col: dict[str, torch.Tensor]) -> None:
        f, nom, base = self.fields, self.nominal, self.base_body_id
        scale = torch.ones(len(ids), nom["body_mass"].shape[0], dtype=self.sim_dtype, device=self.sim_device)
        scale[:, self.link_ids] = col["link_mass_scale"]
        mass = nom["body_mass"] * scale
        # a payload at the base's COM adds its mass and, as a point mass there, no inertia about it
        mass[:, base] += col["payload"][:, 0]
        f["body_mass"][ids] = mass
        f["body_inertia"][ids] = nom["body_inertia"] * scale.unsqueeze(-1)
        f["body_ipos"][ids, base] = nom["body_ipos"][base] + col["com"]
