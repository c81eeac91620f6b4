"""Record an episode to mp4: mujoco.Renderer (headless through MUJOCO_GL=egl) and imageio.

MuJoCo picks its OpenGL backend when it is imported, so deploy/sim2sim.py calls
`configure_headless_gl` first thing when --video is asked for; `Recorder` switches the
backend itself if mujoco was imported before (main() called in-process).
"""

from __future__ import annotations

import copy
import os
import sys
from pathlib import Path

from deploy.policy_io import DeployError


def configure_headless_gl() -> None:
    """MUJOCO_GL=egl when unset and there is no display (Linux)."""
    if not os.environ.get("MUJOCO_GL") and sys.platform.startswith("linux") \
            and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ["MUJOCO_GL"] = "egl"


def _ensure_offscreen_context() -> None:
    configure_headless_gl()
    wanted = os.environ.get("MUJOCO_GL", "").lower()
    if wanted not in ("egl", "osmesa"):
        return
    try:
        from mujoco.rendering.classic import gl_context
    except ImportError:  # another MuJoCo layout: nothing to fix up
        return
    if getattr(gl_context, "_MUJOCO_GL", wanted) == wanted:
        return
    try:
        if wanted == "egl":
            from mujoco.egl import GLContext
        else:
            from mujoco.osmesa import GLContext
    except Exception as err:  # noqa: BLE001 - missing GL libraries surface as many error types
        raise DeployError(f"--video: MUJOCO_GL={wanted} is not usable here ({' '.join(str(err).split())[:160]})") \
            from None
    gl_context.GLContext = GLContext


def check_writer() -> None:
    try:
        import imageio.v2  # noqa: F401
        import imageio_ffmpeg  # noqa: F401
    except ImportError as err:
        raise DeployError(f"--video needs imageio and imageio-ffmpeg ({err.name} is missing): "
                          "pip install imageio imageio-ffmpeg") from None


class Recorder:
    """Frames of one robot streamed to mp4, a camera tracking its base; a temp file renamed by finish()."""

    def __init__(self, model, path: str | Path, fps: float, base_body: int, width: int = 640, height: int = 480,
                 side_view: bool = False):
        _ensure_offscreen_context()
        import mujoco

        self.path, self.fps = Path(path), fps
        self.tmp = self.path.with_name(f".{self.path.stem}.tmp{self.path.suffix}")
        model = copy.copy(model)  # render settings must not touch the simulated model
        model.vis.quality.offsamples = 0  # no multisampling, shadows or reflections: ~5x cheaper on software GL
        width, height = min(width, model.vis.global_.offwidth), min(height, model.vis.global_.offheight)
        try:
            self.renderer = mujoco.Renderer(model, height=height, width=width)
        except Exception as err:  # noqa: BLE001 - GL set-up errors come in many types
            raise DeployError(f"--video: cannot render offscreen with MUJOCO_GL={os.environ.get('MUJOCO_GL')} "
                              f"({' '.join(str(err).split())[:160]})") from None
        self.camera = mujoco.MjvCamera()
        self.camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
        self.camera.trackbodyid = base_body
        self.camera.distance, self.camera.elevation, self.camera.azimuth = 2.0, -20.0, 135.0
        if side_view:  # a course along +x seen from its side, the robot walking to the right
            self.camera.distance, self.camera.elevation, self.camera.azimuth = 2.5, -10.0, 90.0
        self.writer = None
        self.frames = 0

    def __call__(self, data) -> None:
        import mujoco

        if self.writer is None:
            import imageio.v2 as imageio

            self.writer = imageio.get_writer(str(self.tmp), fps=self.fps, codec="libx264", quality=7,
                                             macro_block_size=16, ffmpeg_log_level="error")
        self.renderer.update_scene(data, self.camera)
        self.renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
        self.renderer.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
        self.writer.append_data(self.renderer.render())
        self.frames += 1

    def finish(self) -> Path:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
            os.replace(self.tmp, self.path)
        self.renderer.close()
        return self.path

    def abort(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        if self.tmp.exists():
            self.tmp.unlink()
        self.renderer.close()
