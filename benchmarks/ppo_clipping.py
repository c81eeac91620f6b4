"""How much do gradient clipping and observation clipping bite during a PPO update?

    python benchmarks/ppo_clipping.py --name learn_go2_ours --checkpoint model/all/policy_150.pt

Loads a checkpoint (networks, normalisers, optimiser), collects one rollout with
the run's config and runs one PPO update on it, recording per minibatch the
actor's and the critic's gradient norms before clipping. Prints how often the
joint norm (rsl_rl 1.x/2.x: one clip over both networks) exceeds max_grad_norm
and by how much that would shrink the actor's step, next to what separate
clipping (rsl_rl 5.x, ours) does; and the fraction of normalised observation
entries at the normaliser's clip bound. Diagnostic only: the weights are not saved.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from config import load_saved_config  # noqa: E402
from env.gym_env_wrapper import make_env  # noqa: E402
from rl.runner import OnPolicyRunner  # noqa: E402
from utils.cli import main_with_one_line_errors  # noqa: E402
from utils.experiment import Experiment  # noqa: E402


def grad_norm(params) -> float:
    grads = [p.grad.detach().norm() for p in params if p.grad is not None]
    return float(torch.norm(torch.stack(grads))) if grads else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--name", required=True, help="experiment name")
    parser.add_argument("--checkpoint", default=None,
                        help="checkpoint relative to experiments/<name>/model/, e.g. all/policy_150.pt (default policy.pt)")
    args = parser.parse_args(argv)

    experiment = Experiment(args.name)
    cfg = load_saved_config(experiment.cfg_path)
    env = make_env(cfg)
    runner = OnPolicyRunner(env, cfg, log_dir=None, device="cpu", verbose=False)
    which = args.checkpoint.removeprefix("model/") if args.checkpoint else None  # the older form model/...
    runner.load(experiment.checkpoint(which))
    alg = runner.alg
    norms: list[tuple[float, float]] = []
    original_clip = alg._clip_gradients

    def recording_clip():
        norms.append((grad_norm(alg.actor.parameters()), grad_norm(alg.critic.parameters())))
        return original_clip()

    alg._clip_gradients = recording_clip
    clipped_obs = []
    original_normalize = runner._normalize

    def recording_normalize(obs, critic_obs):
        obs, critic_obs = original_normalize(obs, critic_obs)
        clipped_obs.append(float((obs.abs() >= runner.obs_normalizer.clip).float().mean()))
        return obs, critic_obs

    runner._normalize = recording_normalize
    runner.learn(1)

    limit = alg.max_grad_norm
    actor_scale_joint = [min(1.0, limit / max(1e-12, (a * a + c * c) ** 0.5)) for a, c in norms]
    actor_scale_separate = [min(1.0, limit / max(1e-12, a)) for a, _ in norms]
    print(f"{args.name} {args.checkpoint}: {len(norms)} minibatch steps, max_grad_norm {limit}")
    print(f"  actor grad norm   median {statistics.median(a for a, _ in norms):.3f}  max {max(a for a, _ in norms):.3f}")
    print(f"  critic grad norm  median {statistics.median(c for _, c in norms):.3f}  max {max(c for _, c in norms):.3f}")
    print(f"  actor step scale, joint clip:    mean {statistics.fmean(actor_scale_joint):.3f}  "
          f"min {min(actor_scale_joint):.3f}  (clipped in {sum(s < 1 for s in actor_scale_joint)}/{len(norms)})")
    print(f"  actor step scale, separate clip: mean {statistics.fmean(actor_scale_separate):.3f}  "
          f"min {min(actor_scale_separate):.3f}  (clipped in {sum(s < 1 for s in actor_scale_separate)}/{len(norms)})")
    print(f"  normalised actor obs entries at the clip bound ({runner.obs_normalizer.clip:g}): "
          f"{statistics.fmean(clipped_obs):.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main_with_one_line_errors(main))
