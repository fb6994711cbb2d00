"""The MLP mix: ``relu(W [h_0; ...; h_L] + b)``, a learned function of the concatenated
layers, and the alignment that keeps cross-fitted MLP mixes in one feature space.

* :class:`MLPMix`: the torch module that is learned;
* :class:`ReluMix`: its fitted NumPy form, with the affine map of its alignment;
* :func:`fit_mlp`: the registry's ``fit``.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ..runtime.torch_helpers import bf16_supported, seeded
from .base import FittedMix, MixData, MixSettings, one_blas_thread, rowwise_product
from .head import train_with_head
from .scalar import scales_tensor


class ReluMix(FittedMix):
    """``relu([h_0; ...; h_L] @ weight + bias)``: the fitted ``"mlp"`` mix.

    Parameters
    ----------
    weight : ndarray (n_layers * dim, n_features)
    bias : ndarray (n_features,)
    alignment : ndarray (n_pooled + 1, n_pooled), default=None
        An affine map ``[pooled, 1] @ alignment`` applied to the pooled features (an
        empty document stays a zero vector).
    """

    def __init__(self, weight, bias, alignment=None):
        self.weight = np.asarray(weight, dtype=np.float32)
        self.bias = np.asarray(bias, dtype=np.float32)
        self.alignment = None if alignment is None else np.asarray(alignment, dtype=np.float32)
        self.n_features = self.weight.shape[1]

    def apply(self, layers):
        flat = layers.reshape(len(layers), layers.shape[1] * layers.shape[2])  # 0 tokens too
        with one_blas_thread():  # also when called directly, not through pool
            return np.maximum(flat @ self.weight + self.bias, 0.0, dtype=np.float32)

    def aligned(self, alignment) -> "ReluMix":
        """The same mix followed by the affine map ``alignment``."""
        return ReluMix(self.weight, self.bias, alignment)

    def _after_pooling(self, pooled, offsets):
        if self.alignment is None:
            return pooled
        with one_blas_thread():
            pooled = (rowwise_product(pooled, self.alignment[:-1])
                      + self.alignment[-1]).astype(np.float32)
        pooled[np.diff(offsets) == 0] = 0.0  # an empty document stays a zero vector
        return pooled

    def __repr__(self):
        return f"ReluMix(n_features={self.n_features}, aligned={self.alignment is not None})"


class MLPMix(nn.Module):
    """``relu(W [h_0; ...; h_L] + b)``: a learned function of the concatenated layers.

    Parameters
    ----------
    n_layers, dim, output_dim : int
    layer_scales : array-like of shape (n_layers,), default=None
        Fixed divisors of the layers before the linear map (see
        :class:`~elmofeat.mixes.scalar.ScalarMix`): Kaiming initialisation assumes inputs
        on a unit scale. None: ones.

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
                             scales_tensor(layer_scales, n_layers).repeat_interleave(dim))
        self.reset_parameters()

    @property
    def output_dim(self) -> int:
        return self.linear.out_features

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


def fit_alignment(trained: ReluMix, trained_features: np.ndarray,
                  initial_features: np.ndarray) -> ReluMix:
    """Add to an MLP mix the affine map that best expresses its pooled document features
    (``trained_features``) in the feature space of its own (untrained, label-free)
    initialisation (``initial_features``, of the same documents): least squares.

    Cross-fitting learns one MLP per fold; each ends in a differently rotated and scaled
    feature space, and a classifier trained on their out-of-fold features, side by side,
    would mix incompatible spaces (measured on AG News: accuracy 0.65 instead of 0.88).
    Every fold's MLP and the final one start from the same initialisation, and each is
    mapped into that common space by least squares on the documents it was trained on,
    so no fold uses labels it should not see.
    """
    design = np.hstack([trained_features, np.ones((len(trained_features), 1), np.float32)])
    matrix, *_ = np.linalg.lstsq(design.astype(np.float64), initial_features.astype(np.float64),
                                 rcond=None)
    return trained.aligned(matrix.astype(np.float32))


def alignment_documents(docs: np.ndarray, unlabelled: np.ndarray, n_features: int,
                        seed: int) -> np.ndarray:
    """The documents an MLP mix's alignment is fitted on: ``docs`` and, when they are too
    few, unlabelled ones.

    The alignment is a least-squares map with ``n_features + 1`` coefficients per output
    and uses no label. Fitted on the few documents of a few-label fit it is
    underdetermined (200 labels against 257 coefficients), and the features of every
    other document collapse (measured on AG News with 200 labels: accuracy 0.46). So
    unlabelled documents (``y == -1``) join, in a seeded random order, until there are
    ``10 * (n_features + 1)`` rows. With enough labelled documents, or none unlabelled,
    it is ``docs`` unchanged.
    """
    wanted = 10 * (n_features + 1) - len(docs)
    if wanted <= 0 or len(unlabelled) == 0:
        return docs
    chosen = np.random.default_rng(seed).permutation(np.asarray(unlabelled))[:wanted]
    return np.concatenate([docs, np.sort(chosen)])


def fit_mlp(data: MixData, docs, settings: MixSettings) -> ReluMix:
    """The ``"mlp"`` mix learned from the labels of ``docs``, then aligned (on ``docs``
    and, when they are few, unlabelled documents) to the features of its initialisation."""
    docs = np.asarray(docs)
    with seeded(settings.seed):
        mix = MLPMix(data.n_layers, data.dim, settings.mlp_dim, data.layer_scales)
        initial = mix.to_fitted()
        # bf16 for the per-token MLP only where the CPU has it natively.
        train_with_head(mix, data, docs, settings,
                        token_bf16=bf16_supported(torch.device("cpu")))
    trained = mix.to_fitted()
    width = settings.mlp_dim * (2 if settings.pooling == "meanmax" else 1)
    on = alignment_documents(docs, data.targets.unlabelled, width, settings.seed)
    # The alignment is the fit's own least squares: its features need not be those of
    # each document alone, and one product per chunk is far faster than one per document.
    return fit_alignment(trained, trained.features(data, on, settings.pooling,
                                                   batch_invariant=False),
                         initial.features(data, on, settings.pooling, batch_invariant=False))
