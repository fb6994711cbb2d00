"""What :meth:`BiLM.fit <elmofeat.BiLM.fit>` trains on: the vocabulary, training and
validation windows, and the embedding's starting vectors, from documents held in memory
or from a corpus streamed through disk.

:func:`streamed_source` decides which: a list (or any sized sequence) of documents is
the user's own, already in memory; files (:class:`~elmofeat.bilm.corpus.TextFiles`, a
``pathlib.Path``) and iterables without a length (generators, corpus objects) are
streamed: read once into shards on disk (:mod:`elmofeat.bilm.shards`), never held as
one list.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Sized
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ..text import RaggedIds, TextTokenizer, Vocabulary
from .batching import SPECIALS, UNK, Windows
from .collectives import world
from .corpus import TextFiles
from .pretrained import initial_word_vectors, mapped_vectors
from .shards import EncodedCorpus, StreamedData
from .train import WindowsData

#: Streamed corpora hold out at most this many tokens for validation perplexity.
MAX_VALIDATION_TOKENS = 500_000
#: Tokens of a streamed corpus that the SVD start of the embedding counts.
SVD_SAMPLE_TOKENS = 5_000_000


@dataclass
class TrainingData:
    """Everything a fit needs besides the model.

    ``train``: :class:`~elmofeat.bilm.train.WindowsData` or
    :class:`~elmofeat.bilm.shards.StreamedData`; ``valid`` and ``valid_chars``: the
    validation windows and (character CNN) their byte table; ``pretrained``: starting
    vectors of the word embedding or None; ``digest``: feeds the data's identity to a
    hash (for checkpoints); ``scale_sample``: a seeded sample of training documents
    (at most :data:`SCALE_SAMPLE` of them and about :data:`SCALE_SAMPLE_TOKENS` tokens)
    as token lists, on which the fitted biLM measures its layers' spread
    (``BiLM.layer_scales_``).
    """

    train: object
    valid: Windows | None
    valid_chars: np.ndarray | None
    pretrained: np.ndarray | None
    digest: Callable
    scale_sample: Callable[[], list[list[str]]]


#: Training documents on which a fitted biLM measures its layers' spread, at most.
SCALE_SAMPLE = 2048
#: Tokens of that sample, about: embedding them is a forward pass that every fit pays
#: at its end (50,000 tokens: about 0.7 s on 2 cores at width 256), and a spread
#: averaged over 256-wide layers needs no more (samples of this size agree within a few
#: percent; benchmarks/bilm_pretrain_speed.py measures the share of a fit).
SCALE_SAMPLE_TOKENS = 50_000


def scale_sample_indices(documents, random_state) -> np.ndarray:
    """Sorted indices of a seeded random sample of ``documents`` (token lists): at most
    :data:`SCALE_SAMPLE` of them, taken in random order until :data:`SCALE_SAMPLE_TOKENS`
    tokens are reached (at least two documents, so that a spread exists)."""
    order = random_state.permutation(len(documents))[:SCALE_SAMPLE]
    tokens = np.cumsum([len(documents[i]) for i in order])
    keep = max(2, int(np.searchsorted(tokens, SCALE_SAMPLE_TOKENS, side="left")) + 1)
    return np.sort(order[:keep])


def streamed_source(X):
    """The corpus to stream for ``X``, or None when ``X`` is documents in memory."""
    if isinstance(X, TextFiles):
        return X
    if isinstance(X, os.PathLike):
        return TextFiles(X)
    if isinstance(X, (str, bytes, bytearray, dict)) or X is None or isinstance(X, Sized):
        return None  # documents (or a mistake that validate_documents explains)
    if hasattr(X, "__iter__"):
        return X
    return None


def _empty_vocabulary_error(min_count):
    return ValueError(f"the vocabulary is empty: no token is seen min_count={min_count} "
                      "times; lower min_count or fit on more text")


def in_memory(bilm, X, random_state) -> TrainingData:
    """Vocabulary (set on ``bilm``), windows and starting vectors of documents in memory.

    The token lists live only here: training holds the compact windows alone, so the
    memory it adds does not grow with the corpus's Python strings.
    """
    token_lists = bilm._tokenize(X)
    if not token_lists:
        raise ValueError("X is empty: fit needs at least one document")
    vocabulary = Vocabulary.build(token_lists, min_count=bilm.min_count,
                                  max_features=bilm.max_features, specials=SPECIALS, unknown=UNK)
    if warm_start(bilm):
        read_new_words(bilm, vocabulary, lambda: vocabulary.encode(token_lists), random_state)
        return _split_in_memory(bilm, X, token_lists, random_state, adapt=True)
    if len(vocabulary) == len(SPECIALS):
        raise _empty_vocabulary_error(bilm.min_count)
    bilm.vocabulary_ = vocabulary
    return _split_in_memory(bilm, X, token_lists, random_state, adapt=False)


def _split_in_memory(bilm, X, token_lists, random_state, adapt: bool) -> TrainingData:
    order = random_state.permutation(len(token_lists))
    n_valid = int(round(bilm.validation_fraction * len(token_lists)))
    n_valid = min(n_valid, len(token_lists) - 1)
    valid_docs = [token_lists[i] for i in np.sort(order[:n_valid])]
    train_docs = [token_lists[i] for i in np.sort(order[n_valid:])]
    if not any(train_docs):
        raise ValueError("the training documents contain no token")
    pretrained = None
    if not adapt:
        vocabulary = bilm.vocabulary_
        bilm.n_output_words_ = len(vocabulary)
        pretrained, bilm.pretrained_coverage_, extended = initial_word_vectors(
            bilm, X, vocabulary, len(SPECIALS), train_docs, random_state)
        bilm.vocabulary_ = extended  # windows hold ids of the words the model reads
    train = bilm._windows(train_docs)
    valid = bilm._windows(valid_docs) if n_valid else None

    def digest(hasher):
        hasher.update(np.ascontiguousarray(train.word_ids).tobytes())
        hasher.update(np.ascontiguousarray(train.offsets).tobytes())

    sample = [train_docs[i] for i in scale_sample_indices(train_docs, random_state)]
    return TrainingData(WindowsData(train, bilm._chars(train)), valid,
                        None if valid is None else bilm._chars(valid), pretrained, digest,
                        lambda: sample)


@contextlib.contextmanager
def streamed(bilm, source, random_state):
    """:func:`in_memory` for a streamed corpus; the encoded shards live while the block
    runs (in ``checkpoint_dir``, kept for a resumed run, or in a temporary folder)."""
    split_seed = int(random_state.randint(2**31 - 1))
    description = {
        "lowercase": bilm.lowercase, "token_pattern": bilm.token_pattern,
        "max_len": bilm.max_len, "validation_fraction": bilm.validation_fraction,
        "max_validation_tokens": MAX_VALIDATION_TOKENS, "split_seed": split_seed,
        "files": source.fingerprint() if isinstance(source, TextFiles) else None,
    }
    with contextlib.ExitStack() as stack:
        rank, size = world()
        if bilm.checkpoint_dir is not None:
            folder = Path(bilm.checkpoint_dir) / ("corpus" if size == 1 else f"corpus-{rank}")
        else:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(
                prefix="elmofeat-corpus-"))) / "corpus"
        corpus = None
        # Files that have not changed are not encoded again when a run resumes.
        if description["files"] is not None and bilm.tokenizer is None:
            corpus = EncodedCorpus.open(folder, description)
        if corpus is None:
            tokenize = TextTokenizer(bilm.lowercase, bilm.token_pattern, bilm.tokenizer)
            corpus = EncodedCorpus.encode(
                source, tokenize, folder, max_len=bilm.max_len,
                validation_fraction=bilm.validation_fraction,
                max_validation_tokens=MAX_VALIDATION_TOKENS, seed=split_seed,
                source=description)
        yield _from_corpus(bilm, corpus, random_state)


def _from_corpus(bilm, corpus: EncodedCorpus, random_state) -> TrainingData:
    if corpus.meta["n_documents"] == 0:
        raise ValueError("X is empty: fit needs at least one document")
    if corpus.meta["train_tokens"] == 0:
        raise ValueError("the training documents contain no token")
    vocabulary = corpus.vocabulary(bilm.min_count, bilm.max_features)

    def svd_sample() -> RaggedIds:
        id_map = corpus.id_map(vocabulary)
        documents = corpus.sample_documents(SVD_SAMPLE_TOKENS)
        lengths = np.fromiter((len(d) for d in documents), np.int64, len(documents))
        ids = id_map[np.concatenate(documents)] if documents else np.zeros(0, np.int64)
        return RaggedIds(ids, np.concatenate([[0], np.cumsum(lengths)]))

    if warm_start(bilm):
        read_new_words(bilm, vocabulary, svd_sample, random_state)
        return _streamed_data(bilm, corpus, None)
    if len(vocabulary) == len(SPECIALS):
        raise _empty_vocabulary_error(bilm.min_count)
    bilm.n_output_words_ = len(vocabulary)

    if bilm.pretrained_vectors is not None and not isinstance(
            bilm.pretrained_vectors, (str, os.PathLike)) and not hasattr(
            bilm.pretrained_vectors, "vectors") and not hasattr(
            bilm.pretrained_vectors, "keyed_vectors_"):
        raise ValueError("a streamed corpus cannot fit an unfitted vectorizer given as "
                         "pretrained_vectors: fit it first, or pass a vector file")
    pretrained, bilm.pretrained_coverage_, vocabulary = initial_word_vectors(
        bilm, None, vocabulary, len(SPECIALS), svd_sample, random_state)
    bilm.vocabulary_ = vocabulary
    return _streamed_data(bilm, corpus, pretrained)


def _streamed_data(bilm, corpus: EncodedCorpus, pretrained) -> TrainingData:
    id_map = corpus.id_map(bilm.vocabulary_)
    chars = corpus.char_table(bilm.max_word_length) if bilm.token_layer == "char" else None

    def digest(hasher):
        hasher.update(corpus.meta["digest"].encode())

    def scale_sample() -> list[list[str]]:
        documents = corpus.sample_documents(SCALE_SAMPLE_TOKENS)[:SCALE_SAMPLE]
        return [[corpus.types[i] for i in document] for document in documents]

    return TrainingData(StreamedData(corpus, id_map, chars), corpus.validation_windows(id_map),
                        chars, pretrained, digest, scale_sample)


def warm_start(bilm) -> bool:
    """Whether a fit continues from the biLM's current weights."""
    return bool(getattr(bilm, "warm_start", False)) and hasattr(bilm, "language_model_")


def read_new_words(bilm, vocabulary: Vocabulary, corpus_ids, random_state) -> list[str]:
    """Let a fitted word-level biLM read the words of new texts that it does not know.

    ``vocabulary``: the new texts' own (``min_count``, ``max_features``);
    ``corpus_ids``: a callable giving the new texts in its ids. Each word of it that the
    biLM's vocabulary lacks gets an embedding row in the biLM's embedding space, mapped
    from the new texts' co-occurrences (:func:`~elmofeat.bilm.pretrained.mapped_vectors`);
    the softmax does not predict it. A character-level biLM reads every word already.
    Returns the words added.
    """
    if bilm.token_layer != "word":
        return []
    old = bilm.vocabulary_
    n_special = len(SPECIALS)
    positions = old.index.get_indexer(pd.Index(vocabulary.tokens, dtype=object))
    positions[:n_special] = -2  # specials are neither new nor evidence
    new = np.flatnonzero(positions == -1)
    known = np.flatnonzero(positions >= n_special)
    if not len(new):
        return []
    table = bilm.language_model_.encoder.token_layer.embedding.weight.detach().cpu().numpy()
    mapped = mapped_vectors(corpus_ids(), len(vocabulary), n_special, known,
                            table[positions[known]], random_state)
    if mapped is None:
        return []
    new = new[np.isfinite(mapped[new]).all(axis=1)]
    words = [vocabulary.tokens[i] for i in new]
    bilm._read_words(words, mapped[new])
    return words


def fingerprint(bilm, data: TrainingData, ignored) -> str:
    """Identity of a fit's parameters, vocabulary and data: guards its checkpoints."""
    params = {k: repr(v) for k, v in bilm.get_params().items() if k not in ignored}
    hasher = hashlib.sha256(json.dumps(params, sort_keys=True).encode())
    hasher.update(json.dumps(bilm.vocabulary_.tokens).encode())
    if warm_start(bilm):  # where the weights start is part of the run
        from .io import weights_digest

        hasher.update(weights_digest(bilm).encode())
    data.digest(hasher)
    return hasher.hexdigest()
