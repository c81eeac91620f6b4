"""Go2 on rough terrain: slopes, stairs, obstacles and rough ground, with a terrain curriculum.

A blind policy by default (proprioception only, as go2); the critic sees a height scan
around the base. ``--set terrain.policy_height_scan=true`` trains a perceptive policy.
"""

from config.go2 import go2


class go2_rough(go2):
    # Flat Go2's 0.01 s x 2 physics step (1.9x the iterations per minute of 0.005 s x 4 on this terrain,
    # benchmarks/results/trials/go2_rough_warm_dt01); its stages are not trained on terrain.
    class sim(go2.sim):
        dt = 0.01  # s, physics step

    class control(go2.control):
        decimation = 2  # physics steps per policy step: 50 Hz at dt 0.01

    class runner(go2.runner):
        stages = []  # no training stages (flat Go2's fall penalty and damping stages are untried here)

    class terrain(go2.terrain):
        mesh_type = "heightfield"  # the tile grid of env/terrain
        # Feet catch on MuJoCo's height-field cells (README "Height field contacts and terrain boxes"): the tiles
        # made of flat faces or planar slopes are solids instead, whose risers are vertical whatever the cell size,
        # and the bumpy types keep 0.1 m cells (until stop 40 the whole grid was height field on 2.5 cm cells).
        box_tiles = ["slope_up", "slope_down", "stairs_up", "stairs_down", "obstacles"]
        horizontal_scale = 0.1  # m, grid cell size
        rough_cell = 0.1  # m, side of one random bump
        num_cols = 7  # one column per type: envs are shared by terrain_proportions, and each column costs solids
        step_width = 0.3  # m, stair tread depth (a multiple of the cell size)
        # Tiles meet at height 0: with the platforms at 0, a stairs tile's edge was a cliff (0.4 m at level 0), and
        # robots that walked off it fell (26% of the flat policy's episodes on the level-0 tiles of this grid).
        flush_edges = True  # bool, slope and stairs tiles shifted so that their outer edge is at 0
        terrain_proportions = {"random_rough": 0.1, "slope_up": 0.05, "slope_down": 0.05, "rough_slope": 0.1,
                               "stairs_up": 0.25, "stairs_down": 0.25, "obstacles": 0.2}  # fraction of columns per type
        rough_amplitude = [0.02, 0.1]  # m, peak-to-peak bumps at difficulty 0 and at the top
        slope_range = [0.0, 0.4]  # rise over run at difficulty 0 and at the top
        step_height_range = [0.05, 0.23]  # m, stair step height at difficulty 0 and at the top
        obstacle_height_range = [0.05, 0.25]  # m, obstacle height at difficulty 0 and at the top
        curriculum = True  # bool, levels follow the distance walked
        max_init_level = 5  # highest starting level
        measure_heights = True  # bool, height scan in the critic observation
        policy_height_scan = False  # bool, blind policy (true: perceptive)

    class commands(go2.commands):
        heading_command = True  # bool, walk straight towards a drawn heading: the curriculum measures distance
        # A trot clock in the observation (sin, cos, frequency; a warm start from a clock-less policy gives it zero
        # weights). Without it every traced stair failure was a robot standing at a riser under a 0.5 m/s command,
        # a fixed point of the loop; with it the same stage climbs 10 cm stairs in 128 of 128 episodes, not 89
        # (docs/rough_terrain_trials.md, "Stop 57"). The range is centred on the 1.46 Hz the clock-less policy stepped at.
        gait_phase = True  # bool, phase clock in the observation and the gait_contact reward
        gait_frequency = [1.25, 1.75]  # Hz, drawn with each command

    class asset(go2.asset):
        # the shanks too: a shin against a stair edge is what lifting the feet higher avoids
        penalized_bodies = ["FL_thigh", "FR_thigh", "RL_thigh", "RR_thigh", "FL_calf_upper", "FR_calf_upper",
                            "RL_calf_upper", "RR_calf_upper", "FL_calf_lower", "FR_calf_lower", "RL_calf_lower",
                            "RR_calf_lower"]  # contact is penalised (collision)

    class rewards(go2.rewards):
        # The flat policy swings its feet low (foot centre 3.7 cm up at the median swing, 1.5 cm of sole clearance,
        # on level-0 terrain), which stops it at a 5 cm riser: feet_clearance asks for 10 cm at the foot centre.
        foot_clearance_target = 0.1  # m, swing height of the foot centre above the ground under it
        # The kernel flat Go2 ends its training with (its stages) and the warm start's source was last trained at:
        # with the shared 0.25 a robot standing at a riser under a 0.5 m/s command keeps 37% of the tracking
        # reward, at 0.1 8%. From the start it took the level from 1.85 to 3.18 and stairs 10 cm up from 0/32 to
        # 26/32 in the same 66 minutes (docs/rough_terrain_trials.md, "The linear tracking kernel 0.1 from the
        # start").
        tracking_sigma = 0.1  # (m/s)^2

        class scales(go2.rewards.scales):
            base_height = -1.0  # per m^2 s, weaker than flat: over stairs and bumps the height above the ground varies
            # per m^3/s s: at -20 the swing height rose from 4.2 to 5.7 cm in 85 minutes (trials/go2_rough_fine);
            # the high-stepping source (10.6 cm) and the box-terrain trial were trained at -100
            feet_clearance = -100.0
            stumble = -0.5  # per foot s, a foot pushed sideways by a riser or an obstacle's side
            gait_contact = 0.5  # per s, fraction of feet whose contact matches the clock
