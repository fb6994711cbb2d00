"""elmofeat.bilm.softmax: full, sampled and adaptive output layers."""

import pytest
import torch

from elmofeat.bilm.softmax import AdaptiveSoftmax, FullSoftmax, SampledSoftmax, bucketed_rows


@pytest.mark.parametrize("make", [
    lambda: FullSoftmax(8, 40),
    lambda: SampledSoftmax(8, 40, n_samples=10),
    lambda: AdaptiveSoftmax(8, 40),
])
def test_softmax_log_likelihoods_are_normalised(make):
    torch.manual_seed(0)
    softmax = make().eval()
    hidden = torch.randn(3, 8)
    total = torch.stack([
        softmax.log_likelihood(hidden, torch.full((3,), w, dtype=torch.long)).exp()
        for w in range(40)
    ]).sum(0)
    torch.testing.assert_close(total, torch.ones(3), rtol=1e-4, atol=1e-4)


def test_sampled_softmax_trains_on_samples_and_evaluates_exactly():
    torch.manual_seed(0)
    softmax = SampledSoftmax(8, 500, n_samples=20)
    hidden, targets = torch.randn(16, 8), torch.randint(0, 500, (16,))
    exact = FullSoftmax.loss(softmax, hidden, targets)
    softmax.eval()
    torch.testing.assert_close(softmax.loss(hidden, targets), exact)
    softmax.train()
    sampled = softmax.loss(hidden, targets)
    assert torch.isfinite(sampled) and not torch.isclose(sampled, exact)


def test_bucketed_rows_bounds_the_shapes_and_the_padding():
    sizes = [bucketed_rows(n) for n in range(1, 20_001)]
    assert all(size >= n for n, size in enumerate(sizes, start=1))
    assert all(size <= max(16, 1.125 * n) for n, size in enumerate(sizes, start=1))
    assert sizes == sorted(sizes)
    # 20,000 row counts come down to a few dozen shapes: 8 per doubling.
    assert len(set(sizes)) <= 8 * 11 + 1


def test_adaptive_softmax_scores_match_torch_module():
    # The bucketed scoring is the same function as torch's AdaptiveLogSoftmaxWithLoss,
    # gradients included, for row counts on and off the bucket sizes.
    torch.manual_seed(0)
    softmax = AdaptiveSoftmax(16, 300, cutoffs=[20, 100])
    for n in (1, 16, 17, 100, 333):
        hidden = torch.randn(n, 16, requires_grad=True)
        targets = torch.randint(0, 300, (n,))
        targets[0] = 299  # the last cluster is never empty
        ours = softmax.loss(hidden, targets)
        (our_grad,) = torch.autograd.grad(ours, hidden)
        reference = softmax.adaptive(hidden, targets)
        (reference_grad,) = torch.autograd.grad(reference.loss, hidden)
        torch.testing.assert_close(ours, reference.loss)
        torch.testing.assert_close(our_grad, reference_grad)
        torch.testing.assert_close(softmax.log_likelihood(hidden, targets), reference.output)


@pytest.mark.parametrize("make", [
    lambda: FullSoftmax(16, 40),
    lambda: SampledSoftmax(16, 40, n_samples=10),
    lambda: AdaptiveSoftmax(16, 40, cutoffs=[5, 20]),
])
def test_padding_rows_does_not_change_any_score(make):
    # Each row's score is its own: scoring 17 rows (padded to 18) or the first 16 (no
    # padding) gives the same values for those 16.
    torch.manual_seed(0)
    softmax = make().eval()
    hidden, targets = torch.randn(17, 16), torch.randint(0, 40, (17,))
    torch.testing.assert_close(softmax.log_likelihood(hidden, targets)[:16],
                               softmax.log_likelihood(hidden[:16], targets[:16]))
