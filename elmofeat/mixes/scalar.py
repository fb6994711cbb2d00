"""Scalar-weight mixes: ``gamma * sum_j w_j h_j``, with fixed weights (``"frozen"``) or
ELMo's softmax-normalised weights learned from labels (``"trainable"``).

* :class:`ScalarMix`: the torch module that is learned (Peters et al. 2018, eq. 1);
* :class:`LinearMix`: the fitted NumPy form of both, as AllenNLP's
  ``ScalarMix(trainable=False)`` is a scalar mix whose weights do not move;
* :func:`fit_frozen` and :func:`fit_trainable`: the registry's ``fit`` of each.

Each ``h_j`` is first divided by a fixed ``layer_scales_j`` (its spread across the
training documents), so that the weights are shares; the fitted form folds the scales
into its weights and applies to the raw layers.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..runtime.torch_helpers import seeded
from .base import LinearInLayers, MixData, MixSettings, fixed_shares
from .head import train_with_head

class LinearMix(LinearInLayers):
    """``gamma * sum_j weights_j h_j``: the fitted ``"trainable"`` or ``"frozen"`` mix.

    Parameters
    ----------
    weights : ndarray (n_layers,)
        Weights of the unscaled layers.
    gamma : float
    shares : ndarray (n_layers,)
        The weights of the scaled layers (what the user reads as ``layer_weights_``).
    dim : int
        Width of a layer (and of the mixed vector).

    Examples
    --------
    >>> import numpy as np
    >>> mix = LinearMix(np.array([0.0, 1.0], np.float32), 2.0, np.array([0.0, 1.0]), dim=3)
    >>> mix.apply(np.ones((4, 2, 3), np.float32))[0]
    array([2., 2., 2.], dtype=float32)
    """

    rowwise = True  # einsum's own loop: a token's sum over layers is its own

    def __init__(self, weights, gamma, shares, dim: int):
        self.weights = np.asarray(weights, dtype=np.float32)
        self.gamma = np.float32(gamma)
        self.shares = np.asarray(shares, dtype=np.float32)
        self.n_features = int(dim)

    @property
    def layer_weights(self) -> np.ndarray:
        return self.shares

    def apply(self, layers):
        return (self.gamma * np.einsum("tld,l->td", layers, self.weights)).astype(np.float32)

    def __repr__(self):
        return f"LinearMix(shares={np.round(self.shares, 3).tolist()}, gamma={float(self.gamma):.3g})"


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

    def __init__(self, n_layers: int, dim: int | None = None, layer_scales=None):
        super().__init__()
        self.dim = dim
        self.scalars = nn.Parameter(torch.empty(n_layers))
        self.gamma = nn.Parameter(torch.empty(()))
        self.register_buffer("layer_scales", scales_tensor(layer_scales, n_layers))
        self.reset_parameters()

    @property
    def output_dim(self) -> int | None:
        """Width of the mixed vector: that of a layer."""
        return self.dim

    def reset_parameters(self) -> None:
        nn.init.zeros_(self.scalars)  # uniform weights to start
        nn.init.ones_(self.gamma)

    def forward(self, layers: torch.Tensor) -> torch.Tensor:
        weights = torch.softmax(self.scalars, dim=0) / self.layer_scales
        return self.gamma * torch.einsum("...ld,l->...d", layers, weights)

    def to_fitted(self, dim: int | None = None) -> LinearMix:
        """The NumPy mix of ``dim``-wide layers (default: the module's ``dim``): its
        weights apply to the unscaled layers (the scales folded in); its ``shares`` are
        the softmax weights of the scaled ones."""
        shares = torch.softmax(self.scalars.detach(), 0)
        return LinearMix((shares / self.layer_scales).numpy().astype(np.float32),
                         np.float32(self.gamma.detach()), shares.numpy().astype(np.float32),
                         self.dim if dim is None else dim)

    def extra_repr(self) -> str:
        return f"n_layers={len(self.scalars)}, dim={self.dim}"


def scales_tensor(layer_scales, n_layers: int) -> torch.Tensor:
    """``layer_scales`` as a float32 tensor of ``n_layers`` positive numbers (None: ones)."""
    if layer_scales is None:
        return torch.ones(n_layers)
    scales = torch.as_tensor(np.asarray(layer_scales, dtype=np.float32))
    if scales.shape != (n_layers,) or not (scales > 0).all():
        raise ValueError(f"layer_scales must be {n_layers} positive numbers, got {layer_scales!r}")
    return scales


def frozen_mix(mix_weights, layer_scales: np.ndarray, dim: int,
               random_state: np.random.RandomState) -> LinearMix:
    """The frozen mix: the shares :func:`~elmofeat.mixes.base.fixed_shares` gives (uniform,
    the user's, or ``"random"`` draws), each a share of the layers divided by
    ``layer_scales``."""
    shares = fixed_shares(mix_weights, len(layer_scales), random_state)
    return LinearMix(shares / layer_scales, 1.0, shares, dim)


def fit_frozen(data: MixData, docs, settings: MixSettings) -> LinearMix:
    """The ``"frozen"`` mix: fixed weights (``settings.mix_weights``), no labels."""
    return frozen_mix(settings.mix_weights, data.layer_scales, data.dim,
                      np.random.RandomState(settings.seed))


def fit_trainable(data: MixData, docs, settings: MixSettings) -> LinearMix:
    """The ``"trainable"`` mix: ``s`` and ``gamma`` learned from the labels of ``docs``."""
    # A forked, seeded torch random state: the same seed gives the same mix, and the
    # caller's global random state is left alone.
    with seeded(settings.seed):
        mix = ScalarMix(data.n_layers, data.dim, data.layer_scales)
        train_with_head(mix, data, np.asarray(docs), settings)
    return mix.to_fitted()
