#!/usr/bin/env bash
# GPU check of the warp backend on a machine without network, in under 8 minutes.
#
#   bash benchmarks/gpu_check.sh WHEEL_DIR [OUT_DIR]
#
# WHEEL_DIR holds the wheels of what the machine's Python lacks (make it where there is
# network with benchmarks/gpu_wheels.sh). The script installs them into the machine's
# existing environment, which must already have a CUDA build of torch (never replaced:
# only the missing packages are installed, from WHEEL_DIR alone), then writes into OUT_DIR
# (default benchmarks/results/gpu):
#   gpu_bench.json / gpu_bench.txt   collection env steps/s of go2 and qmini at 1024, 4096, 8192 and
#                                    16384 envs, and the end-to-end PPO iteration time at 4096 envs
#   learn_go2/                       benchmarks/learn.py --config go2 --backend warp --minutes 5 and its evaluation
#   summary.txt                      all of it in one text
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
    echo "error: no wheel folder given; usage: bash benchmarks/gpu_check.sh WHEEL_DIR [OUT_DIR]" >&2
    exit 2
fi
WHEELS=$1
OUT=${2:-benchmarks/results/gpu}
LEARN_MINUTES=${LEARN_MINUTES:-5}
PY=${PYTHON:-python3}

if ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
    echo "error: $PY has no CUDA torch or sees no GPU; gpu_check.sh runs on a GPU machine with CUDA torch installed" >&2
    exit 2
fi
if [ ! -d "$WHEELS" ]; then
    echo "error: wheel folder '$WHEELS' does not exist; make one with benchmarks/gpu_wheels.sh" >&2
    exit 2
fi
mkdir -p "$OUT"
start=$(date +%s)
# Only what is missing is installed; the wheels were resolved for this Python by gpu_wheels.sh.
GPU_PACKAGES="mujoco mujoco-warp warp-lang gymnasium pyyaml tensorboard"
"$PY" -m pip install --quiet --no-index --find-links "$WHEELS" $GPU_PACKAGES
"$PY" -c "import mujoco, mujoco_warp, warp, gymnasium, yaml" || { echo "error: the wheels in $WHEELS did not provide mujoco, mujoco_warp, warp, gymnasium and pyyaml" >&2; exit 2; }
export WARP_CACHE_PATH=${WARP_CACHE_PATH:-$HOME/.cache/warp}
echo "installed in $(( $(date +%s) - start )) s; $("$PY" -c 'import torch; print(torch.cuda.get_device_name(0))')"

"$PY" benchmarks/gpu_bench.py --device cuda:0 --iterations 2 --out "$OUT"
echo "benchmarks done at $(( $(date +%s) - start )) s"
"$PY" benchmarks/learn.py --config go2 --backend warp --device cuda:0 --minutes "$LEARN_MINUTES" --num_envs 4096 \
    --eval_episodes 64 --out "$OUT/learn_go2" --experiment learn_go2_warp
{
    cat "$OUT/gpu_bench.txt"
    "$PY" - "$OUT/learn_go2" <<'EOF'
import json, sys
from pathlib import Path
folder = Path(sys.argv[1])
rows = json.loads((folder / "curve_ours.json").read_text())["rows"]
ev = json.loads((folder / "eval.json").read_text())["policies"]["trained"]
print(f"learn.py go2 warp: {rows[-1]['iteration']} iterations in {rows[-1]['minutes']:.1f} min, "
      f"{rows[-1]['env_steps']:,} env steps; play.py --eval over {ev['episodes']} episodes: lin_vel_rmse "
      f"{ev['lin_vel_rmse']:.3f} m/s (target <= 0.25), yaw_rate_rmse {ev['yaw_rate_rmse']:.3f} rad/s (<= 0.3), "
      f"falls {ev['fall_rate']:.1%} (<= 5%)")
EOF
    echo "total $(( $(date +%s) - start )) s"
} | tee "$OUT/summary.txt"
