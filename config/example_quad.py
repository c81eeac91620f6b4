"""example_quad: the README's "Adding a robot" walk-through, a small URDF quadruped.

A new robot starts from the closest existing config (here Go2: same leg layout, so the
same rewards, randomisation and PPO settings) and overrides what describes the robot.
`python -m env.check_robot --config example_quad` checks it before any training.
"""

from config.go2 import go2


class example_quad(go2):
    class sim(go2.sim):
        dt = 0.005  # s, physics step (Go2's 0.01 s x 2 is validated on Go2 only)

    class control(go2.control):
        decimation = 4  # physics steps per policy step: 50 Hz at dt 0.005
        action_scale = 0.25  # rad of joint target per unit action
        stiffness = {"joint": 20.0}  # N*m/rad, one key matching every joint ("hip", "thigh_joint" ... also work)
        damping = {"joint": 0.5}  # N*m*s/rad
        torque_limits = {}  # N*m; empty: each joint's URDF <limit effort> (8 N*m)

    class asset(go2.asset):
        file = "assets/example_quad/urdf/example_quad.urdf"  # URDF or MJCF, relative to the project root
        base_body = "trunk"  # the URDF's root link; a free joint is added to it
        foot_bodies = ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]  # links on fixed joints: kept as bodies
        termination_bodies = ["trunk"]  # trunk contact ends the episode
        penalized_bodies = ["FL_thigh", "FR_thigh", "RL_thigh", "RR_thigh"]  # thigh contact is penalised
        terminate_height = 0.08  # m, base height below which an episode ends
        joint_armature = {"joint": 0.005}  # kg*m^2, rotor inertia through the gearbox (URDFs have none)
        collision_primitives = {}  # e.g. {"trunk": "box"}: the trunk mesh's collision as a fitted box

    class init_state(go2.init_state):
        pos = [0.0, 0.0, 0.24]  # m, base spawn position (soles 1.3 cm above the floor at the default pose)
        default_joint_angles = {  # rad, standing pose: knees bent, feet under the hips
            "FL_hip_joint": 0.0, "FL_thigh_joint": 0.8, "FL_calf_joint": -1.6,
            "FR_hip_joint": 0.0, "FR_thigh_joint": 0.8, "FR_calf_joint": -1.6,
            "RL_hip_joint": 0.0, "RL_thigh_joint": 0.8, "RL_calf_joint": -1.6,
            "RR_hip_joint": 0.0, "RR_thigh_joint": 0.8, "RR_calf_joint": -1.6,
        }

    class commands(go2.commands):
        lin_vel_x = [-0.6, 0.6]  # m/s, forward velocity command range (a small robot: slower than Go2)
        lin_vel_y = [-0.3, 0.3]  # m/s, lateral velocity command range
        ang_vel_yaw = [-1.0, 1.0]  # rad/s, yaw-rate command range

    class rewards(go2.rewards):
        base_height_target = 0.2  # m, trunk height the base_height term aims for (standing under the PD)
        feet_air_time_target = 0.3  # s, swing duration rewarded by feet_air_time (shorter legs, quicker steps)

    class domain_rand(go2.domain_rand):
        added_mass_range = [-0.5, 0.5]  # kg, payload on the trunk (Go2's +-1 kg is a lot for 6 kg)
        max_push_vel_xy = 0.5  # m/s, largest horizontal push
