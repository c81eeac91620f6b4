import os
import sys

import mujoco
import numpy as np
import pytest

from config import load_config
from env.sim.scene import load_mj_model
from utils.video import VideoRecorder, configure_headless_gl

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


def test_records_a_tracking_video_in_process(tmp_path, monkeypatch):
    """mujoco is already imported here, so this also covers switching MuJoCo to EGL after import."""
    if not (sys.platform.startswith("linux")):
        pytest.skip("headless EGL rendering is a Linux set-up")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    if os.environ.get("MUJOCO_GL", "") not in ("egl", "osmesa"):
        monkeypatch.setenv("MUJOCO_GL", "egl")
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
