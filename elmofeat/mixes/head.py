"""Learning a mix from labels: the mix and a linear head trained together, knowing
nothing of the mix but its shape.

The head (softmax regression for class labels, least squares otherwise) reads the pooled
document vectors and is discarded afterwards; what was learned is the mix.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .._pooling import segment_pool
from ..runtime.torch_helpers import adamw
from ..bilm.batching import bucket_batches
from .base import MixData, MixSettings, select_documents


def train_with_head(mix: nn.Module, data: MixData, docs: np.ndarray, settings: MixSettings,
                    *, token_bf16: bool = False) -> None:
    """Train ``mix`` in place, jointly with a linear head, on the documents ``docs``.

    Parameters
    ----------
    mix : torch.nn.Module
        ``(..., n_layers, dim) -> (..., mix.output_dim)``.
    data : MixData
        With ``pooled_layers`` (a mix that commutes with mean pooling, mean pooling) the
        mix learns from the pooled layers alone; else from the token rows, mixed then
        pooled per document (``settings.pooling``).
    docs : ndarray of int
        The documents to learn from (their rows in ``data.offsets``); their labels are
        ``data.targets.y[docs]``.
    settings : MixSettings
        Epochs, learning rate, batch size and the seed of the batches' order (the caller
        seeds torch for the initialisation, see :func:`elmofeat.runtime.torch_helpers.seeded`).
    token_bf16 : bool, default=False
        Mix the token rows in bfloat16 (weights and optimizer stay float32). Only where
        the CPU has it natively: emulated bf16 is several times slower than float32.
    """
    targets = data.targets
    y = targets.y[docs]
    width = 2 * mix.output_dim if settings.pooling == "meanmax" else mix.output_dim
    if targets.classification:
        classes, codes = np.unique(y, return_inverse=True)
        head = nn.Linear(width, len(classes))
        labels = torch.from_numpy(codes.astype(np.int64))
    else:
        labels = torch.from_numpy(np.asarray(y, dtype=np.float32).reshape(len(docs), -1))
        head = nn.Linear(width, labels.shape[1])
    pre_pooled = None if data.pooled_layers is None else torch.from_numpy(data.pooled_layers[docs])
    optimizer = adamw(list(mix.parameters()) + list(head.parameters()),
                      lr=settings.learning_rate, weight_decay=0.0)
    generator = np.random.default_rng(settings.seed)
    # Documents of similar length share a batch (little padding), batches in random order.
    lengths = data.offsets[docs + 1] - data.offsets[docs]
    for _ in range(settings.epochs):
        for batch in bucket_batches(lengths, settings.batch_size, generator):
            if settings.threads is not None:  # an adaptive count follows the load
                settings.threads.tick()
            if pre_pooled is not None:
                document_vectors = mix(pre_pooled[batch])
            else:
                # Flat token rows of the batch's documents (no padding), mixed, then
                # pooled per document.
                tokens, batch_offsets = select_documents(data.layers, data.offsets, docs[batch])
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=token_bf16):
                    mixed = mix(torch.from_numpy(tokens))
                document_vectors = segment_pool(mixed.float(), batch_offsets, settings.pooling)
            outputs = head(document_vectors)
            if targets.classification:
                loss = F.cross_entropy(outputs, labels[batch])
            else:
                loss = F.mse_loss(outputs, labels[batch])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
