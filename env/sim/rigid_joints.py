"""Held joints made rigid: ``control.held_joints_rigid`` removes them from the training scene.

A humanoid's waist and arms, held at their default angles by stiff PD, still cost the
physics their degrees of freedom: the G1's 17 held joints double its velocity vector (35
against 18) and about double the time of a physics step. Made rigid, each held joint's
child body is fixed to its parent at the joint's default angle (the pose the PD holds),
so the robot keeps every link, mass, inertia and collision geom in the same place, and
only the held joints' small motion under the PD is lost. Unitree's own G1 locomotion
training uses such a legs-only model. The export keeps the robot as built (the held joints
under PD, ``model/export.py``), so that ``deploy.sim2sim`` checks the policy on the robot
with its joints, not on the model it trained on.
"""

from __future__ import annotations

import mujoco
import numpy as np

__all__ = ["make_joints_rigid"]


def make_joints_rigid(spec: mujoco.MjSpec, compiled: mujoco.MjModel, angles: dict[str, float]) -> None:
    """Delete the hinge joints named in ``angles`` from ``spec``, each child body fixed at that angle (rad).

    ``compiled`` is ``spec`` compiled as it is: its body frames are read from there, whatever
    form (quat, euler, axis-angle) the file gave them in.
    """
    by_name = {j.name: j for j in spec.joints}
    for name, angle in angles.items():
        joint = by_name[name]
        body = joint.parent
        b = mujoco.mj_name2id(compiled, mujoco.mjtObj.mjOBJ_BODY, body.name)
        j = mujoco.mj_name2id(compiled, mujoco.mjtObj.mjOBJ_JOINT, name)
        if compiled.jnt_type[j] != mujoco.mjtJoint.mjJNT_HINGE:
            raise ValueError(f"cannot make {name} rigid: only hinge joints can be")
        if compiled.body_jntnum[b] != 1:
            raise ValueError(f"cannot make {name} rigid: its body {body.name} has {compiled.body_jntnum[b]} joints, "
                             "and a held joint made rigid must be its body's only joint")
        turn = np.zeros(4)
        mujoco.mju_axisAngle2Quat(turn, compiled.jnt_axis[j], float(angle))  # about the joint axis, body frame
        quat, body_rot, turn_rot = np.zeros(4), np.zeros(9), np.zeros(9)
        mujoco.mju_mulQuat(quat, compiled.body_quat[b], turn)
        mujoco.mju_quat2Mat(body_rot, compiled.body_quat[b])
        mujoco.mju_quat2Mat(turn_rot, turn)
        anchor = compiled.jnt_pos[j]  # the turn is about the joint's anchor, not the body origin
        body.pos = compiled.body_pos[b] + body_rot.reshape(3, 3) @ (anchor - turn_rot.reshape(3, 3) @ anchor)
        body.quat = quat
        body.alt.type = mujoco.mjtOrientation.mjORIENTATION_QUAT  # the quat above, not the file's euler
        spec.delete(joint)
