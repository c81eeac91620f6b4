"""Qmini: Unitree's small open-hardware biped (10 joints), velocity tracking on flat ground."""

from config.base import Base, RobustDomainRand


class qmini(Base):
    class env(Base.env):
        episode_length_s = 10.0  # s, episode timeout
        history_length = 3  # policy observation frames stacked, as in the reference setup

    class sim(Base.sim):
        dt = 0.0075  # s, physics step: 0.77x the physics cost of 0.005 x 3 per policy step, as stable (benchmarks/physics_cost.py)
        iterations = 4  # Newton iterations; 1 is often enough, 4 keeps contacts crisp for a biped
        ls_iterations = 6  # line-search iterations per solver iteration

    class control(Base.control):
        decimation = 2  # physics steps per policy step: 66.7 Hz like the reference (0.001 s x 15)
        action_scale = 0.25  # rad of joint target per unit action
        stiffness = {"hip_yaw": 55.0, "hip_roll": 105.0, "hip_pitch": 75.0, "knee": 45.0, "ankle": 30.0}  # N*m/rad
        damping = {"hip_yaw": 1.5, "hip_roll": 3.0, "hip_pitch": 2.0, "knee": 1.5, "ankle": 1.0}  # N*m*s/rad
        torque_limits = {"hip_yaw": 20.0, "hip_roll": 60.0, "hip_pitch": 20.0, "knee": 20.0, "ankle": 20.0}  # N*m (sheet)

    class asset(Base.asset):
        file = "assets/qmini/qmini.xml"  # robot MJCF, relative to the project root
        base_body = "base_link"  # body whose pose is the robot's base
        foot_bodies = ["ankle_pitch_l", "ankle_pitch_r"]  # the ankle links carry the soles
        termination_bodies = ["base_link", "knee_pitch_l", "knee_pitch_r"]  # torso or shank on the ground: fallen
        penalized_bodies = ["knee_pitch_l", "knee_pitch_r"]  # shank contact is penalised
        stands_passively = False  # bool, on its rocker soles the PD alone tips forward (~0.8 s); balance is learned
        terminate_tilt = 0.8  # rad, base tilt from upright that ends an episode
        terminate_height = 0.25  # m, base height below which an episode ends

    class init_state(Base.init_state):
        pos = [0.0, 0.0, 0.45]  # m, base spawn position (sole ~0.434 m below base_link)
        default_joint_angles = {  # rad, standing pose from the facts sheet
            "hip_yaw_l": 0.4, "hip_roll_l": -0.1, "hip_pitch_l": -1.5, "knee_pitch_l": 1.0, "ankle_pitch_l": -1.3,
            "hip_yaw_r": -0.4, "hip_roll_r": 0.1, "hip_pitch_r": 1.5, "knee_pitch_r": -1.0, "ankle_pitch_r": 1.3,
        }
        joint_pos_noise = 0.05  # rad, uniform +- noise on the spawn joint positions
        base_vel_noise = 0.1  # m/s (and rad/s), uniform +- noise on the spawn base velocity

    class commands(Base.commands):
        zero_threshold = 0.15  # m/s or rad/s, commands below this are set to 0 (reference)
        lin_vel_x = [-0.3, 0.7]  # m/s, forward velocity command range
        lin_vel_y = [0.0, 0.0]  # m/s, lateral velocity command range (none for Qmini)
        ang_vel_yaw = [-1.0, 1.0]  # rad/s, yaw-rate command range
        gait_phase = True  # bool, a stepping clock in the observation and the gait_contact reward (bipeds need it)
        gait_frequency = [1.5, 2.5]  # Hz, commanded stepping frequency range (reference: 0.5-3.5, learned)
        gait_stance_ratio = 0.55  # fraction of a cycle each foot is down: a short double-support phase

    class rewards(Base.rewards):
        base_height_target = 0.42  # m, settled standing height of base_link
        feet_air_time_target = 0.3  # s, swing duration rewarded by feet_air_time
        tracking_sigma = 0.1  # (m/s)^2, tighter than a quadruped's: Qmini is slow
        tracking_sigma_yaw = 0.3  # (rad/s)^2, wider: yaw commands reach 1 rad/s and the base yaws with each step

        class scales(Base.rewards.scales):
            tracking_lin_vel = 1.5  # per s
            tracking_ang_vel = 2.0  # per s: at 1.0 yaw was learned last (eval 0.415 rad/s after 40 min, 0.275 at 2.0)
            orientation = -2.0  # per s
            base_height = -10.0  # per m^2 s
            collision = -1.0  # per contact s
            termination = -5.0  # per termination
            feet_air_time = 0.0  # per s of air time (the gait schedule sets the swing instead)
            gait_contact = 1.0  # per s, fraction of feet whose contact matches the gait schedule
            foot_slip = -0.1  # per (m/s)^2 s, soles sliding on the ground
            alive = 0.5  # per s

    class domain_rand(RobustDomainRand):
        friction_range = [0.6, 1.2]  # friction coefficient, uniform range
        com_offset_range = [-0.01, 0.01]  # m, per axis: Qmini's soles are 2.7 cm wide, +-2 cm tips it over
        push_interval_s = 8.0  # s, time between pushes
        max_push_vel_xy = 0.3  # m/s, largest horizontal velocity kick

    class runner(Base.runner):
        num_steps_per_env = 24  # policy steps collected per env per iteration
        max_iterations = 3000  # PPO iterations of a run

    class algorithm(Base.algorithm):
        num_learning_epochs = 3  # passes over each rollout (reference), cheaper than 5 on a CPU
        gamma = 0.995  # discount per policy step (reference)
        entropy_coef = 0.001  # weight of the entropy bonus

        class symmetry(Base.algorithm.symmetry):
            # ahead at equal wall-clock in a side-by-side trial despite a dearer update
            # (benchmarks/results/trials/qmini_symmetry: lin 0.227 vs 0.255 m/s after 15 min on one core)
            use_data_augmentation = True  # bool, add every sample's mirror image to the PPO minibatches
            use_mirror_loss = True  # bool, penalise actor(mirror(obs)) != mirror(actor(obs))

    class policy(Base.policy):
        actor_hidden_dims = [256, 128, 64]  # units per hidden layer of the actor MLP
        critic_hidden_dims = [256, 128, 64]  # units per hidden layer of the critic MLP
        init_noise_std = 0.8  # initial action std (reference)
