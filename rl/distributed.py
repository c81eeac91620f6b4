"""Data-parallel training on torch.distributed: N processes (torchrun), one policy.

    torchrun --nproc_per_node 2 train.py --config go2 --name run1

torchrun starts one process per rank and sets RANK, WORLD_SIZE, LOCAL_RANK and
the rendezvous variables; `setup` joins the process group when WORLD_SIZE > 1
and returns a `Sync` (a single process gets the no-op base class, so the
training code has one path). What keeps the ranks one job:

- every rank simulates its own envs (seed + rank) and collects its own rollout;
- the parameters start equal (broadcast from rank 0 after building or resuming);
- every minibatch, the gradients are averaged over ranks (one all_reduce of one
  flat buffer) before clipping and the optimizer step, so every rank takes the
  same step and the parameters stay bit-identical;
- the adaptive learning rate follows the KL averaged over ranks;
- the observation normalisers merge the statistics of every rank's batch;
- a skipped rollout (NaN/inf on any rank) is skipped by all, a stop request
  (Ctrl-C, SIGTERM) on any rank stops all after the same iteration;
- the logged episode statistics are pooled over ranks.

Only rank 0 writes (experiment folder, checkpoints, TensorBoard, console).
Collectives run on the CPU with gloo, or on each rank's GPU with NCCL.
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Iterable

import torch
import torch.distributed as dist

BACKENDS = ("auto", "gloo", "nccl")
TIMEOUT_S = 300  # a collective that waits longer than this fails (a rank died without closing its sockets)


def world_size_from_env() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def pick_backend(requested: str, device: str) -> str:
    """gloo or nccl: `auto` is NCCL when this rank trains on a CUDA device and NCCL is available, else gloo."""
    if requested not in BACKENDS:
        raise ValueError(f"--dist_backend {requested!r}: use one of {', '.join(BACKENDS)}")
    if requested != "auto":
        if requested == "nccl" and not (torch.cuda.is_available() and dist.is_nccl_available()):
            raise ValueError("--dist_backend nccl needs CUDA and a torch build with NCCL; use gloo on CPUs")
        return requested
    cuda = str(device).startswith("cuda") and torch.cuda.is_available()
    return "nccl" if cuda and dist.is_nccl_available() else "gloo"


class Sync:
    """One process: every reduction is the identity."""

    rank = 0
    world_size = 1
    local_rank = 0
    backend = "none"

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    def sum_(self, t: torch.Tensor) -> torch.Tensor:
        """Sum over ranks, in place; returns t."""
        return t

    def mean_(self, t: torch.Tensor) -> torch.Tensor:
        return self.sum_(t).div_(self.world_size)

    def any(self, flag: bool) -> bool:
        """True on every rank if it is True on some rank."""
        return flag

    def union(self, names: Iterable[str]) -> list[str]:
        """The sorted union of every rank's names (e.g. episode terms some rank has not seen yet)."""
        return sorted(set(names))

    def average_gradients(self, params: Iterable[torch.nn.Parameter]) -> None:
        """Replace every parameter's gradient by its mean over ranks."""

    def broadcast_(self, tensors: Iterable[torch.Tensor]) -> None:
        """Overwrite the tensors with rank 0's values."""

    def close(self) -> None:
        pass


class DistributedSync(Sync):
    """Ranks of a torch.distributed process group (gloo or NCCL)."""

    def __init__(self, backend: str, device: str) -> None:
        self.backend = pick_backend(backend, device)
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if self.backend == "nccl":
            torch.cuda.set_device(self.local_rank)
        # Imported before the group exists, on purpose: torch.distributed.nn.functional binds
        # `group=group.WORLD` as default arguments when first imported, and torch imports it lazily
        # (building an optimizer loads torch._dynamo, which loads FSDP, which loads it). Imported after
        # init_process_group, those defaults keep the gloo group alive past destroy_process_group; its
        # worker threads then outlive main() and may free their last collective's tensors while the
        # interpreter shuts down, which aborts the rank (SIGABRT, "terminate called without an active
        # exception") after a finished run.
        import torch.distributed.nn  # noqa: F401
        dist.init_process_group(self.backend, timeout=timedelta(seconds=TIMEOUT_S))
        self.rank = dist.get_rank()
        self.world_size = dist.get_world_size()
        # NCCL reduces CUDA tensors only; gloo is used with host tensors
        self.comm_device = torch.device("cuda", self.local_rank) if self.backend == "nccl" else torch.device("cpu")

    def sum_(self, t: torch.Tensor) -> torch.Tensor:
        buf = t if t.device == self.comm_device else t.to(self.comm_device)
        dist.all_reduce(buf)
        if buf is not t:
            t.copy_(buf)
        return t

    def any(self, flag: bool) -> bool:
        t = torch.tensor([1.0 if flag else 0.0], device=self.comm_device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return bool(t.item() > 0)

    def union(self, names: Iterable[str]) -> list[str]:
        gathered: list = [None] * self.world_size
        dist.all_gather_object(gathered, sorted(set(names)))
        return sorted(set().union(*gathered))

    def average_gradients(self, params: Iterable[torch.nn.Parameter]) -> None:
        params = [p for p in params if p.grad is not None]
        if not params:
            return
        flat = torch.cat([p.grad.reshape(-1) for p in params])
        self.mean_(flat)
        offset = 0
        for p in params:
            n = p.grad.numel()
            p.grad.copy_(flat[offset:offset + n].view_as(p.grad))
            offset += n

    def broadcast_(self, tensors: Iterable[torch.Tensor]) -> None:
        for t in tensors:
            buf = t if t.device == self.comm_device else t.to(self.comm_device)
            dist.broadcast(buf, src=0)
            if buf is not t:
                t.copy_(buf)

    def close(self) -> None:
        if dist.is_initialized():
            dist.destroy_process_group()


def setup(backend: str = "auto", device: str = "cpu") -> Sync:
    """Join the process group when started by torchrun with WORLD_SIZE > 1, else a single-process `Sync`."""
    if world_size_from_env() <= 1:
        return Sync()
    return DistributedSync(backend, device)


def pooled_mean(sync: Sync, total: float, count: float) -> float | None:
    """(sum of values, number of values) of this rank -> mean over every rank's values; None if there are none."""
    t = sync.sum_(torch.tensor([float(total), float(count)], dtype=torch.float64))
    return float(t[0] / t[1]) if t[1] > 0 else None


_PEER_LOST = ("Connection closed by peer", "Connection reset by peer", "remote worker", "NCCL communicator was aborted")


def lost_a_peer(err: BaseException) -> bool:
    """The error a rank gets when another rank died mid-collective (gloo raises a plain RuntimeError)."""
    return isinstance(err, dist.DistError) or any(text in str(err) for text in _PEER_LOST)
