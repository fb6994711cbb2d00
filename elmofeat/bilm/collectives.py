"""Collective operations for data-parallel pretraining (torch.distributed).

Every process runs the same ``BiLM.fit``; the engine starts every process from rank
0's weights (:func:`broadcast_parameters`), gives each its share of the batches and
averages the gradients after each backward pass (:func:`average_gradients`), as
:class:`~torch.nn.parallel.DistributedDataParallel` does, so all processes hold the
same weights. Outside a process group every function is a no-op.

The gradients are averaged here rather than by ``DistributedDataParallel`` because
the adaptive softmax leaves a tail cluster without gradient in any batch with no word
of that cluster: DDP then needs ``find_unused_parameters=True``, an extra traversal of
the autograd graph every step and a warning in every run. :func:`average_gradients`
sends one flat buffer per step and keeps a one-process run's meaning: a parameter that
no process used keeps no gradient (AdamW leaves it alone), one that some processes
used is averaged with zeros from the others.

The torchrun entry point is :mod:`elmofeat.bilm.distributed`.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import nn


def world() -> tuple[int, int]:
    """(rank, world size): (0, 1) unless a torch.distributed process group is running."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def _collective_device() -> torch.device:
    # nccl reduces only tensors on the process's GPU; gloo works on CPU tensors.
    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def all_reduce_sum(values: list[float]) -> list[float]:
    """The sums of ``values`` over all processes (the values themselves in one process)."""
    if world()[1] == 1:
        return values
    tensor = torch.tensor(values, dtype=torch.float64, device=_collective_device())
    dist.all_reduce(tensor)
    return tensor.tolist()


def broadcast_parameters(module: nn.Module) -> None:
    """Give every process rank 0's parameters and buffers (one start for all)."""
    if world()[1] == 1:
        return
    for tensor in [*module.parameters(), *module.buffers()]:
        dist.broadcast(tensor.data, src=0)


def average_gradients(parameters) -> None:
    """Replace each gradient by its mean over all processes, in one all-reduce.

    Parameters
    ----------
    parameters : iterable of nn.Parameter
        The same parameters in the same order on every process. A parameter without
        gradient on every process keeps ``grad=None``; one with a gradient on some
        processes only gets the mean of theirs and zeros from the others.
    """
    rank, size = world()
    params = [p for p in parameters if p.requires_grad]
    if size == 1 or not params:
        return
    device = params[0].device
    parts = [(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1).float()
             for p in params]
    has_grad = torch.tensor([float(p.grad is not None) for p in params], device=device)
    flat = torch.cat([*parts, has_grad])
    dist.all_reduce(flat)
    flat /= size
    offset = 0
    for p in params:
        n = p.numel()
        p.grad = flat[offset:offset + n].view_as(p).to(p.dtype).clone()
        offset += n
    for p, used in zip(params, flat[offset:].tolist()):
        if used == 0.0:
            p.grad = None
