"""SkipGramVectorizer: skip-gram with negative sampling word vectors (gensim), pooled."""

from __future__ import annotations

import logging
import math

import numpy as np
from gensim.models.callbacks import CallbackAny2Vec
from sklearn.utils import check_random_state
from tqdm.auto import tqdm

from ..text import DEFAULT_TOKEN_PATTERN
from .._param_validation import Interval, Real, StrOptions, positive_int
from .base import BaseWordVectorizer

# gensim silently truncates sentences longer than this many tokens; longer
# documents are cut into pieces of this size so that no text is lost.
_GENSIM_MAX_SENTENCE = 10_000
# epochs="auto": about this many training tokens in all (epochs x corpus tokens).
AUTO_TRAINING_TOKENS = 5_000_000
AUTO_EPOCHS_RANGE = (5, 100)


def auto_epochs(n_tokens: int) -> int:
    """Passes over a corpus of ``n_tokens`` tokens that ``epochs="auto"`` makes.

    Skip-gram needs a number of *updates*, not of passes: five passes over 55k tokens
    train almost nothing (SkipGramVectorizer's former default reached 0.37 accuracy on a
    5.5k-question task where SVD reached 0.82). About 5 million training tokens, at
    least 5 and at most 100 passes, are meant to keep it within a few points of
    SVDVectorizer on corpora of 30k to 600k tokens: the SVDVectorizer and
    SkipGramVectorizer rows of ``elmofeat benchmark`` measure it on the suite's tasks.

    Examples
    --------
    >>> auto_epochs(30_000), auto_epochs(240_000), auto_epochs(10_000_000)
    (100, 21, 5)
    """
    low, high = AUTO_EPOCHS_RANGE
    return int(min(high, max(low, math.ceil(AUTO_TRAINING_TOKENS / max(n_tokens, 1)))))


class SkipGramVectorizer(BaseWordVectorizer):
    """Document features from skip-gram word vectors (SGNS, trained by gensim), pooled.

    ``fit`` trains :class:`gensim.models.Word2Vec` with ``sg=1`` (skip-gram with
    negative sampling) on the tokenized training documents and keeps only the trained
    :class:`~gensim.models.KeyedVectors`; ``transform`` pools the vectors of each
    document's words.

    Parameters
    ----------
    vector_size : int, default=300
        Width of the word vectors.
    window : int, default=5
        Largest distance between a word and a context word (word2vec's dynamic
        window samples the actual distance uniformly up to this).
    negative : int, default=5
        Negative samples per positive pair.
    min_count : int, default=2
        Words seen fewer times in the training documents are dropped (as in
        :class:`~elmofeat.SVDVectorizer`; gensim's own default of 5 drops most words of
        a small corpus).
    max_features : int, default=None
        Keep only the most frequent words (gensim's ``max_final_vocab``).
    epochs : int or "auto", default="auto"
        Passes over the training documents. ``"auto"``: as many as make about 5 million
        training tokens, at least 5 and at most 100 (see :func:`auto_epochs`); the number
        used is ``epochs_``.
    sample : float, default=1e-3
        Down-sampling threshold of frequent words.
    alpha : float, default=0.025
        Initial learning rate (decays linearly to ``min_alpha``).
    min_alpha : float, default=1e-4
    workers : int, default=1
        Training threads. See *Reproducibility* below.
    pooling : {"mean", "max", "meanmax"}, default="mean"
    norm : {None, "l2"}, default=None
        ``"l2"``: each document's features scaled to unit length (zero rows stay zero).
    dtype : {np.float32, np.float64}, default=np.float32
    lowercase : bool, default=True
    token_pattern : str, default=r"(?u)\\b\\w\\w+\\b"
    tokenizer : callable, default=None
        As in :class:`~sklearn.feature_extraction.text.TfidfVectorizer`.
    random_state : int, RandomState instance or None, default=None
        Seeds gensim's initialisation, negative sampling and down-sampling.
    verbose : bool, default=False
        Show a progress bar over the training epochs.

    Attributes
    ----------
    keyed_vectors_ : gensim.models.KeyedVectors
        The trained word vectors (input embeddings) and each word's count
        (``get_vecattr(w, "count")``); the training state (output weights, learning
        rate schedule) is discarded, so pickles hold only vocabulary x vector_size
        floats.
    epochs_ : int
        Passes made over the training documents.

    Notes
    -----
    **Reproducibility.** With ``workers=1`` (the default), the same ``random_state``
    and the same documents give bit-identical vectors, in any process. With
    ``workers > 1`` gensim's threads update shared weights in an order set by the
    operating system's scheduling, so two fits differ slightly even with the same
    ``random_state`` (their quality is the same); use several workers for speed when
    exact repeatability does not matter. ``random_state=None`` draws a new seed from
    NumPy's global random state at each fit.

    Out-of-vocabulary words are ignored by ``transform``; a document without any
    vocabulary word gets a zero vector.

    See Also
    --------
    SVDVectorizer : Word vectors from a factorised co-occurrence matrix.

    Examples
    --------
    >>> from elmofeat import SkipGramVectorizer
    >>> docs = ["the cat sat on the mat", "the dog sat on the log"] * 20
    >>> vec = SkipGramVectorizer(vector_size=8, min_count=1, random_state=0).fit(docs)
    >>> vec.transform(["the cat and the dog"]).shape
    (1, 8)
    >>> len(vec.keyed_vectors_)
    7
    """

    _feature_prefix = "skipgram"
    _stamped_packages = BaseWordVectorizer._stamped_packages + ("gensim",)
    _parameter_constraints: dict = {
        **BaseWordVectorizer._text_parameter_constraints,
        **BaseWordVectorizer._output_parameter_constraints,
        "vector_size": [positive_int()],
        "window": [positive_int()],
        "negative": [positive_int()],
        "min_count": [positive_int()],
        "max_features": [positive_int(), None],
        "epochs": [StrOptions({"auto"}), positive_int()],
        "sample": [Interval(Real, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "min_alpha": [Interval(Real, 0, None, closed="left")],
        "workers": [positive_int()],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        vector_size=300,
        *,
        window=5,
        negative=5,
        min_count=2,
        max_features=None,
        epochs="auto",
        sample=1e-3,
        alpha=0.025,
        min_alpha=1e-4,
        workers=1,
        pooling="mean",
        norm=None,
        dtype=np.float32,
        lowercase=True,
        token_pattern=DEFAULT_TOKEN_PATTERN,
        tokenizer=None,
        random_state=None,
        verbose=False,
    ):
        self.vector_size = vector_size
        self.window = window
        self.negative = negative
        self.min_count = min_count
        self.max_features = max_features
        self.epochs = epochs
        self.sample = sample
        self.alpha = alpha
        self.min_alpha = min_alpha
        self.workers = workers
        self.pooling = pooling
        self.norm = norm
        self.dtype = dtype
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.tokenizer = tokenizer
        self.random_state = random_state
        self.verbose = verbose

    def _gensim_params(self, seed: int, epochs: int) -> dict:
        """Keyword arguments of the :class:`gensim.models.Word2Vec` that ``fit`` trains."""
        return dict(
            sg=1,
            hs=0,
            vector_size=self.vector_size,
            window=self.window,
            negative=self.negative,
            min_count=self.min_count,
            max_final_vocab=self.max_features,
            epochs=epochs,
            sample=self.sample,
            alpha=self.alpha,
            min_alpha=self.min_alpha,
            workers=self.workers,
            seed=seed,
        )

    def _fit_keyed_vectors(self, token_lists):
        from gensim.models import Word2Vec

        seed = int(check_random_state(self.random_state).randint(2**31 - 1))
        sentences = [
            tokens[i : i + _GENSIM_MAX_SENTENCE]
            for tokens in token_lists
            for i in range(0, max(len(tokens), 1), _GENSIM_MAX_SENTENCE)
            if tokens
        ]
        if not any(len(s) >= 1 for s in sentences):
            raise ValueError("the training documents contain no token")
        # gensim logs every progress step at INFO; keep it quiet unless asked.
        logger = logging.getLogger("gensim")
        level = logger.level
        logger.setLevel(max(level, logging.WARNING))
        try:
            n_tokens = sum(len(s) for s in sentences)
            self.epochs_ = auto_epochs(n_tokens) if self.epochs == "auto" else int(self.epochs)
            model = Word2Vec(**self._gensim_params(seed, self.epochs_))
            model.build_vocab(sentences)
            if len(model.wv) == 0:
                raise ValueError(
                    f"the vocabulary is empty: no word is seen min_count={self.min_count} "
                    "times; lower min_count or fit on more text"
                )
            with tqdm(total=model.epochs, unit="epoch", desc="skip-gram",
                      disable=not self.verbose) as bar:
                model.train(sentences, total_examples=model.corpus_count, epochs=model.epochs,
                            callbacks=[_EpochProgress(bar)] if self.verbose else ())
        finally:
            logger.setLevel(level)
        kv = model.wv
        kv.vectors_lockf = None  # training state; not needed for lookups
        return kv


class _EpochProgress(CallbackAny2Vec):
    """Advance a progress bar at the end of every gensim epoch."""

    def __init__(self, bar):
        self.bar = bar

    def on_epoch_end(self, model):
        self.bar.update(1)
