"""Install the legged-robot PPO package (config, env, model, rl, utils, and deploy: the robot-side reference)."""
from setuptools import find_packages, setup

setup(
    name="legged-ppo",
    version="0.1.0",
    description="PPO training for legged robots on batched MuJoCo (CPU) and MuJoCo Warp (GPU)",
    python_requires=">=3.10",
    packages=find_packages(include=["config", "config.*", "env", "env.*", "model", "model.*",
                                    "rl", "rl.*", "utils", "utils.*", "deploy", "deploy.*"]),
    package_data={"": ["*.xml"]},
    install_requires=[
        "torch>=2.2",
        "mujoco>=4.0",
        "numpy",
        "pyyaml",
        "tensorboard",
        "gymnasium",
    ],
    extras_require={
        # play.py's optional parts; the tests exercise all of them, so "test" pulls them in
        "test": ["pytest", "hypothesis", "imageio", "imageio-ffmpeg", "onnx", "onnxruntime", "matplotlib", "pillow",
                 "mujoco-warp", "warp-lang", "wandb"],  # warp on Warp's CPU device, W&B in its offline mode
        "video": ["imageio", "imageio-ffmpeg"],  # play.py --video (mp4 through ffmpeg)
        "export": ["onnx", "onnxruntime"],  # play.py --export / --check-export
        "plot": ["matplotlib"],  # play.py --eval's eval_tracking.png (eval.json needs nothing)
        "play": ["imageio", "imageio-ffmpeg", "onnx", "onnxruntime", "matplotlib"],  # all of the above
        "gpu": ["mujoco-warp", "warp-lang"],  # --backend warp: MuJoCo Warp on a GPU (or Warp's CPU device)
        "wandb": ["wandb"],  # runner.logger=wandb: Weights & Biases beside TensorBoard (its SDK and wandb-core)
    },
)
