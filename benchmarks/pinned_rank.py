"""torchrun entry point for benchmarks/scaling.py: pin this rank to core LOCAL_RANK, then run train.py.

    torchrun --nproc_per_node 2 benchmarks/pinned_rank.py train.py --config go2 ...
"""

import os
import runpy
import sys

if __name__ == "__main__":
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[int(os.environ.get("LOCAL_RANK", "0")) % len(cores)]})
    script, sys.argv = sys.argv[1], sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))  # as `python script` would
    runpy.run_path(script, run_name="__main__")
