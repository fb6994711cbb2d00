"""Layer mixing: how the biLM's representations of a token become one vector.

Three mixes, each with a torch form (to learn it) and a NumPy form (to apply it, so a
fitted vectorizer needs no torch module to transform or to pickle):

* :class:`ScalarMix` (``"trainable"``): ELMo's ``gamma * sum_j softmax(s)_j h_j`` with
  ``s`` and ``gamma`` learned from labels;
* frozen weights (``"frozen"``): ``sum_j w_j h_j`` with fixed ``w``;
* :class:`MLPMix` (``"mlp"``): ``relu(W [h_0; h_1; ...; h_L] + b)``, a learned function
  of the concatenated layers; its pooled document features are finally expressed, by an
  affine map, in the space of its initialisation (see :func:`align_to_initial_features`).

Each ``h_j`` is first divided by a fixed ``layer_scales_j`` (its spread across the
training documents), so that weights are shares and the MLP gets unit-scale inputs; the
NumPy parameters have the scales folded in and apply to the raw layers.

The supervised mixes learn through :func:`fit_supervised_mix`: mix, pool per document,
then a linear head (softmax regression for class labels, least squares otherwise),
all trained jointly; the head is discarded afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ._pooling import pool_vectors
from ._threads import tick
from .bilm.batching import bucket_batches
from ._torch import adamw

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

    def to_numpy(self) -> dict:
        """``weights`` applies to the unscaled layers (the scales folded in); ``shares``
        are the softmax weights of the scaled layers."""
        shares = torch.softmax(self.scalars.detach(), 0)
        return {"weights": (shares / self.layer_scales).numpy().astype(np.float32),
                "gamma": np.float32(self.gamma.detach()),
                "shares": shares.numpy().astype(np.float32)}

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

    def to_numpy(self) -> dict:
        """The map of the unscaled layers (the scales folded into ``weight``)."""
        weight = self.linear.weight.detach() / self.input_scales
        return {"weight": weight.numpy().T.copy(),
                "bias": self.linear.bias.detach().numpy().copy()}


def _scales(layer_scales, n_layers: int) -> torch.Tensor:
    if layer_scales is None:
        return torch.ones(n_layers)
    scales = torch.as_tensor(np.asarray(layer_scales, dtype=np.float32))
    if scales.shape != (n_layers,) or not (scales > 0).all():
        raise ValueError(f"layer_scales must be {n_layers} positive numbers, got {layer_scales!r}")
    return scales


def apply_mix(kind: str, params: dict, layers: np.ndarray) -> np.ndarray:
    """Mix token representations ``(n_tokens, n_layers, dim)`` with fitted ``params``."""
    if kind == "mlp":
        flat = layers.reshape(len(layers), layers.shape[1] * layers.shape[2])  # 0 tokens too
        return np.maximum(flat @ params["weight"] + params["bias"], 0.0, dtype=np.float32)
    return (params["gamma"] * np.einsum("tld,l->td", layers, params["weights"])).astype(np.float32)


def mix_and_pool(kind: str, params: dict, layers: np.ndarray, offsets: np.ndarray,
                 pooling: str) -> np.ndarray:
    """Document features: mix every token, then pool per document.

    A linear mix commutes with mean pooling, so ``"mean"`` pools each layer first and
    mixes the (far fewer) pooled vectors; the result is the same.
    """
    if kind != "mlp" and pooling == "mean":
        return apply_mix(kind, params, pool_layers(layers, offsets))
    pooled = pool_vectors(apply_mix(kind, params, layers), offsets, pooling)
    if "alignment" in params:
        pooled = _affine(pooled, params["alignment"])
        pooled[np.diff(offsets) == 0] = 0.0  # an empty document stays a zero vector
    return pooled


def stream_mix_and_pool(kind: str, params: dict, pieces, pooling: str) -> np.ndarray:
    """:func:`mix_and_pool` of one document given as consecutive pieces of its tokens.

    Parameters
    ----------
    pieces : iterable of ndarray (n_tokens_piece, n_layers, dim)
        The document's layer representations, a piece at a time, so that a very long
        document never has all its layers in memory at once.

    Returns
    -------
    features : ndarray of shape (n_features,), float32
        Equal (up to float rounding) to :func:`mix_and_pool` of the concatenated pieces.
    """
    total, largest, n_tokens = None, None, 0
    for layers in pieces:
        if not len(layers):
            continue
        mixed = apply_mix(kind, params, layers).astype(np.float64)
        piece_sum, piece_max = mixed.sum(axis=0), mixed.max(axis=0)
        total = piece_sum if total is None else total + piece_sum
        largest = piece_max if largest is None else np.maximum(largest, piece_max)
        n_tokens += len(layers)
    if n_tokens == 0:
        raise ValueError("stream_mix_and_pool needs a document with at least one token")
    parts = {"mean": [total / n_tokens], "max": [largest],
             "meanmax": [total / n_tokens, largest]}[pooling]
    pooled = np.concatenate(parts).astype(np.float32)
    if "alignment" in params:
        pooled = _affine(pooled[None, :], params["alignment"])[0]
    return pooled


def pooled_features(kind: str, params: dict, layers: np.ndarray, offsets: np.ndarray, docs,
                    pooling: str, chunk: int = 1024) -> np.ndarray:
    """:func:`mix_and_pool` of the documents ``docs`` (indices into ``offsets``), a chunk
    of documents at a time, so that their token rows are never all copied at once."""
    docs = np.asarray(docs, dtype=np.int64)
    parts = [mix_and_pool(kind, params, *select_documents(layers, offsets, docs[i : i + chunk]),
                          pooling) for i in range(0, len(docs), chunk)]
    return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)


def pool_layers(layers: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Mean of every layer per document: ``(n_tokens, n_layers, dim) -> (n_documents,
    n_layers, dim)``; what a linear mix with mean pooling needs."""
    n_layers, dim = layers.shape[1:]
    flat = layers.reshape(len(layers), n_layers * dim)  # explicit: a chunk may have no token
    return pool_vectors(flat, offsets, "mean").reshape(len(offsets) - 1, n_layers, dim)


def _affine(features: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``[features, 1] @ matrix``: an affine map stored as one (d + 1, d') matrix."""
    return (features @ matrix[:-1] + matrix[-1]).astype(np.float32)


def align_to_initial_features(trained: dict, initial: dict, layers: np.ndarray,
                              offsets: np.ndarray, pooling: str) -> dict:
    """Add to an MLP mix the affine map that best expresses its document features in
    the feature space of its own (untrained, label-free) initialisation.

    Cross-fitting learns one MLP per fold; each ends in a differently rotated and scaled
    feature space, and a classifier trained on their out-of-fold features, side by side,
    would mix incompatible spaces (measured on AG News: accuracy 0.65 instead of 0.88).
    Every fold's MLP and the final one start from the same initialisation, and each is
    mapped into that common space by least squares on the documents it was trained on,
    so no fold uses labels it should not see.
    """
    trained_features = pool_vectors(apply_mix("mlp", trained, layers), offsets, pooling)
    initial_features = pool_vectors(apply_mix("mlp", initial, layers), offsets, pooling)
    return fit_alignment(trained, trained_features, initial_features)


def fit_alignment(trained: dict, trained_features: np.ndarray, initial_features: np.ndarray) -> dict:
    """The least-squares affine map of :func:`align_to_initial_features`, from the pooled
    features of the trained and the initial mix."""
    design = np.hstack([trained_features, np.ones((len(trained_features), 1), np.float32)])
    matrix, *_ = np.linalg.lstsq(design.astype(np.float64), initial_features.astype(np.float64),
                                 rcond=None)
    return {**trained, "alignment": matrix.astype(np.float32)}


def frozen_weights(mix_weights, n_layers: int, random_state: np.random.RandomState) -> np.ndarray:
    """Weights of the frozen mix: uniform, the user's, or ``"random"`` draws in [0.5, 1]."""
    if mix_weights is None:
        return np.full(n_layers, 1.0 / n_layers, dtype=np.float32)
    if isinstance(mix_weights, str):
        if mix_weights != "random":
            raise ValueError(f"mix_weights must be None, 'random' or a sequence, got {mix_weights!r}")
        return random_state.uniform(0.5, 1.0, size=n_layers).astype(np.float32)
    weights = np.asarray(mix_weights, dtype=np.float64)
    if weights.shape != (n_layers,) or not np.isfinite(weights).all():
        raise ValueError(
            f"mix_weights must be {n_layers} finite numbers (one per layer), got {mix_weights!r}"
        )
    if not weights.any():
        raise ValueError("mix_weights are all zero: every feature would be 0; give at least "
                         "one layer a weight")
    return weights.astype(np.float32)


# ------------------------------------------------------------------ supervised training


@dataclass
class HeadConfig:
    epochs: int
    learning_rate: float
    batch_size: int
    seed: int


def select_documents(layers: np.ndarray, offsets: np.ndarray, docs) -> tuple[np.ndarray, np.ndarray]:
    """The token rows of the given documents, in that order, with their new offsets."""
    docs = np.asarray(docs, dtype=np.int64)
    lengths = offsets[docs + 1] - offsets[docs]
    new_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    rows = np.repeat(offsets[docs] - new_offsets[:-1], lengths) + np.arange(new_offsets[-1])
    return layers[rows], new_offsets


def _segment_pool(tokens: torch.Tensor, offsets: np.ndarray, pooling: str) -> torch.Tensor:
    """Pool flat token vectors ``(n_tokens, dim)`` per document; empty documents give 0.

    ``torch.segment_reduce`` (about 50x faster than ``index_add_`` here, with autograd).
    """
    lengths = torch.from_numpy(np.diff(offsets))
    sums = torch.segment_reduce(tokens, "sum", lengths=lengths)
    mean = sums / lengths.clamp(min=1).unsqueeze(1).to(tokens.dtype)
    if pooling == "mean":
        return mean
    mx = torch.segment_reduce(tokens, "max", lengths=lengths)  # -inf for empty documents
    mx = torch.where((lengths > 0).unsqueeze(1), mx, torch.zeros_like(mx))
    return mx if pooling == "max" else torch.cat([mean, mx], dim=1)


def fit_supervised_mix(kind: str, layers: np.ndarray, offsets: np.ndarray, docs: np.ndarray,
                       y: np.ndarray, classification: bool, pooling: str, output_dim: int,
                       config: HeadConfig, pooled_layers: np.ndarray | None = None,
                       layer_scales: np.ndarray | None = None) -> dict:
    """Learn a ``"trainable"`` or ``"mlp"`` mix from labels; return its NumPy parameters.

    Parameters
    ----------
    layers : ndarray (n_tokens, n_layers, dim)
        Token representations of all documents.
    offsets : ndarray (n_documents + 1,)
    docs : ndarray of int
        The documents to learn from (their rows in ``offsets``).
    y : ndarray (len(docs),)
        Class labels (``classification``) or numeric targets.
    pooled_layers : ndarray (n_documents, n_layers, dim), default=None
        :func:`pool_layers` of all documents, when the caller already has it (a
        trainable mix with mean pooling learns from it alone).
    layer_scales : ndarray (n_layers,), default=None
        Each layer is divided by its scale before the mix (see :class:`ScalarMix`);
        the returned parameters apply to the unscaled layers.
    """
    # A forked, seeded torch random state: the same seed gives the same mix, and the
    # caller's global random state is left alone.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        return _fit(kind, layers, offsets, docs, y, classification, pooling, output_dim, config,
                    pooled_layers, layer_scales)


def _fit(kind, layers, offsets, docs, y, classification, pooling, output_dim, config,
         pooled_layers, layer_scales) -> dict:
    n_layers, dim = layers.shape[1:]
    mix = (ScalarMix(n_layers, layer_scales) if kind == "trainable"
           else MLPMix(n_layers, dim, output_dim, layer_scales))
    initial = mix.to_numpy()
    mixed_dim = dim if kind == "trainable" else output_dim
    features = 2 * mixed_dim if pooling == "meanmax" else mixed_dim
    if classification:
        classes, targets = np.unique(y, return_inverse=True)
        head = nn.Linear(features, len(classes))
        targets = torch.from_numpy(targets.astype(np.int64))
    else:
        targets = torch.from_numpy(np.asarray(y, dtype=np.float32).reshape(len(docs), -1))
        head = nn.Linear(features, targets.shape[1])
    # Mean pooling commutes with a scalar mix: pool each layer once, then train on that.
    pre_pooled = None
    if kind == "trainable" and pooling == "mean":
        if pooled_layers is None:
            pooled_layers = pool_layers(layers, offsets)
        pre_pooled = torch.from_numpy(pooled_layers[docs])
    optimizer = adamw(list(mix.parameters()) + list(head.parameters()),
                      lr=config.learning_rate, weight_decay=0.0)
    generator = np.random.default_rng(config.seed)
    # Documents of similar length share a batch (little padding), batches in random order.
    lengths = offsets[docs + 1] - offsets[docs]
    for _ in range(config.epochs):
        for batch in bucket_batches(lengths, config.batch_size, generator):
            tick()
            if pre_pooled is not None:
                document_vectors = mix(pre_pooled[batch])
            else:
                # Flat token rows of the batch's documents (no padding), mixed, then
                # pooled per document; bfloat16 for the per-token MLP (weights and
                # optimizer stay in float32).
                tokens, batch_offsets = select_documents(layers, offsets, docs[batch])
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=kind == "mlp"):
                    mixed = mix(torch.from_numpy(tokens))
                document_vectors = _segment_pool(mixed.float(), batch_offsets, pooling)
            outputs = head(document_vectors)
            if classification:
                loss = F.cross_entropy(outputs, targets[batch])
            else:
                loss = F.mse_loss(outputs, targets[batch])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    if kind == "mlp":
        trained = mix.to_numpy()
        return fit_alignment(
            trained, pooled_features("mlp", trained, layers, offsets, docs, pooling),
            pooled_features("mlp", initial, layers, offsets, docs, pooling))
    return mix.to_numpy()
