import sys

import mujoco
import numpy as np
import pytest

from config import load_config
from env.sim.scene import load_mj_model
from utils.video import (CLEARANCE, MAX_TILT, MIN_CLEARANCE, NEAR_GROUND, FrameRenderer, VideoRecorder, clear_tilt,
                         configure_headless_gl)

imageio = pytest.importorskip("imageio.v2")


@pytest.mark.parametrize("environ, expected", [
    ({}, "egl"),  # headless: EGL
    ({"DISPLAY": ":0"}, None),  # a display: leave MuJoCo's default (GLFW)
    ({"WAYLAND_DISPLAY": "wayland-0"}, None),
    ({"MUJOCO_GL": "osmesa"}, "osmesa"),  # the user's choice wins
])
def test_configure_headless_gl(monkeypatch, environ, expected):
    monkeypatch.setattr(sys, "platform", "linux")
    env = dict(environ)
    assert configure_headless_gl(env) == expected
    assert env.get("MUJOCO_GL") == expected


def test_records_a_tracking_video_in_process(tmp_path, headless_gl):
    """mujoco is already imported here, so this also covers switching MuJoCo to EGL after import."""
    model = load_mj_model(load_config("qmini"))
    base = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "base_link")
    qpos = model.key_qpos[0].copy()
    samples = model.vis.quality.offsamples
    path = tmp_path / "clip.mp4"
    with VideoRecorder(model, path, fps=20, track_body=base, width=160, height=128) as rec:
        for i in range(8):
            qpos[0] = 0.1 * i  # walk along x: the tracking camera follows, the floor moves underneath
            qpos[7] = 0.3 * np.sin(i)  # and a joint moves
            rec.add_frame(qpos)
    frames = [f for f in imageio.get_reader(str(path))]
    assert len(frames) == 8 and frames[0].shape == (128, 160, 3)
    assert frames[0].std() > 5  # not a blank image
    assert np.abs(frames[0].astype(int) - frames[-1].astype(int)).mean() > 0.5
    assert model.vis.quality.offsamples == samples  # "fast" quality works on a copy of the caller's model


def test_bad_quality_is_rejected(tmp_path):
    model = mujoco.MjModel.from_xml_string("<mujoco><worldbody/></mujoco>")
    with pytest.raises(ValueError, match="quality"):
        VideoRecorder(model, tmp_path / "x.mp4", fps=10, quality="ultra")


def step_up(at: float, height: float):
    """Ground (m) that steps up by ``height`` beyond x = ``at``."""
    return lambda xy: np.where(np.asarray(xy)[..., 0] > at, height, 0.0)


def line_margin(lookat, tilt, ground, clearance):
    """Lowest height (m) of the line from a camera 2 m from ``lookat`` at azimuth 180 (it sits at +x) down to the
    ground under ``lookat``, above the ground plus a margin growing from 0 there to ``clearance`` under the camera."""
    reach = 2.0 * np.cos(np.radians(tilt))
    top = lookat[2] + 2.0 * np.sin(np.radians(tilt))
    x = np.linspace(NEAR_GROUND, reach, 2000)
    line = x / reach * top
    return float(np.min(line - ground(np.stack([x, 0 * x], axis=1)) - clearance * x / reach))


def test_camera_keeps_its_elevation_over_flat_ground():
    flat = step_up(100.0, 0.0)
    assert clear_tilt(np.array([0.0, 0.0, 0.3]), 0.0, 2.0, 20.0, 180.0, flat, CLEARANCE) == 20.0


def test_camera_tilts_down_just_enough_to_see_the_robots_feet_over_a_step():
    lookat, ground = np.array([0.0, 0.0, 0.3]), step_up(1.0, 0.6)  # a 0.6 m step between robot and camera
    tilt = clear_tilt(lookat, 0.0, 2.0, 20.0, 180.0, ground, CLEARANCE)
    assert 20.0 < tilt < MAX_TILT
    assert line_margin(lookat, tilt, ground, CLEARANCE) > -0.02  # clear, up to the ground's sampling (5 cm)
    assert line_margin(lookat, tilt - 1.0, ground, CLEARANCE) < 0  # and no steeper than needed
    assert line_margin(lookat, 20.0, ground, 0.0) < 0  # the configured camera would not see them


def test_camera_looks_down_at_most_max_tilt():
    wall = lambda xy: np.where(np.abs(np.asarray(xy)[..., 0] - 0.4) < 0.1, 5.0, 0.0)  # noqa: E731
    assert clear_tilt(np.array([0.0, 0.0, 0.3]), 0.0, 2.0, 20.0, 180.0, wall, CLEARANCE) == MAX_TILT


def test_tracking_camera_rises_over_the_ground_at_once_and_settles_smoothly(headless_gl):
    """A ground that rises between robot and camera lifts the camera above it in the same frame (to
    MIN_CLEARANCE), then eases it to CLEARANCE; once the ground is flat again it eases back down."""

    class Step:  # the ground only: the model keeps its plane
        height = 0.0

        def height_at(self, xy):
            return step_up(0.8, self.height)(xy)

        def model_near(self, lookat_xy):
            return None

    model = load_mj_model(load_config("go2"))
    base = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "base_link")
    qpos, ground = model.key_qpos[0].copy(), Step()
    renderer = FrameRenderer(model, base, azimuth=180.0, elevation=-20.0, width=64, height=48, ground=ground)

    def camera_height():
        renderer.render(qpos)
        cams = renderer.renderer.scene.camera
        return (cams[0].pos[2] + cams[1].pos[2]) / 2, -renderer.camera.elevation

    assert camera_height()[1] == 20.0
    ground.height = 0.8  # as high as the configured camera 2 m away: the robot's feet hidden, the camera inside
    z, tilt = camera_height()
    lookat = renderer.data.subtree_com[base]
    need, aim = (clear_tilt(lookat, 0.0, 2.0, 20.0, 180.0, ground.height_at, c) for c in (MIN_CLEARANCE, CLEARANCE))
    assert need > 30.0 and tilt == pytest.approx(need) and z > 0.8 + MIN_CLEARANCE  # in the same frame
    tilts = [camera_height()[1] for _ in range(40)]
    assert all(b >= a for a, b in zip(tilts, tilts[1:])) and tilts[-1] == pytest.approx(aim, abs=0.5)
    ground.height = 0.0
    back = [camera_height()[1] for _ in range(3)]
    assert tilts[-1] > back[0] > back[1] > back[2] > 20.0  # eases back, no jump
    renderer.close()


def test_ground_near_the_camera_is_drawn_in_a_large_scene(headless_gl):
    """MuJoCo puts the near clipping plane at 1% of the model's extent: 1.9 m on go2_rough's 170 m terrain, which
    cut away the ground in front of a camera 2 m from the robot (and the robot's near half). The renderer's is 1 cm."""
    from env.sim.scene import compose_scene

    spec = compose_scene(load_config("go2"))
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[1, 1, 1], pos=[300, 0, 0])  # a far landmark
    model = spec.compile()
    assert model.vis.map.znear * model.stat.extent > 1.0  # MuJoCo's own near plane would cut the view
    base = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "base_link")
    renderer = FrameRenderer(model, base, width=64, height=48)
    renderer.render(model.key_qpos[0])
    renderer.renderer.enable_depth_rendering()
    depth = renderer.renderer.render()
    renderer.close()
    # the bottom row looks down 42.5 deg from a camera ~0.95 m up: the floor ~1.3 m away, not the sky
    assert 1.0 < depth[-1, 32] < 1.6
