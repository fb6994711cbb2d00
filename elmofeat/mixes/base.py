"""What every layer mix shares: the fitted form's interface, the data a mix learns from,
and the settings it is given.

A fitted mix (:class:`FittedMix`) is a small NumPy object, what a fitted
:class:`~elmofeat.ElmoVectorizer` keeps as ``mix_``: transforming and pickling need no
torch module. It applies to the unscaled layers (a mix that divides layers by their
scales folds them into its weights).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from .._pooling import pool_vectors


@dataclass
class MixData:
    """The layers a mix is learned from.

    Attributes
    ----------
    layer_scales : ndarray (n_layers,)
        What each layer is divided by before the mix (ones when unscaled).
    dim : int
        Width of a layer.
    layers : ndarray (n_tokens, n_layers, dim) or None
        Token representations of every document; None for a mix that needs no labels.
    offsets : ndarray (n_documents + 1,) or None
        Document ``i`` owns ``layers[offsets[i]:offsets[i + 1]]``.
    pooled_layers : ndarray (n_documents, n_layers, dim) or None
        :func:`pool_layers` of every document, given to a mix that commutes with mean
        pooling when the pooling is the mean.
    targets : Targets or None
        The labels (``elmofeat.elmo.labels.Targets``: ``y``, ``labelled``, ``unlabelled``,
        ``classification``).
    """

    layer_scales: np.ndarray
    dim: int
    layers: np.ndarray | None = None
    offsets: np.ndarray | None = None
    pooled_layers: np.ndarray | None = None
    targets: object = None

    @property
    def n_layers(self) -> int:
        return len(self.layer_scales)


@dataclass(frozen=True)
class MixSettings:
    """The vectorizer's settings a mix is fitted with (``ElmoVectorizer`` parameters),
    and the thread policy in force (``threads``, a
    :class:`~elmofeat.runtime.threads.Threads`; None where none is)."""

    pooling: str
    seed: int
    mix_weights: object = None
    mlp_dim: int = 256
    epochs: int = 10
    learning_rate: float = 0.01
    batch_size: int = 64
    threads: object = field(default=None, compare=False, repr=False)


#: The largest fixed weight: features are float32, and layer values reach about 1e2.
MAX_MIX_WEIGHT = 1e6


def fixed_shares(mix_weights, n_layers: int, random_state: np.random.RandomState) -> np.ndarray:
    """The layers' shares of a mix with fixed weights (``ElmoVectorizer(mix_weights=...)``):
    uniform (None), seeded draws in [0.5, 1] (``"random"``, as in the reference
    experiment), or the user's, one per layer; a ``ValueError`` names what is wrong."""
    if mix_weights is None:
        return np.full(n_layers, 1.0 / n_layers, dtype=np.float32)
    if isinstance(mix_weights, str):
        if mix_weights != "random":
            raise ValueError(f"mix_weights must be None, 'random' or a sequence, got {mix_weights!r}")
        return random_state.uniform(0.5, 1.0, size=n_layers).astype(np.float32)
    try:
        weights = np.asarray(mix_weights, dtype=np.float64)
    except (TypeError, ValueError):  # strings, ragged lists: said in the user's terms below
        weights = np.full(0, np.nan)
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
    return weights.astype(np.float32)


def pool_layers(layers: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Mean of every layer per document: ``(n_tokens, n_layers, dim) -> (n_documents,
    n_layers, dim)``; what a linear mix with mean pooling needs."""
    n_layers, dim = layers.shape[1:]
    flat = layers.reshape(len(layers), n_layers * dim)  # explicit: a chunk may have no token
    return pool_vectors(flat, offsets, "mean").reshape(len(offsets) - 1, n_layers, dim)


def measured_spread(layers: np.ndarray, offsets: np.ndarray) -> np.ndarray | None:
    """Per layer, the root mean variance of the mean-pooled vectors of the non-empty
    documents: ``(n_tokens, n_layers, dim) -> (n_layers,)``; None where there is nothing
    to measure: fewer than 2 documents, or a layer that does not vary (identical
    documents)."""
    pooled = pool_layers(layers, offsets)[np.diff(offsets) > 0]
    if len(pooled) < 2:
        return None
    spread = np.sqrt(pooled.astype(np.float64).var(axis=0).mean(axis=-1))
    return spread.astype(np.float32) if (spread > 1e-12).all() else None


def layer_spread(layers: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """:func:`measured_spread`, with ones where there is nothing to measure."""
    spread = measured_spread(layers, offsets)
    return np.ones(layers.shape[1], dtype=np.float32) if spread is None else spread


def select_documents(layers: np.ndarray, offsets: np.ndarray, docs) -> tuple[np.ndarray, np.ndarray]:
    """The token rows of the given documents, in that order, with their new offsets."""
    docs = np.asarray(docs, dtype=np.int64)
    lengths = offsets[docs + 1] - offsets[docs]
    new_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    rows = np.repeat(offsets[docs] - new_offsets[:-1], lengths) + np.arange(new_offsets[-1])
    return layers[rows], new_offsets


def one_blas_thread():
    """A context in which BLAS runs on one thread: a product's sums then do not depend
    on how many threads BLAS has (a process with other BLAS settings, or a worker, gets
    the same features to the last bit; measured: up to 1e-6 apart otherwise). A mix's
    products are small next to the biLM that produced their input. The controller
    inspects the loaded libraries once: a fresh ``threadpool_limits`` per call would cost
    that at every chunk of a transform."""
    return _blas_controller().limit(limits=1, user_api="blas")


def rowwise_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` computed one row of ``a`` at a time: every row goes through the same
    vector-matrix product, so its result depends on that row alone, not on how many rows
    ``a`` has (a matrix product's summation order does)."""
    out = np.empty((len(a), b.shape[1]), dtype=np.result_type(a, b))
    for i, row in enumerate(a):
        np.matmul(row, b, out=out[i])
    return out


@functools.cache
def _blas_controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


class FittedMix:
    """The interface of a fitted mix; subclasses define ``n_features`` and ``apply``.

    ``layer_weights`` and ``gamma`` are what ``ElmoVectorizer`` shows as
    ``layer_weights_`` and ``gamma_``: None for a mix that has no such weights. The
    methods below call ``apply`` (and ``_after_pooling``) on one BLAS thread
    (:func:`one_blas_thread`), so that no mix's features depend on BLAS's thread count,
    and ``apply`` on one document's tokens at a time, so that they do not depend on the
    other documents either: BLAS sums a row of a product in an order that depends on the
    product's number of rows and on the row's place among them (OpenBLAS: up to 1e-4
    apart for an MLP mix), and a document alone would otherwise get other features than
    the same document among others. ``_after_pooling`` works row by row for the same
    reason (see :func:`rowwise_product`). A mix whose ``apply`` computes each token's row
    by itself, with no product over tokens, says so with ``rowwise = True`` and is applied
    to a whole chunk at once.
    """

    n_features: int
    rowwise: bool = False
    layer_weights: np.ndarray | None = None
    gamma: float | None = None

    def apply(self, layers: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """Mix token representations ``(n_tokens, n_layers, dim) -> (n_tokens, n_features)``."""
        raise NotImplementedError

    def pool(self, layers: np.ndarray, offsets: np.ndarray, pooling: str,
             batch_invariant: bool = True) -> np.ndarray:
        """Document features: mix every token, then pool per document.

        Parameters
        ----------
        layers : ndarray (n_tokens, n_layers, dim)
        offsets : ndarray (n_documents + 1,)
            Document ``i`` owns ``layers[offsets[i]:offsets[i + 1]]``.
        pooling : {"mean", "max", "meanmax"}
        batch_invariant : bool, default=True
            False: every token mixed in one product, each document's features then
            depending on the others' in their last bits. Only for what a fit computes for
            itself (an alignment's least squares), never for features it returns: the
            product is far faster than one per document.
        """
        with one_blas_thread():
            if self.rowwise or not batch_invariant:
                mixed = self.apply(layers[offsets[0] : offsets[-1]])
            else:
                mixed = np.concatenate(
                    [self.apply(layers[offsets[i] : offsets[i + 1]])
                     for i in range(len(offsets) - 1)] or [self.apply(layers[:0])])
            return self._after_pooling(pool_vectors(mixed, offsets - offsets[0], pooling),
                                       offsets)

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
            with one_blas_thread():
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
        with one_blas_thread():
            return self._after_pooling(pooled[None, :], np.array([0, n_tokens]))[0]

    def features(self, data: MixData, docs, pooling: str, chunk: int = 1024,
                 batch_invariant: bool = True) -> np.ndarray:
        """Document features of the documents ``docs`` (indices) of ``data``: from the
        pooled layers where ``data`` has them (a mix that commutes with mean pooling),
        else mixed and pooled a chunk of documents at a time, so that their token rows
        are never all copied at once (``batch_invariant``: see :meth:`pool`)."""
        docs = np.asarray(docs, dtype=np.int64)
        if data.pooled_layers is not None:
            with one_blas_thread():
                return self.apply(data.pooled_layers[docs])
        parts = [self.pool(*select_documents(data.layers, data.offsets, docs[i : i + chunk]),
                           pooling, batch_invariant)
                 for i in range(0, len(docs), chunk)]
        return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)

    def _after_pooling(self, pooled: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        return pooled


class LinearInLayers(FittedMix):
    """A fitted mix that is linear in the layers (a weighted sum, a weighted
    concatenation): mixing then mean pooling equals pooling every layer then mixing, so
    with mean pooling it mixes the (far fewer) pooled vectors; the result is the same."""

    def pool(self, layers, offsets, pooling, batch_invariant=True):
        if pooling == "mean":
            return self.apply(pool_layers(layers, offsets))
        return super().pool(layers, offsets, pooling, batch_invariant)
