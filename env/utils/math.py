"""Batched quaternion helpers. Quaternions are (w, x, y, z), MuJoCo's order."""

from __future__ import annotations

import torch


def quat_rotate_inverse(q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Rotate vectors v (N, 3) from the world frame into the body frame of q (N, 4)."""
    w, xyz = q[:, :1], q[:, 1:]
    t = 2.0 * torch.cross(xyz, v, dim=1)
    return v - w * t + torch.cross(xyz, t, dim=1)


def quat_from_yaw(yaw: torch.Tensor) -> torch.Tensor:
    """(N,) yaw angles -> (N, 4) quaternions about +z."""
    half = 0.5 * yaw
    zeros = torch.zeros_like(yaw)
    return torch.stack([torch.cos(half), zeros, zeros, torch.sin(half)], dim=1)


def quat_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    aw, ax, ay, az = a.unbind(1)
    bw, bx, by, bz = b.unbind(1)
    return torch.stack([
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    ], dim=1)


def sample_uniform(low: float, high: float, shape: tuple[int, ...], device: torch.device, generator: torch.Generator | None = None) -> torch.Tensor:
    return low + (high - low) * torch.rand(shape, device=device, generator=generator)


def yaw_from_quat(q: torch.Tensor) -> torch.Tensor:
    """Heading (rad, about world z) of (w, x, y, z) quaternions (..., 4)."""
    w, x, y, z = q.unbind(-1)
    return torch.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def rotate_by_yaw(xy: torch.Tensor, yaw: torch.Tensor) -> torch.Tensor:
    """Planar vectors (..., 2) turned by yaw (rad, broadcast against xy's leading dims) about world z."""
    c, s = torch.cos(yaw), torch.sin(yaw)
    x, y = xy.unbind(-1)
    return torch.stack([c * x - s * y, s * x + c * y], dim=-1)


def wrap_to_pi(angle: torch.Tensor) -> torch.Tensor:
    return torch.remainder(angle + torch.pi, 2 * torch.pi) - torch.pi
