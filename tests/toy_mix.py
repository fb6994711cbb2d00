"""A toy layer mix, declared the way a user declares one: this file and one registry line
(``elmofeat.mixes.register(SPEC)``, made by tests/test_mix_registry.py).

``"top"``: a linear map of the top layer alone, learned from labels through elmofeat's
head-training loop.
"""

import numpy as np
from torch import nn

from elmofeat.runtime.torch_helpers import seeded
from elmofeat.mixes import MixSpec
from elmofeat.mixes.base import FittedMix
from elmofeat.mixes.head import train_with_head


class TopLayerMix(FittedMix):
    """``h_L @ weight + bias``, fitted (NumPy only)."""

    def __init__(self, weight, bias):
        self.weight = np.asarray(weight, dtype=np.float32)
        self.bias = np.asarray(bias, dtype=np.float32)
        self.n_features = self.weight.shape[1]

    def apply(self, layers):
        return (layers[:, -1, :] @ self.weight + self.bias).astype(np.float32)


class TopLayerLinear(nn.Module):
    """``(..., n_layers, dim) -> (..., dim)``: a linear map of the scaled top layer."""

    def __init__(self, dim, scale):
        super().__init__()
        self.linear = nn.Linear(dim, dim)
        self.scale = float(scale)

    @property
    def output_dim(self):
        return self.linear.out_features

    def forward(self, layers):
        return self.linear(layers[..., -1, :] / self.scale)


def fit_top(data, docs, settings):
    with seeded(settings.seed):
        module = TopLayerLinear(data.dim, data.layer_scales[-1])
        train_with_head(module, data, np.asarray(docs), settings)
    weight = module.linear.weight.detach().numpy().T / module.scale
    return TopLayerMix(weight, module.linear.bias.detach().numpy())


SPEC = MixSpec("top", "top-layer", fit=fit_top, fitted_types=("tests.toy_mix.TopLayerMix",),
               learning_rate=0.01, parameters=("cv", "mix_epochs"),
               description="a linear map of the top layer, learned from labels")
