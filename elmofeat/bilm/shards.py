"""A streamed corpus, encoded once into shards on disk, and the batches of its epochs.

Pretraining on a corpus larger than memory (:class:`~elmofeat.bilm.corpus.TextFiles`,
a generator, any iterable without a length) reads it once
(:meth:`EncodedCorpus.encode`): documents are tokenized a chunk at a time, every
distinct token string gets a type id, documents are cut into ``<bos> ... <eos>``
windows, and the windows' type ids go to shard files of about ``shard_tokens`` tokens
(``int32``). Only the type table and its counts grow with the corpus, and they grow with
its vocabulary, not its length.

An epoch (:class:`ShardPlan`) visits the shards in a seeded random order, a *block* of
``buffer_shards`` shards at a time: the block's windows are bucketed by length into
batches and the batches shuffled (the shuffle buffer), so that a batch mixes windows of
different books while memory holds one block. The order depends only on
``(seed, epoch)``, so a resumed run replays exactly the batches an uninterrupted one
sees.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from .._files import atomic_path
from ..text import Vocabulary, validate_documents
from .batching import BOS, EOS, SPECIALS, UNK, Windows, char_table, make_batch

FORMAT = "elmofeat-encoded-corpus-1"
#: Documents tokenized at a time while encoding.
CHUNK_DOCUMENTS = 4096
#: Tokens per shard file, and shards per block of an epoch (the shuffle buffer).
SHARD_TOKENS = 1_000_000
BUFFER_SHARDS = 8
#: Type ids of the window markers; token types follow.
BOS_TYPE, EOS_TYPE = 0, 1


class EncodedCorpus:
    """A corpus cut into windows and written as type-id shards in ``folder``.

    Build one with :meth:`encode`, reopen one with :meth:`open`.

    Attributes
    ----------
    folder : Path
    meta : dict
        ``source`` (what was encoded, with the tokenizer and window settings),
        ``digest`` (SHA-256 of every type id and type: the data's identity),
        ``n_documents``, ``train_tokens``, ``valid_tokens``, ``shards`` (per shard:
        ``tokens`` and ``windows``).
    types : list of str
        Every distinct token, ``<bos>`` and ``<eos>`` first.
    counts : ndarray (n_types,)
        Corpus count of every type (training and validation documents).
    """

    def __init__(self, folder: Path, meta: dict, types: list[str], counts: np.ndarray):
        self.folder = Path(folder)
        self.meta = meta
        self.types = types
        self.counts = counts

    # ------------------------------------------------------------------ building
    @classmethod
    def encode(cls, documents: Iterable[str], tokenize, folder, *, max_len: int,
               validation_fraction: float, max_validation_tokens: int, seed: int,
               source: dict, shard_tokens: int | None = None) -> "EncodedCorpus":
        """Read ``documents`` once and write its shards to ``folder`` (emptied first).

        Parameters
        ----------
        documents : iterable of str
        tokenize : callable, list of str -> list of list of str
        folder : path
        max_len : int
            Tokens per window (without ``<bos>``/``<eos>``).
        validation_fraction : float
            Each document is held out for validation with this probability (seeded),
            until the held-out documents reach ``max_validation_tokens`` tokens.
        seed : int
        source : dict
            JSON-able description of what is encoded (kept in ``meta["source"]``).
        shard_tokens : int
            Tokens per shard file (a shard ends at a document's end).
        """
        folder = Path(folder)
        shard_tokens = SHARD_TOKENS if shard_tokens is None else shard_tokens
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        rng = np.random.default_rng([seed, 7])
        index: dict[str, int] = {BOS: BOS_TYPE, EOS: EOS_TYPE}
        counts = np.zeros(1024, np.int64)
        digest = hashlib.sha256()
        train, valid = _ShardWriter(folder, "train", shard_tokens), _ShardWriter(folder, "valid")
        n_documents, valid_tokens = 0, 0
        for start, chunk in _chunks(documents, CHUNK_DOCUMENTS):
            token_lists = tokenize(validate_documents(chunk, offset=start))
            n_documents += len(token_lists)
            flat = [token for tokens in token_lists for token in tokens]
            if not flat:
                continue
            codes, uniques = pd.factorize(pd.Index(flat, dtype=object))
            ids = np.fromiter((index.setdefault(u, len(index)) for u in uniques), np.int64,
                              len(uniques))[codes]
            if len(index) > len(counts):
                counts = np.concatenate([counts, np.zeros(max(len(index), 2 * len(counts))
                                                          - len(counts), np.int64)])
            counts += np.bincount(ids, minlength=len(counts))
            digest.update(ids.astype(np.int32).tobytes())
            lengths = np.fromiter((len(t) for t in token_lists), np.int64, len(token_lists))
            held = rng.random(len(token_lists)) < validation_fraction
            # The cap: once reached, every later document trains.
            room = max_validation_tokens - valid_tokens
            held &= np.cumsum(np.where(held, lengths, 0)) <= room
            valid_tokens += int(lengths[held].sum())
            doc_offsets = np.concatenate([[0], np.cumsum(lengths)])
            for writer, mask in ((train, ~held), (valid, held)):
                if mask.any():
                    keep = np.repeat(mask, lengths)
                    writer.add(ids[keep], lengths[mask], max_len)
            del doc_offsets
        train.close()
        valid.close()
        types = [None] * len(index)
        for token, i in index.items():
            types[i] = token
        digest.update(json.dumps(types).encode())
        meta = {
            "format": FORMAT, "source": source, "digest": digest.hexdigest(),
            "n_documents": n_documents, "train_tokens": train.tokens,
            "valid_tokens": valid.tokens, "shards": train.shards, "valid_shards": valid.shards,
        }
        counts = counts[: len(index)]
        np.save(folder / "counts.npy", counts)
        with atomic_path(folder / "types.json") as path:
            path.write_text(json.dumps(types))
        # meta.json last: a folder without it is an unfinished encoding.
        with atomic_path(folder / "meta.json") as path:
            path.write_text(json.dumps(meta))
        return cls(folder, meta, types, counts)

    @classmethod
    def open(cls, folder, source: dict | None = None) -> "EncodedCorpus | None":
        """The finished encoding in ``folder`` (of ``source``, when given), or None."""
        folder = Path(folder)
        try:
            meta = json.loads((folder / "meta.json").read_text())
            if meta.get("format") != FORMAT or (source is not None and meta["source"] != source):
                return None
            types = json.loads((folder / "types.json").read_text())
            counts = np.load(folder / "counts.npy")
        except (OSError, ValueError, KeyError):
            return None
        return cls(folder, meta, types, counts)

    # ------------------------------------------------------------------- reading
    @property
    def n_shards(self) -> int:
        return len(self.meta["shards"])

    def vocabulary(self, min_count: int, max_features: int | None) -> Vocabulary:
        """The output vocabulary, as :meth:`Vocabulary.build` makes it from the same
        tokens: specials, then types seen ``min_count`` times by decreasing count (ties
        alphabetical), at most ``max_features``."""
        counts = self.counts[2:]
        keep = np.flatnonzero(counts >= min_count)
        order = sorted(keep, key=lambda i: (-counts[i], self.types[i + 2]))
        if max_features is not None:
            order = order[:max_features]
        tokens = list(SPECIALS) + [self.types[i + 2] for i in order]
        return Vocabulary(tokens, np.concatenate([[0] * len(SPECIALS), counts[order]]),
                          unknown=UNK)

    def id_map(self, vocabulary: Vocabulary) -> np.ndarray:
        """Vocabulary id of every type (``<unk>`` for types outside it), int64."""
        ids = vocabulary.index.get_indexer(pd.Index(self.types, dtype=object)).astype(np.int64)
        ids[ids < 0] = vocabulary.tokens.index(UNK)
        ids[BOS_TYPE], ids[EOS_TYPE] = vocabulary.tokens.index(BOS), vocabulary.tokens.index(EOS)
        return ids

    def char_table(self, max_word_length: int) -> np.ndarray:
        """Byte ids of every type for the character CNN (int16: 261 ids)."""
        return char_table(self.types, max_word_length).astype(np.int16)

    def windows(self, shards, id_map: np.ndarray, part: str = "train") -> Windows:
        """The windows of the given shards, word ids mapped through ``id_map``; type ids
        (into :attr:`types`) kept for the character CNN."""
        names = self.meta["shards" if part == "train" else "valid_shards"]
        type_parts, length_parts = [], []
        for shard in shards:
            type_parts.append(np.load(self.folder / names[shard]["ids"]))
            length_parts.append(np.load(self.folder / names[shard]["lengths"]))
        type_ids = (np.concatenate(type_parts) if type_parts else np.zeros(0, np.int32)).astype(
            np.int64)
        lengths = np.concatenate(length_parts) if length_parts else np.zeros(0, np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return Windows(id_map[type_ids], type_ids, None, offsets,
                       np.zeros(len(lengths), np.int64))

    def validation_windows(self, id_map: np.ndarray) -> Windows | None:
        if not self.meta["valid_shards"]:
            return None
        return self.windows(range(len(self.meta["valid_shards"])), id_map, part="valid")

    def sample_documents(self, n_tokens: int) -> list[np.ndarray]:
        """Type ids of training windows (as pseudo-documents, without markers) from the
        first shards, about ``n_tokens`` tokens: what the SVD start counts on."""
        out, total = [], 0
        for shard in range(self.n_shards):
            windows = self.windows([shard], np.arange(len(self.types)))
            for i in range(len(windows)):
                ids = windows.type_ids[windows.offsets[i] + 1 : windows.offsets[i + 1] - 1]
                out.append(ids)
                total += len(ids)
                if total >= n_tokens:
                    return out
        return out


class _ShardWriter:
    """Collects windows and writes a shard file whenever ``shard_tokens`` are reached."""

    def __init__(self, folder: Path, part: str, shard_tokens: int | None = None):
        self.folder, self.part, self.shard_tokens = folder, part, shard_tokens
        self.ids: list[np.ndarray] = []
        self.lengths: list[np.ndarray] = []
        self.pending = 0
        self.tokens = 0
        self.shards: list[dict] = []

    def add(self, ids: np.ndarray, doc_lengths: np.ndarray, max_len: int) -> None:
        """Documents' type ids (concatenated) and lengths; cut into windows, and into
        shards at the first document end past ``shard_tokens``."""
        while len(doc_lengths):
            ends = np.cumsum(doc_lengths)
            n_docs = len(doc_lengths)
            if self.shard_tokens is not None:
                room = self.shard_tokens - self.pending
                n_docs = min(n_docs, int(np.searchsorted(ends, room)) + 1)
            n_tokens = int(ends[n_docs - 1])
            window_ids, window_lengths = _windows(ids[:n_tokens], doc_lengths[:n_docs], max_len)
            self.ids.append(window_ids)
            self.lengths.append(window_lengths)
            self.pending += n_tokens
            self.tokens += n_tokens
            if self.shard_tokens is not None and self.pending >= self.shard_tokens:
                self.flush()
            ids, doc_lengths = ids[n_tokens:], doc_lengths[n_docs:]

    def flush(self) -> None:
        if not self.ids:
            return
        number = len(self.shards)
        entry = {"ids": f"{self.part}-{number:05d}-ids.npy",
                 "lengths": f"{self.part}-{number:05d}-lengths.npy"}
        ids = np.concatenate(self.ids).astype(np.int32)
        lengths = np.concatenate(self.lengths)
        np.save(self.folder / entry["ids"], ids)
        np.save(self.folder / entry["lengths"], lengths)
        entry.update(tokens=self.pending, windows=len(lengths))
        self.shards.append(entry)
        self.ids, self.lengths, self.pending = [], [], 0

    def close(self) -> None:
        self.flush()


def _windows(ids: np.ndarray, doc_lengths: np.ndarray, max_len: int):
    """``<bos> w_1 .. w_k <eos>`` windows (``k <= max_len``) of concatenated documents,
    as :func:`~elmofeat.bilm.batching.make_windows` cuts them: flat type ids and window
    lengths (markers included)."""
    doc_lengths = doc_lengths[doc_lengths > 0]
    n_windows = -(-doc_lengths // max_len)
    content = np.full(int(n_windows.sum()), max_len, dtype=np.int64)
    last = np.cumsum(n_windows) - 1
    content[last] = doc_lengths - max_len * (n_windows - 1)
    lengths = content + 2
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    out = np.empty(offsets[-1], dtype=np.int64)
    out[offsets[:-1]] = BOS_TYPE
    out[offsets[1:] - 1] = EOS_TYPE
    is_content = np.ones(offsets[-1], dtype=bool)
    is_content[offsets[:-1]] = False
    is_content[offsets[1:] - 1] = False
    out[is_content] = ids
    return out, lengths


def _chunks(documents, size):
    chunk, start = [], 0
    for document in documents:
        chunk.append(document)
        if len(chunk) == size:
            yield start, chunk
            start += size
            chunk = []
    if chunk:
        yield start, chunk


class ShardPlan:
    """The batches of one epoch over an :class:`EncodedCorpus`, loaded a block at a time.

    Parameters
    ----------
    corpus : EncodedCorpus
    id_map : ndarray
        Type id -> vocabulary id.
    chars : ndarray or None
        Byte ids of every type (character CNN), or None.
    seed, epoch : int
        The order depends on these alone.
    batch_size : int
    buffer_shards : int
        Shards per block (the shuffle buffer).
    rank, world_size : int
        This process's share of every block's batches (equal counts on every rank).
    device : torch device
    """

    def __init__(self, corpus: EncodedCorpus, id_map, chars, seed: int, epoch: int,
                 batch_size: int, buffer_shards: int, rank: int = 0, world_size: int = 1,
                 device="cpu"):
        self.corpus, self.id_map, self.chars = corpus, id_map, chars
        self.seed, self.epoch, self.batch_size = seed, epoch, batch_size
        self.rank, self.world_size, self.device = rank, world_size, device
        order = np.random.default_rng([seed, epoch]).permutation(corpus.n_shards)
        self.blocks = [order[i : i + buffer_shards] for i in range(0, len(order), buffer_shards)]
        counts = []
        for block in self.blocks:
            windows = sum(corpus.meta["shards"][s]["windows"] for s in block)
            n_batches = -(-windows // batch_size)
            counts.append((n_batches - n_batches % world_size) // world_size)
        self.starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self._loaded = None  # (block index, windows, batches)

    def __len__(self) -> int:
        return int(self.starts[-1])

    def _block(self, b: int):
        if self._loaded is None or self._loaded[0] != b:
            from .batching import bucket_batches

            windows = self.corpus.windows(self.blocks[b], self.id_map)
            rng = np.random.default_rng([self.seed, self.epoch, b])
            batches = bucket_batches(windows.lengths, self.batch_size, rng)
            usable = len(batches) - len(batches) % self.world_size
            self._loaded = (b, windows, batches[:usable][self.rank :: self.world_size])
        return self._loaded

    def batch(self, i: int):
        """Batch ``i`` of this epoch (this rank's share); sequential access loads each
        block once."""
        b = int(np.searchsorted(self.starts, i, side="right")) - 1
        _, windows, batches = self._block(b)
        return make_batch(windows, batches[i - self.starts[b]], self.chars, self.device)


class StreamedData:
    """The training side of an :class:`EncodedCorpus`: what
    :class:`~elmofeat.bilm.train.Pretrainer` trains on (as
    :class:`~elmofeat.bilm.train.WindowsData` for windows in memory)."""

    def __init__(self, corpus: EncodedCorpus, id_map: np.ndarray, chars=None,
                 buffer_shards: int | None = None):
        self.corpus, self.id_map, self.chars = corpus, id_map, chars
        self.buffer_shards = BUFFER_SHARDS if buffer_shards is None else buffer_shards

    @property
    def n_tokens(self) -> int:
        return int(self.corpus.meta["train_tokens"])

    def __len__(self) -> int:
        return sum(shard["windows"] for shard in self.corpus.meta["shards"])

    def plan(self, seed: int, epoch: int, batch_size: int, rank: int, world_size: int,
             device) -> ShardPlan:
        return ShardPlan(self.corpus, self.id_map, self.chars, seed, epoch, batch_size,
                         self.buffer_shards, rank, world_size, device)
