"""Layer mixes as torch modules: the form in which the supervised mixes are learned.

* :class:`ScalarMix` (``"trainable"``): ELMo's ``gamma * sum_j softmax(s)_j h_j`` with
  ``s`` and ``gamma`` learned from labels;
* :class:`MLPMix` (``"mlp"``): ``relu(W [h_0; h_1; ...; h_L] + b)``, a learned function
  of the concatenated layers.

Each ``h_j`` is first divided by a fixed ``layer_scales_j`` (its spread across the
training documents), so that weights are shares and the MLP gets unit-scale inputs.
``to_fitted()`` gives the NumPy form a fitted vectorizer keeps
(:mod:`elmofeat._fitted_mix`), with the scales folded in, applying to the raw layers;
the frozen mix exists only in that form. Training is in :mod:`elmofeat._mix_training`.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ._fitted_mix import LinearMix, ReluMix

MIXES = ("trainable", "frozen", "mlp")


class ScalarMix(nn.Module):
    """``gamma * sum_j softmax(s)_j * h_j`` (Peters et al. 2018, eq. 1).

    Parameters
    ----------
    n_layers : int
        Number of representations mixed.
    layer_scales : array-like of shape (n_layers,), default=None
        Fixed divisors of the layers, applied before the weights (a buffer, not
        learned): ``h_j / layer_scales_j`` puts every layer on one scale, so that the
        weights are shares. None: ones.

    Shape
    -----
    ``(..., n_layers, dim) -> (..., dim)``

    Examples
    --------
    >>> import torch
    >>> mix = ScalarMix(3)  # starts uniform: s = 0, gamma = 1
    >>> layers = torch.stack([torch.zeros(2, 4), torch.ones(2, 4), 2 * torch.ones(2, 4)], dim=1)
    >>> mix(layers)[0]
    tensor([1., 1., 1., 1.], grad_fn=<SelectBackward0>)
    """

    def __init__(self, n_layers: int, layer_scales=None):
        super().__init__()
        self.scalars = nn.Parameter(torch.empty(n_layers))
        self.gamma = nn.Parameter(torch.empty(()))
        self.register_buffer("layer_scales", _scales(layer_scales, n_layers))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.zeros_(self.scalars)  # uniform weights to start
        nn.init.ones_(self.gamma)

    def forward(self, layers: torch.Tensor) -> torch.Tensor:
        weights = torch.softmax(self.scalars, dim=0) / self.layer_scales
        return self.gamma * torch.einsum("...ld,l->...d", layers, weights)

    def to_fitted(self, dim: int) -> LinearMix:
        """The NumPy mix of ``dim``-wide layers: its weights apply to the unscaled layers
        (the scales folded in); its ``shares`` are the softmax weights of the scaled ones."""
        shares = torch.softmax(self.scalars.detach(), 0)
        return LinearMix((shares / self.layer_scales).numpy().astype(np.float32),
                         np.float32(self.gamma.detach()), shares.numpy().astype(np.float32),
                         dim)

    def extra_repr(self) -> str:
        return f"n_layers={len(self.scalars)}"


class MLPMix(nn.Module):
    """``relu(W [h_0; ...; h_L] + b)``: a learned function of the concatenated layers.

    Parameters
    ----------
    n_layers, dim, output_dim : int
    layer_scales : array-like of shape (n_layers,), default=None
        Fixed divisors of the layers before the linear map (see :class:`ScalarMix`):
        Kaiming initialisation assumes inputs on a unit scale. None: ones.

    Shape
    -----
    ``(..., n_layers, dim) -> (..., output_dim)``

    Examples
    --------
    >>> import torch
    >>> _ = torch.manual_seed(0)
    >>> MLPMix(n_layers=3, dim=4, output_dim=5)(torch.randn(7, 3, 4)).shape
    torch.Size([7, 5])
    """

    def __init__(self, n_layers: int, dim: int, output_dim: int, layer_scales=None):
        super().__init__()
        self.linear = nn.Linear(n_layers * dim, output_dim)
        # One divisor per input feature: each layer's scale repeated over its width.
        self.register_buffer("input_scales",
                             _scales(layer_scales, n_layers).repeat_interleave(dim))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.kaiming_uniform_(self.linear.weight, nonlinearity="relu")
        nn.init.zeros_(self.linear.bias)

    def forward(self, layers: torch.Tensor) -> torch.Tensor:
        # W (x / s) = (W / s) x: the scales folded into the weight, no copy of the layers.
        weight = self.linear.weight / self.input_scales
        return F.relu(F.linear(layers.flatten(-2), weight, self.linear.bias))

    def to_fitted(self) -> ReluMix:
        """The NumPy mix of the unscaled layers (the scales folded into ``weight``)."""
        weight = self.linear.weight.detach() / self.input_scales
        return ReluMix(weight.numpy().T.copy(), self.linear.bias.detach().numpy().copy())


def _scales(layer_scales, n_layers: int) -> torch.Tensor:
    if layer_scales is None:
        return torch.ones(n_layers)
    scales = torch.as_tensor(np.asarray(layer_scales, dtype=np.float32))
    if scales.shape != (n_layers,) or not (scales > 0).all():
        raise ValueError(f"layer_scales must be {n_layers} positive numbers, got {layer_scales!r}")
    return scales
