"""What the env sees of rough terrain: height lookup against MuJoCo's ray casting, the yaw-aligned scan,
spawn points, the level curriculum on scripted distances, and base height above the ground."""

import math

import mujoco
import numpy as np
import pytest
import torch

from config import load_config
from env.gym_env_wrapper import make_env
from env.sim.scene import load_mj_model
from env.terrain import generate_terrain
from env.terrain.curriculum import TerrainCurriculum
from env.terrain.heights import HeightMap, scan_pattern, scan_points_world
from env.utils.math import quat_from_yaw

SMALL = ["terrain.num_rows=4", "terrain.num_cols=4", "terrain.tile_size=4.0", "terrain.platform_size=2.0",
         "terrain.border_size=1.0"]
EVERY_TYPE = 'terrain.terrain_proportions={"random_rough": 1, "stairs_up": 1, "slope_down": 1, "obstacles": 1}'


@pytest.fixture(scope="module")
def rough_cfg():
    return load_config("go2_rough", ["env.num_envs=16", "sim.nthread=2", *SMALL, EVERY_TYPE])


def test_height_lookup_equals_ray_casting_on_the_compiled_height_field():
    hf_cfg = load_config("go2_rough", [*SMALL, EVERY_TYPE, "terrain.box_tiles=[]"])  # all height field
    grid = generate_terrain(hf_cfg.terrain)
    model = load_mj_model(hf_cfg, grid)
    spacing = 2 * model.hfield_size[0, :2] / [model.hfield_ncol[0] - 1, model.hfield_nrow[0] - 1]
    np.testing.assert_allclose(spacing, grid.horizontal_scale, rtol=1e-9)  # cells exactly the configured size
    data = mujoco.MjData(model)
    data.qpos[2] = 100.0  # the robot out of the rays' way
    mujoco.mj_forward(model, data)
    lo = np.array(grid.origin)
    hi = lo + (np.array(grid.heights.shape) - 1) * grid.horizontal_scale
    points = np.random.default_rng(0).uniform(lo, hi, (3000, 2))
    floor = model.geom("floor").id
    ray = np.empty(len(points))
    for k, (x, y) in enumerate(points):
        hit = np.zeros(1, np.int32)
        ray[k] = 10.0 - mujoco.mj_ray(model, data, np.array([x, y, 10.0]), np.array([0.0, 0.0, -1.0]), None, 1, -1, hit)
        assert hit[0] == floor
    lookup = HeightMap(grid, "cpu").height_at(torch.tensor(points, dtype=torch.float32)).numpy()
    # exact on MuJoCo's triangles; a bilinear lookup is off by up to a step height at stair edges
    np.testing.assert_allclose(lookup, ray, atol=1e-4)
    assert np.ptp(ray) > 0.5  # the points cover real relief (stairs, obstacles), not only flat ground


def test_scan_is_a_yaw_aligned_grid_around_the_base():
    pattern = scan_pattern([1.6, 1.0], [17, 11])
    assert pattern.shape == (187, 2)
    assert pattern[:, 0].min() == pytest.approx(-0.8) and pattern[:, 1].max() == pytest.approx(0.5)
    base = torch.tensor([[3.0, 4.0, 0.3]])
    turned = scan_points_world(pattern, base, quat_from_yaw(torch.tensor([math.pi / 2])))
    # a point 0.8 m ahead of a robot facing +y lies 0.8 m along +y from it
    ahead = int(torch.argmax(pattern[:, 0] - pattern[:, 1].abs()))
    assert turned[0, ahead].tolist() == pytest.approx([3.0, 4.8], abs=1e-5)


def test_spawns_are_on_their_platform_and_never_inside_the_ground():
    # without joint noise the default pose has its feet 1.6 mm above flat ground: on terrain it must too
    rough_cfg = load_config("go2_rough", ["env.num_envs=16", "sim.nthread=2", *SMALL, EVERY_TYPE,
                                          "init_state.joint_pos_noise=0.0"])
    env = make_env(rough_cfg)
    robot, ground = env.robot, env.robot.ground
    model, data = robot.model, mujoco.MjData(robot.model)
    half = rough_cfg.terrain.platform_size / 2
    for _ in range(5):
        ground.curriculum.levels.random_(0, ground.curriculum.num_rows)
        ids = torch.arange(env.num_envs)
        robot.reset_idx(ids)
        centres = ground.curriculum.origins(ids)
        assert torch.all((robot.base_pos[:, :2] - centres[:, :2]).abs() + ground.footprint <= half + 1e-5)
        for i in range(env.num_envs):
            data.qpos[:] = robot.sim.qpos[i].numpy()
            mujoco.mj_forward(model, data)
            depth = [data.contact[k].dist for k in range(data.ncon)]
            assert min(depth, default=1.0) > -1e-3, f"env {i} spawned {-min(depth):.3f} m inside the ground"
        # dropped from no higher than the flat-ground spawn height above the platform
        height_above = robot.base_pos[:, 2] - centres[:, 2]
        assert torch.all(height_above <= rough_cfg.init_state.pos[2] + 0.02)


def curriculum(levels: list[int], rows: int = 10, enabled: bool = True, demote_falls: bool = False) \
        -> TerrainCurriculum:
    t = load_config("go2_rough").terrain
    t.num_rows, t.num_cols, t.tile_size, t.platform_size, t.border_size = rows, 2, 4.0, 2.0, 0.0
    t.curriculum, t.demote_falls = enabled, demote_falls
    cur = TerrainCurriculum(generate_terrain(t), t, len(levels), "cpu")
    cur.levels = torch.tensor(levels)
    return cur


def test_curriculum_promotes_demotes_and_recycles_the_top_as_specified():
    cur = curriculum([3, 3, 3, 0, 9, 9, 9, 9, 9, 9, 9, 9])
    ids = torch.arange(12)
    # half a tile is 2 m; demotion below half the commanded distance
    walked = torch.tensor([2.5, 1.0, 0.5, 0.1, *[3.0] * 8])
    commanded = torch.tensor([8.0, 1.5, 8.0, 8.0, *[8.0] * 8])
    torch.manual_seed(0)
    cur.update(ids, walked, commanded, torch.zeros(12, dtype=torch.bool))
    assert cur.levels[:4].tolist() == [4, 3, 2, 0]  # up, stays (walked >= half asked), down, floor at 0
    top = cur.levels[4:]
    assert torch.all((top >= 0) & (top < 10)) and len(set(top.tolist())) > 1  # past the top: random levels


def test_with_demote_falls_a_fall_goes_down_however_far_it_walked():
    walked = torch.tensor([3.0, 3.0, 1.0, 0.5, 3.0])
    commanded = torch.tensor([8.0, 8.0, 1.5, 8.0, 8.0])
    fell = torch.tensor([True, False, True, False, True])
    by_distance = curriculum([3, 3, 3, 3, 0])
    by_distance.update(torch.arange(5), walked, commanded, fell)
    assert by_distance.levels.tolist() == [4, 4, 3, 2, 1]  # legged_gym's rule: falls count as walks
    with_falls = curriculum([3, 3, 3, 3, 0], demote_falls=True)
    with_falls.update(torch.arange(5), walked, commanded, fell)
    assert with_falls.levels.tolist() == [2, 4, 2, 2, 0]  # rushed 3 m and fell: down; never below 0


def test_a_terminated_episode_reaches_the_curriculum_as_a_fall():
    """The env hands the task's terminations (not its timeouts) to the curriculum."""
    cfg = load_config("go2_rough", ["env.num_envs=4", "sim.nthread=2", *SMALL, EVERY_TYPE,
                                    "terrain.demote_falls=true"])
    env = make_env(cfg)
    robot, task, cur = env.robot, env.task, env.robot.ground.curriculum
    env.reset()
    robot.clock_spread[:] = False  # judge the first episode
    cur.levels.fill_(2)
    robot.spawn_xy -= 3.0  # every robot stands 4.2 m from its spawn: promoted, unless it fell
    survive = task.check_termination
    task.check_termination = lambda: survive() | torch.tensor([True, False, False, False])
    env.step(torch.zeros(env.num_envs, env.num_actions))
    assert cur.levels[0] == 1 and torch.all(cur.levels[1:] == 2)  # only the fall ended, and it went down


def test_curriculum_off_draws_random_levels_and_pin_freezes_them():
    cur = curriculum([0] * 200, enabled=False)
    cur.update(torch.arange(200), torch.zeros(200), torch.zeros(200), torch.zeros(200, dtype=torch.bool))
    assert cur.levels.max() > 5 and cur.levels.min() == 0
    kind = cur.column_types[-1]
    cur.pin(kind, 7)
    cur.update(torch.arange(200), torch.full((200,), 10.0), torch.zeros(200), torch.zeros(200, dtype=torch.bool))
    assert torch.all(cur.levels == 7) and set(cur.tile_of(torch.arange(200))[0]) == {kind}
    cur.pin()  # spread: every type at every level, in turn
    types, levels = cur.tile_of(torch.arange(200))
    assert levels[:12] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]
    assert set(zip(types, levels)) == {(t, lv) for t in set(cur.column_types) for lv in range(10)}
    with pytest.raises(ValueError, match="levels 0..9"):
        cur.pin(None, 10)
    with pytest.raises(ValueError, match="its types"):
        cur.pin("lava", None)


def test_start_levels_and_resume():
    t = load_config("go2_rough").terrain
    cur = TerrainCurriculum(generate_terrain(t), t, 500, "cpu")
    assert cur.levels.max() == t.max_init_level and cur.levels.min() == 0
    cur.levels = torch.randint(0, 10, (500,))
    again = TerrainCurriculum(generate_terrain(t), t, 500, "cpu")
    again.load_state_dict(cur.state_dict())
    assert torch.equal(again.levels, cur.levels)
    fewer = TerrainCurriculum(generate_terrain(t), t, 50, "cpu")
    fewer.load_state_dict(cur.state_dict())  # another env count: levels drawn from the saved ones
    assert set(fewer.levels.tolist()) <= set(cur.levels.tolist())


def test_commanded_offset_is_where_a_perfect_tracker_would_stand(rough_cfg):
    """The curriculum's demotion test compares the displacement with the commands' world-frame sum: commands
    that point apart cancel (a path length would demote a perfect tracker), every command of the episode counts."""
    from env.utils.math import wrap_to_pi, yaw_from_quat

    env = make_env(rough_cfg)
    task, robot, dt = env.task, env.robot, env.robot.dt
    env.reset()
    yaw = yaw_from_quat(robot.base_quat).clone()
    for command in ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [-1.0, 0.0, 0.0]):
        task.hold_commands(torch.tensor(command))  # the last but one asks for nothing
        for _ in range(10):
            env.step(torch.zeros(env.num_envs, env.num_actions))
    alive = robot.episode_length_buf == 40
    assert alive.any()
    turned = wrap_to_pi(yaw_from_quat(robot.base_quat) - yaw).abs().max()
    assert turned < 0.2  # the robots keep (nearly) their heading, so the sum is 10 steps to their left
    left = torch.stack([-torch.sin(yaw), torch.cos(yaw)], dim=1) * 10 * dt
    assert torch.allclose(task.commanded_offset[alive], left[alive], atol=30 * dt * float(turned) + 1e-5)
    assert torch.all(torch.norm(task.commanded_offset[alive], dim=1) < 15 * dt)  # the path was 30 steps long
    env.reset()  # a new episode asks for nothing yet
    assert torch.all(task.commanded_offset == 0)


def test_the_cut_short_first_episode_after_a_spread_start_does_not_move_levels(rough_cfg):
    """Training (and every resume) starts each env at a random point of its episode clock; an env left 20 steps
    to walk has not walked its commands, and judging it demoted robots at every resume. Later episodes count."""
    env = make_env(rough_cfg)
    robot, ground = env.robot, env.robot.ground
    env.reset()
    env.task.hold_commands(torch.tensor([1.0, 0.0, 0.0]))  # 0.4 m in 20 steps; standing robots walk none of it
    ground.curriculum.levels.fill_(2)

    def stand_to_the_end_of_the_episode():
        robot.episode_length_buf.fill_(robot.max_episode_length - 20)
        for _ in range(20):
            env.step(torch.zeros(env.num_envs, env.num_actions))

    env.spread_episode_starts()
    stand_to_the_end_of_the_episode()  # the spread episode: cut short, not judged
    assert torch.all(ground.curriculum.levels == 2) and not robot.clock_spread.any()
    stand_to_the_end_of_the_episode()  # a whole episode's verdict: 0.4 m asked for, none walked
    assert torch.all(ground.curriculum.levels == 1)


def test_base_height_and_scan_are_measured_from_the_ground_under_the_robot(rough_cfg):
    env = make_env(rough_cfg)
    robot = env.robot
    env.reset()
    ground_z = robot.ground.height_under(robot.base_pos[:, :2])
    assert torch.allclose(robot.base_height, robot.base_pos[:, 2] - ground_z)
    scan = robot.measure_heights()
    assert scan.shape == (env.num_envs, 187)
    under = robot.ground.scan_heights(robot.base_pos, robot.base_quat)
    assert torch.allclose(scan, robot.base_pos[:, 2:3] - under)
    obs, critic_obs = env.task.compute_observations()
    assert critic_obs.shape[1] == env.num_critic_obs and obs.shape[1] == env.num_obs
    # lift the robots 1 m: base height grows by 1 m, whatever the ground
    robot.sim.qpos[:, 2] += 1.0
    robot.refresh_state()
    assert torch.allclose(robot.base_height, robot.base_pos[:, 2] - ground_z)
    assert torch.all(robot.base_height > 1.0)


def test_a_perceptive_policy_observes_the_scan(rough_cfg):
    blind = make_env(rough_cfg)
    cfg = load_config("go2_rough", ["env.num_envs=4", *SMALL, "terrain.policy_height_scan=true"])
    seeing = make_env(cfg)
    assert seeing.num_obs == blind.num_obs + 187
    assert seeing.num_critic_obs == blind.num_critic_obs  # the critic has it once, through the policy frame
    assert ("height_scan", 187) in seeing.task.obs_layout
    with pytest.raises(ValueError, match="measure_heights"):
        make_env(load_config("go2_rough", ["env.num_envs=4", *SMALL, "terrain.policy_height_scan=true",
                                           "terrain.measure_heights=false"]))


def test_the_height_drift_shifts_each_episodes_whole_scan_alike_and_only_the_scan():
    quiet = [f"noise.noise_scales.{k}=0.0" for k in ("lin_vel", "ang_vel", "gravity", "dof_pos", "dof_vel",
                                                      "height_measurements")]
    cfg = load_config("go2_rough", ["env.num_envs=8", "sim.nthread=2", *SMALL, "terrain.policy_height_scan=true",
                                    *quiet, "noise.noise_scales.height_drift=0.1"])
    env = make_env(cfg)
    task, scale = env.task, cfg.normalization.obs_scales.height_measurements
    env.reset()
    scan = slice(task.frame_size - 187, task.frame_size)
    offsets = []
    for _ in range(3):
        obs, critic_obs, *_ = env.step(torch.zeros(env.num_envs, env.num_actions))
        newest = obs[:, -task.frame_size:]
        diff = newest - critic_obs[:, :task.frame_size]  # the critic's copy of the frame has no noise
        assert torch.all(diff[:, :scan.start] == 0)  # nothing but the scan moves
        per_point = diff[:, scan] / scale  # m
        offsets.append(per_point[:, 0])
        assert torch.allclose(per_point, per_point[:, :1].expand_as(per_point), atol=1e-5)  # every point alike
    first = offsets[0]
    assert torch.all(first.abs() <= 0.1 + 1e-5) and first.std() > 0.01  # drawn per env within +-0.1 m
    for later in offsets[1:]:  # no episode ended (3 steps): the same drift all episode
        assert torch.allclose(later, first, atol=1e-5)
    env.task.reset_idx(torch.arange(env.num_envs))
    assert not torch.allclose(task.scan_drift[:, 0], -first / 0.1, atol=1e-3)  # a new episode, a new drift
    calm = make_env(load_config("go2_rough", ["env.num_envs=8", "sim.nthread=2", *SMALL, "noise.add_noise=false",
                                             "terrain.policy_height_scan=true", "noise.noise_scales.height_drift=0.1"]))
    assert torch.all(calm.task.scan_drift_vec == 0)  # play and evaluation: no noise, no drift


def test_heading_command_steers_towards_the_heading(rough_cfg):
    env = make_env(rough_cfg)
    task = env.task
    env.reset()
    yaw = torch.atan2(2 * env.robot.base_quat[:, 0] * env.robot.base_quat[:, 3],
                      1 - 2 * env.robot.base_quat[:, 3] ** 2)
    task.heading[:] = yaw + 0.5  # half a radian to the left of where each robot faces
    task._steer_to_heading()
    assert torch.allclose(task.commands[:, 2], torch.full((env.num_envs,), 0.25), atol=0.02)


def test_mean_level_per_terrain_type():
    cur = curriculum([0, 2, 4, 6])  # envs 0, 1 on column 0 and envs 2, 3 on column 1
    first, second = cur.column_types
    assert first != second and cur.columns.tolist() == [0, 0, 1, 1]
    assert cur.mean_level_by_type() == {first: 1.0, second: 5.0}


def test_ground_under_a_robot_is_the_mean_over_its_footprint_not_the_point_under_the_base():
    t = load_config("go2_rough").terrain
    t.num_rows, t.num_cols, t.tile_size, t.platform_size, t.border_size = 1, 1, 4.0, 1.0, 0.0
    t.terrain_proportions = {"stairs_up": 1.0}
    t.step_height_range, t.step_width = [0.2, 0.2], 0.4
    t.flush_edges = False  # the platform at 0, the first step at +0.2 m
    from env.terrain.ground import Ground

    ground = Ground(t, 1, torch.device("cpu"), generate_terrain(t))
    ground.footprint = 0.4
    centre = torch.tensor([[2.0, 2.0]])
    edge = centre + torch.tensor([[0.6 + 1e-3, 0.0]])  # one cell past the platform edge: the first step (0.2 m)
    assert float(ground.height_at(edge)) == pytest.approx(0.2)
    # half the footprint back on the platform: the robot stands on both levels
    assert 0.05 < float(ground.height_under(edge)) < 0.15
    assert float(ground.height_under(centre)) == pytest.approx(0.0)
