"""elmofeat.runtime.torch_helpers: seeded blocks, generator states and device names."""

import pytest
import torch

from elmofeat.runtime.torch_helpers import _cuda_index, rng_state, seeded, set_rng_state


def test_a_seeded_block_draws_the_same_and_leaves_the_global_state_alone():
    torch.manual_seed(123)
    before = torch.get_rng_state()
    with seeded(7):
        first = torch.rand(5)
    assert torch.equal(torch.get_rng_state(), before)
    with seeded(7):
        assert torch.equal(torch.rand(5), first)
    with seeded(8):
        assert not torch.equal(torch.rand(5), first)
    assert torch.equal(torch.get_rng_state(), before)


def test_generator_states_round_trip_on_the_cpu():
    state = rng_state("cpu")
    assert set(state) == {"torch_rng"}  # no GPU generator on a CPU device
    draws = torch.rand(3)
    set_rng_state(state, "cpu")
    assert torch.equal(torch.rand(3), draws)


def test_cuda_devices_name_their_generator_without_needing_a_gpu():
    assert _cuda_index(torch.device("cpu")) is None
    assert _cuda_index(torch.device("cuda:1")) == 1
    if not torch.cuda.is_available():
        with pytest.raises((AssertionError, RuntimeError)):  # cuda:0's current device
            _cuda_index(torch.device("cuda"))
