"""Learning a supervised layer mix from labels, and aligning cross-fitted MLP mixes.

:func:`fit_supervised_mix` trains a ``"trainable"`` (:class:`~elmofeat.mix.ScalarMix`)
or ``"mlp"`` (:class:`~elmofeat.mix.MLPMix`) mix jointly with a linear head (softmax
regression for class labels, least squares otherwise): mix every token, pool per
document, classify. The head is discarded; the mix is returned in its fitted NumPy form
(:mod:`elmofeat._fitted_mix`). An MLP mix's pooled document features are finally
expressed, by an affine map, in the space of its initialisation
(:func:`align_to_initial_features`).
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ._fitted_mix import FittedMix, ReluMix, pool_layers
from ._pooling import pool_vectors, segment_pool
from ._threads import tick
from ._torch import adamw, bf16_supported, seeded
from .bilm.batching import bucket_batches
from .mix import MLPMix, ScalarMix


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


def pooled_features(mix: FittedMix, layers: np.ndarray, offsets: np.ndarray, docs,
                    pooling: str, chunk: int = 1024) -> np.ndarray:
    """``mix.pool`` of the documents ``docs`` (indices into ``offsets``), a chunk of
    documents at a time, so that their token rows are never all copied at once."""
    docs = np.asarray(docs, dtype=np.int64)
    parts = [mix.pool(*select_documents(layers, offsets, docs[i : i + chunk]), pooling)
             for i in range(0, len(docs), chunk)]
    return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)


def align_to_initial_features(trained: ReluMix, initial: ReluMix, layers: np.ndarray,
                              offsets: np.ndarray, pooling: str) -> ReluMix:
    """Add to an MLP mix the affine map that best expresses its document features in
    the feature space of its own (untrained, label-free) initialisation.

    Cross-fitting learns one MLP per fold; each ends in a differently rotated and scaled
    feature space, and a classifier trained on their out-of-fold features, side by side,
    would mix incompatible spaces (measured on AG News: accuracy 0.65 instead of 0.88).
    Every fold's MLP and the final one start from the same initialisation, and each is
    mapped into that common space by least squares on the documents it was trained on,
    so no fold uses labels it should not see.
    """
    trained_features = pool_vectors(trained.apply(layers), offsets, pooling)
    initial_features = pool_vectors(initial.apply(layers), offsets, pooling)
    return fit_alignment(trained, trained_features, initial_features)


def fit_alignment(trained: ReluMix, trained_features: np.ndarray,
                  initial_features: np.ndarray) -> ReluMix:
    """The least-squares affine map of :func:`align_to_initial_features`, from the pooled
    features of the trained and the initial mix."""
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


def fit_supervised_mix(kind: str, layers: np.ndarray, offsets: np.ndarray, docs: np.ndarray,
                       y: np.ndarray, classification: bool, pooling: str, output_dim: int,
                       config: HeadConfig, pooled_layers: np.ndarray | None = None,
                       layer_scales: np.ndarray | None = None,
                       alignment_docs: np.ndarray | None = None) -> FittedMix:
    """Learn a ``"trainable"`` or ``"mlp"`` mix from labels; return its fitted form.

    Parameters
    ----------
    kind : {"trainable", "mlp"}
    layers : ndarray (n_tokens, n_layers, dim)
        Token representations of all documents.
    offsets : ndarray (n_documents + 1,)
    docs : ndarray of int
        The documents to learn from (their rows in ``offsets``).
    y : ndarray (len(docs),)
        Class labels (``classification``) or numeric targets.
    pooled_layers : ndarray (n_documents, n_layers, dim), default=None
        :func:`~elmofeat._fitted_mix.pool_layers` of all documents, when the caller
        already has it (a trainable mix with mean pooling learns from it alone).
    layer_scales : ndarray (n_layers,), default=None
        Each layer is divided by its scale before the mix (see
        :class:`~elmofeat.mix.ScalarMix`); the returned mix applies to the unscaled layers.
    alignment_docs : ndarray of int, default=None
        The documents an MLP mix is aligned on (:func:`alignment_documents`; no labels
        are used); default ``docs``.
    """
    # A forked, seeded torch random state: the same seed gives the same mix, and the
    # caller's global random state is left alone.
    with seeded(config.seed):
        return _fit(kind, layers, offsets, docs, y, classification, pooling, output_dim, config,
                    pooled_layers, layer_scales,
                    docs if alignment_docs is None else alignment_docs)


def _fit(kind, layers, offsets, docs, y, classification, pooling, output_dim, config,
         pooled_layers, layer_scales, alignment_docs) -> FittedMix:
    n_layers, dim = layers.shape[1:]
    linear = kind == "trainable"
    mix = ScalarMix(n_layers, layer_scales) if linear else MLPMix(n_layers, dim, output_dim,
                                                                   layer_scales)
    initial = None if linear else mix.to_fitted()
    mixed_dim = dim if linear else output_dim
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
    if linear and pooling == "mean":
        if pooled_layers is None:
            pooled_layers = pool_layers(layers, offsets)
        pre_pooled = torch.from_numpy(pooled_layers[docs])
    optimizer = adamw(list(mix.parameters()) + list(head.parameters()),
                      lr=config.learning_rate, weight_decay=0.0)
    generator = np.random.default_rng(config.seed)
    # Documents of similar length share a batch (little padding), batches in random order.
    lengths = offsets[docs + 1] - offsets[docs]
    bf16 = not linear and bf16_supported(torch.device("cpu"))
    for _ in range(config.epochs):
        for batch in bucket_batches(lengths, config.batch_size, generator):
            tick()
            if pre_pooled is not None:
                document_vectors = mix(pre_pooled[batch])
            else:
                # Flat token rows of the batch's documents (no padding), mixed, then
                # pooled per document; bfloat16 for the per-token MLP where the CPU has
                # it natively (weights and optimizer stay in float32): emulated bf16 is
                # several times slower than float32, and made the MLP mix host-bound.
                tokens, batch_offsets = select_documents(layers, offsets, docs[batch])
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                    mixed = mix(torch.from_numpy(tokens))
                document_vectors = segment_pool(mixed.float(), batch_offsets, pooling)
            outputs = head(document_vectors)
            if classification:
                loss = F.cross_entropy(outputs, targets[batch])
            else:
                loss = F.mse_loss(outputs, targets[batch])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    if linear:
        return mix.to_fitted(dim)
    trained = mix.to_fitted()
    return fit_alignment(trained, pooled_features(trained, layers, offsets, alignment_docs, pooling),
                         pooled_features(initial, layers, offsets, alignment_docs, pooling))


def cross_fitting_folds(cv, targets, seed: int) -> list:
    """The (train, test) folds of the labelled documents for ``fit_transform``.

    An int ``cv`` gives shuffled ``StratifiedKFold`` (class labels) or ``KFold`` folds
    seeded with ``seed``; a splitter or an iterable of splits is used as given. Indices
    are positions in ``targets.labelled``.
    """
    from sklearn.model_selection import KFold, StratifiedKFold, check_cv

    if isinstance(cv, Integral):
        splitter_class = StratifiedKFold if targets.classification else KFold
        splitter = splitter_class(cv, shuffle=True, random_state=seed)
    else:
        splitter = check_cv(cv, targets.y_labelled, classifier=targets.classification)
    folds = list(splitter.split(np.zeros(len(targets.labelled)), targets.y_labelled))
    _check_partition(folds, len(targets.labelled))
    return folds


def _check_partition(folds, n_documents: int) -> None:
    """Cross-fitting gives each document the features of the one fold that holds it out:
    the test folds must cover every document exactly once (KFold does; ShuffleSplit
    would leave documents with no features at all)."""
    covered = np.zeros(n_documents, dtype=np.int64)
    for _, test in folds:
        np.add.at(covered, np.asarray(test, dtype=np.int64), 1)
    if (covered != 1).any():
        missing, repeated = int((covered == 0).sum()), int((covered > 1).sum())
        raise ValueError(
            f"cv must partition the labelled documents (each in exactly one test fold, as "
            f"KFold and StratifiedKFold do): {missing} are in no test fold and {repeated} in "
            "several, so fit_transform could not give them out-of-fold features"
        )
