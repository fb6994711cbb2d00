"""What a benchmark run does: tasks, methods, sizes and seeds, in one object."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from .catalog import DATASETS, DEFAULT_METHODS
from .methods import METHODS, resolve_methods
# Stratified k-fold cross-validation of the datasets without a standard split.
STANDARD_FOLDS = {"ag_news": 5, "cr": 10, "mpqa": 10}


@dataclass(frozen=True)
class BenchmarkSettings:
    """Settings of ``elmofeat benchmark``; the defaults are the full suite.

    Every estimator runs with its library defaults; the few size settings below exist
    for :meth:`quick_run` (a smoke run whose numbers are not evidence) and are ``None``
    in the full suite. Every number of the report is a function of these settings and
    the data, so the same settings reproduce the same table.

    Examples
    --------
    >>> settings = BenchmarkSettings(methods=("svd", "elmo"), datasets=("cr",))
    >>> settings.methods
    ('svd', 'elmo-trainable', 'elmo-frozen', 'elmo-mlp')
    >>> settings.n_folds("cr"), BenchmarkSettings.quick_run().n_folds("cr")
    (10, 2)
    """

    datasets: tuple = DATASETS
    methods: tuple = DEFAULT_METHODS
    seed: int = 0
    quick: bool = False
    # Folds of every cross-validated dataset (None: AG News 5, CR and MPQA 10).
    folds: int | None = None
    # Documents used (None: all); taken before the folds, R8 from each partition.
    ag_news_documents: int | None = None
    r8_train_documents: int | None = None
    r8_test_documents: int | None = None
    cr_documents: int | None = None
    mpqa_documents: int | None = None
    # biLM width (embedding = hidden) and epochs, mix epochs and folds (None: defaults).
    bilm_dim: int | None = None
    bilm_epochs: int | None = None
    mix_epochs: int | None = None
    mix_cv: int | None = None

    def __post_init__(self):
        unknown = [d for d in self.datasets if d not in DATASETS]
        if unknown or not self.datasets:
            raise ValueError(f"datasets must be among {', '.join(DATASETS)}, got {list(self.datasets)}")
        object.__setattr__(self, "datasets", tuple(d for d in DATASETS if d in self.datasets))
        object.__setattr__(self, "methods", resolve_methods(self.methods))
        if not self.methods:
            raise ValueError("no method selected")
        if self.folds is not None and (int(self.folds) != self.folds or self.folds < 2):
            raise ValueError(f"folds must be an integer >= 2, got {self.folds}")
        for name in ("bilm_dim", "bilm_epochs", "mix_epochs"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.mix_cv is not None and self.mix_cv < 2:
            raise ValueError(f"mix_cv must be >= 2, got {self.mix_cv}")

    @classmethod
    def quick_run(cls, **changes) -> "BenchmarkSettings":
        """A smoke run of a few minutes: small slices, 2 folds, a 64-wide biLM for 2
        epochs. Its numbers show that everything runs, not how the methods compare."""
        base = cls(quick=True, folds=2, ag_news_documents=1200, r8_train_documents=600,
                   r8_test_documents=300, cr_documents=1000, mpqa_documents=2000,
                   bilm_dim=64, bilm_epochs=2, mix_epochs=3, mix_cv=2)
        return replace(base, **changes)

    def n_folds(self, dataset: str) -> int | None:
        """Cross-validation folds of ``dataset`` (None: it has a standard split)."""
        if dataset not in STANDARD_FOLDS:
            return None
        return self.folds if self.folds is not None else STANDARD_FOLDS[dataset]

    def bilm_params(self) -> dict:
        """The overrides of BiLM's defaults (empty in the full suite)."""
        params = {}
        if self.bilm_dim is not None:
            params.update(embedding_dim=self.bilm_dim, hidden_dim=self.bilm_dim)
        if self.bilm_epochs is not None:
            params["max_epochs"] = self.bilm_epochs
        return params

    def mix_params(self) -> dict:
        """The overrides of ElmoVectorizer's mix defaults (empty in the full suite)."""
        params = {}
        if self.mix_epochs is not None:
            params["mix_epochs"] = self.mix_epochs
        if self.mix_cv is not None:
            params["cv"] = self.mix_cv
        return params

    def to_dict(self) -> dict:
        return asdict(self)

    def bilms(self) -> tuple[str, ...]:
        """The biLMs the methods need per split: ``"default"`` (pretrained on the split
        with the library's defaults), ``"glove"`` (the same, GloVe-started),
        ``"general"`` (the shipped general model) and ``"adapted"`` (the general model
        adapted to the split's training texts)."""
        needed = {METHODS[m].bilm for m in self.methods} - {None}
        return tuple(b for b in ("default", "glove", "general", "adapted") if b in needed)

    @property
    def uses_glove(self) -> bool:
        return any(METHODS[m].needs_glove for m in self.methods)
