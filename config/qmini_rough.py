"""Qmini on rough ground: random bumps (0-4 cm on 0.1 m cells, graded in 2 mm steps so that every level
differs), blocks and holes with vertical sides, gentle slopes, with a terrain curriculum. A blind policy;
the critic sees a height scan."""

from config.qmini import qmini


class qmini_rough(qmini):
    # Trained in two stages (README "Rough terrain"): 15 minutes of flat Qmini stepping high on flat ground with
    # symmetry (benchmarks/results/trials/qmini_high_step_sym), then 80 minutes of this config warm-started from it.
    # The physics of that flat stage: with flat Qmini's newer 0.0075 s x 2 step and symmetry, the warm-started
    # policy traded linear tracking for yaw and the curriculum sank to level 0.06 in 28 minutes
    # (trials/qmini_rough_solid_sym). Left-right symmetry (augmentation and mirror loss) as flat Qmini's, from a
    # symmetric source: without one (trials/qmini_rough_sym, stop 68) it ran the curriculum higher but fell on 9.6%
    # of the 4 cm boxes; from one, with the commands and weights below, 4.1% (docs/rough_terrain_trials.md "Stop 71").
    class sim(qmini.sim):
        dt = 0.005  # s, physics step

    class control(qmini.control):
        decimation = 3  # physics steps per policy step: 66.7 Hz at dt 0.005

    class rewards(qmini.rewards):
        # Flat Qmini's swing foot is 2.2 cm up at the median (the ankle, about 2.5 cm above the sole, standing
        # 3 cm up): the 4 cm blocks of the course stop it. 7.5 cm at the ankle is 5 cm of sole clearance.
        foot_clearance_target = 0.075  # m, swing height of the foot body's origin above the ground under it

        class scales(qmini.rewards.scales):
            # Yaw weight 1.0 (flat Qmini's until stop 44) let the yaw error grow all run (0.59 -> 0.8 rad/s,
            # trials/qmini_rough_highstep); 2.0 in both stages held it near 0.5. With half the commands sustained
            # yaw rates, linear 1.5 lost the linear tracking and the ramp (trials/qmini_rough_symsrc_hf05); linear
            # 3.0 took it back (symsrc_hf05_lin3, yaw ratio 0.69) and yaw 3.0 with it gave 0.60 of the
            # zero-action policy's yaw error with the boxes kept (stop 71).
            tracking_lin_vel = 3.0  # per s
            tracking_ang_vel = 3.0  # per s
            feet_clearance = -100.0  # per m^3/s s, as go2_rough
            # The swinging foot's height, without its speed, is what lifted it over 4 cm boxes: feet_clearance
            # four times as heavy made Qmini slow its feet instead (trials/qmini_rough_clear400); -1000 after
            # the high-stepping flat stage kept a 6.6 cm swing (trials/qmini_rough_swing300: -300 alone, 2.8 cm).
            feet_swing_height = -1000.0  # per m^2 s, squared shortfall of the swinging ankle below the target

    class terrain(qmini.terrain):
        mesh_type = "heightfield"  # the tile grid of env/terrain
        tile_size = 4.0  # m, smaller tiles: Qmini walks at most 0.7 m/s, promotion needs half a tile per episode
        platform_size = 2.0  # m, flat spawn square at each tile's centre
        # Flat ground, slopes and blocks as solids (vertical block sides, exact planar slopes; README "Height field
        # contacts and terrain boxes"); the bumps stay height field. One column per type, envs shared by proportion:
        # each column of solids costs physics time (0.76x the steps/s of all height field, benchmarks/terrain_cost.py).
        box_tiles = ["flat", "slope_up", "slope_down", "obstacles"]
        num_cols = 5  # tile columns along y: one per type
        terrain_proportions = {"flat": 0.1, "random_rough": 0.3, "obstacles": 0.3, "slope_up": 0.15,
                               "slope_down": 0.15}  # fraction of envs per type
        rough_amplitude = [0.0, 0.045]  # m, peak-to-peak bumps: 0 at level 0, 4 cm (+-2) at the top (d 0.9; reference)
        rough_step = 0.002  # m, bump heights are multiples of 2 mm: each level's bumps are higher than the last's
        # (the reference's 1 cm steps left three bump sizes for ten levels: none at levels 0-4)
        obstacle_height_range = [0.01, 0.055]  # m, blocks (and holes) 1 cm high at level 0, 5 cm at the top (d 0.9)
        obstacle_size = [0.3, 0.8]  # m, block sides: about a Qmini stride to two
        num_obstacles = 25  # blocks per 4 m tile
        slope_range = [0.0, 0.2]  # rise over run: gentle slopes for a small biped, 0.18 at the top (d 0.9)
        curriculum = True  # bool, levels follow the distance walked
        max_init_level = 3  # highest starting level
        measure_heights = True  # bool, height scan in the critic observation
        scan_size = [1.0, 0.6]  # m, a smaller robot looks at a smaller patch
        scan_points = [11, 7]  # points of the scan grid along x and y
        policy_height_scan = False  # bool, blind policy

    class commands(qmini.commands):
        heading_command = True  # bool, walk straight towards a drawn heading: the curriculum measures distance
        heading_fraction = 0.5  # half the commands hold a random yaw rate for the episode: turning is trained on
        # the terrain too (all heading commands: yaw ratio 0.76 of zero action's; trials/qmini_rough_highstep_yaw2)
