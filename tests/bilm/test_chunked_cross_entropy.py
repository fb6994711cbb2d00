"""elmofeat.bilm.chunked_cross_entropy: the softmax loss scored a block of rows at a time."""

import pytest
import torch
from torch.nn import functional as F

from elmofeat.bilm import chunked_cross_entropy
from elmofeat.bilm.chunked_cross_entropy import cross_entropy_sum, log_likelihoods, rows_per_block


@pytest.fixture
def small_blocks(monkeypatch):
    # 16-row blocks for 40 words: a few dozen rows already take several blocks and a
    # padded last one.
    monkeypatch.setattr(chunked_cross_entropy, "BLOCK_ELEMENTS", 16 * 40)


def _reference_and_ours(n, with_bias, weight_learns=True):
    torch.manual_seed(n)
    x = torch.randn(n, 8, requires_grad=True)
    weight = torch.randn(40, 8, requires_grad=weight_learns)
    bias = torch.randn(40, requires_grad=True) if with_bias else None
    targets = torch.randint(0, 40, (n,))
    reference = F.cross_entropy(F.linear(x, weight, bias), targets, reduction="sum")
    ours = cross_entropy_sum(x, weight, targets, bias)
    learning = [t for t in (x, weight, bias) if t is not None and t.requires_grad]
    return (reference, torch.autograd.grad(reference, learning),
            ours, torch.autograd.grad(ours, learning))


@pytest.mark.parametrize("n", [1, 16, 17, 50, 100])
@pytest.mark.parametrize("with_bias", [False, True])
def test_loss_and_gradients_match_cross_entropy(small_blocks, n, with_bias):
    reference, reference_grads, ours, our_grads = _reference_and_ours(n, with_bias)
    torch.testing.assert_close(ours, reference)
    for mine, theirs in zip(our_grads, reference_grads):
        torch.testing.assert_close(mine, theirs)


def test_a_frozen_weight_gets_no_gradient_and_x_and_bias_still_do(small_blocks):
    reference, reference_grads, ours, our_grads = _reference_and_ours(50, True, False)
    torch.testing.assert_close(ours, reference)
    assert len(our_grads) == 2  # x and the bias
    for mine, theirs in zip(our_grads, reference_grads):
        torch.testing.assert_close(mine, theirs)


def test_upstream_gradient_scales_every_gradient(small_blocks):
    torch.manual_seed(0)
    x, weight = torch.randn(30, 8, requires_grad=True), torch.randn(40, 8, requires_grad=True)
    targets = torch.randint(0, 40, (30,))
    grads = torch.autograd.grad(cross_entropy_sum(x, weight, targets) * -2.5, (x, weight))
    reference = torch.autograd.grad(
        F.cross_entropy(x @ weight.t(), targets, reduction="sum") * -2.5, (x, weight))
    for mine, theirs in zip(grads, reference):
        torch.testing.assert_close(mine, theirs)


def test_log_likelihoods_are_each_rows_log_softmax(small_blocks):
    torch.manual_seed(0)
    x, weight, bias = torch.randn(37, 8), torch.randn(40, 8), torch.randn(40)
    targets = torch.randint(0, 40, (37,))
    expected = torch.log_softmax(F.linear(x, weight, bias), 1).gather(1, targets[:, None])[:, 0]
    torch.testing.assert_close(log_likelihoods(x, weight, targets, bias), expected)
    # A row's score does not depend on the rows that share its block.
    torch.testing.assert_close(log_likelihoods(x[5:9], weight, targets[5:9], bias), expected[5:9])


def test_bf16_autocast_multiplies_in_bf16_like_linear():
    torch.manual_seed(0)
    x, weight = torch.randn(300, 32, requires_grad=True), torch.randn(500, 32, requires_grad=True)
    targets = torch.randint(0, 500, (300,))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ours = cross_entropy_sum(x, weight, targets)
        reference = F.cross_entropy(F.linear(x, weight).float(), targets, reduction="sum")
    assert ours.dtype == torch.float32
    torch.testing.assert_close(ours, reference, rtol=1e-3, atol=1e-2)
    grads = torch.autograd.grad(ours, (x, weight))
    reference_grads = torch.autograd.grad(reference, (x, weight))
    for mine, theirs in zip(grads, reference_grads):
        assert mine.dtype == torch.float32
        torch.testing.assert_close(mine, theirs, rtol=2e-2, atol=2e-2)
    exact = F.cross_entropy(F.linear(x, weight), targets, reduction="sum").detach()
    assert abs(float(ours.detach() - exact)) / float(exact) < 1e-2  # and close to fp32


def test_no_step_holds_all_the_scores():
    # 8,192 rows x 4,000 words is 131 MB of float32 scores; a block is at most 8 MB,
    # and every buffer of the loss and its backward stays far below the whole.
    from torch.profiler import ProfilerActivity, profile

    torch.manual_seed(0)
    x = torch.randn(8192, 64, requires_grad=True)
    weight = torch.randn(4000, 64, requires_grad=True)
    targets = torch.randint(0, 4000, (8192,))
    assert rows_per_block(4000) * 4000 * 4 <= 8 * 2**20
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as profiler:
        cross_entropy_sum(x, weight, targets).backward()
    # An operation's own memory: what it allocated and did not free before returning.
    largest = max(e.self_cpu_memory_usage for e in profiler.events())
    assert 2 * 2**20 < largest <= 8 * 2**20
    assert torch.isfinite(x.grad).all() and torch.isfinite(weight.grad).all()


def test_rows_per_block_is_a_bounded_power_of_two():
    for n_words in (1, 40, 1101, 5000, 50_000, 10**7):
        rows = rows_per_block(n_words)
        assert 16 <= rows <= 4096 and rows & (rows - 1) == 0
        assert rows == 16 or rows * n_words <= chunked_cross_entropy.BLOCK_ELEMENTS


def test_other_devices_score_in_larger_blocks():
    # A CPU's blocks stay under glibc's mmap threshold; elsewhere the allocator caches
    # blocks, so they are as large as DEVICE_BLOCK_ELEMENTS allows (fewer launches).
    for n_words in (40, 1101, 5000, 50_000):
        rows = rows_per_block(n_words, "cuda")
        assert rows & (rows - 1) == 0 and rows >= rows_per_block(n_words)
        assert rows * n_words <= chunked_cross_entropy.DEVICE_BLOCK_ELEMENTS
        assert 2 * rows * n_words > chunked_cross_entropy.DEVICE_BLOCK_ELEMENTS
    assert rows_per_block(5000, "cuda") == 8192 and rows_per_block(5000, "cpu") == 256
