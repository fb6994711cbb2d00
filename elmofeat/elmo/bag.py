"""The contextual bag of words of ``ElmoVectorizer(bag_size=...)``.

Every token's representation (its layers side by side, each divided by its spread as
the mixes see it, unit length, reduced by a PCA) is assigned to the nearest code of a k-means codebook learned without labels on a
sample of the training texts; a document becomes its counts of codes, TF-IDF weighted,
beside the pooled features. Why: the mean over the hundreds of tokens of a long
document washes out the few words that carry its topic, which a bag keeps; codes of
contextual vectors are closer to senses than to word forms
(``benchmarks/long_documents.py`` measures both).

The fitted bag (:class:`ContextualBag`) holds NumPy arrays and a fitted
``TfidfTransformer`` only: transforming and pickling need no torch module.
"""

from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp

from ..mixes.base import FittedMix, one_blas_thread, select_documents

#: Training tokens the codebook and its inverse document frequencies are learned from:
#: the tokens of a seeded sample of whole training documents, at most this many (a
#: fit's cost stays bounded whatever the corpus).
SAMPLE_TOKENS = 100_000
#: Width the token vectors are reduced to before the codebook (a PCA of the sample):
#: assigning a token costs ``n_codes * N_COMPONENTS`` multiply-adds.
N_COMPONENTS = 128
#: Passes of the mini-batch k-means over the sample at most. Its early stopping (no
#: improvement over 10 mini-batches) ends some fits sooner, not all; 3 passes scored as
#: 10 on every task of the development suite (``benchmarks/long_documents.py``, rows
#: ``mean+bag-lw-p3*``).
KMEANS_PASSES = 3
#: Sample tokens the principal axes are computed from at most: every k-th token of the
#: sample, spread evenly over its documents. The covariance's product is
#: most of the PCA's cost, and a few tens of thousands of rows fix 128 axes of 768
#: columns (rows ``mean+bag-lw-fast*`` of ``benchmarks/long_documents.py``).
PCA_TOKENS = 25_000
#: Sample tokens per code at least: a small training set gets a smaller codebook, never
#: an error (k-means needs several tokens per code to find anything but the tokens).
MIN_TOKENS_PER_CODE = 8
#: Tokens assigned to codes by one product (bounds the score matrix: rows x codes).
CODE_BLOCK = 256
#: Tokens per product when the bag is learned (bounds the copies of the sample's rows).
PCA_BLOCK = 4096


def _workers() -> int:
    """Threads that assign codes, each on its own documents: torch's thread count in
    force (what the vectorizer's thread policy set; 1 where torch is not loaded)."""
    torch = sys.modules.get("torch")
    return max(1, torch.get_num_threads()) if torch is not None else 1


class ContextualBag:
    """A fitted contextual bag of words.

    Parameters
    ----------
    centre : ndarray of shape (n_layers * dim,)
        Mean of the sample's unit token vectors.
    components : ndarray of shape (n_components, n_layers * dim)
        The sample's principal axes.
    centroids : ndarray of shape (n_codes, n_components)
        The codebook.
    tfidf : sklearn.feature_extraction.text.TfidfTransformer
        Fitted on the sample documents' counts of codes (sublinear term frequency,
        unit-length rows).
    scale : float
        The length of every non-empty document's row of the bag.
    layer_weights : ndarray of shape (n_layers,) or None, default=None
        Each layer multiplied by its weight before the unit length (None: as they come,
        the bags fitted before the weights).
    """

    def __init__(self, centre, components, centroids, tfidf, scale: float,
                 layer_weights=None):
        self.centre = np.asarray(centre, dtype=np.float32)
        self.components = np.ascontiguousarray(components, dtype=np.float32)
        self.centroids = np.ascontiguousarray(centroids, dtype=np.float32)
        self.tfidf = tfidf
        self.scale = float(scale)
        self.layer_weights = (None if layer_weights is None
                              else np.asarray(layer_weights, dtype=np.float32))
        self._prepare()

    def _prepare(self):
        """Derived arrays the assignment reads (not pickled: rebuilt on load)."""
        self._column_weights = column_weights(self.layer_weights, self.components.shape[1])
        self._projection, self._projected_centre = reduction(self.centre, self.components,
                                                             self._column_weights)
        self._codebook = np.ascontiguousarray(self.centroids.T)  # (n_components, n_codes)
        # ||c||^2 / 2: the nearest code maximises x.c - ||c||^2 / 2
        self._half_norms = 0.5 * (self.centroids ** 2).sum(axis=1)

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    def __setstate__(self, state):
        self.__dict__.update({"layer_weights": None, **state})  # None: pickled before them
        self._prepare()

    @property
    def n_features(self) -> int:
        return len(self.centroids)

    def __repr__(self):
        return (f"ContextualBag(n_codes={len(self.centroids)}, "
                f"n_components={len(self.components)}, scale={self.scale:.4g}, "
                f"layer_weights={self.layer_weights})")

    def reduce_into(self, block: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Tokens' unit vectors, centred and reduced, written into ``out``:
        ``(n, n_layers * dim) -> (n, n_components)`` (:func:`reduce_rows`)."""
        return reduce_rows(block, self._projection, self._projected_centre, out,
                           self._column_weights)

    def codes(self, layers: np.ndarray) -> np.ndarray:
        """The nearest code of every token: ``(n_tokens, n_layers, dim) -> (n_tokens,)``.

        Tokens go through products of at most ``CODE_BLOCK`` rows, written into two
        buffers reused from block to block, so that the score matrix stays bounded
        whatever the document's length."""
        if not len(layers):
            return np.zeros(0, dtype=np.int64)
        flat = layers.reshape(len(layers), -1)
        out = np.empty(len(flat), dtype=np.int64)
        rows = min(CODE_BLOCK, len(flat))
        reduced = np.empty((rows, self._projection.shape[1]), dtype=np.float32)
        scores = np.empty((rows, len(self._half_norms)), dtype=np.float32)
        for start in range(0, len(flat), CODE_BLOCK):
            block = np.asarray(flat[start : start + CODE_BLOCK], dtype=np.float32)
            n = len(block)
            self.reduce_into(block, reduced[:n])
            np.matmul(reduced[:n], self._codebook, out=scores[:n])
            scores[:n] -= self._half_norms
            out[start : start + n] = scores[:n].argmax(axis=1)
        return out

    def counts(self, layers: np.ndarray, offsets: np.ndarray) -> sp.csr_matrix:
        """Counts of codes per document, ``(n_documents, n_codes)``; document ``i`` owns
        ``layers[offsets[i]:offsets[i + 1]]``. Each document's codes come from products
        over its own tokens on one BLAS thread, so that they depend on that document
        alone (a product's sums depend on its number of rows and on its threads); the
        documents are shared among torch's threads in force."""
        n_docs = len(offsets) - 1
        workers = min(_workers(), n_docs)

        def run(part):  # numpy's products and argmax release the GIL
            return [self.codes(layers[offsets[i] : offsets[i + 1]]) for i in part]

        with one_blas_thread():
            if workers > 1:
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(workers) as pool:
                    parts = np.array_split(np.arange(n_docs), workers)
                    codes = [c for part in pool.map(run, parts) for c in part]
            else:
                codes = run(range(n_docs))
        lengths = np.diff(offsets)
        owner = np.repeat(np.arange(len(lengths)), lengths)
        flat = np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)
        counts = sp.csr_matrix((np.ones(len(flat)), (owner, flat)),
                               shape=(len(lengths), self.n_features))
        return counts  # the COO -> CSR conversion summed a document's repeated codes

    def features(self, counts) -> np.ndarray:
        """TF-IDF weighted counts of codes, every non-empty row of length ``scale``:
        ``(n_documents, n_codes)`` float32 (zeros for a document with no token)."""
        return (self.scale * self.tfidf.transform(counts)).toarray().astype(np.float32)


def column_weights(layer_weights, width: int):
    """Each column's weight, ``(width,)``, from the layers' (side by side, equal widths);
    None where ``layer_weights`` is None."""
    if layer_weights is None:
        return None
    layer_weights = np.asarray(layer_weights, dtype=np.float32)
    if width % len(layer_weights):
        raise ValueError(f"{len(layer_weights)} layer weights for rows of width {width}, "
                         "which is not a multiple of it")
    return np.repeat(layer_weights, width // len(layer_weights))


def reduction(centre: np.ndarray, components: np.ndarray,
              weights=None) -> tuple[np.ndarray, np.ndarray]:
    """What :func:`reduce_rows` multiplies by and subtracts: the projection
    ``(width, n_components)``, each column's weight (``weights``, None: none) folded into
    its row, and the centre projected, ``(n_components,)``."""
    weighted = components if weights is None else components * weights
    return (np.ascontiguousarray(weighted.T),
            centre @ np.ascontiguousarray(components.T))


def reduce_rows(block: np.ndarray, projection: np.ndarray, projected_centre: np.ndarray,
                out: np.ndarray, weights=None) -> np.ndarray:
    """Rows weighted column by column, made unit length, centred and projected, written
    into ``out``: ``(n, width) @ (width, n_components) -> (n, n_components)``, with
    ``projection`` holding the column weights ``weights`` (``(width,)``, None: none)
    already and ``projected_centre`` the centre already projected. The unit length and
    the centring are applied after the projection, on ``n_components`` columns instead
    of ``width``; a zero row stays zero before the centring."""
    # each row's own sum (no BLAS product, whose sums may depend on the row's place in
    # the block): a token's code must not depend on the tokens read with it
    scaled = block if weights is None else block * weights
    norms = np.sqrt(np.einsum("ij,ij->i", scaled, scaled))
    norms[norms == 0] = 1.0
    np.matmul(block, projection, out=out)
    out /= norms[:, None]
    out -= projected_centre
    return out


#: The stages of :func:`fit_bag`, in order, as its ``on_stage`` hears them begin.
FIT_STAGES = ("principal axes", "reduction", "k-means start", "k-means")


def fit_bag(layers: np.ndarray, offsets: np.ndarray, n_codes: int, seed: int,
            n_components: int = N_COMPONENTS, passes: int = KMEANS_PASSES,
            layer_weights=None, pca_tokens: int = PCA_TOKENS,
            on_stage=None) -> ContextualBag:
    """Learn a bag's codebook and weights from sample documents' token representations.

    Parameters
    ----------
    layers : ndarray of shape (n_tokens, n_layers, dim)
    offsets : ndarray of shape (n_documents + 1,)
    n_codes : int
        Codes of the codebook at most: fewer where the sample has fewer than
        ``MIN_TOKENS_PER_CODE`` tokens per code (at least one code).
    seed : int
        Seeds the k-means.
    n_components : int
        Width the unit token vectors are reduced to (at most their own width).
    passes : int
        Passes of the mini-batch k-means over the sample.
    layer_weights : ndarray of shape (n_layers,) or None
        Each layer multiplied by its weight before the unit length: the vectorizer
        passes one over each layer's spread, so that every layer weighs alike in the
        codebook's distances whatever the biLM (None: the layers as they come).
    pca_tokens : int
        The principal axes (and the centre) are those of every k-th token, at most this
        many tokens.
    on_stage : callable, default=None
        ``on_stage(name)`` as each of :data:`FIT_STAGES` begins (a progress bar's hook).

    Returns
    -------
    bag : ContextualBag
        With ``scale`` 1 (the caller sets the scale it wants).
    """
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.feature_extraction.text import TfidfTransformer

    n_tokens = int(offsets[-1] - offsets[0])
    if not n_tokens:
        raise ValueError("the contextual bag needs training texts with at least one token "
                         "(every training document is empty): use bag_size=None")
    n_codes = max(1, min(n_codes, n_tokens // MIN_TOKENS_PER_CODE))
    flat = layers[offsets[0] : offsets[-1]].reshape(n_tokens, -1)
    weights = column_weights(layer_weights, flat.shape[1])
    pca_rows = flat[:: -(-n_tokens // pca_tokens)]  # every k-th row: at most pca_tokens
    stages = iter(FIT_STAGES)

    def begin():
        if on_stage is not None:
            on_stage(next(stages))

    begin()
    centre, components = principal_axes(pca_rows,
                                        min(n_components, flat.shape[1], len(pca_rows)), weights)
    begin()
    projection, projected_centre = reduction(centre, components, weights)
    reduced = np.empty((n_tokens, len(components)), dtype=np.float32)
    for start in range(0, n_tokens, PCA_BLOCK):
        block = np.asarray(flat[start : start + PCA_BLOCK], dtype=np.float32)
        reduce_rows(block, projection, projected_centre, reduced[start : start + len(block)],
                    weights)
    begin()
    batch = min(4096, n_tokens)
    # products of one row, on one thread: a second only waits, and the start does not
    # depend on the thread count
    with one_blas_thread():
        start = _seed_codes(reduced, n_codes, 3 * batch, seed)
    begin()
    kmeans = MiniBatchKMeans(n_codes, random_state=seed, n_init=1, batch_size=batch,
                             max_iter=passes, init=start).fit(reduced)
    # the IDF from the sample's codes as the k-means assigned them (its labels_): the
    # sample is not projected and assigned a second time
    lengths = np.diff(offsets)
    owner = np.repeat(np.arange(len(lengths)), lengths)
    counts = sp.csr_matrix((np.ones(n_tokens), (owner, kmeans.labels_)),
                           shape=(len(lengths), n_codes))
    return ContextualBag(centre, components, kmeans.cluster_centers_,
                         TfidfTransformer(sublinear_tf=True).fit(counts), 1.0, layer_weights)


def principal_axes(flat: np.ndarray, width: int,
                   weights=None) -> tuple[np.ndarray, np.ndarray]:
    """The mean and the ``width`` principal axes of the rows of ``flat`` multiplied by
    the column weights ``weights`` (``(d,)``; None: none) and made unit length (a zero
    row stays zero): ``(n, d) -> ((d,), (width, d))``, the axes by decreasing
    variance. The covariance is summed ``PCA_BLOCK`` rows at a time in float64, so the
    unit rows are never held whole (the sample's layers are hundreds of MB); the
    eigenvectors of that covariance are PCA's axes (scikit-learn's
    ``svd_solver="covariance_eigh"`` computes the same from the rows held whole)."""
    def unit_blocks():
        for start in range(0, len(flat), PCA_BLOCK):
            block = np.array(flat[start : start + PCA_BLOCK], dtype=np.float32)
            if weights is not None:
                block *= weights
            norms = np.sqrt(np.einsum("ij,ij->i", block, block))
            block /= np.where(norms == 0, 1.0, norms)[:, None]
            yield block

    total = np.zeros(flat.shape[1])
    for block in unit_blocks():
        total += block.sum(axis=0, dtype=np.float64)
    centre = (total / len(flat)).astype(np.float32)
    covariance = np.zeros((flat.shape[1], flat.shape[1]))
    for block in unit_blocks():
        block -= centre
        covariance += block.T @ block  # float32 product (numpy's syrk), float64 sum
    vectors = np.linalg.eigh(covariance)[1]  # eigenvalues in increasing order
    axes = vectors[:, ::-1][:, :width].T
    # a sign per axis, as scikit-learn's svd_flip chooses it: the largest entry positive
    signs = np.sign(axes[np.arange(width), np.abs(axes).argmax(axis=1)])
    return centre, (axes * np.where(signs == 0, 1.0, signs)[:, None]).astype(np.float32)


def _seed_codes(reduced: np.ndarray, n_codes: int, size: int, seed: int) -> np.ndarray:
    """k-means++ starting codes (one candidate per step, as first published), drawn from
    a seeded subsample of ``max(size, 3 * n_codes)`` tokens, as ``MiniBatchKMeans`` draws
    its start. Written here because scikit-learn's ``kmeans_plusplus`` validates its input
    at each of the ``n_codes`` steps and, on float32 vectors, converts the subsample to
    float64 at each step: measured, most of a bag's fit. Here a step is one float32
    matrix-vector product over the subsample (its cost is reading the subsample); the
    draw sums the distances in float64."""
    rng = np.random.RandomState(seed)
    rows = np.sort(rng.permutation(len(reduced))[:max(size, 3 * n_codes)])
    points = np.asarray(reduced[rows], dtype=np.float32)
    columns = np.ascontiguousarray(points.T)  # row @ columns: measured faster than points @ row
    norms = np.einsum("ij,ij->i", points, points)
    chosen = [rng.randint(len(points))]
    nearest = np.maximum(norms - 2 * points[chosen[0]] @ columns + norms[chosen[0]], 0.0)
    for _ in range(1, n_codes):
        cumulative = np.cumsum(nearest, dtype=np.float64)
        total = cumulative[-1]
        # a point drawn with probability proportional to its squared distance to the
        # nearest code so far (uniformly once every point is a code)
        pick = (min(int(np.searchsorted(cumulative, rng.uniform() * total)), len(points) - 1)
                if total > 0 else rng.randint(len(points)))
        chosen.append(pick)
        distance = norms - 2 * points[pick] @ columns + norms[pick]
        np.minimum(nearest, np.maximum(distance, 0.0), out=nearest)
    return points[chosen].copy()


def join(parts) -> tuple[np.ndarray, np.ndarray]:
    """``(layers, offsets)`` pairs of consecutive documents as one pair."""
    layers = np.concatenate([p[0] for p in parts])
    lengths = np.concatenate([np.diff(p[1]) for p in parts])
    return layers, np.concatenate([[0], np.cumsum(lengths)])


def block_scale(features: np.ndarray) -> float:
    """The root-mean-square length of the centred rows of ``features`` (the pooled
    features of the sample documents): the bag's rows get this length (times
    ``bag_weight``), so that the two blocks weigh alike in a classifier whatever the
    biLM's scale. The uncentred length where the rows do not vary (one document)."""
    features = np.asarray(features, dtype=np.float64)
    for rows in (features - features.mean(axis=0), features):
        length = float(np.sqrt((rows ** 2).sum(axis=1).mean())) if len(rows) else 0.0
        if length > 1e-12:
            return length
    return 1.0


class BaggedMix(FittedMix):
    """A fitted mix's pooled features followed by a contextual bag's: what
    ``ElmoVectorizer.transform`` computes when it has a bag. Wraps both and keeps
    neither's state itself (the vectorizer's ``mix_`` and ``bag_`` stay what they are)."""

    def __init__(self, mix: FittedMix, bag: ContextualBag, pooling: str):
        self.mix, self.bag = mix, bag
        n_pooled = mix.n_features * (2 if pooling == "meanmax" else 1)
        self.n_features = n_pooled + bag.n_features
        self.layer_weights, self.gamma = mix.layer_weights, mix.gamma

    def pool(self, layers, offsets, pooling, batch_invariant=True):
        return np.hstack([self.mix.pool(layers, offsets, pooling, batch_invariant),
                          self.bag.features(self.bag.counts(layers, offsets))])

    def pool_stream(self, pieces, pooling):
        counts = sp.csr_matrix((1, self.bag.n_features))

        def counted(pieces):  # the bag's counts, taken as the mix reads each piece
            nonlocal counts
            for layers in pieces:
                counts = counts + self.bag.counts(layers, np.array([0, len(layers)]))
                yield layers

        pooled = self.mix.pool_stream(counted(pieces), pooling)
        return np.concatenate([pooled, self.bag.features(counts)[0]])

    def features(self, data, docs, pooling, chunk=1024, batch_invariant=True):
        """The mix's features of ``docs`` beside their bag (``data`` holds every token's
        layers: what a supervised mix learns from)."""
        docs = np.asarray(docs, dtype=np.int64)
        pooled = self.mix.features(data, docs, pooling, chunk, batch_invariant)
        bags = [self.bag.features(self.bag.counts(*select_documents(
                    data.layers, data.offsets, docs[i : i + chunk])))
                for i in range(0, len(docs), chunk)]
        return np.hstack([pooled, np.concatenate(bags) if bags
                          else np.zeros((0, self.bag.n_features), np.float32)])


def sample_layers(documents, tokenize, layers_of, embed_tokens, budget: int,
                  seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The token layers of a seeded sample of whole training documents, at most
    ``budget`` tokens, the last one drawn cut to fit (:func:`sample_documents`):
    ``(layers (n_tokens, n_layers, dim), offsets (n_sampled + 1,))``.

    ``tokenize(text)`` gives a document's tokens (only the drawn documents are
    tokenized); ``layers_of(texts, token_lists)`` their layers (cached where the caller
    caches them); ``embed_tokens(token_lists)`` the layers of the cut document, which
    are not the layers of its text."""
    tokens = {}

    def length_of(i):
        tokens[i] = tokenize(documents[i])
        return len(tokens[i])

    chosen, last, kept = sample_documents(length_of, len(documents), budget, seed)
    whole = [i for i in chosen if i != last or kept == len(tokens[i])]
    parts = [layers_of([documents[i] for i in whole], [tokens[i] for i in whole])]
    if len(whole) < len(chosen):
        parts.append(embed_tokens([tokens[last][:kept]]))
    return join(parts)


def sample_documents(length_of, n_documents: int, budget: int,
                     seed: int) -> tuple[np.ndarray, int, int]:
    """Which training documents a bag learns from: whole documents in a seeded random
    order until ``budget`` tokens, the last one cut to fill it.

    Parameters
    ----------
    length_of : callable
        ``length_of(i)``: document ``i``'s number of tokens. Called in the seeded order
        until the budget is reached only, so that a large corpus is not tokenized
        whole to draw a sample of it.
    n_documents : int
    budget : int
    seed : int

    Returns
    -------
    chosen : ndarray of int
        Indices of the non-empty documents chosen, in increasing order.
    last : int
        The chosen document that may be cut (the last one drawn; -1 when none is).
    kept : int
        Its tokens kept (its full length when the budget is not reached).
    """
    chosen, last, kept, total = [], -1, 0, 0
    for i in np.random.RandomState(seed).permutation(n_documents):
        length = int(length_of(int(i)))
        if length <= 0:
            continue
        chosen.append(int(i))
        last, kept = int(i), min(length, budget - total)
        total += length
        if total >= budget:
            break
    return np.sort(np.asarray(chosen, dtype=np.int64)), last, kept
