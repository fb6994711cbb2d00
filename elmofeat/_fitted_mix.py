"""Fitted layer mixes: small NumPy objects that turn a token's layers into one vector.

What a fitted :class:`~elmofeat.ElmoVectorizer` keeps of its mix (``mix_``), so that
transforming and pickling need no torch module:

* :class:`LinearMix`: ``gamma * sum_j w_j h_j``, the ``"trainable"`` mix (learned
  weights) and the ``"frozen"`` one (fixed weights, ``gamma = 1``), as AllenNLP's
  ``ScalarMix(trainable=False)`` is a scalar mix whose weights do not move;
* :class:`ReluMix`: ``relu(W [h_0; ...; h_L] + b)``, the ``"mlp"`` mix, with the affine
  map that puts its pooled features in a common space (see
  :func:`elmofeat._mix_training.fit_alignment`).

Both apply to the unscaled layers (the layer scales are folded into the weights) and
share one interface: ``n_features``, ``apply(layers)``, ``pool(layers, offsets,
pooling)`` and ``pool_stream(pieces, pooling)``.
"""

from __future__ import annotations

import functools

import numpy as np

from ._pooling import pool_vectors


def _one_blas_thread():
    """BLAS on one thread: a product's sums then do not depend on how many threads BLAS
    has (a process with other BLAS settings, or a worker, gets the same features to the
    last bit; measured: up to 1e-6 apart otherwise). The MLP's products are small next to
    the biLM that produced their input. The controller inspects the loaded libraries once:
    a fresh ``threadpool_limits`` per call would cost that at every chunk of a transform."""
    return _blas_controller().limit(limits=1, user_api="blas")


@functools.cache
def _blas_controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def pool_layers(layers: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Mean of every layer per document: ``(n_tokens, n_layers, dim) -> (n_documents,
    n_layers, dim)``; what a linear mix with mean pooling needs."""
    n_layers, dim = layers.shape[1:]
    flat = layers.reshape(len(layers), n_layers * dim)  # explicit: a chunk may have no token
    return pool_vectors(flat, offsets, "mean").reshape(len(offsets) - 1, n_layers, dim)


def layer_spread(layers: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per layer, the root mean variance of the mean-pooled vectors of the non-empty
    documents: ``(n_tokens, n_layers, dim) -> (n_layers,)``; ones where there is nothing
    to measure (fewer than 2 documents) or a layer does not vary."""
    pooled = pool_layers(layers, offsets)[np.diff(offsets) > 0]
    if len(pooled) < 2:
        return np.ones(layers.shape[1], dtype=np.float32)
    spread = np.sqrt(pooled.astype(np.float64).var(axis=0).mean(axis=-1))
    return np.where(spread > 1e-12, spread, 1.0).astype(np.float32)


class FittedMix:
    """The interface of a fitted mix; subclasses define ``n_features`` and ``apply``."""

    n_features: int

    def apply(self, layers: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """Mix token representations ``(n_tokens, n_layers, dim) -> (n_tokens, n_features)``."""
        raise NotImplementedError

    def pool(self, layers: np.ndarray, offsets: np.ndarray, pooling: str) -> np.ndarray:
        """Document features: mix every token, then pool per document.

        Parameters
        ----------
        layers : ndarray (n_tokens, n_layers, dim)
        offsets : ndarray (n_documents + 1,)
            Document ``i`` owns ``layers[offsets[i]:offsets[i + 1]]``.
        pooling : {"mean", "max", "meanmax"}
        """
        return self._after_pooling(pool_vectors(self.apply(layers), offsets, pooling), offsets)

    def pool_stream(self, pieces, pooling: str) -> np.ndarray:
        """:meth:`pool` of one document given as consecutive pieces of its tokens.

        Parameters
        ----------
        pieces : iterable of ndarray (n_tokens_piece, n_layers, dim)
            The document's layer representations, a piece at a time, so that a very long
            document never has all its layers in memory at once.

        Returns
        -------
        features : ndarray of shape (n_features,), float32
            Equal (up to float rounding) to :meth:`pool` of the concatenated pieces.
        """
        total, largest, n_tokens = None, None, 0
        for layers in pieces:
            if not len(layers):
                continue
            mixed = self.apply(layers).astype(np.float64)
            piece_sum, piece_max = mixed.sum(axis=0), mixed.max(axis=0)
            total = piece_sum if total is None else total + piece_sum
            largest = piece_max if largest is None else np.maximum(largest, piece_max)
            n_tokens += len(layers)
        if n_tokens == 0:
            raise ValueError("pool_stream needs a document with at least one token")
        parts = {"mean": [total / n_tokens], "max": [largest],
                 "meanmax": [total / n_tokens, largest]}[pooling]
        pooled = np.concatenate(parts).astype(np.float32)
        return self._after_pooling(pooled[None, :], np.array([0, n_tokens]))[0]

    def _after_pooling(self, pooled: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        return pooled


class LinearMix(FittedMix):
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

    def __init__(self, weights, gamma, shares, dim: int):
        self.weights = np.asarray(weights, dtype=np.float32)
        self.gamma = np.float32(gamma)
        self.shares = np.asarray(shares, dtype=np.float32)
        self.n_features = int(dim)

    def apply(self, layers):
        return (self.gamma * np.einsum("tld,l->td", layers, self.weights)).astype(np.float32)

    def pool(self, layers, offsets, pooling):
        # A linear mix commutes with mean pooling: pool each layer first, then mix the
        # (far fewer) pooled vectors; the result is the same.
        if pooling == "mean":
            return self.apply(pool_layers(layers, offsets))
        return super().pool(layers, offsets, pooling)

    def __repr__(self):
        return f"LinearMix(shares={np.round(self.shares, 3).tolist()}, gamma={float(self.gamma):.3g})"


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
        with _one_blas_thread():
            return np.maximum(flat @ self.weight + self.bias, 0.0, dtype=np.float32)

    def aligned(self, alignment) -> "ReluMix":
        """The same mix followed by the affine map ``alignment``."""
        return ReluMix(self.weight, self.bias, alignment)

    def _after_pooling(self, pooled, offsets):
        if self.alignment is None:
            return pooled
        with _one_blas_thread():
            pooled = (pooled @ self.alignment[:-1] + self.alignment[-1]).astype(np.float32)
        pooled[np.diff(offsets) == 0] = 0.0  # an empty document stays a zero vector
        return pooled

    def __repr__(self):
        return f"ReluMix(n_features={self.n_features}, aligned={self.alignment is not None})"


#: The largest frozen weight: features are float32, and layer values reach about 1e2.
MAX_MIX_WEIGHT = 1e6


def frozen_mix(mix_weights, layer_scales: np.ndarray, dim: int,
               random_state: np.random.RandomState) -> LinearMix:
    """The frozen mix: uniform weights (None), the user's, or ``"random"`` draws in
    [0.5, 1], each a share of the layers divided by ``layer_scales``."""
    n_layers = len(layer_scales)
    if mix_weights is None:
        shares = np.full(n_layers, 1.0 / n_layers, dtype=np.float32)
    elif isinstance(mix_weights, str):
        if mix_weights != "random":
            raise ValueError(f"mix_weights must be None, 'random' or a sequence, got {mix_weights!r}")
        shares = random_state.uniform(0.5, 1.0, size=n_layers).astype(np.float32)
    else:
        weights = np.asarray(mix_weights, dtype=np.float64)
        if weights.shape != (n_layers,) or not np.isfinite(weights).all():
            raise ValueError(
                f"mix_weights must be {n_layers} finite numbers (one per layer), got {mix_weights!r}"
            )
        if not weights.any():
            raise ValueError("mix_weights are all zero: every feature would be 0; give at least "
                             "one layer a weight")
        if np.abs(weights).max() > MAX_MIX_WEIGHT:
            # Finite in float64, but the float32 features would overflow to inf.
            raise ValueError(f"mix_weights must be at most {MAX_MIX_WEIGHT:g} in magnitude (they "
                             f"are the layers' shares; larger ones overflow float32 features), "
                             f"got {mix_weights!r}")
        shares = weights.astype(np.float32)
    return LinearMix(shares / layer_scales, 1.0, shares, dim)
