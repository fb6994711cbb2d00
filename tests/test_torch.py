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


def test_forward_hooks_of_every_kind_are_found_in_this_torch():
    # forward_hooks reads torch's hook registries, which torch does not document: each
    # kind of hook must be seen in the tested range (torch 2.13).
    from elmofeat.runtime.torch_helpers import forward_hooks

    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))
    assert forward_hooks(model) == []
    registers = [lambda: model[1].register_forward_hook(lambda m, i, o: o),
                 lambda: model[0].register_forward_pre_hook(lambda m, i: i),
                 lambda: model.register_forward_hook(lambda m, i, o: o, with_kwargs=True),
                 lambda: torch.nn.modules.module.register_module_forward_hook(
                     lambda m, i, o: o),
                 lambda: torch.nn.modules.module.register_module_forward_pre_hook(
                     lambda m, i: i)]
    expected = [["1"], ["0"], ["the model"], ["global"], ["global"]]
    for register, where in zip(registers, expected):
        handle = register()
        try:
            assert forward_hooks(model) == where
        finally:
            handle.remove()
        assert forward_hooks(model) == []
