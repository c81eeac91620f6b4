"""Offscreen recording: MuJoCo's `Renderer` with a camera tracking the robot, written to mp4 by imageio.

Headless machines render through EGL (GPU or Mesa's software llvmpipe) or
OSMesa. MuJoCo picks its OpenGL backend from ``MUJOCO_GL`` when it is first
imported, so `configure_headless_gl` must run before anything imports mujoco;
play.py calls it first thing. If mujoco was imported earlier (a notebook, a
test), `VideoRecorder` switches MuJoCo's offscreen context to the requested
backend itself.

Rendering defaults to "fast" (no shadows, reflections or multisampling),
which is ~5x cheaper on a software renderer; "high" turns them back on.

On rough terrain the tracking camera gets a `Ground`: the renderer draws the
small model of the terrain in view that it hands out (see env.terrain.window),
and tilts the camera down further wherever the ground along its line of sight
would rise above it (stairs climbing away from the robot).
"""

from __future__ import annotations

import copy
import io
import os
import sys
from pathlib import Path
from typing import Any, Protocol, Sequence

import numpy as np

HEADLESS_GL = ("egl", "osmesa")
QUALITIES = ("fast", "high")
NEAR_CLIP = 0.01  # m, at most: MuJoCo's default (1% of the model's extent) is 1.9 m on go2_rough's terrain
CLEARANCE = 0.3  # m, over rough ground the camera aims to clear the ground under it by this much...
MIN_CLEARANCE = 0.1  # m, ...and always clears it by this much (both along its line of sight to the robot's feet)
MAX_TILT = 80.0  # deg, the steepest the camera looks down to do so
NEAR_GROUND = 0.25  # m, ground this close to the look-at point is under the robot, hidden by it anyway
SMOOTH = 0.15  # per frame, how far the tilt moves towards its aim (it jumps only to keep MIN_CLEARANCE)


class Ground(Protocol):
    """What the renderer needs of rough ground (env.terrain.window.TerrainWindow)."""

    def height_at(self, xy: np.ndarray) -> np.ndarray:
        """Ground height (m) under world points (..., 2)."""

    def model_near(self, lookat_xy: Sequence[float]) -> Any:
        """A model to draw instead (the ground in view), or None to keep the current one."""


class VideoError(RuntimeError):
    """Recording cannot work here; the message is one line saying what to install or set."""


def with_near_clip(model: Any) -> Any:
    """A copy of `model` whose near clipping plane is at most NEAR_CLIP from the camera.

    MuJoCo puts it at 1% of the model's extent: on a large terrain that cuts away the
    ground in front of a camera that follows the robot (the viewer and the recorder both
    draw from such a copy).
    """
    model = copy.copy(model)
    model.vis.map.znear = min(float(model.vis.map.znear), NEAR_CLIP / float(model.stat.extent))
    return model


def configure_headless_gl(environ: dict[str, str] | None = None) -> str | None:
    """Set ``MUJOCO_GL=egl`` when it is unset and there is no display (Linux); return the value in effect."""
    env = os.environ if environ is None else environ
    if not env.get("MUJOCO_GL") and sys.platform.startswith("linux") \
            and not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")):
        env["MUJOCO_GL"] = "egl"
    return env.get("MUJOCO_GL") or None


def import_mujoco() -> None:
    """Import mujoco, which sets up MUJOCO_GL's OpenGL backend; a missing GL library becomes a one-line VideoError."""
    try:
        import mujoco  # noqa: F401
    except Exception as err:  # noqa: BLE001 - PyOpenGL reports missing libraries as all sorts of errors
        gl = os.environ.get("MUJOCO_GL")
        if not gl:
            raise
        msg = " ".join(f"{type(err).__name__}: {err}".split())[:200]
        raise VideoError(f"mujoco could not set up MUJOCO_GL={gl} ({msg}); install its libraries (egl: libegl1 "
                         "libegl-mesa0 libgl1-mesa-dri libopengl0; osmesa: libosmesa6) or choose another "
                         "MUJOCO_GL") from None


def _ensure_offscreen_context() -> None:
    """Make MuJoCo's Renderer use MUJOCO_GL's backend even if mujoco was imported before it was set."""
    wanted = os.environ.get("MUJOCO_GL", "").lower()
    if wanted not in HEADLESS_GL:
        return
    try:
        from mujoco.rendering.classic import gl_context
    except ImportError:  # an older MuJoCo layout: nothing to fix up
        return
    if getattr(gl_context, "_MUJOCO_GL", wanted) == wanted:
        return
    if wanted == "egl":
        from mujoco.egl import GLContext
    else:
        from mujoco.osmesa import GLContext
    gl_context.GLContext = GLContext


def _writer(path: Path, fps: float):
    try:
        import imageio.v2 as imageio
        import imageio_ffmpeg  # noqa: F401  (the mp4 plugin's encoder)
    except ImportError as err:
        raise VideoError(f"recording needs imageio and imageio-ffmpeg ({err.name} is missing): "
                         "pip install -e '.[video]'") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    return imageio.get_writer(str(path), fps=fps, codec="libx264", quality=7, macro_block_size=16,
                              ffmpeg_log_level="error", ffmpeg_params=["-preset", "veryfast"])


class FrameRenderer:
    """Render images of one MuJoCo model state at a time, the camera following a body.

    Args:
        model: the MjModel to render (the env's, with its PD gains; geometry is all that matters).
        track_body: body id the camera follows (the base); -1 for MuJoCo's default free camera.
        distance, elevation, azimuth: camera placement around the tracked body (m, deg, deg).
        width, height: pixels; at most the model's offscreen buffer (640 x 480 by default).
        quality: "fast" (no shadows, reflections, multisampling) or "high".
        ground: rough ground under a tracking camera: the models to draw as the robot moves, and the heights
            the camera keeps above (it looks down more steeply where the ground rises towards it).
    """

    def __init__(self, model: Any, track_body: int = -1, distance: float = 2.0, elevation: float = -20.0,
                 azimuth: float = 135.0, width: int = 640, height: int = 480, quality: str = "fast",
                 ground: Ground | None = None):
        if quality not in QUALITIES:
            raise ValueError(f"video quality must be one of {', '.join(QUALITIES)}, got '{quality}'")
        _ensure_offscreen_context()
        import mujoco

        self._mujoco = mujoco
        self.quality, self.ground = quality, (ground if track_body >= 0 else None)
        self.size = (min(width, int(model.vis.global_.offwidth)), min(height, int(model.vis.global_.offheight)))
        self.renderer = None
        self._open(model)
        self.flags: dict[Any, int] = {}
        if quality == "fast":
            rnd = mujoco.mjtRndFlag
            self.flags = {rnd.mjRND_SHADOW: 0, rnd.mjRND_REFLECTION: 0}
        self.camera = mujoco.MjvCamera()
        self.elevation = float(elevation)  # deg, as configured; the camera's own may be steeper over rough ground
        if track_body >= 0:
            self.camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
            self.camera.trackbodyid = int(track_body)
            self.camera.distance = float(distance)
            self.camera.elevation = float(elevation)
            self.camera.azimuth = float(azimuth)
        else:
            mujoco.mjv_defaultFreeCamera(model, self.camera)

    def _open(self, model: Any) -> None:
        """Draw ``model`` from now on: a copy with the render settings, and a renderer of its own."""
        mujoco = self._mujoco
        model = with_near_clip(model)  # render settings below must not touch the caller's model
        if self.quality == "fast":
            model.vis.quality.offsamples = 0  # before the Renderer creates its framebuffer
        width, height = self.size
        try:
            renderer = mujoco.Renderer(model, height, width)
        except Exception as err:  # noqa: BLE001 - GL errors come as many types; report one line
            backend = os.environ.get("MUJOCO_GL", "glfw (default)")
            msg = " ".join(str(err).split())
            raise VideoError(f"offscreen rendering failed with MUJOCO_GL={backend}: {msg}; on a headless Linux "
                             "machine install libegl1 and libgl1-mesa-dri (MUJOCO_GL=egl) or libosmesa6 "
                             "(MUJOCO_GL=osmesa)") from None
        self.close()
        self.model, self.data, self.renderer = model, mujoco.MjData(model), renderer

    def _pose(self, qpos: Any, qvel: Any) -> None:
        self.data.qpos[:] = qpos
        if qvel is not None:
            self.data.qvel[:] = qvel
        self._mujoco.mj_forward(self.model, self.data)

    def _follow_ground(self, qpos: Any, qvel: Any) -> None:
        """Tilt the camera over the ground between it and the robot; swap in the ground in view when it changes."""
        cam, height_at = self.camera, self.ground.height_at
        lookat = np.array(self.data.subtree_com[cam.trackbodyid])  # what MuJoCo's tracking camera looks at
        feet = float(height_at(lookat[None, :2])[0])
        aim, need = (clear_tilt(lookat, feet, cam.distance, -self.elevation, cam.azimuth, height_at, clearance)
                     for clearance in (CLEARANCE, MIN_CLEARANCE))
        tilt = -float(cam.elevation)
        cam.elevation = -max(need, tilt + SMOOTH * (aim - tilt))
        model = self.ground.model_near(lookat[:2])
        if model is not None:
            self._open(model)
            self._pose(qpos, qvel)

    def render(self, qpos: Any, qvel: Any = None):
        """An (H, W, 3) uint8 image of the model at this state."""
        self._pose(qpos, qvel)
        if self.ground is not None:
            self._follow_ground(qpos, qvel)
        self.renderer.update_scene(self.data, self.camera)
        for flag, value in self.flags.items():
            self.renderer.scene.flags[flag] = value
        return self.renderer.render()

    def close(self) -> None:
        if self.renderer is not None:
            self.renderer.close()
            self.renderer = None


def clear_tilt(lookat: np.ndarray, ground_z: float, distance: float, tilt: float, azimuth: float,
               height_at: Any, clearance: float, samples: int = 40) -> float:
    """The smallest downward tilt (deg), from ``tilt`` up to MAX_TILT, of a camera ``distance`` m from ``lookat``
    (xyz) at ``azimuth`` (deg, MuJoCo's) that sees the ground under the look-at point (at ``ground_z``) past
    all the ground between (``height_at``): its line of sight to that point clears the ground by a margin
    growing from 0 there to ``clearance`` under the camera.

    With s the steepest rise of the ground from that point towards the camera (dz / dxy) and h the look-at
    point's height above it, the line clears the ground when d (sin t - s cos t) >= clearance - h. Tilting
    down shortens the camera's reach, so the ground is sampled out to its reach at ``tilt``.
    """
    reach = distance * np.cos(np.radians(tilt))
    r = np.linspace(min(NEAR_GROUND, reach / 2), reach, samples)  # m, horizontal distance from lookat to camera
    az = np.radians(azimuth)
    xy = np.asarray(lookat[:2]) - r[:, None] * np.array([np.cos(az), np.sin(az)])
    rise = float(np.max((np.asarray(height_at(xy)) - ground_z) / r))
    sine = (clearance - (float(lookat[2]) - ground_z)) / (distance * np.hypot(1.0, rise))
    needed = np.degrees(np.arctan(rise) + np.arcsin(np.clip(sine, -1.0, 1.0)))
    return float(min(MAX_TILT, max(tilt, needed)))


def save_png(image: Any, path: str | os.PathLike) -> Path:
    """Write an (H, W, 3) uint8 image as PNG (imageio, from the video extra), atomically."""
    try:
        import imageio.v2 as imageio
    except ImportError:
        raise VideoError("writing a PNG needs imageio: pip install -e '.[video]'") from None
    from utils.files import atomic_write_bytes

    buffer = io.BytesIO()
    imageio.imwrite(buffer, image, format="png")
    return atomic_write_bytes(Path(path), buffer.getvalue())


class VideoRecorder:
    """Render frames of one MuJoCo model state at a time and append them to an mp4.

    Args:
        model, track_body, distance, elevation, azimuth, width, height, quality, ground: as for `FrameRenderer`.
        path: the mp4 to write.
        fps: frames per second (play.py: 1 / control period, one frame per policy step).
    """

    def __init__(self, model: Any, path: str | os.PathLike, fps: float, track_body: int = -1,
                 distance: float = 2.0, elevation: float = -20.0, azimuth: float = 135.0,
                 width: int = 640, height: int = 480, quality: str = "fast", ground: Ground | None = None):
        self.frame_renderer = FrameRenderer(model, track_body, distance, elevation, azimuth, width, height, quality,
                                            ground)
        self.model, self.size = self.frame_renderer.model, self.frame_renderer.size
        self.path = Path(path)
        self.fps = float(fps)
        self._writer = _writer(self.path, self.fps)
        self.frames = 0

    def render(self, qpos: Any, qvel: Any = None):
        """An (H, W, 3) uint8 image of the model at this state."""
        return self.frame_renderer.render(qpos, qvel)

    def add_frame(self, qpos: Any, qvel: Any = None) -> None:
        self._writer.append_data(self.render(qpos, qvel))
        self.frames += 1

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self.frame_renderer.close()

    def __enter__(self) -> "VideoRecorder":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
