"""Make a small play-only experiment from a trained one: python tests/data/strip_checkpoint.py SRC_EXPERIMENT_DIR DST_DIR

Keeps what play.py needs (actor, observation normaliser, sizes, iteration, config)
and drops the critic, optimizer and RNG states, so a test fixture stays small.
"""

import shutil
import sys
from pathlib import Path

import torch

KEEP = ("actor", "obs_normalizer", "normalizer_args", "num_obs", "num_critic_obs", "num_actions", "iteration",
        "total_env_steps", "cfg", "cfg_hash")

if __name__ == "__main__":
    src, dst = Path(sys.argv[1]), Path(sys.argv[2])
    (dst / "model").mkdir(parents=True, exist_ok=True)
    ckpt = torch.load(src / "model" / "policy.pt", map_location="cpu", weights_only=False)
    torch.save({k: ckpt[k] for k in KEEP if k in ckpt}, dst / "model" / "policy.pt")
    shutil.copy(src / "model" / "cfg.yaml", dst / "model" / "cfg.yaml")
    print(f"{dst}: iteration {ckpt['iteration']}, {(dst / 'model' / 'policy.pt').stat().st_size / 1e3:.0f} kB")
