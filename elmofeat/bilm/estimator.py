"""BiLM: the scikit-learn-style wrapper that pretrains, runs and saves the biLM."""

from __future__ import annotations

import contextlib
import copy
import os

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from .._base import TextEstimatorMixin
from ..mixes.base import layer_spread, measured_spread
from ..runtime.malloc import reuse_large_blocks
from .._param_validation import (Interval, Real, StrOptions, TorchDevices, fit_context,
                                 positive_int)
from ..runtime.threads import N_THREADS_CONSTRAINTS, in_force
from ..runtime.torch_helpers import bf16_runs, bf16_supported, resolve_device, seeded
from .batching import Windows, char_table, make_windows
from .callbacks import standard_callbacks
from .identity import WeightsIdentityMixin
from ..text import VETTED_TOKEN_PATTERNS
from .collectives import world
from .inference import EmbeddingMixin
from .io import PersistenceMixin
from .model import LanguageModel, build_language_model
from . import sharing, training_data
from .softmax import SOFTMAX_KINDS
from .train import Pretrainer, TrainConfig

TOKEN_LAYERS = ("word", "char")
TOKEN_INITS = ("svd", "random")
PRECISIONS = ("auto", "bf16", "fp32")
# Words and single punctuation marks: an LM needs the punctuation.
BILM_TOKEN_PATTERN = VETTED_TOKEN_PATTERNS["words_and_punctuation"]


class BiLM(EmbeddingMixin, WeightsIdentityMixin, PersistenceMixin, TextEstimatorMixin,
           BaseEstimator):
    """An ELMo-style bidirectional LSTM language model, pretrained on your texts.

    A forward LM (predicting the next token) and a backward LM (predicting the previous
    one), each ``n_layers`` LSTM layers with a residual connection from layer 1 to 2,
    share a token layer (a word embedding, optionally initialised from pretrained
    vectors, or ELMo's character CNN) and one softmax. After :meth:`fit`,
    :meth:`embed` gives every token ``n_layers + 1`` representations (token layer,
    LSTM 1, LSTM 2) of equal width ``2 * embedding_dim``: ``[forward; backward]``,
    the token layer duplicated, as in ELMo.

    Parameters
    ----------
    token_layer : {"word", "char"}, default="word"
        ``"word"``: a word embedding (out-of-vocabulary words share ``<unk>``);
        ``"char"``: a character CNN over each word's UTF-8 bytes, so every word, seen
        in training or not, gets its own vector.
    embedding_dim : int, default=256
        Width of the token layer and of each direction's LSTM output.
    hidden_dim : int, default=256
        LSTM cell width, at least ``embedding_dim``. When it is larger, each LSTM
        projects its output back to ``embedding_dim`` (``nn.LSTM(proj_size=...)``), so
        that all layers have the same width.
    n_layers : int, default=2
        LSTM layers per direction.
    dropout : float, default=0.1
        Dropout probability, in [0, 0.99].
    softmax : {"adaptive", "sampled", "full"}, default="adaptive"
        Output layer for pretraining: adaptive softmax (fast, exact), sampled softmax
        with ``n_samples`` shared log-uniform negatives (evaluated exactly), or the full
        softmax.
    n_samples : int, default=1024
    tie_weights : bool, default=False
        Share the word embedding with the output layer; needs ``token_layer="word"``,
        ``softmax`` ``"full"`` or ``"sampled"``, and an embedding of width
        ``embedding_dim`` (not pretrained vectors of another width).
    pretrained_vectors : str, path, KeyedVectors, SVDVectorizer or SkipGramVectorizer, default=None
        Initial word vectors (``token_layer="word"`` only): a GloVe or word2vec text
        file (optionally gzipped, with or without header), a gensim ``KeyedVectors``, or
        a vectorizer (used as is when fitted, fitted on the same texts otherwise).
        Vocabulary words missing from them are drawn at random with the pretrained
        vectors' mean and spread; how many is logged and stored in
        ``pretrained_coverage_``. Vectors of another width than ``embedding_dim`` are
        kept at their width and followed by a learned linear projection.
    pretrained_words : int, default=None
        With ``pretrained_vectors``, the embedding also reads the first
        ``pretrained_words`` words of the vectors (the most frequent ones, in GloVe and
        word2vec files) that the training texts lack or show fewer than ``min_count``
        times. The model reads them through their pretrained vectors but never predicts
        them (its softmax covers the corpus's words), so that a model pretrained on one
        kind of text still reads another's vocabulary: a biLM of old books gets
        GloVe's vectors of modern words. None: only the corpus's words.
    token_init : {"svd", "random"}, default="svd"
        Where the word embedding starts when no ``pretrained_vectors`` are given.
        ``"svd"``: the PPMI + SVD vectors of the training texts (those of
        :class:`~elmofeat.SVDVectorizer`, computed in seconds): a language model of a
        small corpus learns little of what words mean on its own, and the counts of the
        same texts already carry it.
        ``"random"``: a normal draw with standard deviation ``embedding_dim ** -0.5``.
        Ignored with ``token_layer="char"`` or with ``pretrained_vectors``.
    freeze_embedding : bool, default=True
        Keep the word embedding at its starting vectors (the SVD start or
        ``pretrained_vectors``) while pretraining; the LSTMs, the softmax and the
        projection of vectors of another width still learn. Pretraining a small corpus
        moves the embedding away from what its start knew about word meaning; the layer
        probe (``python benchmarks/layer_probe.py --studies train-embedding``, first
        split of each suite task) scores every layer and the frozen mix with the
        embedding kept and trained, and the validation perplexity of both. Keeping it costs
        the language model's own quality (a higher validation perplexity): set it to False where
        the language model itself matters more than its features. Words without a
        starting vector (and ``<unk>``, ``<bos>``, ``<eos>``) keep their random start.
        Ignored when the embedding starts at random (``token_init="random"`` without
        ``pretrained_vectors``), with ``token_layer="char"`` and with
        ``tie_weights=True`` (the output layer is the embedding, and must learn).
    char_dim : int, default=16
    char_filters : tuple of (width, n_filters), default=((1, 32), (2, 32), (3, 64), (4, 128), (5, 256))
    n_highway : int, default=2
    max_word_length : int, default=20
        Bytes per word for the character CNN (longer words are cut).
    min_count : int, default=2
        Words seen fewer times form no output class (they become ``<unk>``).
    max_features : int, default=50000
        Largest output vocabulary (most frequent words).
    lowercase : bool, default=True
    token_pattern : str, default=r"(?u)\\b\\w+\\b|[^\\w\\s]"
        Words and single punctuation marks.
    tokenizer : callable, default=None
    max_len : int, default=64
        Window length: documents longer than this many tokens are split into windows
        (for training and for :meth:`embed`); nothing is truncated.
    max_epochs : int, default=5
        At most this many passes over the texts (early stopping may end sooner). More
        epochs keep lowering the perplexity, but a lower perplexity does not by itself
        give better features; ``elmofeat benchmark`` measures the features.
    batch_size : int, default=64
        Windows per training batch (and per inference batch, times 4).
    learning_rate : float, default=2e-3
        AdamW learning rate.
    weight_decay : float, default=0.0
    clip_norm : float, default=1.0
        Gradient norm clipping.
    validation_fraction : float, default=0.05
        Share of the documents held out for validation perplexity (0: none). Early
        stopping watches it and the best epoch's weights are kept.
    patience : int or None, default=2
        Epochs without validation improvement before stopping (None: never stop early).
    precision : {"auto", "bf16", "fp32"}, default="auto"
        Training precision. ``"auto"`` trains with bfloat16 autocast where the device
        has native bfloat16 arithmetic (CPUs with AVX512-BF16 or AMX, GPUs that support
        it), in float32 elsewhere, and runs inference in float32; ``"bf16"`` uses
        bfloat16 for both, ``"fp32"`` for neither.
    n_threads : int, "auto" or None, default=None
        torch threads while fitting and embedding; the previous setting is restored
        afterwards. None: pretraining uses torch's setting, so that the same texts and
        seed give the same weights; embedding uses as many threads as other processes
        leave cores free (re-decided about once a second; its output does not depend on
        the thread count). ``"auto"``: pretraining adapts too. That is much faster on a
        busy machine (a thread that shares its core with another process stalls the
        others at every kernel's barrier), but the weights then depend on the machine's
        load, because the thread count changes how some kernels sum (at some model
        widths: ``benchmarks/thread_invariance.py``). An int fixes the count, capped at
        the CPUs this process may use (a pickle from a larger machine runs here).
    device : str, default="cpu"
        ``"auto"`` (CUDA when available, else the CPU) or any torch device string:
        ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``.
    checkpoint_dir : str or path, default=None
        Where to write ``checkpoint.pt`` (atomically) after every epoch and every
        ``checkpoint_every`` steps. A fit that finds a checkpoint of the same texts and
        parameters there resumes from it and ends with the same weights as an
        uninterrupted fit.
    checkpoint_every : int, default=None
    max_time : float, default=None
        Stop pretraining after this many seconds (checked after every step; the
        partial epoch is validated and recorded). Runs cut by time are not
        reproducible step for step.
    warm_start : bool, default=False
        When the biLM is already fitted (pretrained, or loaded with
        :meth:`from_pretrained`), :meth:`fit` continues pretraining from its weights on
        the new texts instead of starting afresh: the adaptation of a general model to
        your texts. The vocabulary is kept; with a word token layer, words of the new
        texts seen ``min_count`` times that it lacks are added as words the model reads
        (not predicts), their vectors mapped into the embedding's space from their
        co-occurrences in the new texts (a least-squares map fitted on the words both
        know); a character CNN reads every word already. ``max_epochs`` more epochs run
        (with early stopping on the new texts' validation share), with a fresh optimizer
        at ``learning_rate``; ``history_`` gains their records, marked
        ``"warm_start": True``. The architecture parameters must not change.
    random_state : int, RandomState instance or None, default=None
        Seeds initialisation, the validation split, batch order, dropout and sampling.
        The global torch random state is left as it was.
    verbose : bool, default=False
        Say what will be pretrained (documents, tokens, epochs) and show one progress
        bar over all epochs, with the time left, tokens/s and the running perplexity;
        :meth:`embed` and :meth:`iter_embed` show a bar over the documents.

    Attributes
    ----------
    vocabulary_ : Vocabulary
        Output vocabulary: ``<pad>``, ``<unk>``, ``<bos>``, ``<eos>`` then words by
        decreasing count.
    language_model_ : LanguageModel
        The torch modules (``.encoder``, a :class:`~elmofeat.bilm.model.BiLSTMEncoder`,
        and ``.softmax``), on ``device``.
    history_ : list of dict
        Per epoch: ``train_perplexity``, ``validation_perplexity`` (None without a
        validation set), ``tokens_per_second`` (LM targets of both directions per
        second), ``seconds`` of training and ``training_tokens`` (tokens of the
        training texts, all read by a whole epoch).
    n_epochs_ : int
    output_dim_ : int
        Width of each layer representation, ``2 * embedding_dim``.
    n_representations_ : int
        ``n_layers + 1``.
    n_output_words_ : int
        Words the softmax predicts: the first ``n_output_words_`` of ``vocabulary_``
        (the others are ``pretrained_words``, read but not predicted).
    pretrained_coverage_ : dict or None
        ``{"found": ..., "missing": ...}`` words of the vocabulary.
    layer_scales_ : ndarray of shape (n_representations_,) or None
        Each layer's spread over a seeded sample of the training documents (about
        50,000 tokens, at most 2,048 documents): the root mean variance of their
        mean-pooled vectors, measured at the end of ``fit``. What ``elmofeat embed`` divides the layers by before its
        frozen mix, so that features do not depend on the texts being embedded. None
        in files saved before elmofeat measured it.

    Examples
    --------
    >>> from elmofeat import BiLM
    >>> texts = ["the cat sat on the mat .", "the dog sat on the log ."] * 20
    >>> bilm = BiLM(embedding_dim=16, hidden_dim=16, max_epochs=1, random_state=0)
    >>> bilm = bilm.fit(texts)
    >>> layers = bilm.embed(["the cat sat ."])
    >>> layers[0].shape
    (4, 3, 32)
    """

    _stamped_packages = TextEstimatorMixin._stamped_packages + ("torch",)
    # The roles of the parameters, declared once: the model cache, the checkpoint
    # fingerprint and the file format derive what they ignore from these.
    #: How a fit runs, not what it computes.
    _run_settings = ("verbose", "n_threads", "checkpoint_dir", "checkpoint_every")
    #: Where the model lives: not part of what a cached model is.
    _placement_params = ("device",)
    #: Where pretraining ends, not the steps it takes (a checkpoint resumes with others).
    _stopping_params = ("max_epochs", "patience", "max_time")
    #: Not written to a BiLM file: training inputs that are not part of the trained
    #: model, and this machine's checkpoint folder.
    _unsaved_params = ("pretrained_vectors", "tokenizer", "checkpoint_dir")

    def __init__(
        self,
        *,
        token_layer="word",
        embedding_dim=256,
        hidden_dim=256,
        n_layers=2,
        dropout=0.1,
        softmax="adaptive",
        n_samples=1024,
        tie_weights=False,
        pretrained_vectors=None,
        pretrained_words=None,
        token_init="svd",
        freeze_embedding=True,
        char_dim=16,
        char_filters=((1, 32), (2, 32), (3, 64), (4, 128), (5, 256)),
        n_highway=2,
        max_word_length=20,
        min_count=2,
        max_features=50000,
        lowercase=True,
        token_pattern=BILM_TOKEN_PATTERN,
        tokenizer=None,
        max_len=64,
        max_epochs=5,
        batch_size=64,
        learning_rate=2e-3,
        weight_decay=0.0,
        clip_norm=1.0,
        validation_fraction=0.05,
        patience=2,
        precision="auto",
        n_threads=None,
        device="cpu",
        checkpoint_dir=None,
        checkpoint_every=None,
        max_time=None,
        warm_start=False,
        random_state=None,
        verbose=False,
    ):
        self.token_layer = token_layer
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim
        self.n_layers = n_layers
        self.dropout = dropout
        self.softmax = softmax
        self.n_samples = n_samples
        self.tie_weights = tie_weights
        self.pretrained_vectors = pretrained_vectors
        self.pretrained_words = pretrained_words
        self.token_init = token_init
        self.freeze_embedding = freeze_embedding
        self.char_dim = char_dim
        self.char_filters = char_filters
        self.n_highway = n_highway
        self.max_word_length = max_word_length
        self.min_count = min_count
        self.max_features = max_features
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.tokenizer = tokenizer
        self.max_len = max_len
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.clip_norm = clip_norm
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.precision = precision
        self.n_threads = n_threads
        self.device = device
        self.checkpoint_dir = checkpoint_dir
        self.checkpoint_every = checkpoint_every
        self.max_time = max_time
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ validation
    _parameter_constraints: dict = {
        **TextEstimatorMixin._text_parameter_constraints,
        "token_layer": [StrOptions(set(TOKEN_LAYERS))],
        "embedding_dim": [positive_int()],
        "hidden_dim": [positive_int()],
        "n_layers": [positive_int()],
        # Above 0.99 almost nothing passes (and byte-sized dropout rounds 0.999 to 1).
        "dropout": [Interval(Real, 0, 0.99, closed="both")],
        "softmax": [StrOptions(set(SOFTMAX_KINDS))],
        "n_samples": [positive_int()],
        "tie_weights": ["boolean"],
        "pretrained_vectors": "no_validation",  # checked when read (resolve_pretrained)
        "pretrained_words": [positive_int(), None],
        "token_init": [StrOptions(set(TOKEN_INITS))],
        "freeze_embedding": ["boolean"],
        "char_dim": [positive_int()],
        "char_filters": "no_validation",  # _check_params_together: needs max_word_length
        "n_highway": [positive_int(0)],
        "max_word_length": [positive_int(3)],
        "min_count": [positive_int()],
        "max_features": [positive_int(), None],
        "max_len": [positive_int()],
        "max_epochs": [positive_int()],
        "batch_size": [positive_int()],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "clip_norm": [Interval(Real, 0, None, closed="neither")],
        "validation_fraction": [Interval(Real, 0, 1, closed="left")],
        "patience": [positive_int(), None],
        "precision": [StrOptions(set(PRECISIONS))],
        "n_threads": N_THREADS_CONSTRAINTS,
        "device": [TorchDevices()],
        "checkpoint_dir": [str, os.PathLike, None],
        "checkpoint_every": [positive_int(), None],
        "max_time": [Interval(Real, 0, None, closed="neither"), None],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def _check_params_together(self) -> None:
        """The checks that span parameters (each parameter alone: ``_parameter_constraints``)."""
        if self.hidden_dim < self.embedding_dim:
            raise ValueError(
                f"hidden_dim={self.hidden_dim} is below embedding_dim={self.embedding_dim}: each "
                "LSTM projects its hidden state down to embedding_dim, so hidden_dim must be at "
                "least embedding_dim")
        try:
            filters = [(int(w), int(n)) for w, n in self.char_filters]
        except (TypeError, ValueError):
            raise ValueError(
                f"char_filters must be a sequence of (width, n_filters) pairs, got {self.char_filters!r}"
            ) from None
        if not filters or any(w < 1 or n < 1 for w, n in filters):
            raise ValueError(f"char_filters needs positive (width, n_filters) pairs, got {filters}")
        if max(w for w, _ in filters) > self.max_word_length:
            raise ValueError("every char filter width must be <= max_word_length")
        if self.pretrained_vectors is not None and self.token_layer != "word":
            raise ValueError("pretrained_vectors needs token_layer='word'")
        if self.pretrained_words is not None and self.tie_weights:
            raise ValueError("pretrained_words cannot be used with tie_weights=True: the "
                             "tied softmax would have to predict the added words")
        if self.tie_weights and (self.token_layer != "word" or self.softmax == "adaptive"):
            raise ValueError(
                "tie_weights=True needs token_layer='word' and softmax='full' or 'sampled'"
            )

    # --------------------------------------------------------------------- building
    def _build_language_model(self, n_words: int, pretrained: np.ndarray | None = None,
                              input_dim: int | None = None) -> LanguageModel:
        return build_language_model(
            n_words, token_layer=self.token_layer, embedding_dim=self.embedding_dim,
            hidden_dim=self.hidden_dim, n_layers=self.n_layers, dropout=self.dropout,
            softmax=self.softmax, n_samples=self.n_samples, tie_weights=self.tie_weights,
            char_dim=self.char_dim, char_filters=self.char_filters, n_highway=self.n_highway,
            pretrained=pretrained, input_dim=input_dim, freeze_embedding=self.freeze_embedding,
            n_output_words=getattr(self, "n_output_words_", None))

    def _chars(self, windows: Windows) -> np.ndarray | None:
        if self.token_layer != "char":
            return None
        return char_table(windows.types, self.max_word_length)

    def _windows(self, token_lists) -> Windows:
        return make_windows(token_lists, self.vocabulary_, self.max_len, self.token_layer == "char")

    def _bf16(self, training: bool) -> bool:
        device = self._device
        if self.precision == "fp32":
            return False
        if self.precision == "bf16":
            if not bf16_runs(device.type):
                raise ValueError(
                    f"precision='bf16' but torch has no bfloat16 LSTM on this {device.type} "
                    "(CPUs need AVX-512): use precision='auto' (bfloat16 where it is native) "
                    "or 'fp32'")
            return True
        return training and bf16_supported(device)

    @property
    def _device(self) -> torch.device:
        return resolve_device(self.device)

    # -------------------------------------------------------------------------- fit
    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, threads=None):
        """Pretrain the biLM on the documents ``X`` (or, with ``warm_start=True`` and a
        fitted biLM, continue its pretraining on them).

        Parameters
        ----------
        X : iterable of str, TextFiles or path
            A list, tuple, array or Series of documents is held in memory. A corpus of
            any size is streamed: :class:`~elmofeat.bilm.corpus.TextFiles` (files,
            folders or globs, one document a line), a ``pathlib.Path``, or any iterable
            without a length (a generator). A streamed corpus is read once, tokenized
            into shards of token ids on disk (in ``checkpoint_dir``, where a resumed run
            reuses them, or a temporary folder removed afterwards), and each epoch reads
            the shards in a seeded random order through a shuffle buffer of eight
            shards of about a million tokens; at most 500,000 tokens are held out for
            validation. Memory does not grow with the corpus's length.
        y : None
            Ignored.
        threads : Threads, default=None
            The thread policy in force of a caller that runs this fit inside its own
            (an ``ElmoVectorizer`` pretraining its biLM): the outermost caller's
            ``n_threads`` wins. None: this biLM's ``n_threads``.

        Returns
        -------
        self : BiLM

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from elmofeat import BiLM
        >>> from elmofeat.bilm.corpus import TextFiles
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "books.txt").write_text("the cat sat on the mat .\\n" * 50)
        >>> bilm = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0)
        >>> bilm.fit(TextFiles(folder)).history_[0]["training_tokens"]
        336
        """
        sharing.check_writable(self, "fit", training_in_place=self.warm_start
                               and hasattr(self, "language_model_"))
        self._check_params_together()
        if (self.pretrained_words is not None and self.pretrained_vectors is None
                and not training_data.warm_start(self)):
            # Checked here, not with the other parameters: a loaded model keeps its
            # pretrained_words without the vectors it was trained from.
            raise ValueError("pretrained_words needs pretrained_vectors: the words it adds "
                             "are read through their pretrained vectors")
        with reuse_large_blocks(), in_force(threads, self.n_threads, training=True) as threads:
            return self._fit(X, threads)

    def set_params(self, **params):
        """Set parameters (scikit-learn's ``set_params``); refused on a fitted biLM
        shared by the process (see :mod:`elmofeat.bilm.sharing`)."""
        if params:
            sharing.check_writable(self, "set_params")
        return super().set_params(**params)

    def __setattr__(self, name, value):
        # A shared biLM is read-only by every route, plain attribute writes included
        # (its private caches, named with a leading underscore, are not its state).
        if not name.startswith("_") and sharing.is_shared(self):
            sharing.check_writable(self, f"setting {name}")
        super().__setattr__(name, value)

    def _fit(self, X, threads):
        warm = training_data.warm_start(self)
        random_state = check_random_state(self.random_state)
        seed = int(random_state.randint(2**31 - 1))
        source = training_data.streamed_source(X)
        with contextlib.ExitStack() as stack:
            if source is None:
                data = training_data.in_memory(self, X, random_state)
            else:
                data = stack.enter_context(training_data.streamed(self, source, random_state))
            self._train(data, seed, threads)
            self.n_epochs_ = len(self.history_)
            self.output_dim_ = 2 * self.embedding_dim
            self.n_representations_ = self.n_layers + 1
            # The spread of each layer over the training texts: what a frozen mix
            # divides by when there are no texts of the user's to measure it on. An
            # adaptation on texts that measure none (fewer than 2 with a token, or all
            # alike) keeps the spread the model measured before.
            layers, offsets = self.embed_tokens(data.scale_sample(), threads=threads)
            previous = getattr(self, "layer_scales_", None) if warm else None
            spread = measured_spread(layers, offsets)
            if spread is None and previous is not None:
                self.layer_scales_ = np.array(previous, dtype=np.float32)
            else:
                self.layer_scales_ = layer_spread(layers, offsets)
        return self

    def _train(self, data, seed: int, threads) -> None:
        device = self._device
        warm = training_data.warm_start(self)
        history = list(self.history_) if warm else []
        if warm:
            self._check_same_architecture(self.language_model_)
        config = TrainConfig(
            max_epochs=self.max_epochs, batch_size=self.batch_size,
            learning_rate=float(self.learning_rate), weight_decay=float(self.weight_decay),
            clip_norm=float(self.clip_norm), patience=self.patience, bf16=self._bf16(True),
            seed=seed, checkpoint_dir=None if self.checkpoint_dir is None else str(self.checkpoint_dir),
            checkpoint_every=self.checkpoint_every, verbose=bool(self.verbose), device=str(device),
            max_time=None if self.max_time is None else float(self.max_time),
        )
        with seeded(seed, device):
            if warm:
                lm = self.language_model_.to(device)
            else:
                lm = self._build_language_model(len(self.vocabulary_), data.pretrained).to(device)
            self.token_input_dim_ = (
                lm.encoder.token_layer.embedding.weight.shape[1] if self.token_layer == "word" else None
            )
            # The fingerprint (a hash of every training token) only guards checkpoints.
            fingerprint = None if config.checkpoint_dir is None else training_data.fingerprint(
                self, data, self._run_settings + self._stopping_params)
            callbacks = standard_callbacks(config, fingerprint, rank=world()[0])
            pretrainer = Pretrainer(lm, config, callbacks, threads)
            records = pretrainer.run(data.train, data.valid, valid_chars=data.valid_chars)
        if warm:
            records = [{**record, "warm_start": True} for record in records]
        # Tokens of the training texts read per epoch (warm-start fits add theirs).
        for record in records:
            record["training_tokens"] = int(data.train.n_tokens)
        self.history_ = history + records
        self.language_model_ = lm.eval()

    # ------------------------------------------- the seam ElmoVectorizer builds on
    # Public so that the vectorizer, its caches and parallel workers use no private
    # method of the biLM: naming (WeightsIdentityMixin), copying and moving a fitted biLM.
    def _check_same_architecture(self, lm) -> None:
        # Built on the meta device: no memory for a second embedding table, and no draw
        # from torch's global random state (which a seeded fit leaves as it was).
        with torch.random.fork_rng(devices=[]), torch.device("meta"):
            expected = self._build_language_model(len(self.vocabulary_),
                                                  input_dim=self.token_input_dim_)
        shapes = {k: tuple(v.shape) for k, v in lm.state_dict().items()}
        wanted = {k: tuple(v.shape) for k, v in expected.state_dict().items()}
        if shapes != wanted:
            changed = sorted(k for k in wanted.keys() | shapes.keys()
                             if shapes.get(k) != wanted.get(k))
            raise ValueError(
                "warm_start=True continues training the fitted model, but its architecture "
                f"parameters were changed since (weights that differ: {', '.join(changed[:4])}); "
                "set them back, or fit afresh with warm_start=False")

    def _read_words(self, words: list[str], vectors: np.ndarray) -> None:
        """Add ``words`` to the word embedding (rows ``vectors``, of its table's width)
        as words the model reads but does not predict (see ``warm_start``)."""
        from ..text import Vocabulary

        self.language_model_.encoder.token_layer.add_rows(vectors)
        if self.language_model_.n_output_words is None:
            self.language_model_.n_output_words = self.n_output_words_
        vocabulary = self.vocabulary_
        self.vocabulary_ = Vocabulary(
            vocabulary.tokens + list(words),
            np.concatenate([vocabulary.counts, np.zeros(len(words), np.int64)]),
            unknown=vocabulary.unknown)

    def shared_copy(self) -> "BiLM":
        """A new BiLM sharing this one's fitted state (weights included) but with
        parameters of its own: copy on write for a shared fitted biLM (``set_params``
        on the copy leaves this one as it is). (``copy.copy``
        would go through pickling's ``__getstate__`` and rebuild the modules.)"""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        return twin

    def copy_to(self, device) -> "BiLM":
        """A copy of this fitted biLM whose modules live on ``device`` (``device`` set
        to it); this one is left where it is: it may be shared."""
        moved = self.shared_copy()
        moved.device = device
        moved.language_model_ = copy.deepcopy(self.language_model_).to(resolve_device(device))
        return moved

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.requires_fit = True
        return tags
