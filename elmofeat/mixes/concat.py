"""The concatenated mix: the frozen mix's terms side by side, ``[w_0 h_0; w_1 h_1; w_2 h_2]``.

The frozen mix adds its weighted layers, so a classifier on top sees one sum; here it
sees each layer, weighted alike, and learns how much to lean on each from its own
labels, as ELMo's trainable weights would, but per feature. Summing the blocks of these
features gives the frozen mix's features exactly: a linear classifier on them can do
anything it could do on the frozen ones. No labels are needed.

* :class:`ConcatMix`: the fitted NumPy form;
* :func:`fit_concat`: the registry's ``fit``.

Like every mix, each ``h_j`` is first divided by ``layer_scales_j`` (its spread across
the training documents); the fitted form folds the scales into its weights.
"""

from __future__ import annotations

import numpy as np

from .base import LinearInLayers, MixData, MixSettings, fixed_shares


class ConcatMix(LinearInLayers):
    """``[weights_0 h_0; ...; weights_L h_L]``: the fitted ``"concat"`` mix.

    Parameters
    ----------
    weights : ndarray (n_layers,)
        Weights of the unscaled layers (each layer's share divided by its scale).
    shares : ndarray (n_layers,)
        The weights of the scaled layers (what the user reads as ``layer_weights_``).
    dim : int
        Width of a layer; the mix gives ``n_layers * dim`` features, layer by layer.

    Shape
    -----
    ``apply``: ``(n_tokens, n_layers, dim) -> (n_tokens, n_layers * dim)``

    Examples
    --------
    >>> import numpy as np
    >>> mix = ConcatMix(np.array([1.0, 0.5], np.float32), np.array([1.0, 0.5]), dim=2)
    >>> mix.apply(np.ones((3, 2, 2), np.float32))[0]
    array([1. , 1. , 0.5, 0.5], dtype=float32)
    """

    rowwise = True  # a token's row is its own layers, scaled: no product over tokens

    def __init__(self, weights, shares, dim: int):
        self.weights = np.asarray(weights, dtype=np.float32)
        self.shares = np.asarray(shares, dtype=np.float32)
        self.dim = int(dim)
        self.n_features = len(self.weights) * self.dim

    @property
    def layer_weights(self) -> np.ndarray:
        return self.shares

    def apply(self, layers):
        n_tokens, n_layers, dim = layers.shape
        if (n_layers, dim) != (len(self.weights), self.dim):
            raise ValueError(f"ConcatMix mixes {len(self.weights)} layers of width {self.dim}, "
                             f"got layers of shape {layers.shape}")
        scaled = layers * self.weights[None, :, None]
        return scaled.reshape(n_tokens, n_layers * dim).astype(np.float32, copy=False)

    def __repr__(self):
        return f"ConcatMix(shares={np.round(self.shares, 3).tolist()}, dim={self.dim})"


def fit_concat(data: MixData, docs, settings: MixSettings) -> ConcatMix:
    """The ``"concat"`` mix: the frozen mix's shares (``settings.mix_weights``; uniform by
    default), each layer kept apart. No labels."""
    shares = fixed_shares(settings.mix_weights, data.n_layers,
                          np.random.RandomState(settings.seed))
    return ConcatMix(shares / data.layer_scales, shares, data.dim)
