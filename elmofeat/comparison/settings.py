"""What a comparison run does: datasets, methods, sizes and seeds, in one object."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from .methods import METHODS, resolve_methods

DATASETS = ("ag_news", "r8")


@dataclass(frozen=True)
class ComparisonSettings:
    """Settings of ``elmofeat benchmark``; the defaults are the full run.

    ``quick()`` gives the reduced run (a stratified slice of each dataset, a small biLM).
    Every number of the report is a function of these settings and the data, so the
    same settings reproduce the same table.

    Examples
    --------
    >>> settings = ComparisonSettings(methods=("svd", "elmo"), folds=3)
    >>> settings.methods
    ('svd', 'elmo-trainable', 'elmo-frozen', 'elmo-mlp')
    >>> ComparisonSettings.quick_run().bilm_dim
    128
    """

    datasets: tuple = DATASETS
    methods: tuple = tuple(METHODS)
    folds: int = 5
    seed: int = 0
    quick: bool = False
    # Documents used (None: all). AG News: taken before the folds; R8: from each split.
    ag_news_documents: int | None = None
    r8_train_documents: int | None = None
    r8_test_documents: int | None = None
    # biLM pretrained on each training split (embedding = hidden = bilm_dim).
    bilm_dim: int = 256
    bilm_epochs: int = 3
    glove_init: bool = True
    # Supervised mixes: training passes and cross-fitting folds (ElmoVectorizer's cv).
    mix_epochs: int = 5
    mix_cv: int = 3
    skipgram_epochs: int = 20

    def __post_init__(self):
        unknown = [d for d in self.datasets if d not in DATASETS]
        if unknown or not self.datasets:
            raise ValueError(f"datasets must be among {', '.join(DATASETS)}, got {list(self.datasets)}")
        object.__setattr__(self, "datasets", tuple(d for d in DATASETS if d in self.datasets))
        object.__setattr__(self, "methods", resolve_methods(self.methods))
        if not self.methods:
            raise ValueError("no method selected")
        if int(self.folds) != self.folds or self.folds < 2:
            raise ValueError(f"folds must be an integer >= 2, got {self.folds}")
        for name in ("bilm_dim", "bilm_epochs", "mix_epochs", "skipgram_epochs"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.mix_cv < 2:
            raise ValueError(f"mix_cv must be >= 2, got {self.mix_cv}")

    @classmethod
    def quick_run(cls, **changes) -> "ComparisonSettings":
        """The reduced run: 2,400 AG News documents in 2 folds, 1,200/600 R8 documents,
        a 128-wide biLM for 2 epochs, fewer passes of the mixes."""
        base = cls(folds=2, quick=True, ag_news_documents=2400, r8_train_documents=1200,
                   r8_test_documents=600, bilm_dim=128, bilm_epochs=2, mix_epochs=3,
                   mix_cv=2)
        return replace(base, **changes)

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def uses_bilm(self) -> bool:
        return any(METHODS[m].needs_bilm for m in self.methods)

    @property
    def uses_glove(self) -> bool:
        return any(METHODS[m].needs_glove for m in self.methods) or (
            self.uses_bilm and self.glove_init)
