"""PPO training: algorithm (rl.alg), rollout storage, observation normaliser, runner."""

from config.identity import cfg_hash
from rl.alg.ppo import PPO
from rl.inference import InferencePolicy, load_inference_policy
from rl.normalizer import EmpiricalNormalizer
from rl.runner import OnPolicyRunner, TrainingHalted
from rl.seed import set_seed
from rl.storage import RolloutStorage

__all__ = ["PPO", "EmpiricalNormalizer", "InferencePolicy", "OnPolicyRunner", "RolloutStorage", "TrainingHalted",
           "cfg_hash", "load_inference_policy", "set_seed"]
