"""From token lists to padded, length-bucketed tensor batches for the biLM.

Documents are cut into windows of at most ``max_len`` tokens (never truncated: a
long document becomes several windows), each wrapped in ``<bos> ... <eos>``. Windows
are sorted by length and grouped, so a batch holds sequences of similar length and
little padding.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Iterator, Sequence

import numpy as np
import pandas as pd
import torch

from ..runtime.torch_helpers import MIN_PRODUCT_ROWS
from ..text import Vocabulary
from .token_layers import BEGIN_SENTENCE, END_SENTENCE, encode_words_as_bytes

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"
SPECIALS = (PAD, UNK, BOS, EOS)


@dataclass
class Windows:
    """Windows of a corpus, each ``<bos> tokens <eos>``, as flat arrays.

    Attributes
    ----------
    word_ids : ndarray (n_positions,)
        Vocabulary ids (out-of-vocabulary -> ``<unk>``), the LM targets.
    type_ids : ndarray (n_positions,) or None
        Ids into ``types`` (every distinct string), for the character CNN.
    types : list of str or None
    offsets : ndarray (n_windows + 1,)
    document : ndarray (n_windows,)
        The document each window comes from; windows of a document are consecutive.
    """

    word_ids: np.ndarray
    type_ids: np.ndarray | None
    types: list[str] | None
    offsets: np.ndarray
    document: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1


def make_windows(
    token_lists: Sequence[Sequence[str]], vocabulary: Vocabulary, max_len: int, with_types: bool
) -> Windows:
    """Cut every document into ``<bos> w_1 .. w_k <eos>`` windows with ``k <= max_len``.

    An empty document gives no window.
    """
    lengths = np.fromiter((len(t) for t in token_lists), dtype=np.int64, count=len(token_lists))
    n_windows = -(-lengths // max_len)  # ceil
    document = np.repeat(np.arange(len(token_lists)), n_windows)
    # Content length of each window: max_len except the last of each document.
    first = np.concatenate([[0], np.cumsum(n_windows)[:-1]])
    content = np.full(n_windows.sum(), max_len, dtype=np.int64)
    last = first + n_windows - 1
    has_windows = n_windows > 0
    content[last[has_windows]] = lengths[has_windows] - max_len * (n_windows[has_windows] - 1)
    window_lengths = content + 2
    offsets = np.concatenate([[0], np.cumsum(window_lengths)]).astype(np.int64)
    # Flat tokens with <bos>/<eos> inserted around each window.
    flat = list(chain.from_iterable(token_lists))
    is_content = np.ones(offsets[-1], dtype=bool)
    is_content[offsets[:-1]] = False
    is_content[offsets[1:] - 1] = False
    word_ids = np.empty(offsets[-1], dtype=np.int64)
    word_ids[offsets[:-1]] = vocabulary.tokens.index(BOS)
    word_ids[offsets[1:] - 1] = vocabulary.tokens.index(EOS)
    if flat:
        # An object Index: Arrow strings (pandas' default with pyarrow) reject lone surrogates.
        word_ids[is_content] = vocabulary.index.get_indexer(pd.Index(flat, dtype=object))
    word_ids[word_ids < 0] = vocabulary.tokens.index(UNK)
    type_ids = types = None
    if with_types:
        codes, uniques = pd.factorize(pd.Series(flat, dtype=object)) if flat else (
            np.zeros(0, np.int64), [])
        types = [BOS, EOS] + list(uniques)
        type_ids = np.empty(offsets[-1], dtype=np.int64)
        type_ids[offsets[:-1]] = 0
        type_ids[offsets[1:] - 1] = 1
        type_ids[is_content] = np.asarray(codes, dtype=np.int64) + 2
    return Windows(word_ids, type_ids, types, offsets, document)


def char_table(types: Sequence[str], max_word_length: int) -> np.ndarray:
    """Byte ids of every type, with ``<bos>``/``<eos>`` as single sentence markers."""
    return encode_words_as_bytes(
        types, max_word_length, {BOS: BEGIN_SENTENCE, EOS: END_SENTENCE}
    )


@dataclass
class Batch:
    """One padded batch: ``inputs`` for the token layer, ``word_ids`` targets, ``lengths``."""

    inputs: torch.Tensor
    word_ids: torch.Tensor
    lengths: torch.Tensor
    windows: np.ndarray  # indices of the windows in this batch


def bucket_batches(lengths: np.ndarray, batch_size: int,
                   rng: np.random.Generator | None = None) -> list[np.ndarray]:
    """Group window indices into batches of similar length.

    Windows are sorted by length (ties broken at random when ``rng`` is given, so
    training sees different batches each epoch) and cut into groups of ``batch_size``.
    With ``rng``, the batch order is shuffled too.
    """
    if rng is None:
        order = np.argsort(lengths, kind="stable")
    else:
        order = np.lexsort((rng.random(len(lengths)), lengths))
    batches = [order[start:start + batch_size] for start in range(0, len(order), batch_size)]
    if rng is not None:
        batches = [batches[i] for i in rng.permutation(len(batches))]
    return batches


def inference_batches(lengths: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """:func:`bucket_batches` for inference, each with at least ``MIN_PRODUCT_ROWS``
    windows: a ``batch_size`` below it is raised to it, and a smaller last batch is
    filled up with copies of its own windows, so that a window's representations depend
    on the window alone (see :data:`~elmofeat.runtime.torch_helpers.MIN_PRODUCT_ROWS`).
    The copies cost little: only the last batch of a call can be small.
    """
    return [np.resize(batch, MIN_PRODUCT_ROWS) if len(batch) < MIN_PRODUCT_ROWS else batch
            for batch in bucket_batches(lengths, max(batch_size, MIN_PRODUCT_ROWS))]


def make_batch(windows: Windows, indices: np.ndarray, chars: np.ndarray | None,
               device: torch.device | str = "cpu") -> Batch:
    """Pad the given windows into tensors (padding id 0 on the right)."""
    lengths = windows.lengths[indices]
    width = int(lengths.max())
    rows = np.repeat(np.arange(len(indices)), lengths)
    cols = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    starts = windows.offsets[indices]
    positions = np.repeat(starts, lengths) + cols
    word_ids = np.zeros((len(indices), width), dtype=np.int64)
    word_ids[rows, cols] = windows.word_ids[positions]
    if chars is None:
        inputs = torch.from_numpy(word_ids)
    else:
        char_ids = np.zeros((len(indices), width, chars.shape[1]), dtype=np.int64)
        char_ids[rows, cols] = chars[windows.type_ids[positions]]
        inputs = torch.from_numpy(char_ids)
    return Batch(
        inputs.to(device),
        torch.from_numpy(word_ids).to(device),
        torch.from_numpy(lengths).to(device),
        indices,
    )


def iter_batches(windows: Windows, batches: Sequence[np.ndarray], chars: np.ndarray | None,
                 device="cpu") -> Iterator[Batch]:
    for indices in batches:
        yield make_batch(windows, indices, chars, device)
