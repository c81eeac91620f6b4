"""Qmini on rough ground: random bumps as in the reference training (0-4 cm on 0.1 m cells, here graded in
2 mm steps so that every level differs), then gentle slopes, with a terrain curriculum. A blind policy; the
critic sees a height scan."""

from config.qmini import qmini


class qmini_rough(qmini):
    # The physics, PPO and yaw weight its policy trained with; flat Qmini's 0.0075 s x 2 step,
    # symmetry and doubled yaw-tracking weight are not yet trained on terrain.
    class sim(qmini.sim):
        dt = 0.005  # s, physics step

    class control(qmini.control):
        decimation = 3  # physics steps per policy step: 66.7 Hz at dt 0.005

    class algorithm(qmini.algorithm):
        class symmetry(qmini.algorithm.symmetry):
            use_data_augmentation = False  # bool, add every sample's mirror image to the PPO minibatches
            use_mirror_loss = False  # bool, penalise actor(mirror(obs)) != mirror(actor(obs))

    class rewards(qmini.rewards):
        class scales(qmini.rewards.scales):
            tracking_ang_vel = 1.0  # per s

    class terrain(qmini.terrain):
        mesh_type = "heightfield"  # the tile grid of env/terrain
        tile_size = 4.0  # m, smaller tiles: Qmini walks at most 0.7 m/s, promotion needs half a tile per episode
        platform_size = 2.0  # m, flat spawn square at each tile's centre
        num_cols = 10  # tile columns along y
        terrain_proportions = {"flat": 0.1, "random_rough": 0.6, "slope_up": 0.15, "slope_down": 0.15}  # per type
        rough_amplitude = [0.0, 0.045]  # m, peak-to-peak bumps: 0 at level 0, 4 cm (+-2) at the top (d 0.9; reference)
        rough_step = 0.002  # m, bump heights are multiples of 2 mm: each level's bumps are higher than the last's
        # (the reference's 1 cm steps left three bump sizes for ten levels: none at levels 0-4)
        slope_range = [0.0, 0.15]  # rise over run: gentle slopes for a small biped
        curriculum = True  # bool, levels follow the distance walked
        max_init_level = 3  # highest starting level
        measure_heights = True  # bool, height scan in the critic observation
        scan_size = [1.0, 0.6]  # m, a smaller robot looks at a smaller patch
        scan_points = [11, 7]  # points of the scan grid along x and y
        policy_height_scan = False  # bool, blind policy

    class commands(qmini.commands):
        heading_command = True  # bool, walk straight towards a drawn heading: the curriculum measures distance
