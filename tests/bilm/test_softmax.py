"""elmofeat.bilm.softmax: full, sampled and adaptive output layers."""

import pytest
import torch

from elmofeat.bilm.softmax import AdaptiveSoftmax, FullSoftmax, SampledSoftmax


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
