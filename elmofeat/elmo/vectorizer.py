"""ElmoVectorizer: document features from a pretrained biLM's mixed, pooled layers."""

from __future__ import annotations

import os

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted
from tqdm.auto import tqdm

from . import (bag as _bag, caches as _bilm_cache, fine_tuning as _fine_tuning, placement,
               progress, references)
from .._base import BaseTextVectorizer
from .labels import fit_targets
from .resolution import is_fitted_bilm, resolve_bilm
from .transform import CHUNK, chunks, document_features, transform_part
from .._param_validation import (Integral, Interval, Real, RegisteredOptions, StrOptions,
                                TorchDevices, fit_context, positive_int)
from ..text import validate_documents
from ..runtime.malloc import reuse_large_blocks
from ..runtime.threads import N_THREADS_CONSTRAINTS, ThreadPolicy
from ..bilm import BiLM
from ..mixes import DEFAULT_LAYER_MIX, get_mix, mix_names
from ..mixes.base import MixData, MixSettings, layer_spread, pool_layers
from ..mixes.crossfit import cross_fitting_folds

# Documents each layer's spread is measured on (``scale_layers=True``).
_SPREAD_SAMPLE = 2048
#: Every output feature times this (``feature_scale_``; scaling by ``s`` multiplies C by
#: ``s**2``): ``LogisticRegression()``'s ``C=1`` then lands nearest the best C over the
#: development suite (``benchmarks/default_c.py``; unscaled it lost 1.61 points on average).
FEATURE_SCALE = 0.1 ** 0.5



#: The seed of the label-free draws of a fit with ``random_state=None`` (see
#: ``random_state``): the same texts, the same features, as gensim's ``seed=1`` default.
UNSEEDED_LABEL_FREE_SEED = 0


class ElmoVectorizer(references.PicklingMixin, BaseTextVectorizer):
    """Contextual document features from an ELMo-style biLM, mixed and pooled.

    Every token gets the biLM's representations (token layer, LSTM 1, LSTM 2); the
    layer mix turns them into one vector per token, and pooling into one vector per
    document.

    Parameters
    ----------
    bilm : BiLM, str, path or None, default="en-base"
        The language model. A name or path: a pretrained model
        (:meth:`BiLM.from_pretrained <elmofeat.BiLM.from_pretrained>`); the default,
        ``"en-base"``, is the general English biLM shipped with elmofeat (modern
        English). ``"en-distil"`` (en-base taught by a sentence encoder: better
        features of long documents) and ``"en-small"`` (the default of elmofeat 0.2.0)
        ship too: see ``docs/pretrained.md``. A named model is loaded once per process
        and shared by clones: ``fit``
        pretrains nothing. A fitted ``BiLM``: used as it is, never retrained, and shared
        (not copied) by clones of this vectorizer. An unfitted ``BiLM``: a copy of it is
        pretrained on ``X`` in ``fit`` (the one you pass stays unfitted), the reference
        experiment's biLM that knows only your texts; ``None``: the same with
        :class:`~elmofeat.BiLM`'s defaults.
    adapt_epochs : int, default=0
        With a pretrained biLM (a name, a path or a fitted ``BiLM``): continue its
        pretraining on ``X`` for at most this many epochs before the mix is learned
        (:class:`~elmofeat.BiLM`'s ``warm_start``: a copy is adapted, the pretrained
        model is left as it is; words of ``X`` it does not know are added). Adapted
        copies are cached as pretrained ones are (see Notes). 0: use the pretrained
        biLM as it is.
    fine_tune_epochs : int, default=0
        With class labels ``y``: fine-tune a copy of the biLM (after ``adapt_epochs``)
        as a classifier on the labelled documents for this many epochs, ULMFiT's recipe
        (:func:`elmofeat.bilm.finetune.fine_tune`: a head on concat pooling started
        from the linear probe, gradual unfreezing, discriminative learning rates, a
        slanted triangular schedule; the word table stays as it is), then learn the
        mix and the bag on the fine-tuned copy: ``transform`` gives its features.
        ``fit_transform`` cross-fits them over ``cv`` folds (see Notes), so it
        fine-tunes ``cv + 1`` times. Fine-tuned copies are shared in this process by
        fits on the same texts, labels and settings (the candidates of a search over
        the mix, the bag or a classifier's ``C``). 0, or no ``y``: no fine-tuning.
        What it buys and costs: ``docs/choosing_features.md``.
    layer_mix : {"concat", "frozen", "trainable", "mlp"} or a registered name, default="concat"
        ``"concat"``: ``[w_0 h_0; w_1 h_1; w_2 h_2]``, the frozen mix's terms side by
        side (``n_layers * dim`` features), so that the classifier weighs each layer
        itself; ``"frozen"``: their sum, ``sum_j w_j h_j``. Both have fixed weights
        (``mix_weights``) and need no ``y``, so the vectorizer works without labels
        (clustering, search, any pipeline); with ``en-small`` (0.2.0's shipped model)
        the concatenation scored above the sum on the suite's sentence tasks and level
        with it on its topic tasks. ``"trainable"``: ELMo's ``gamma * sum_j softmax(s)_j h_j`` with ``s``
        and ``gamma`` learned from ``y``; on the development suite it scored within a
        point of the frozen mix on every task (``elmofeat benchmark``). ``"mlp"``:
        ``relu(W [h_0; h_1; h_2] + b)``, ``mlp_dim`` wide, learned from ``y``. Any mix
        registered in :mod:`elmofeat.mixes` (``elmofeat.mixes.register``) is accepted
        by its name.
    mix_weights : None, "random" or sequence of float, default=None
        Weights of the frozen and concatenated mixes: uniform (None), seeded draws in
        [0.5, 1] (``"random"``, as in the reference experiment), or one weight per layer.
    scale_layers : bool or "bilm", default=True
        Divide each layer by its spread across the training documents (the root mean
        variance of its mean-pooled document vectors, on at most 2,048 documents)
        before the mix, every mix; ``"bilm"``: by the spread the biLM measured on its
        own pretraining texts (``BiLM.layer_scales_``), so that fitting on any texts,
        even one document, gives the same scales (what ``elmofeat embed`` uses): a frozen or trainable weight is then that layer's
        share of the features, and the MLP's Kaiming initialisation gets inputs on the
        unit scale it assumes. Unscaled, the LSTM layers (several times the token layer's spread) drown
        the token layer whatever the weights say (the suite's "frozen, unscaled" row
        measures the difference). AllenNLP's ``ScalarMix(do_layer_norm=True)``
        normalises each layer for the same reason.
    pooling : {"mean", "max", "meanmax"}, default="mean"
    bag_size : int or None, default=2000
        A contextual bag of words of this many codes after the pooled features (None:
        none, the pooled features alone): every token's layers (side by side, each
        divided by its spread as the mixes see it, ``layer_scales_``; unit length;
        reduced to 128 principal components) are assigned to the nearest code of
        a k-means codebook learned without labels in ``fit``, and each document gets its
        counts of codes, TF-IDF weighted (sublinear term frequency), as ``bag_size``
        more features (fewer when the training texts are small: at most one code per 8
        sample tokens). The mean over the hundreds of tokens of a long document washes
        out the few words that carry its topic; the bag keeps them. With ``en-base`` it
        was measured above the pooled features alone on every task of the development
        suite, short texts included (``benchmarks/long_documents.py``); with a biLM
        pretrained on a task's own few thousand texts, inside the folds' spread on short
        texts and above on long posts (``benchmarks/bag_own_bilm.py``). The codebook and its inverse
        document frequencies are learned on a seeded sample of whole training documents
        of at most 100,000 tokens, so a fit's extra cost does not grow with the corpus.
    bag_weight : float, default=1.0
        Length of each document's bag row, relative to the root-mean-square length of
        the (centred) pooled features of the sample documents; in (0, 1e6].
    norm : {None, "l2"}, default=None
        ``"l2"``: each document's features scaled to unit length (as
        ``TfidfVectorizer`` and sentence-transformers' ``normalize_embeddings``); an empty
        document stays a zero vector.
    dtype : {np.float32, np.float64}, default=np.float32
        Type of the features.
    cv : int or cross-validation generator, default=5
        Folds of the cross-fitting in ``fit_transform`` with a supervised mix (see Notes).
    mlp_dim : int, default=256
        Output width of the ``"mlp"`` mix.
    mix_epochs : int, default=10
        Passes of the supervised mix's training over the documents.
    mix_learning_rate : float or None, default=None
        AdamW learning rate of the supervised mix. None: 0.01 for ``"trainable"`` (a
        handful of parameters) and 0.001 for ``"mlp"``, whose wide layer loses most of
        its ReLU units at 0.01 on small training sets (its features then collapse).
    mix_batch_size : int, default=64
        Documents per step of the supervised mix's training.
    batch_size : int or None, default=None
        Windows (of the biLM's ``max_len`` tokens) per inference batch when computing
        layer representations; None: 4 times the biLM's training ``batch_size``; at
        least 16 (a smaller value is raised to it). Larger batches use the CPU or GPU
        better and need more memory. On a CPU the features depend neither on it nor on
        the other documents transformed with a document, to the last bit; on a GPU, up
        to float rounding (its libraries pick their sums by the shape of a product).
    device : str, default="auto"
        Where the vectorizer runs: pretraining and inference. ``"auto"``: a biLM it
        pretrains goes to CUDA when available (else the CPU), and a fitted biLM stays
        where it is. Any torch device string (``"cpu"``, ``"cuda"``, ``"cuda:1"``,
        ``"mps"``): everything runs there; a fitted biLM on another device is copied
        there (the one you passed is not moved).
    cache_dir : "auto", None or path, default="auto"
        Where pretrained biLMs are shared between clones and worker processes (see
        Notes). ``"auto"``: ``$ELMOFEAT_CACHE`` or the user's cache folder
        (``platformdirs``); ``None``: share within this process only. A folder that
        another user can write is not used, and one that cannot be written only warns.
        Only a biLM with an int ``random_state`` is kept there; an unseeded one is
        shared within this process only (see Notes).
    n_jobs : int, default=None
        Parallel workers of :meth:`transform` through joblib (None: 1 unless a
        ``joblib.parallel_config`` context says otherwise; -1: all CPUs). Each worker
        gets ``cpu_count // n_jobs`` torch and BLAS threads, counted on the machine
        where it runs (on Dask: that machine's cores over its workers' task slots),
        so workers do not oversubscribe the cores; every worker gets at least 512 documents (smaller
        inputs run in this process). Use a process-based backend (loky, the default, or
        Dask / Ray on a cluster); see Notes.
    n_threads : int, "auto" or None, default=None
        torch threads for everything this vectorizer runs (pretraining the biLM, the
        mix, transform), as :class:`~elmofeat.BiLM`'s ``n_threads``: None keeps
        torch's setting while training (reproducible) and lets :meth:`transform`
        follow the cores that other processes leave free (its features do not depend on
        the thread count); ``"auto"`` adapts the training too (fast on a busy machine,
        not bit-reproducible). A ``BiLM`` with its own ``n_threads`` uses that for itself.
    random_state : int, RandomState instance or None, default=None
        Seeds the ``"random"`` fixed weights, the mix's training and the cross-fitting
        folds, the contextual bag's sample and k-means, an adaptation (``adapt_epochs``),
        and a biLM pretrained on ``X``. With None, the label-free draws (the bag's
        sample and k-means, the layers' spread) use a fixed seed, so that fitting
        ``ElmoVectorizer()`` twice on the same texts gives the same features; the mix's
        training, the folds, the adaptation and the biLM are unseeded
        (``BiLM(random_state=None)``): fits on the same texts in this process share the
        adaptation and the biLM (a search adapts or pretrains once), and they are never
        written to ``cache_dir``. An int seeds every draw, the label-free ones included.
    verbose : bool, default=False
        Show progress bars, each with the time left: the biLM's pretraining or
        adaptation, the fine-tuning, the layers' spread, the contextual bag's sample and
        codebook, cross-fitting (folds), and ``transform`` (documents).

    Attributes
    ----------
    bilm_ : BiLM
        The fitted biLM in use.
    layer_weights_ : ndarray of shape (n_layers + 1,) or None
        The mix's weights of the scaled layers (softmax-normalised for
        ``"trainable"``, ``mix_weights`` for ``"frozen"`` and ``"concat"``); None for
        ``"mlp"``.
    bag_ : ContextualBag or None
        The contextual bag (``bag_size``; :mod:`elmofeat.elmo.bag`): its codebook, its
        TF-IDF weights and the length of its rows; None without one.
    layer_scales_ : ndarray of shape (n_layers + 1,)
        The spread each layer is divided by before the mix (ones with
        ``scale_layers=False``).
    feature_scale_ : float
        What every feature is multiplied by (:data:`FEATURE_SCALE`; 1 for a
        vectorizer pickled before elmofeat scaled its features, which keeps the
        features it was fitted with). Chosen so that ``LogisticRegression()``'s default
        ``C=1`` is near the best ``C`` on typical tasks; search ``C`` all the same.
    gamma_ : float or None
        The trainable mix's scale (1 for ``"frozen"``, None for ``"concat"`` and
        ``"mlp"``).
    mix_ : FittedMix
        The fitted mix (a ``LinearMix`` for the frozen and trainable mixes, a
        ``ConcatMix`` for the concatenation, a ``ReluMix`` for the MLP; see :mod:`elmofeat.mixes`), NumPy arrays only: ``mix_.apply(layers)`` mixes token
        representations, ``mix_.pool(layers, offsets, pooling)`` gives document features.

    Notes
    -----
    **Cross-fitting.** With a supervised mix, ``fit(X, y).transform(X)`` and
    ``fit_transform(X, y)`` differ, as for :class:`~sklearn.preprocessing.TargetEncoder`:
    ``fit_transform`` gives each document features from a mix learned on the *other*
    ``cv`` folds, so that a downstream classifier (in a ``Pipeline``, which calls
    ``fit_transform``) does not learn from features that already saw its labels.
    ``fit`` learns the mix on all of ``X``, and ``transform`` uses that mix. The biLM
    itself is pretrained once, without labels. Each fold's mix starts from the same
    initialisation, and each MLP mix maps its document features into the space of that
    initialisation (``elmofeat.mixes.mlp.fit_alignment``), so out-of-fold and
    final features share one feature space. With ``fine_tune_epochs``, the biLM learns
    from the labels too, so it is cross-fitted the same way: each fold's documents get
    the features of a copy fine-tuned on the other folds, through the full fit's layer
    scales and bag (and a supervised mix learned on that fold). Every copy starts from
    the same model and moves little, so their features share the space ``transform``
    uses (``benchmarks/fine_tuning.py`` measures the pipeline this way).

    **Search without refits.** Clones share a fitted ``bilm`` and a named pretrained
    model (loaded once per process). An adapted copy (``adapt_epochs``) is cached by the
    pretrained weights, the adaptation's settings and the training texts. When ``bilm``
    is not fitted, the pretrained model is cached by its parameters and the training texts:
    clones that see the same texts (the candidates of a ``GridSearchCV`` on the same
    fold) reuse it, in this process and, through ``cache_dir`` and a file lock, across
    joblib worker processes; ``pretrain.log`` in the folder lists every pretraining.
    That holds for a seeded biLM (an int ``random_state``): an unseeded one
    (``BiLM(random_state=None)``) is not reproducible, so it is never written to the
    folder and a new session pretrains afresh; within one process, fits on the same
    texts do share its pretraining (a search pretrains once). Call
    :func:`elmofeat.clear_caches` to pretrain again in the same process.
    Layer representations of documents are also reused in a process (within
    ``elmofeat.get_config()["representation_cache_bytes"]``, 1 GiB by default), so
    candidates that differ only in the mix do not run the biLM again.

    **Parallel transform.** With ``n_jobs`` > 1, :meth:`transform` splits the documents
    into one contiguous part per worker; each worker receives the fitted biLM (as its
    CPU ``state_dict``), embeds, mixes and pools its part, and the parts are joined in
    order. A document's features do not depend on its part (the biLM is batch
    independent), so the result equals the sequential one up to float rounding. The
    same code runs on a cluster under ``with joblib.parallel_config(backend="dask"):``
    (or ``"ray"``). Parallel transforms bypass the in-process representation cache.

    **Unlabelled documents.** The biLM pretrains on every document given to ``fit``;
    a supervised mix learns only from the labelled ones. An MLP mix with fewer labelled
    documents than ten times ``mlp_dim + 1`` is also aligned (a label-free least-squares
    map) on unlabelled ones: on a few labelled documents alone that map is
    underdetermined. Class labels equal to ``-1``
    mark unlabelled documents, as for :class:`~sklearn.semi_supervised.SelfTrainingClassifier`,
    so ``Pipeline([("elmo", ElmoVectorizer()), ("clf",
    SelfTrainingClassifier(LogisticRegression()))]).fit(X, y)`` uses every text. In
    ``fit_transform`` unlabelled documents get the features of the mix learned on all
    labelled ones (they lent it no label); labelled ones are cross-fitted as above.

    An empty document gets a zero vector. Documents longer than the biLM's ``max_len``
    are processed in windows.

    Examples
    --------
    With the shipped general model (nothing to pretrain):

    >>> from elmofeat import BiLM, ElmoVectorizer
    >>> ElmoVectorizer(bag_size=None).fit_transform(["A great match.", "Stocks fell sharply."]).shape
    (2, 768)

    By default the contextual bag follows those 768 pooled features: up to 2,000 codes,
    one per 8 training tokens at most (one code for these few words):

    >>> ElmoVectorizer().fit_transform(["A great match.", "Stocks fell sharply."]).shape
    (2, 769)

    With a biLM pretrained on your own texts:

    >>> texts = ["good match , great goal", "stocks fell , markets down"] * 10
    >>> bilm = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0).fit(texts)
    >>> vec = ElmoVectorizer(bilm, layer_mix="frozen", cache_dir=None).fit(texts)
    >>> vec.transform(["great match"]).shape  # 16 mixed features, then 12 codes
    (1, 28)
    >>> vec.layer_weights_
    array([0.333..., 0.333..., 0.333...], dtype=float32)
    """

    _feature_prefix = "elmo"
    _stamped_packages = BaseTextVectorizer._stamped_packages + ("torch",)

    def __init__(
        self,
        bilm="en-base",
        *,
        adapt_epochs=0,
        fine_tune_epochs=0,
        layer_mix=DEFAULT_LAYER_MIX,
        mix_weights=None,
        scale_layers=True,
        pooling="mean",
        bag_size=2000,
        bag_weight=1.0,
        norm=None,
        dtype=np.float32,
        cv=5,
        mlp_dim=256,
        mix_epochs=10,
        mix_learning_rate=None,
        mix_batch_size=64,
        batch_size=None,
        device="auto",
        cache_dir="auto",
        n_jobs=None,
        n_threads=None,
        random_state=None,
        verbose=False,
    ):
        self.bilm = bilm
        self.adapt_epochs = adapt_epochs
        self.fine_tune_epochs = fine_tune_epochs
        self.layer_mix = layer_mix
        self.mix_weights = mix_weights
        self.scale_layers = scale_layers
        self.pooling = pooling
        self.bag_size = bag_size
        self.bag_weight = bag_weight
        self.norm = norm
        self.dtype = dtype
        self.cv = cv
        self.mlp_dim = mlp_dim
        self.mix_epochs = mix_epochs
        self.mix_learning_rate = mix_learning_rate
        self.mix_batch_size = mix_batch_size
        self.batch_size = batch_size
        self.device = device
        self.cache_dir = cache_dir
        self.n_jobs = n_jobs
        self.n_threads = n_threads
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------ sklearn plumbing
    def __sklearn_clone__(self):
        # Clones share a fitted biLM (as FrozenEstimator does) instead of getting an
        # unfitted copy that would pretrain again.
        bilm = self.bilm if is_fitted_bilm(self.bilm) else clone(self.bilm, safe=False)
        return self._clone_sharing(bilm=bilm)

    def set_params(self, **params):
        """Set parameters, ``bilm__*`` included. A fitted ``bilm`` is shared (by clones,
        by the caller), so it is copied before a ``bilm__*`` parameter changes it (copy on
        write: the weights stay shared); everyone else's biLM is left as it was.

        Returns
        -------
        self : ElmoVectorizer
        """
        nested = sorted(key for key in params if key.startswith("bilm__"))
        bilm = params.get("bilm", self.bilm)
        if nested and isinstance(bilm, (str, os.PathLike)):
            raise ValueError(
                f"bilm={str(bilm)!r} is a pretrained model's name or path, not a BiLM: "
                f"{', '.join(nested)} cannot be set on it. Pass "
                f"bilm=BiLM.from_pretrained({str(bilm)!r}) to set the loaded model's "
                "parameters (max_len, batch_size...), bilm=BiLM(...) to pretrain on your "
                "texts, or search over bilm itself, e.g. "
                "{'elmo__bilm': ['en-base', BiLM(hidden_dim=128)]}")
        if nested and is_fitted_bilm(bilm):  # copy on write, the given one too
            if "bilm" in params:
                params = {**params, "bilm": bilm.shared_copy()}
            else:
                self.bilm = self.bilm.shared_copy()
        return super().set_params(**params)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # A mix learned from labels needs y (an unknown mix is refused by fit).
        tags.target_tags.required = (self.layer_mix in mix_names()
                                     and get_mix(self.layer_mix).needs_labels)
        return tags

    @property
    def _n_token_features(self) -> int:
        check_is_fitted(self, "mix_")
        return self.mix_.n_features

    def get_feature_names_out(self, input_features=None):
        names = super().get_feature_names_out(input_features)
        if self.bag_ is None:
            return names
        bag = [f"{self._feature_prefix}_bag{i}" for i in range(self.bag_.n_features)]
        return np.concatenate([names, np.asarray(bag, dtype=object)])

    def _finish(self, features: np.ndarray) -> np.ndarray:
        """``feature_scale_``, then ``norm`` and ``dtype``; ``features`` is this
        vectorizer's own array (scaled in place)."""
        if self.feature_scale_ != 1.0:
            features *= np.float32(self.feature_scale_)
        return super()._finish(features)

    def _output_mix(self, mix=None):
        """The mix that gives the output features: ``mix`` (``mix_`` by default), and
        the bag after it where there is one."""
        mix = self.mix_ if mix is None else mix
        return mix if self.bag_ is None else _bag.BaggedMix(mix, self.bag_, self.pooling)

    # ------------------------------------------------------------------ validation
    _parameter_constraints: dict = {
        **BaseTextVectorizer._output_parameter_constraints,
        "bilm": [BiLM, str, os.PathLike, None],
        "adapt_epochs": [positive_int(0)],
        "fine_tune_epochs": [positive_int(0)],
        "layer_mix": [RegisteredOptions(mix_names)],  # elmofeat.mixes' registry
        "mix_weights": [StrOptions({"random"}), "array-like", None],  # values: mixes.base.fixed_shares
        "scale_layers": ["boolean", StrOptions({"bilm"})],
        "bag_size": [positive_int(), None],
        "bag_weight": [Interval(Real, 0, 1e6, closed="right")],  # larger: float32 overflows
        "cv": ["cv_object"],
        "mlp_dim": [positive_int()],
        "mix_epochs": [positive_int()],
        "mix_learning_rate": [Interval(Real, 0, None, closed="neither"), None],
        "mix_batch_size": [positive_int()],
        "batch_size": [positive_int(), None],
        "device": [TorchDevices()],
        "cache_dir": [str, os.PathLike, None],
        "n_jobs": [Interval(Integral, None, -1, closed="right"), positive_int(), None],
        "n_threads": N_THREADS_CONSTRAINTS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def _check_params_together(self, y):
        """The checks that span parameters (or need ``y``)."""
        spec = get_mix(self.layer_mix)
        if spec.needs_labels and y is None:
            raise ValueError(
                f"layer_mix={self.layer_mix!r} learns the mix from labels: pass y to fit "
                "(fit(X, y)), or use a mix that needs no labels, such as layer_mix='concat' "
                "(the default) or 'frozen'"
            )
        if self.mix_weights is not None and "mix_weights" not in spec.parameters:
            readers = [name for name in mix_names() if "mix_weights" in get_mix(name).parameters]
            raise ValueError("mix_weights is only used with "
                             + " or ".join(f"layer_mix={name!r}" for name in readers))

    def _layers(self, documents, threads, token_lists=None):
        """Representations for fitting: kept in the process cache for reuse (the other
        candidates of a search, cross-fitting); ``token_lists``: the documents' tokens
        where the caller has them."""
        return _bilm_cache.REPRESENTATIONS.embed(
            self.bilm_, documents, batch_size=self.batch_size,
            token_lists=token_lists, threads=threads)

    def _cached_layers(self, bilm, threads):
        """``(documents, token_lists) -> (layers, offsets)`` for transforming with
        ``bilm``: taken from the cache where a fit left them, never added to it, so
        transforming a corpus keeps no memory."""
        def layers_of(documents, token_lists):
            return _bilm_cache.REPRESENTATIONS.embed(
                bilm, documents, store=False,
                batch_size=self.batch_size, token_lists=token_lists, threads=threads)
        return layers_of

    def _placed_bilm(self):
        """``bilm_`` on the device ``transform`` runs on (:mod:`.placement`): a copy,
        kept for the next calls and never pickled, only where the device differs."""
        bilm, self._placed_bilm_copy = placement.placed(
            self.bilm_, self.device, getattr(self, "_placed_bilm_copy", None))
        return bilm

    # --------------------------------------------------------------------- fitting
    def _layer_spread(self, documents, seed, threads) -> np.ndarray:
        """Per layer, the root mean variance of the mean-pooled document vectors over
        (a seeded sample of at most 2,048 of) the non-empty training documents."""
        rng = np.random.RandomState(seed)
        sample = [documents[i] for i in np.sort(rng.permutation(len(documents))[:_SPREAD_SAMPLE])]
        with progress.stage(self.verbose, len(sample), "ElmoVectorizer.fit: layer spread") as bar:
            return layer_spread(*progress.layers_with_progress(
                lambda texts, tokens: self._layers(texts, threads, token_lists=tokens),
                sample, None, bar))

    def _scales(self, documents, seed, threads) -> np.ndarray:
        """What each layer is divided by before the mix (see ``scale_layers``)."""
        if isinstance(self.scale_layers, str):  # "bilm"
            scales = getattr(self.bilm_, "layer_scales_", None)
            if scales is None:
                raise ValueError("scale_layers='bilm' needs a biLM that measured its layers' "
                                 "spread (BiLM.layer_scales_); this one was saved before "
                                 "elmofeat did: use scale_layers=True or fit the biLM again")
            return np.asarray(scales, dtype=np.float32).copy()
        if self.scale_layers:
            return self._layer_spread(documents, seed, threads)
        return np.ones(self.bilm_.n_representations_, dtype=np.float32)

    def _mix_settings(self, seed: int, threads) -> MixSettings:
        learning_rate = self.mix_learning_rate
        if learning_rate is None:
            learning_rate = get_mix(self.layer_mix).learning_rate
        return MixSettings(pooling=self.pooling, seed=seed, mix_weights=self.mix_weights,
                           mlp_dim=self.mlp_dim, epochs=self.mix_epochs,
                           learning_rate=None if learning_rate is None else float(learning_rate),
                           batch_size=self.mix_batch_size, threads=threads)

    def _fit(self, X, y, threads, cross_fit=False):
        documents = validate_documents(X)
        self._check_params_together(y)
        spec = get_mix(self.layer_mix)
        if not documents:
            raise ValueError("X is empty: fit needs at least one document")
        # Labels are checked before the (long) pretraining, not after it; a generator
        # of labels is read once, as X is.
        targets = fit_targets(y, len(documents), mix=spec, layer_mix=self.layer_mix,
                              fine_tune_epochs=self.fine_tune_epochs,
                              cv=self.cv if cross_fit else None)
        random_state = check_random_state(self.random_state)
        # The biLM learns from every text, labelled or not.
        self.bilm_ = resolve_bilm(self, documents, random_state, threads)
        seed = int(random_state.randint(2**31 - 1))
        # The label-free draws (the spread's sample, the bag's sample and k-means) are
        # seeded even with random_state=None: the same texts give the same features, as
        # TfidfVectorizer's do (an int still selects them).
        label_free_seed = seed if self.random_state is not None else UNSEEDED_LABEL_FREE_SEED
        tuning = None
        if targets is not None and self.fine_tune_epochs:  # a fine-tuned copy gives them
            # seeded as the label-free draws: unseeded fits share one fine-tuned model
            tuning = _fine_tuning.CrossFittedFineTuning(
                self, self.bilm_, documents, targets,
                _fine_tuning.recipe(self.fine_tune_epochs, label_free_seed))
            self.bilm_ = tuning.tuned(targets.labelled).bilm
        # Every mix sees each layer divided by its spread (label-free: every document).
        self.layer_scales_ = self._scales(documents, label_free_seed, threads)
        mix_targets = targets if spec.needs_labels else None
        data = MixData(self.layer_scales_, self.bilm_.output_dim_, targets=mix_targets)
        if spec.needs_labels:
            data.layers, data.offsets = self._layers(documents, threads)
            # A linear mix commutes with mean pooling: pool every layer once, learn (and
            # cross-fit) from the pooled layers alone.
            if spec.commutes_with_mean_pooling and self.pooling == "mean":
                data.pooled_layers = pool_layers(data.layers, data.offsets)
        settings = self._mix_settings(seed, threads)
        self.mix_ = spec.fit_mix(data, None if mix_targets is None else targets.labelled,
                                 settings)
        self.layer_weights_ = self.mix_.layer_weights
        self.gamma_ = None if self.mix_.gamma is None else float(self.mix_.gamma)
        self.bag_ = (self._fit_bag(documents, label_free_seed, threads) if self.bag_size
                     else None)
        self.feature_scale_ = FEATURE_SCALE
        return documents, data, settings, tuning

    def _fit_bag(self, documents, seed, threads):
        """The contextual bag, learned on a seeded sample of whole training documents
        (:func:`~elmofeat.elmo.bag.sample_layers`)."""
        def sample_layers_of(texts, tokens):
            with progress.stage(self.verbose, len(texts),
                                "ElmoVectorizer.fit: contextual bag, its sample") as bar:
                return progress.layers_with_progress(
                    lambda part, part_tokens: self._layers(part, threads,
                                                           token_lists=part_tokens),
                    texts, tokens, bar)

        layers, offsets = _bag.sample_layers(
            documents, lambda text: self.bilm_.tokenize([text])[0], sample_layers_of,
            lambda tokens: self.bilm_.embed_tokens(tokens, self.batch_size, threads=threads),
            _bag.SAMPLE_TOKENS, seed)
        # every layer divided by its spread, as the mixes see them: unweighted, a biLM
        # whose LSTM layers spread several times more than its token layer (one
        # pretrained on a few thousand texts) got codes of context without the word
        with progress.stage(self.verbose, len(_bag.FIT_STAGES),
                            "ElmoVectorizer.fit: contextual bag, its codebook",
                            unit="stage") as bar:
            def begin(name):  # the stages before it are done
                bar.update(_bag.FIT_STAGES.index(name) - bar.n)
                bar.set_postfix_str(name)

            bag = _bag.fit_bag(layers, offsets, self.bag_size, seed,
                               layer_weights=1.0 / self.layer_scales_, on_stage=begin)
            bar.update(bar.total - bar.n)
        bag.scale = self.bag_weight * _bag.block_scale(self.mix_.pool(layers, offsets, self.pooling))
        return bag

    @fit_context(prefer_skip_nested_validation=False)  # the BiLM's parameters too
    def fit(self, X, y=None):
        """Pretrain (or reuse) the biLM and learn the layer mix.

        Parameters
        ----------
        X : iterable of str
        y : array-like of shape (n_documents,), default=None
            Labels; required by the supervised mixes ``"trainable"`` and ``"mlp"``.
            ``-1`` marks an unlabelled document (scikit-learn's semi-supervised
            convention): the biLM pretrains on every document, the mix learns from the
            labelled ones only.

        Returns
        -------
        self : ElmoVectorizer
        """
        # The outermost policy: the biLM's pretraining, the layers and the mix follow it.
        with ThreadPolicy(self.n_threads, training=True).applied() as threads, \
                reuse_large_blocks():
            self._fit(X, y, threads)
        return self

    @fit_context(prefer_skip_nested_validation=False)
    def fit_transform(self, X, y=None):
        """Fit, and return cross-fitted features for ``X`` with a supervised mix.

        With a mix that needs no labels (``"concat"``, ``"frozen"``), or without ``y``, this equals
        ``fit(X, y).transform(X)``. With a supervised mix, each document's features come
        from a mix learned on the other ``cv`` folds (see Notes in the class docstring).

        Returns
        -------
        features : ndarray of shape (n_documents, n_features), float32
        """
        with ThreadPolicy(self.n_threads, training=True).applied() as threads, \
                reuse_large_blocks():
            return self._fit_transform(X, y, threads)

    def _fit_transform(self, X, y, threads):
        documents, data, settings, tuning = self._fit(X, y, threads, cross_fit=True)
        if tuning is not None:  # the biLM itself learned from the labels
            return self._finish(tuning.cross_fitted_features(settings, threads))
        targets = data.targets
        if targets is None:  # a mix without labels: nothing to cross-fit
            return self._transform(documents, threads)
        spec, labelled = get_mix(self.layer_mix), targets.labelled
        out = np.zeros((len(documents), len(self.get_feature_names_out())), dtype=np.float32)
        folds = cross_fitting_folds(self.cv, targets, settings.seed)
        for train, test in progress.folds(self.verbose, folds,
                                          "ElmoVectorizer.fit_transform: cross-fitting the mix"):
            # The same seed as the full fit: every fold's mix starts from the same
            # initialisation, so that a learned (MLP) feature space stays aligned across
            # folds and with the one transform uses.
            mix = self._output_mix(spec.fit_mix(data, labelled[train], settings))
            out[labelled[test]] = mix.features(data, labelled[test], self.pooling)
        # Unlabelled documents lend no label to the mix: the full fit's features are
        # out-of-sample for them already.
        unlabelled = targets.unlabelled
        if len(unlabelled):
            out[unlabelled] = self._output_mix().features(data, unlabelled, self.pooling)
        return self._finish(out)

    # ------------------------------------------------------------------- transform
    def transform(self, X):
        """Mixed, pooled biLM features of each document.

        Parameters
        ----------
        X : iterable of str

        Returns
        -------
        features : ndarray of shape (n_documents, n_features), float32
            Zeros for an empty document.
        """
        check_is_fitted(self, "mix_")
        documents = validate_documents(X)
        with ThreadPolicy(self.n_threads).applied() as threads:
            return self._transform(documents, threads)

    def _transform(self, documents, threads, finish=True):
        """The features of ``documents``; ``finish=False``: before ``_finish``
        (``feature_scale_``, ``norm``, ``dtype``)."""
        n_jobs = min(effective_n_jobs(self.n_jobs), max(len(documents) // CHUNK, 1))
        bilm, mix = self._placed_bilm(), self._output_mix()
        if n_jobs == 1:
            parts = []
            layers_of = self._cached_layers(bilm, threads)
            with tqdm(total=len(documents), unit="doc", desc="ElmoVectorizer.transform",
                      disable=not self.verbose, leave=False) as bar:
                for chunk in chunks(documents, CHUNK):
                    parts.append(document_features(bilm, mix, self.pooling, chunk,
                                                   layers_of, self.batch_size, threads))
                    bar.update(len(chunk))
        else:
            size = -(-len(documents) // n_jobs)
            parts = Parallel(n_jobs=n_jobs)(
                delayed(transform_part)(bilm, mix, self.pooling, part, n_jobs,
                                         self.batch_size, self.n_threads)
                for part in chunks(documents, size)
            )
        empty = np.zeros((0, len(self.get_feature_names_out())), dtype=np.float32)
        features = np.concatenate([empty, *parts])
        return self._finish(features) if finish else features
