"""Long documents (issue 53): which pooled features of en-base's token representations
read a whole post, measured on the suite's five tasks (20 Newsgroups, the long posts, among
them).

The mean over hundreds of tokens washes out the few words that carry a long post's
topic. Each candidate here pools the same token representations another way, and is
scored under the suite's protocol (general_recipe.py's splits and C search; 20
Newsgroups: a seeded stratified sample of its standard split), so that a choice is
made on every task at once:

* ``mean``: the pooled features alone (``ElmoVectorizer(bag_size=None)``, the default
  before the bag; ``layer_mix="concat"``: each layer's mean, scaled as
  the frozen mix scales it, side by side), recomputed from the stored representations;
* ``idf``: the same, each token weighted by its inverse document frequency on the
  split's training texts (scikit-learn's smooth IDF);
* ``sif`` / ``sif-pc``: smooth inverse frequency weights ``a / (a + p(w))`` (``p``: the
  token's share of the training tokens, ``a = 1e-3``), and the same with each
  document's projection on the training documents' first principal component removed;
* ``idf-token`` / ``idf-top``: the IDF-weighted token layer alone / top LSTM layer alone;
* ``idf-power3``: ``idf`` beside the IDF-weighted signed cubic power mean (a softer max);
* ``cbow``: a contextual bag of words: token vectors assigned to a k-means codebook
  learned without labels on the training texts' tokens, counted and TF-IDF weighted
  (senses in place of word forms), and ``cbow+tfidf`` beside word TF-IDF;
  ``cbow-k500`` / ``cbow-k8000``: codebooks of 500 and 8,000 codes;
* ``mean+cbow`` (``-w0.5``, ``-w2``): ``mean`` beside the bag, so that short texts keep
  their dense features: the dense block centred and scaled to a unit RMS row norm, the
  bag's unit rows times 1 (0.5, 2);
* ``mean+bag`` (``-k1000``, ``-k4000``, ``-768``, ``-c64``, ``-400k``, ``-k4000-400k``,
  ``-k4000-400k-c64``): ``mean`` beside the contextual bag of
  ``ElmoVectorizer(bag_size=2000)`` as the library learns it (:mod:`elmofeat.elmo.bag`:
  a codebook and IDF learned on a seeded sample of whole training documents of at most
  100,000 tokens, token vectors reduced to 128 principal components; rows as long as the
  dense block's): 2,000 codes (1,000, 4,000; 2,000 on the unreduced 768 columns, on 64
  components; 2,000 and 4,000 learned on a sample of 400,000 tokens; 4,000 on 64
  components and 400,000 tokens; ``-p3``: 3 passes of the k-means instead of 10;
  ``-s1``, ``-s2``: the bag with seeds 1 and 2 instead of 0, the spread of the
  codebook's draw). These rows take the layers as they come, as the bag did before
  its layer weights; ``mean+bag-lw`` (``-lw-s1``, ``-lw-s2``: seeds 1 and 2) is the
  bag with them, and ``-lw-p3`` (``-lw-p3-s1``, ``-lw-p3-s2``) the
  same with 3 k-means passes: each layer divided by its spread on the training
  documents before the codebook (``-lw``, ``-lw-s1`` and ``-lw-s2`` scored when the weighted rows' length
  was a BLAS product; it is a sum per row since, so that a token's code never depends
  on its place in a block: the same method, whose rounding may draw another codebook);
  ``mean+bag-lw-fast`` (``-fast-s1``, ``-fast-s2``) is the library's fit since, the
  default: 3 passes, the PCA of every k-th sample token (at most 25,000) and the
  k-means++ start drawn in float32. A stored row keeps the scores of the library's bag
  when it was scored (the rows before ``-fast`` are built with the earlier fit's 10
  passes and whole-sample PCA, their float64 start aside): ``-k1000``,
  ``-k4000``, ``-768``, ``-400k``, ``-k4000-400k`` and ``-c64`` were scored with the
  bag's first fit (scikit-learn's k-means++ start, a randomized PCA);
  ``-k4000-400k-c64``, ``-p3``, ``hybrid-bag`` and ``hybrid-bag-w0.35`` with its second
  (an exact PCA of the unit rows held whole, its own k-means++ start, the IDF from a
  second assignment of the sample); ``mean+bag``, ``-s1`` and ``-s2`` with today's (the
  same PCA summed in blocks, the IDF from the k-means' own labels: the same method,
  whose rounding draws another codebook). Delete a row from the JSON file to score it
  again with today's;
* ``hybrid-mean`` / ``hybrid-idf`` / ``hybrid-bag``: ``make_hybrid``'s construction
  (TF-IDF beside the centred, row-normalised dense block at weight 0.2) with the
  ``mean``, ``idf`` or ``mean+bag`` block; ``-w0.35``: the block at weight 0.35;
* ``tfidf``: ``TfidfVectorizer(sublinear_tf=True)``, the floor.

Stages:

``embed``
    en-base's three layer representations of every token of every task's documents,
    once, in float16 under ``WORK/TASK/``.
``check``
    ``mean`` against ``ElmoVectorizer(bag_size=None)``'s features on CR's first split (they
    must agree to 1% of the features' scale).
``score [CANDIDATES]``
    Score candidates not yet in ``results/long_documents.json`` and write
    ``results/long_documents.{json,md}``.
``table``
    Write ``results/long_documents.{json,md}`` again from the stored rows.

Run: python benchmarks/long_documents.py embed
     python benchmarks/long_documents.py check
     python benchmarks/long_documents.py score
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
from _common import RESULTS, markdown_table, write_results
from card_facts import paired_cell

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import MiniBatchKMeans
from sklearn.feature_extraction.text import TfidfTransformer, TfidfVectorizer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import Normalizer, StandardScaler

from elmofeat import BiLM
from elmofeat.datasets import get_data_home
from elmofeat.elmo import bag
from elmofeat.suite import BenchmarkSettings
from elmofeat.suite.data import Split, load_dataset

import general_recipe

TASKS = (*general_recipe.TASKS, "20ng")
#: 20 Newsgroups' sample: training and test posts (the issue's measurement's size).
NEWSGROUPS_SIZES = (3000, 3000)
DEFAULT_WORK = Path("~/elmofeat-work/long_documents").expanduser()
CHUNK_DOCUMENTS = 256
SIF_A = 1e-3
CODEBOOK = 2000
CODEBOOK_SAMPLE = 200_000
HYBRID_WEIGHT = 0.2


def newsgroups_split(home: Path, seed: int = 0) -> Split:
    """The suite's 20 Newsgroups task at this probe's sample size (seeded, stratified)."""
    settings = BenchmarkSettings(datasets=("20ng",), seed=seed, sizes=dict(zip(
        ("20ng_train_documents", "20ng_test_documents"), NEWSGROUPS_SIZES)))
    (split,) = load_dataset("20ng", settings, home).splits
    split.name = f"{NEWSGROUPS_SIZES[0]:,} / {NEWSGROUPS_SIZES[1]:,} sampled (seed {seed})"
    return split


def all_splits(home: Path) -> dict:
    splits = general_recipe.suite_splits(home)
    splits["20ng"] = [newsgroups_split(home)]
    return splits


# ---------------------------------------------------------------------------- storage
class Store:
    """One task's documents as en-base reads them: ``layers`` (n_tokens, 3 * dim) float16,
    the three layers side by side; ``types`` (n_tokens,) an id per distinct token;
    ``offsets`` (n_documents + 1,); ``index``: text -> document."""

    def __init__(self, folder: Path):
        self.folder = folder
        meta = json.loads((folder / "meta.json").read_text())
        self.dim, self.n_types = meta["dim"], meta["n_types"]
        self.offsets = np.load(folder / "offsets.npy")
        self.types = np.load(folder / "types.npy")
        self.layers = np.load(folder / "layers.npy", mmap_mode="r")
        texts = json.loads((folder / "texts.json").read_text())
        self.index = {text: i for i, text in enumerate(texts)}

    @staticmethod
    def build(folder: Path, texts: list, bilm: BiLM) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        texts = list(dict.fromkeys(texts))
        tokens = bilm.tokenize(texts)
        vocabulary: dict[str, int] = {}
        types = np.fromiter((vocabulary.setdefault(t, len(vocabulary)) for doc in tokens
                             for t in doc), np.int32)
        offsets = np.concatenate([[0], np.cumsum([len(d) for d in tokens])]).astype(np.int64)
        dim = bilm.output_dim_
        layers = np.lib.format.open_memmap(folder / "layers.tmp.npy", mode="w+",
                                           dtype=np.float16, shape=(int(offsets[-1]), 3 * dim))
        for start in range(0, len(texts), CHUNK_DOCUMENTS):
            chunk = tokens[start: start + CHUNK_DOCUMENTS]
            values, _ = bilm.embed_tokens(chunk)
            values = values.reshape(len(values), 3 * dim)
            layers[offsets[start]: offsets[start] + len(values)] = values.astype(np.float16)
            print(f"\r  {min(start + CHUNK_DOCUMENTS, len(texts)):,}/{len(texts):,} documents",
                  end="", flush=True)
        print()
        layers.flush()
        del layers
        (folder / "layers.tmp.npy").rename(folder / "layers.npy")
        np.save(folder / "types.npy", types)
        np.save(folder / "offsets.npy", offsets)
        (folder / "texts.json").write_text(json.dumps(texts))
        (folder / "meta.json").write_text(json.dumps({"dim": dim, "n_types": len(vocabulary),
                                                      "n_tokens": int(offsets[-1])}))

    def documents(self, texts) -> np.ndarray:
        return np.fromiter((self.index[t] for t in texts), np.int64, len(texts))

    def chunks(self, docs):
        """(documents, their token rows as float32, their token types, offsets) a chunk
        at a time."""
        for start in range(0, len(docs), CHUNK_DOCUMENTS):
            part = docs[start: start + CHUNK_DOCUMENTS]
            lengths = self.offsets[part + 1] - self.offsets[part]
            local = np.concatenate([[0], np.cumsum(lengths)])
            rows = np.repeat(self.offsets[part] - local[:-1], lengths) + np.arange(local[-1])
            yield part, np.asarray(self.layers[rows], np.float32), self.types[rows], local


def weighted_pool(store: Store, docs, weights, columns=slice(None), power: int = 1) -> np.ndarray:
    """Per document, the weighted mean of its tokens' vectors (``weights``: one per
    token type, None: equal), or the signed ``power`` mean; zeros for a document with
    no token."""
    out = []
    for _, values, types, local in store.chunks(docs):
        values = values[:, columns]
        if power != 1:
            values = values ** power
        w = np.ones(len(types)) if weights is None else weights[types]
        n = len(local) - 1
        matrix = sp.csr_matrix((w, np.arange(len(types)), local), shape=(n, len(types)))
        totals = np.asarray(matrix.sum(axis=1)).ravel()
        pooled = (matrix @ values) / np.maximum(totals, 1e-12)[:, None]
        if power != 1:
            pooled = np.sign(pooled) * np.abs(pooled) ** (1.0 / power)
        out.append(pooled.astype(np.float32))
    return np.concatenate(out)


def document_frequency(store: Store, docs) -> np.ndarray:
    seen = np.zeros(store.n_types)
    for _, _, types, local in store.chunks(docs):
        for i in range(len(local) - 1):
            seen[np.unique(types[local[i]: local[i + 1]])] += 1
    return seen


def token_counts(store: Store, docs) -> np.ndarray:
    counts = np.zeros(store.n_types)
    for _, _, types, _ in store.chunks(docs):
        counts += np.bincount(types, minlength=store.n_types)
    return counts


# ------------------------------------------------------------------------- candidates
class Pooled:
    """A vectorizer over a task's :class:`Store`: ``fit`` learns the weights (and
    components) from the training texts alone, ``transform`` pools."""

    def __init__(self, store: Store, weighting=None, columns=slice(None), remove_pc=False,
                 power3=False):
        self.store, self.weighting, self.columns = store, weighting, columns
        self.remove_pc, self.power3 = remove_pc, power3

    def fit_transform(self, texts, y=None):
        docs = self.store.documents(texts)
        n = len(docs)
        if self.weighting == "idf":
            self.weights_ = np.log((1 + n) / (1 + document_frequency(self.store, docs))) + 1
        elif self.weighting == "sif":
            counts = token_counts(self.store, docs)
            self.weights_ = SIF_A / (SIF_A + counts / max(counts.sum(), 1))
        else:
            self.weights_ = None
        features = self._pool(docs)
        # each layer's block divided by its spread over the training documents, as the
        # default features' frozen weights are (ElmoVectorizer measures it on fit)
        blocks = features.reshape(n, -1, self.store.dim).astype(np.float64)
        spread = np.sqrt(blocks.var(axis=0).mean(axis=-1))
        self.scale_ = 1.0 / (3.0 * np.where(spread > 1e-12, spread, 1.0))
        features = self._scaled(features)
        if self.remove_pc:
            centred = features - features.mean(axis=0)
            self.component_ = np.linalg.svd(centred, full_matrices=False)[2][0]
            features = features - np.outer(features @ self.component_, self.component_)
        return features

    def fit(self, texts, y=None):
        self.fit_transform(texts)
        return self

    def _pool(self, docs):
        # a type never seen in training gets the largest weight, as an unseen word would
        features = weighted_pool(self.store, docs, self.weights_, self.columns)
        if self.power3:
            features = np.hstack([features, weighted_pool(self.store, docs, self.weights_,
                                                          self.columns, power=3)])
        return features

    def _scaled(self, features):
        n = len(features)
        blocks = features.reshape(n, -1, self.store.dim) * self.scale_[None, :, None]
        return blocks.reshape(n, -1).astype(np.float32)

    def transform(self, texts):
        features = self._scaled(self._pool(self.store.documents(texts)))
        if self.remove_pc:
            features = features - np.outer(features @ self.component_, self.component_)
        return features


def codebook_codes(store: Store, train_docs, k: int, seed: int = 0) -> np.ndarray:
    """Every token of the store (n_tokens,) assigned to a ``k``-centroid k-means codebook
    learned on a sample of ``train_docs``' tokens (the three layers side by side, unit
    norm); kept under the store's folder per training set, so that candidates built on
    the same codebook share it."""
    key = hashlib.sha1(np.sort(train_docs).tobytes()).hexdigest()[:16]
    path = store.folder / f"codes-k{k}-seed{seed}-{key}.npy"
    if path.is_file():
        return np.load(path)
    rng = np.random.default_rng(seed)
    n_train = int((store.offsets[train_docs + 1] - store.offsets[train_docs]).sum())
    sample = []
    for _, values, _, _ in store.chunks(train_docs):
        sample.append(values[rng.random(len(values)) < CODEBOOK_SAMPLE / max(1, n_train)])
    sample = np.concatenate(sample)
    sample /= np.maximum(np.linalg.norm(sample, axis=1, keepdims=True), 1e-12)
    kmeans = MiniBatchKMeans(k, random_state=seed, n_init=1, batch_size=4096).fit(sample)
    codes = np.empty(int(store.offsets[-1]), np.int16)
    every = np.arange(len(store.offsets) - 1)
    for part, values, _, local in store.chunks(every):
        values /= np.maximum(np.linalg.norm(values, axis=1, keepdims=True), 1e-12)
        rows = np.repeat(store.offsets[part] - local[:-1], np.diff(local)) + np.arange(local[-1])
        codes[rows] = kmeans.predict(values)
    np.save(path, codes)
    return codes


class ContextualBag:
    """Token vectors (the three layers side by side, unit norm) assigned to a k-means
    codebook learned on a sample of the training tokens, counted, TF-IDF weighted."""

    def __init__(self, store: Store, with_words: bool = False, k: int = CODEBOOK,
                 seed: int = 0):
        self.store, self.with_words, self.k, self.seed = store, with_words, k, seed

    def _counts(self, docs):
        owner = np.repeat(np.arange(len(docs)), self.store.offsets[docs + 1]
                          - self.store.offsets[docs])
        rows = np.concatenate([np.arange(self.store.offsets[d], self.store.offsets[d + 1])
                               for d in docs]) if len(docs) else np.zeros(0, np.int64)
        return sp.csr_matrix((np.ones(len(rows)), (owner, self.codes_[rows])),
                             shape=(len(docs), self.k))

    def fit_transform(self, texts, y=None):
        docs = self.store.documents(texts)
        self.codes_ = codebook_codes(self.store, docs, self.k, self.seed)
        self.tfidf_ = TfidfTransformer(sublinear_tf=True)
        bag = self.tfidf_.fit_transform(self._counts(docs))
        if self.with_words:
            self.words_ = TfidfVectorizer(sublinear_tf=True)
            bag = sp.hstack([self.words_.fit_transform(texts), bag]).tocsr()
        return bag

    def fit(self, texts, y=None):
        self.fit_transform(texts)
        return self

    def transform(self, texts):
        bag = self.tfidf_.transform(self._counts(self.store.documents(texts)))
        if self.with_words:
            bag = sp.hstack([self.words_.transform(texts), bag]).tocsr()
        return bag


class DenseAndBag:
    """The default dense features (``mean``) beside the contextual bag: the dense block
    centred and scaled to a unit root-mean-square row norm on the training documents,
    the bag's rows (unit norm) times ``weight``, side by side as one dense matrix."""

    def __init__(self, store: Store, weight: float = 1.0, k: int = CODEBOOK):
        self.store, self.weight, self.k = store, weight, k

    def fit_transform(self, texts, y=None):
        self.dense_, self.bag_ = Pooled(self.store), ContextualBag(self.store, k=self.k)
        dense = self.dense_.fit_transform(texts).astype(np.float64)
        self.centre_ = dense.mean(axis=0)
        self.norm_ = float(np.sqrt(((dense - self.centre_) ** 2).sum(axis=1).mean()))
        return self._joined(dense, self.bag_.fit_transform(texts))

    def fit(self, texts, y=None):
        self.fit_transform(texts)
        return self

    def _joined(self, dense, bag):
        dense = (dense - self.centre_) / max(self.norm_, 1e-12)
        return np.hstack([dense, self.weight * bag.toarray()]).astype(np.float32)

    def transform(self, texts):
        return self._joined(self.dense_.transform(texts), self.bag_.transform(texts))


class LibraryBag:
    """``mean`` beside the contextual bag of ``ElmoVectorizer(bag_size=...)``, learned as
    the vectorizer learns it (:mod:`elmofeat.elmo.bag`: a seeded sample of whole training
    documents of at most ``bag.SAMPLE_TOKENS`` tokens, a PCA to ``n_components``, the
    codebook, IDF on the sample, rows as long as the dense block's RMS length times
    ``weight``), on the stored representations. ``layer_weights``: each layer divided by
    its spread over the training documents before the codebook, as the vectorizer does
    since the weights (False: the layers as they come, the bag before them). ``passes``:
    the k-means' cap; ``pca_tokens``: the sample tokens the principal axes are computed
    from at most."""

    def __init__(self, store: Store, n_codes: int = CODEBOOK, weight: float = 1.0,
                 n_components: int = bag.N_COMPONENTS, sample_tokens: int = bag.SAMPLE_TOKENS,
                 seed: int = 0, passes: int = bag.KMEANS_PASSES, layer_weights: bool = False,
                 pca_tokens: int = bag.PCA_TOKENS):
        self.store, self.n_codes, self.weight = store, n_codes, weight
        self.n_components, self.sample_tokens, self.seed = n_components, sample_tokens, seed
        self.passes, self.layer_weights, self.pca_tokens = passes, layer_weights, pca_tokens

    def _layers(self, docs, cut=None):
        """(layers (n_tokens, 3, dim), offsets) of ``docs``; ``cut``: (document, tokens
        kept)."""
        parts = []
        for part, values, _, local in self.store.chunks(docs):
            if cut is not None and cut[0] in part:
                j = int(np.flatnonzero(part == cut[0])[0])
                keep = np.ones(len(values), bool)
                keep[local[j] + cut[1] : local[j + 1]] = False
                values = values[keep]
                local = local.copy()
                local[j + 1 :] -= local[j + 1] - local[j] - cut[1]
            parts.append((values.reshape(len(values), 3, self.store.dim), local))
        return bag.join(parts)

    def fit_transform(self, texts, y=None):
        docs = self.store.documents(texts)
        self.dense_ = Pooled(self.store)
        dense = self.dense_.fit_transform(texts)
        lengths = self.store.offsets[docs + 1] - self.store.offsets[docs]
        chosen, last, kept = bag.sample_documents(lengths.__getitem__, len(lengths),
                                                  self.sample_tokens, self.seed)
        layers, offsets = self._layers(docs[chosen], (docs[last], kept) if last >= 0 else None)
        # Pooled's scale_: one over 3 x each layer's spread on the training documents,
        # the vectorizer's weights (which it measures on at most 2,048 of them) up to a
        # factor, which the unit length removes
        self.bag_ = bag.fit_bag(layers, offsets, self.n_codes, self.seed, self.n_components,
                                self.passes,
                                self.dense_.scale_ if self.layer_weights else None,
                                self.pca_tokens)
        self.bag_.scale = self.weight * bag.block_scale(dense[chosen])
        return np.hstack([dense, self._bag(docs)])

    def fit(self, texts, y=None):
        self.fit_transform(texts)
        return self

    def _bag(self, docs):
        return np.concatenate([self.bag_.features(self.bag_.counts(*self._layers(part)))
                               for part in np.array_split(docs, max(1, len(docs) // 1024))])

    def transform(self, texts):
        docs = self.store.documents(texts)
        return np.hstack([self.dense_.transform(texts), self._bag(docs)])


def hybrid(dense, weight: float = HYBRID_WEIGHT) -> FeatureUnion:
    """``make_hybrid``'s construction around any dense vectorizer."""
    block = Pipeline([("dense", dense), ("center", StandardScaler(with_std=False)),
                      ("normalize", Normalizer())])
    return FeatureUnion([("tfidf", TfidfVectorizer(sublinear_tf=True)), ("dense", block)],
                        transformer_weights={"dense": weight})


#: The bag's fit of the rows scored before the ``-fast`` rows: the PCA of the whole
#: sample and (``EARLIER_FIT``) 10 k-means passes (their float64 k-means++ start is not
#: kept: scored again, such a row gets a start drawn in float32).
WHOLE_SAMPLE_PCA = {"pca_tokens": sys.maxsize}
EARLIER_FIT = {**WHOLE_SAMPLE_PCA, "passes": 10}


def candidates(store: Store, dim: int) -> dict:
    token, top = slice(0, dim), slice(2 * dim, 3 * dim)
    return {
        "tfidf": lambda: TfidfVectorizer(sublinear_tf=True),
        "mean": lambda: Pooled(store),
        "idf": lambda: Pooled(store, "idf"),
        "sif": lambda: Pooled(store, "sif"),
        "sif-pc": lambda: Pooled(store, "sif", remove_pc=True),
        "idf-token": lambda: Pooled(store, "idf", token),
        "idf-top": lambda: Pooled(store, "idf", top),
        "idf-power3": lambda: Pooled(store, "idf", power3=True),
        "cbow": lambda: ContextualBag(store),
        "cbow+tfidf": lambda: ContextualBag(store, with_words=True),
        "cbow-k500": lambda: ContextualBag(store, k=500),
        "cbow-k8000": lambda: ContextualBag(store, k=8000),
        "mean+cbow": lambda: DenseAndBag(store),
        "mean+cbow-w0.5": lambda: DenseAndBag(store, weight=0.5),
        "mean+cbow-w2": lambda: DenseAndBag(store, weight=2.0),
        "mean+bag": lambda: LibraryBag(store, **EARLIER_FIT),
        "mean+bag-k1000": lambda: LibraryBag(store, **EARLIER_FIT, n_codes=1000),
        "mean+bag-k4000": lambda: LibraryBag(store, **EARLIER_FIT, n_codes=4000),
        "mean+bag-768": lambda: LibraryBag(store, **EARLIER_FIT, n_components=768),
        "mean+bag-400k": lambda: LibraryBag(store, **EARLIER_FIT, sample_tokens=400_000),
        "mean+bag-k4000-400k": lambda: LibraryBag(store, **EARLIER_FIT, n_codes=4000,
                                                  sample_tokens=400_000),
        "mean+bag-c64": lambda: LibraryBag(store, **EARLIER_FIT, n_components=64),
        "mean+bag-p3": lambda: LibraryBag(store, **WHOLE_SAMPLE_PCA, passes=3),
        "mean+bag-s1": lambda: LibraryBag(store, **EARLIER_FIT, seed=1),
        "mean+bag-s2": lambda: LibraryBag(store, **EARLIER_FIT, seed=2),
        "mean+bag-lw": lambda: LibraryBag(store, **EARLIER_FIT, layer_weights=True),
        "mean+bag-lw-s1": lambda: LibraryBag(store, **EARLIER_FIT, layer_weights=True, seed=1),
        "mean+bag-lw-s2": lambda: LibraryBag(store, **EARLIER_FIT, layer_weights=True, seed=2),
        **{f"mean+bag-lw-p3{suffix}": (lambda seed=seed: LibraryBag(
            store, **WHOLE_SAMPLE_PCA, layer_weights=True, passes=3, seed=seed))
           for suffix, seed in (("", 0), ("-s1", 1), ("-s2", 2))},
        "mean+bag-k4000-400k-c64": lambda: LibraryBag(store, **EARLIER_FIT, n_codes=4000,
                                                      sample_tokens=400_000, n_components=64),
        "mean+bag-lw-fast": lambda: LibraryBag(store, layer_weights=True),
        "mean+bag-lw-fast-s1": lambda: LibraryBag(store, layer_weights=True, seed=1),
        "mean+bag-lw-fast-s2": lambda: LibraryBag(store, layer_weights=True, seed=2),
        "hybrid-mean": lambda: hybrid(Pooled(store)),
        "hybrid-idf": lambda: hybrid(Pooled(store, "idf")),
        "hybrid-mean-w0.35": lambda: hybrid(Pooled(store), 0.35),
        "hybrid-bag": lambda: hybrid(LibraryBag(store, **EARLIER_FIT)),
        "hybrid-bag-w0.35": lambda: hybrid(LibraryBag(store, **EARLIER_FIT), 0.35),
    }


CANDIDATES = tuple(candidates(None, 1))
#: The bag's rows, one per seed of its sample and k-means: before the layer weights, with
#: them (the default), and with them and 3 k-means passes.
SEEDED = {"mean+bag": ("mean+bag", "mean+bag-s1", "mean+bag-s2"),
          "mean+bag-lw": ("mean+bag-lw", "mean+bag-lw-s1", "mean+bag-lw-s2"),
          "mean+bag-lw-p3": ("mean+bag-lw-p3", "mean+bag-lw-p3-s1", "mean+bag-lw-p3-s2"),
          "mean+bag-lw-fast": ("mean+bag-lw-fast", "mean+bag-lw-fast-s1",
                               "mean+bag-lw-fast-s2")}


# ------------------------------------------------------------------------------ stages
def embed(home: Path, work: Path, tasks=TASKS) -> None:
    bilm = BiLM.from_pretrained("en-base")
    for task, splits in all_splits(home).items():
        if task not in tasks:
            continue
        folder = work / task
        if (folder / "meta.json").is_file():
            continue
        texts = [t for s in splits for t in (*s.X_train, *s.X_test)]
        print(f"== {task}: {len(set(texts)):,} documents", flush=True)
        Store.build(folder, texts, bilm)


def check(home: Path, work: Path, task: str = "cr") -> float:
    """The ``mean`` candidate against ``ElmoVectorizer(bag_size=None)``'s features on the task's
    first split: the largest difference relative to the features' largest value (they
    differ by the float16 storage and by the spread's sample: the vectorizer measures
    it on at most 2,048 training documents, ``mean`` on all of them)."""
    from elmofeat import ElmoVectorizer

    split = all_splits(home)[task][0]
    pooled = Pooled(Store(work / task))
    ours = [pooled.fit_transform(split.X_train), pooled.transform(split.X_test)]
    vectorizer = ElmoVectorizer(BiLM.from_pretrained("en-base"), bag_size=None, cache_dir=None,
                                random_state=0)
    theirs = [vectorizer.fit_transform(split.X_train), vectorizer.transform(split.X_test)]
    worst = max(float(np.abs(a - b).max() / np.abs(b).max()) for a, b in zip(ours, theirs))
    print(f"mean against ElmoVectorizer on {task}, {split.name}: largest relative "
          f"difference {worst:.4f}")
    if worst > 0.01:
        raise SystemExit("the stored representations do not give the pooled features")
    return worst


def stored_rows() -> dict:
    path = RESULTS / "long_documents.json"
    return json.loads(path.read_text())["rows"] if path.is_file() else {}


def score(names, home: Path, work: Path) -> None:
    splits = all_splits(home)
    rows = stored_rows()
    stores = {task: Store(work / task) for task in splits}
    for name in names:
        if name in rows:
            continue
        print(f"== {name}", flush=True)
        scores = {}
        for task, task_splits in splits.items():
            make = candidates(stores[task], stores[task].dim)[name]
            scores.update(general_recipe.score(make, {task: task_splits}))
        # merged with what is stored now: another run may have added rows meanwhile
        rows = {**stored_rows(), name: {"scores": scores}}
        write(rows, splits)


def write(rows: dict, splits: dict, environment: dict | None = None) -> None:
    header = ["candidate", *TASKS, "mean of 4", "mean of 5"]
    table = []
    for name, row in rows.items():
        means = [row["scores"][t]["mean"] for t in TASKS]
        table.append([name, *(f"{m:.4f}" for m in means), f"{np.mean(means[:4]):.4f}",
                      f"{np.mean(means):.4f}"])
    markdown = (
        "## Long documents: pooling en-base's token representations\n\n"
        "Each candidate pools the same token representations of the shipped en-base "
        "(not adapted), scored as `benchmarks/general_recipe.py` scores its rows (C "
        "chosen by inner 3-fold CV; CR and MPQA 5 folds, AG News and R8 one split); 20 "
        f"Newsgroups: {splits['20ng'][0].name} posts of its standard split. See the "
        "script's docstring for what each candidate is.\n\n"
        + markdown_table(header, table) + "\n")
    if "mean" in rows:
        paired = [[f"{n} minus mean", *(paired_cell(r, rows["mean"], t) for t in TASKS)]
                  for n, r in rows.items() if n != "mean"]
        markdown += ("\nEach candidate minus `mean` (the pooled features alone, "
                     "`bag_size=None`; `mean+bag-lw-fast` is the default) on the same "
                     "splits, paired (points; mean ± std over folds where there are folds). "
                     "A mean inside its spread is not a win.\n\n"
                     + markdown_table(["rows", *TASKS], paired) + "\n")
    seeded = []
    for name, group in SEEDED.items():
        seeds = [n for n in group if n in rows]
        if "mean" not in rows or len(seeds) < 2:
            continue
        cells = []
        for t in TASKS:
            gains = [100 * (np.mean(rows[n]["scores"][t]["splits"])
                            - np.mean(rows["mean"]["scores"][t]["splits"])) for n in seeds]
            cells.append(f"{np.mean(gains):+.2f} ({min(gains):+.2f} to {max(gains):+.2f})")
        seeded.append([f"{name} ({len(seeds)} seeds: {', '.join(seeds)})", *cells])
    if seeded:
        markdown += ("\nThe bag learned with several seeds: its gain over `mean` in "
                     "points, the mean over the seeds and, in brackets, the lowest and the "
                     "highest (the spread of the codebook's draw). `mean+bag`: the layers as "
                     "they come (the default before the layer weights); `mean+bag-lw`: each "
                     "layer divided by its spread; `mean+bag-lw-p3`: the same with 3 k-means "
                     "passes instead of 10; `mean+bag-lw-fast`: 3 passes, the PCA of at most "
                     "25,000 of the sample's tokens and a float32 k-means++ start, the "
                     "default since (before: `mean+bag-lw`).\n\n"
                     + markdown_table(["rows", *TASKS], seeded) + "\n")
    write_results("long_documents", {"rows": rows}, markdown, environment=environment)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stage", choices=("embed", "check", "score", "table"))
    parser.add_argument("names", nargs="*", help=f"candidates ({', '.join(CANDIDATES)})")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS,
                        help="embed: the tasks to embed")
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in CANDIDATES]
    if unknown:
        parser.error(f"unknown candidates {unknown}; known: {list(CANDIDATES)}")
    home = Path(get_data_home(args.data_home))
    if args.stage == "embed":
        embed(home, args.work, args.tasks)
    elif args.stage == "check":
        check(home, args.work)
    elif args.stage == "table":  # the stored rows written again, nothing scored
        stored = json.loads((RESULTS / "long_documents.json").read_text())
        write(stored["rows"], all_splits(home), stored["environment"])
    else:
        score(args.names or list(CANDIDATES), home, args.work)


if __name__ == "__main__":
    main()
