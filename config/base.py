"""Base configuration shared by every robot.

A config is a class whose nested classes are sections and whose class attributes
are fields. Robots subclass `Base` and override sections by subclassing them,
e.g. ``class rewards(Base.rewards): ...``. `config.load_config` turns the class
into a plain `utils.yaml.Cfg` tree, which is what the rest of the code reads and
what is written to ``experiments/<name>/model/cfg.yaml``.

Every field carries a one-line comment with its unit.
"""


class Base:
    class env:
        num_envs = 1024  # number of robots simulated in parallel
        episode_length_s = 20.0  # s, episode timeout
        task = "locomotion"  # task registered in env/tasks (load_task_cls)
        history_length = 1  # policy observation frames stacked (1 = no history)
        send_timeouts = True  # bool, report timeouts separately so PPO bootstraps them

    class runner:
        num_steps_per_env = 24  # policy steps collected per env per iteration
        max_iterations = 1500  # PPO iterations of a run
        save_interval = 50  # iterations between copies in model/all/
        seed = 1  # RNG seed for torch, numpy and the env
        device = "cpu"  # torch device for the policy and the env tensors
        log_interval = 1  # iterations between console lines
        random_episode_start = True  # bool, start training with each env's episode clock at a random point (spreads timeouts, pushes)
        max_skipped_updates = 3  # updates in a row skipped for NaN/inf (obs, actions, rewards, losses) before training stops
        precision = "auto"  # "fp32", "bf16" (autocast of the PPO update's network passes) or "auto" (bf16 where native)
        logger = "tensorboard"  # "tensorboard" (events in log/) or "wandb" (Weights & Biases too; pip install -e ".[wandb]")
        wandb_project = "legged-ppo"  # W&B project the run is logged to (logger "wandb")
        wandb_entity = None  # W&B user or team that owns the project; None = your default entity
        # settings that change during the run, e.g. [{"from_iteration": 500, "set": {"rewards.scales.termination": -5.0}}]:
        # reward scales and randomisation ranges only (config/stages.py)
        stages = []

    class algorithm:
        value_loss_coef = 1.0  # weight of the value loss
        use_clipped_value_loss = True  # bool, clip the value update like the policy
        clip_param = 0.2  # PPO ratio clip epsilon
        entropy_coef = 0.005  # weight of the entropy bonus
        num_learning_epochs = 5  # passes over each rollout
        num_mini_batches = 4  # minibatches per epoch
        learning_rate = 1.0e-3  # Adam step size (start value if adaptive)
        schedule = "adaptive"  # "adaptive" (follow desired_kl) or "fixed"
        gamma = 0.99  # discount per policy step
        lam = 0.95  # GAE lambda
        desired_kl = 0.01  # target KL per update for the adaptive schedule
        critic_warmup_iterations = 0  # first iterations of a run that train the critic only: a warm-started actor
        # is not moved by advantages from a critic that has not yet learnt the new task (0: off)
        max_grad_norm = 1.0  # gradient-norm clip
        min_lr = 1.0e-5  # lower bound of the adaptive learning rate
        max_lr = 1.0e-2  # upper bound of the adaptive learning rate

        class symmetry:  # left-right mirror of the robot and task (rl/symmetry.py; rsl_rl's symmetry_cfg)
            use_data_augmentation = False  # bool, add the mirror image of every sample to each minibatch
            use_mirror_loss = False  # bool, train the actor's mean to mirror: actor(mirror(obs)) = mirror(actor(obs))
            mirror_loss_coef = 0.1  # weight of the mirror loss (MSE of action means, action units^2)

    class policy:
        actor_hidden_dims = [512, 256, 128]  # units per hidden layer of the actor MLP
        critic_hidden_dims = [512, 256, 128]  # units per hidden layer of the critic MLP
        activation = "elu"  # elu, relu, tanh, leaky_relu, selu, gelu or silu
        init_noise_std = 1.0  # initial action std, in action units
        min_std = 0.01  # lower bound of the action std, in action units
        max_std = 2.0  # upper bound of the action std, in action units
        normalize_observations = True  # bool, empirical obs normalisation for actor and critic

    class sim:
        backend = "mujoco"  # physics backend registered in env/sim ("mujoco", "warp")
        dt = 0.005  # s, physics step
        nthread = 0  # CPU threads for the mujoco backend (0 = all available cores)
        nconmax = 0  # contacts allocated per env by the warp backend (0 = sized from the robot's collision geoms)
        njmax = 0  # constraint rows allocated per env by the warp backend (0 = sized from nconmax and the joints)
        integrator = "implicitfast"  # "implicitfast" (PD damping implicit: stable at dt 0.005), "implicit", "euler" or "rk4"
        cone = "pyramidal"  # friction cone: "pyramidal" (fast) or "elliptic"
        impratio = 1.0  # frictional-to-normal constraint impedance ratio (MuJoCo's default); > 1 makes friction
        # harder (less creep under the slip limit) without raising the friction coefficient: an elliptic-cone setting
        solver = "newton"  # constraint solver: "newton", "cg" or "pgs"
        iterations = 1  # constraint solver iterations per step
        ls_iterations = 5  # line-search iterations per solver iteration
        gravity = [0.0, 0.0, -9.81]  # m/s^2

    class control:
        decimation = 4  # physics steps per policy step
        action_scale = 0.25  # rad of joint target per unit action
        clip_actions = 100.0  # raw actions are clipped to +-this before scaling
        stiffness = {}  # N*m/rad, PD kp by joint-name substring (every controlled joint needs one)
        damping = {}  # N*m*s/rad, PD kd by joint-name substring (every controlled joint needs one)
        torque_limits = {}  # N*m by joint-name substring; unmatched joints use the file's (URDF effort)
        held_joints = []  # joints the policy does not drive (a humanoid's waist and arms): their PD holds them at
        # init_state.default_joint_angles; the policy's actions, joint observations and joint rewards are the others'
        held_joints_rigid = False  # bool, train with the held joints rigid at their default angles (no joint, no
        # actuator): about half the physics per step for the G1; the export keeps them as joints under PD (the robot)

    class asset:
        file = ""  # robot description, URDF (.urdf) or MJCF (.xml), relative to the project root
        base_body = "base_link"  # root link that floats (gets a free joint if it has none); its pose is the base pose
        foot_bodies = []  # bodies that are the feet, in reward order (touch and velocity sensors added); or collision geoms
        termination_bodies = []  # bodies whose ground contact ends an episode
        penalized_bodies = []  # bodies whose ground contact is penalised (collision reward)
        contact_threshold = 1.0  # N, force above which a body's touch sensor counts as contact
        terminate_tilt = 1.0  # rad, base tilt from upright that ends an episode
        terminate_height = 0.0  # m, base height below which an episode ends (0 = off)
        self_collisions = False  # bool, robot links collide with each other (parent-child pairs never do)
        collision_primitives = {}  # {body-name substring: sphere|capsule|box|cylinder|ellipsoid}, mesh collision -> fitted primitive
        joint_armature = {}  # kg*m^2 by joint-name substring, reflected rotor inertia (overrides the file; URDFs have none)
        joint_damping = {}  # N*m*s/rad by joint-name substring, passive damping (overrides the file)
        joint_friction = {}  # N*m by joint-name substring, friction loss (overrides the file)
        stands_passively = True  # bool, env.check_robot requires a free-standing PD stand (False: bipeds, balance is learned)
        mirror_joints = {}  # {joint: twin} or {joint: "-twin"} (opposite angles), left-right twins not derivable (env/robot_mirror.py)

    class init_state:
        pos = [0.0, 0.0, 0.5]  # m, base spawn position
        rot = [1.0, 0.0, 0.0, 0.0]  # base spawn quaternion (w, x, y, z)
        lin_vel = [0.0, 0.0, 0.0]  # m/s, base spawn linear velocity (world frame)
        ang_vel = [0.0, 0.0, 0.0]  # rad/s, base spawn angular velocity (world frame)
        default_joint_angles = {}  # rad, default pose by joint name (the action origin)
        joint_pos_noise = 0.1  # rad, uniform +- noise on the spawn joint positions
        joint_vel_noise = 0.0  # rad/s, uniform +- noise on the spawn joint velocities
        base_vel_noise = 0.2  # m/s (and rad/s), uniform +- noise on the spawn base velocity
        yaw_noise = 3.14159  # rad, uniform +- random spawn heading

    class commands:
        resampling_time = 10.0  # s, time between command resamples
        zero_threshold = 0.2  # m/s or rad/s, command norms below this are set to 0
        lin_vel_x = [-1.0, 1.0]  # m/s, forward velocity command range
        lin_vel_y = [-1.0, 1.0]  # m/s, lateral velocity command range
        ang_vel_yaw = [-1.0, 1.0]  # rad/s, yaw-rate command range
        curriculum = False  # bool, start with narrowed ranges and widen them as tracking improves
        curriculum_initial_level = 0.3  # fraction of each range used at the start
        curriculum_step = 0.1  # fraction added per promotion
        curriculum_threshold = 0.75  # mean per-step linear tracking kernel (0..1) of finished episodes that promotes
        heading_command = False  # bool, draw a heading instead of a yaw rate; the yaw-rate command steers towards it
        heading = [-3.14159, 3.14159]  # rad, world-frame heading command range (heading_command)
        heading_gain = 0.5  # 1/s, yaw-rate command per rad of heading error, clipped to ang_vel_yaw (heading_command)
        heading_fraction = 1.0  # fraction of drawn commands that steer to a heading (heading_command); the others
        # keep their random yaw rate, so that turning on the spot is practised too
        gait_phase = False  # bool, periodic contact schedule: phase clock in the observation + gait_contact reward
        gait_frequency = [1.5, 2.0]  # Hz, commanded stepping frequency range (drawn with each command)
        gait_stance_ratio = 0.55  # fraction of a gait cycle each foot should be on the ground

    class rewards:
        tracking_sigma = 0.25  # (m/s)^2, width of the exp linear-velocity tracking kernel
        tracking_sigma_yaw = None  # (rad/s)^2, width of the yaw-rate tracking kernel; None = tracking_sigma
        tracking_sigma_wide = 1.0  # (m/s)^2, width of the wide linear kernel (tracking_lin_vel_wide): pays for push recovery
        base_height_target = 0.5  # m, base height the base_height term aims for
        soft_dof_pos_limit = 0.9  # fraction of the joint range beyond which the limit term penalises
        feet_air_time_target = 0.5  # s, swing duration rewarded by feet_air_time
        foot_clearance_target = 0.1  # m, swing height of the foot contact site's centre above the ground (feet_clearance)
        joint_deviation_weights = {}  # weight by joint-name substring of the squared offset from the default pose
        # (joint_deviation), e.g. {"hip_roll": 1.0, "hip_yaw": 1.0}: a humanoid's legs that splay or twist
        only_positive_rewards = True  # bool, clip the summed reward of a step at 0

        class scales:
            tracking_lin_vel = 1.0  # per s, exp-kernel tracking of commanded vx, vy
            tracking_lin_vel_wide = 0.0  # per s, the same tracking with the wide kernel tracking_sigma_wide
            tracking_ang_vel = 0.5  # per s, exp-kernel tracking of commanded yaw rate
            lin_vel_z = -2.0  # per (m/s)^2 s, vertical base velocity
            ang_vel_xy = -0.05  # per (rad/s)^2 s, roll and pitch rates
            orientation = -1.0  # per s, squared horizontal part of projected gravity
            base_height = 0.0  # per m^2 s, squared distance to base_height_target
            torques = -1.0e-5  # per (N*m)^2 s, squared actuator torques
            dof_vel = 0.0  # per (rad/s)^2 s, squared joint velocities
            dof_acc = -2.5e-7  # per (rad/s^2)^2 s, squared joint accelerations
            action_rate = -0.01  # per s, squared change of the action
            collision = -1.0  # per contact s, contacts on asset.penalized_bodies
            termination = 0.0  # per termination, non-timeout episode end
            dof_pos_limits = -10.0  # per rad s, joint positions beyond the soft limits
            feet_air_time = 1.0  # per s of air time, swings longer than feet_air_time_target
            foot_slip = 0.0  # per (m/s)^2 s, squared horizontal velocity of feet in contact
            feet_clearance = 0.0  # per m^3/s s, squared shortfall below foot_clearance_target x foot speed
            feet_swing_height = 0.0  # per m^2 s, squared shortfall below foot_clearance_target of the feet the gait has in swing
            stumble = 0.0  # per foot s, feet whose contact force is mostly horizontal (against a riser)
            gait_contact = 0.0  # per s, fraction of feet whose contact matches the gait schedule
            stand_still = 0.0  # per rad s, joint offset from default at zero command
            joint_deviation = 0.0  # per rad^2 s, weighted squared offset from the default pose (joint_deviation_weights)
            alive = 0.0  # per s, constant while the episode runs

    class domain_rand:
        # Each randomisation is re-drawn per env on every reset; the drawn values
        # are part of the critic's privileged observation.
        randomize_friction = True  # bool, per-env ground (and robot geom) friction
        friction_range = [0.5, 1.25]  # friction coefficient, uniform range
        randomize_restitution = False  # bool, per-env contact bounciness
        restitution_range = [0.0, 0.4]  # coefficient of restitution, uniform range
        randomize_link_mass = False  # bool, scale every link's mass (and inertia)
        link_mass_range = [0.9, 1.1]  # mass scale factor per link, uniform range
        randomize_base_mass = False  # bool, per-env payload added to the base
        added_mass_range = [-1.0, 1.0]  # kg, uniform range of the payload
        randomize_com = False  # bool, shift the base's centre of mass
        com_offset_range = [-0.03, 0.03]  # m, uniform range per axis (x, y, z)
        randomize_motor_strength = False  # bool, scale every motor's torque (gains and limits)
        motor_strength_range = [0.9, 1.1]  # torque scale factor, uniform range
        randomize_gains = False  # bool, scale PD gains
        kp_range = [0.9, 1.1]  # stiffness scale factor, uniform range
        kd_range = [0.9, 1.1]  # damping scale factor, uniform range
        randomize_joint_friction = False  # bool, scale joint friction loss
        joint_friction_range = [0.0, 2.0]  # friction-loss scale factor, uniform range
        randomize_joint_damping = False  # bool, scale passive joint damping
        joint_damping_range = [0.1, 10.0]  # damping scale factor, log-uniform range (real damping is known to a decade)
        randomize_armature = False  # bool, scale joint armature (reflected rotor inertia)
        armature_range = [0.0, 2.0]  # armature scale factor, uniform range
        randomize_contact_softness = False  # bool, per-env contact stiffness of ground and feet (solref, solimp)
        contact_timeconst_range = [0.01, 0.04]  # s, solref time constant, uniform (MuJoCo keeps it >= 2 dt)
        contact_dmin_range = [0.8, 0.95]  # solimp dmin (impedance at zero penetration), uniform; dmax >= dmin
        push_robots = True  # bool, random velocity impulses on the base
        push_interval_s = 15.0  # s, time between pushes
        push_random_phase = False  # bool, each episode's pushes shifted by a random phase of push_interval_s
        max_push_vel_xy = 1.0  # m/s, largest change of the base's horizontal velocity per axis
        max_action_latency = 0  # policy steps; each env applies its actions 0..this many steps late

    class noise:
        add_noise = True  # bool, add uniform noise to the policy observation
        noise_level = 1.0  # scales every noise term below

        class noise_scales:
            lin_vel = 0.1  # m/s
            ang_vel = 0.2  # rad/s
            gravity = 0.05  # unit vector components
            dof_pos = 0.01  # rad
            dof_vel = 1.5  # rad/s
            height_measurements = 0.1  # m, on the policy's height scan (terrain.policy_height_scan)
            height_drift = 0.0  # m, each episode the policy's height map reads the ground up to this much higher or
            # lower (one uniform draw per episode, every scan point alike): a map drifted against the base's height

    class normalization:
        clip_observations = 100.0  # observations are clipped to +-this after scaling

        class obs_scales:
            lin_vel = 2.0  # per m/s
            ang_vel = 0.25  # per rad/s
            dof_pos = 1.0  # per rad
            dof_vel = 0.05  # per rad/s
            height = 5.0  # per m
            height_measurements = 5.0  # per m, height scan (base height above each point minus base_height_target)

    class terrain:
        mesh_type = "plane"  # "plane" (flat floor) or "heightfield" (tile grid of env/terrain, one MuJoCo hfield)
        static_friction = 1.0  # friction coefficient of the ground before randomisation
        restitution = 0.0  # ground restitution before randomisation
        # --- heightfield only (env/terrain): a grid of tiles, rows = difficulty levels, columns = terrain types
        seed = 1  # RNG seed of the terrain generator (same seed, same ground)
        horizontal_scale = 0.1  # m, grid cell size (x and y)
        vertical_scale = 0.005  # m, height resolution (heights are multiples of this)
        tile_size = 8.0  # m, side of one square tile
        border_size = 5.0  # m, flat ground around the tile grid
        num_rows = 10  # difficulty levels (tile rows along x; row r has difficulty r / num_rows)
        num_cols = 20  # tile columns along y, shared out among the types by terrain_proportions
        terrain_proportions = {"flat": 0.1, "random_rough": 0.1, "slope_up": 0.1, "slope_down": 0.1,
                               "rough_slope": 0.1, "stairs_up": 0.15, "stairs_down": 0.15, "obstacles": 0.1,
                               "stepping_stones": 0.1}  # fraction of columns per tile type (normalised)
        platform_size = 3.0  # m, flat square at each tile's centre where robots spawn
        flush_edges = False  # bool, slope and stairs tiles shifted so that their outer edge is at 0: no cliffs between tiles
        # tile types built from MuJoCo boxes instead of height-field cells (and then the flat border too), e.g.
        # ["flat", "stairs_up", "stairs_down"]: a foot on a height field meets its cells' sides (README "Height field
        # contacts"); a box is one solid with vertical risers. Each box costs physics time: flat-faced types only
        box_tiles = []
        rough_amplitude = [0.02, 0.1]  # m, peak-to-peak height of random bumps at difficulty 0 and at the top
        rough_step = 0.01  # m, bump heights are multiples of this
        rough_cell = 0.0  # m, side of one random bump (a multiple of horizontal_scale); 0 = one bump per grid vertex
        slope_range = [0.0, 0.4]  # rise over run of the slopes at difficulty 0 and at the top
        step_height_range = [0.05, 0.23]  # m, stair step height at difficulty 0 and at the top
        step_width = 0.31  # m, stair tread depth
        obstacle_height_range = [0.05, 0.25]  # m, discrete obstacle height at difficulty 0 and at the top
        obstacle_height_fractions = [-1.0, 1.0]  # each block's height is the level's times one of these, drawn
        # per block: [-1, 1] raises or sinks every block fully; legged_gym's [-1, -0.5, 0.5, 1] mixes half heights
        obstacle_size = [1.0, 2.0]  # m, side range of the rectangular obstacles
        num_obstacles = 20  # obstacles per tile
        stone_size_range = [1.5, 0.5]  # m, stepping-stone side at difficulty 0 and at the top
        stone_gap_range = [0.05, 0.3]  # m, gap between stepping stones at difficulty 0 and at the top
        pit_depth = 0.5  # m, depth of the gaps between stepping stones
        curriculum = True  # bool, promote/demote each env between levels by the distance it walked
        max_init_level = 5  # highest starting level (drawn from 0..this)
        demote_falls = False  # bool, an episode that ends in a fall goes down a level however far it walked
        # (legged_gym promotes by distance alone: a robot that rushes half a tile and falls goes up)
        measure_heights = False  # bool, height scan around the base in the critic observation (heightfield configs: true)
        policy_height_scan = False  # bool, also in the policy observation (a perceptive policy; needs a height map on the robot)
        scan_size = [1.6, 1.0]  # m, length (x, forward) and width (y) of the yaw-aligned scan grid, centred on the base
        scan_points = [17, 11]  # points of the scan grid along x and y

    class viewer:
        ref_env = 0  # env index the camera follows
        distance = 2.0  # m, camera distance from the tracked base
        elevation = -20.0  # deg, camera elevation
        azimuth = 135.0  # deg, camera azimuth


class RobustDomainRand(Base.domain_rand):
    """What real robots get wrong, all on: the randomisation of the walking configs (issue: sim-to-real).

    A robot config uses it as ``class domain_rand(RobustDomainRand): ...``. The ranges cover
    the perturbation suite of ``deploy.sim2sim --suite``.
    """

    randomize_friction = True  # bool, per-env ground and foot friction
    randomize_link_mass = True  # bool, scale every link's mass (and inertia)
    link_mass_range = [0.9, 1.1]  # mass scale factor per link, uniform range
    randomize_base_mass = True  # bool, per-env payload added to the base
    randomize_com = True  # bool, shift the base's centre of mass
    com_offset_range = [-0.02, 0.02]  # m, uniform range per axis (x, y, z)
    randomize_motor_strength = True  # bool, scale every motor's torque (gains and limits)
    motor_strength_range = [0.8, 1.1]  # torque scale factor, uniform range
    randomize_gains = True  # bool, scale PD gains
    kp_range = [0.85, 1.15]  # stiffness scale factor, uniform range
    kd_range = [0.7, 1.3]  # damping scale factor, uniform range
    randomize_joint_friction = True  # bool, scale joint friction loss
    randomize_joint_damping = True  # bool, scale passive joint damping
    randomize_armature = True  # bool, scale joint armature
    randomize_contact_softness = True  # bool, per-env contact stiffness of ground and feet
    max_action_latency = 2  # policy steps; each env applies its actions 0..this many steps late
    push_random_phase = True  # bool, pushes at any moment of the episode, also right after a command change
