"""Gradient averaging across processes (elmofeat.bilm.collectives), with two real gloo processes."""

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from elmofeat.bilm.collectives import all_reduce_sum, average_gradients, broadcast_parameters, world


def _worker(rank, init_file, results):
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=2)
    try:
        torch.manual_seed(rank)  # different starts: broadcast must align them
        module = torch.nn.ModuleDict({
            "shared": torch.nn.Linear(3, 2),
            "rank0_only": torch.nn.Linear(3, 1),
            "never": torch.nn.Linear(3, 1),
        })
        broadcast_parameters(module)
        x = torch.full((1, 3), float(rank + 1))
        loss = module["shared"](x).sum()
        if rank == 0:
            loss = loss + module["rank0_only"](x).sum()
        loss.backward()
        local_shared = module["shared"].weight.grad.clone()
        average_gradients(module.parameters())
        results[rank] = {
            "world": world(),
            "weights": module["shared"].weight.detach().clone(),
            "local_shared": local_shared,
            "shared": module["shared"].weight.grad.clone(),
            "rank0_only": module["rank0_only"].weight.grad.clone(),
            "never": module["never"].weight.grad,
            "sums": all_reduce_sum([1.0, float(rank)]),
        }
    finally:
        dist.destroy_process_group()


def test_average_gradients_matches_one_process_semantics(tmp_path):
    results = mp.Manager().dict()
    mp.spawn(_worker, args=(str(tmp_path / "init"), results), nprocs=2, join=True)
    r0, r1 = results[0], results[1]
    assert r0["world"] == (0, 2) and r1["world"] == (1, 2)
    torch.testing.assert_close(r0["weights"], r1["weights"])  # one start for all
    # d(sum(Wx))/dW = x per output row: x is 1s on rank 0 and 2s on rank 1, mean 1.5.
    torch.testing.assert_close(r0["local_shared"], torch.ones(2, 3))
    torch.testing.assert_close(r0["shared"], torch.full((2, 3), 1.5))
    torch.testing.assert_close(r1["shared"], r0["shared"])
    # Used on rank 0 only: averaged with rank 1's zeros, on both ranks.
    torch.testing.assert_close(r0["rank0_only"], torch.full((1, 3), 0.5))
    torch.testing.assert_close(r1["rank0_only"], r0["rank0_only"])
    # Used nowhere: no gradient, as in one process (AdamW skips it).
    assert r0["never"] is None and r1["never"] is None
    assert r0["sums"] == r1["sums"] == [2.0, 1.0]


def test_helpers_are_no_ops_in_one_process():
    module = torch.nn.Linear(2, 1)
    module(torch.ones(1, 2)).sum().backward()
    before = module.weight.grad.clone()
    broadcast_parameters(module)
    average_gradients(module.parameters())
    assert world() == (0, 1)
    torch.testing.assert_close(module.weight.grad, before)
    assert module.bias.grad is not None
    assert all_reduce_sum([3.0]) == [3.0]
