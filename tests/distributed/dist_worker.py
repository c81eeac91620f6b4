"""One rank of a tiny torchrun job, for tests: trains through train.main, then dumps what the tests compare.

    torchrun --standalone --nproc_per_node 2 tests/distributed/dist_worker.py OUT_DIR [train.py arguments]

Each rank writes experiments under OUT_DIR/experiments_rank<r>/ (so a write by a rank other than 0 shows),
and OUT_DIR/rank<r>.pt: final actor/critic parameters, normaliser statistics, and per iteration the
logged (pooled) mean reward with this rank's own episode-window sum and count, and OUT_DIR/threads_rank<r>.txt:
the process's thread count before train.main and after it returned (the process group's gloo threads must
be gone by then, or they can abort the rank at interpreter exit). WORKER_FAIL="rank:iteration" makes that
rank raise after that iteration.
"""

import gc
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
out = Path(sys.argv[1])
rank = int(os.environ.get("RANK", "0"))
os.environ["LEGGED_EXPERIMENTS_DIR"] = str(out / f"experiments_rank{rank}")

(out / f"pid_rank{rank}").write_text(str(os.getpid()))  # for tests that signal one rank

import torch  # noqa: E402

import rl.runner  # noqa: E402
import train  # noqa: E402

fail_rank, fail_iteration = (int(v) for v in os.environ.get("WORKER_FAIL", "-1:-1").split(":"))
original_learn = rl.runner.OnPolicyRunner.learn


def learn(self, num_iterations, on_iteration=None):
    records = []

    def hook(it, metrics):
        stats = self.episode_stats
        records.append({"iteration": it, "mean_reward": metrics.get("mean_reward"),
                        "local_sum": float(sum(stats.returns)), "local_count": len(stats.returns)})
        if rank == fail_rank and it == fail_iteration:
            raise RuntimeError("injected failure")
        return on_iteration(it, metrics) if on_iteration is not None else None

    result = original_learn(self, num_iterations, hook)
    torch.save({"actor": self.actor.state_dict(), "critic": self.critic.state_dict(),
                "obs_normalizer": self.obs_normalizer.state_dict(),
                "critic_obs_normalizer": self.critic_obs_normalizer.state_dict(),
                "iteration": self.current_iteration, "total_env_steps": self.total_env_steps,
                "records": records}, out / f"rank{rank}.pt")
    return result


def thread_count() -> int:
    return len(os.listdir("/proc/self/task"))


rl.runner.OnPolicyRunner.learn = learn
threads_before = thread_count()
code = train.main(sys.argv[2:])
gc.collect()
(out / f"threads_rank{rank}.txt").write_text(f"{threads_before} {thread_count()}")
sys.exit(code)
