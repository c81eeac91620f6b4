#!/usr/bin/env bash
# Download the wheels benchmarks/gpu_check.sh installs on a GPU machine without network.
#
#   bash benchmarks/gpu_wheels.sh DIR [PYTHON_VERSION]     (default 3.12, Linux x86-64)
#
# Everything the package needs besides torch (the GPU machine has its CUDA build), with
# dependencies, as binary wheels for that Python. Copy DIR to the GPU machine.
set -euo pipefail
DIR=${1:?usage: bash benchmarks/gpu_wheels.sh DIR [PYTHON_VERSION]}
PYV=${2:-3.12}
python3 -m pip download --quiet --only-binary=:all: --python-version "$PYV" \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform any -d "$DIR" mujoco mujoco-warp warp-lang gymnasium pyyaml tensorboard
ls "$DIR" | wc -l | xargs echo "wheels in $DIR:"
