"""What a benchmark run does: tasks, methods, sizes and seeds, in one object."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .bilms import BILM_SOURCES
from .methods import METHODS, default_methods, resolve_methods
from .tasks import TASKS, CrossValidation

def _size_settings(datasets) -> tuple[str, ...]:
    return tuple(name for key in datasets for name in TASKS[key].protocol.size_settings(key))


def _full_size(name: str) -> int | None:
    """The size a registered task declares for a run that leaves ``name`` unset."""
    for key, task in TASKS.items():
        sizes = task.protocol.full_sizes(key)
        if name in sizes:
            return sizes[name]
    return None


@dataclass(frozen=True, eq=False)
class BenchmarkSettings:
    """Settings of ``elmofeat benchmark``; the defaults are the full suite.

    Every estimator runs with its library defaults; the size settings below exist for
    :meth:`quick_run` (a smoke run whose numbers are not evidence) and are unset in the
    full suite. Every number of the report is a function of these settings and the data,
    so the same settings reproduce the same table.

    Parameters
    ----------
    datasets : tuple of str, default=None
        Tasks of :data:`~elmofeat.suite.tasks.TASKS` (None: every registered one that
        is in the suite by default, ``TaskSpec.default``).
    methods : tuple of str, default=None
        Methods or groups of :data:`~elmofeat.suite.methods.METHODS`, stored resolved
        (groups expanded); None: the default ones, each on the tasks its
        ``MethodSpec.default_tasks`` names. :attr:`run_methods` is what the run has.
    only_on : dict, default=None
        ``{method: tasks}``: methods run on some of the run's tasks only (see
        :meth:`methods_for`); a method not listed runs on every task. None: from the
        methods' ``default_tasks`` where ``methods`` is None, else empty.
    sizes : dict, default=None
        Documents used per task, by the size settings its protocol declares
        (``<task>_documents`` for cross-validated tasks, ``<task>_train_documents`` and
        ``<task>_test_documents`` for a standard split); taken before the folds. Unset:
        the task's own size (all its documents, or the seeded sample its protocol
        declares, as for 20 Newsgroups).
    max_splits : int, default=None
        Run only the first ``max_splits`` folds of each cross-validated task (None:
        every fold). :meth:`quick_run` runs one, so that the smoke run stays a few
        minutes with every row on every task.
    finetune_epochs : int, default=None
        Epochs of the fine-tuned rows (None: ``ElmoClassifier``'s default).
    search_cv : int, default=None
        Inner folds of the rows that search parameters (``GridSearchCV``; None: 3).

    Examples
    --------
    >>> settings = BenchmarkSettings(methods=("svd", "elmo"), datasets=("cr",))
    >>> settings.run_methods
    ('svd', 'elmo-trainable', 'elmo-frozen', 'elmo-concat', 'elmo-mlp')
    >>> settings.n_folds("cr"), BenchmarkSettings.quick_run().n_folds("cr")
    (5, 2)
    >>> BenchmarkSettings(datasets=("ag_news",), sizes={"ag_news_documents": 100}).size(
    ...     "ag_news_documents")
    100
    >>> some = BenchmarkSettings(datasets=("ag_news", "cr"), methods=("tfidf", "svd"),
    ...                          only_on={"svd": ("ag_news",)})
    >>> some.methods_for("ag_news"), some.methods_for("cr")
    (('tfidf', 'svd'), ('tfidf',))
    """

    datasets: tuple | None = None
    methods: tuple | None = None
    only_on: dict | None = None
    seed: int = 0
    quick: bool = False
    # Folds of every cross-validated task (None: each task's own).
    folds: int | None = None
    sizes: dict = field(default_factory=dict)
    # biLM width (embedding = hidden) and epochs, mix epochs and folds (None: defaults).
    bilm_dim: int | None = None
    bilm_epochs: int | None = None
    mix_epochs: int | None = None
    mix_cv: int | None = None
    # SkipGramVectorizer's epochs (None: its "auto", up to 100 passes over a small slice).
    skipgram_epochs: int | None = None
    max_splits: int | None = None
    finetune_epochs: int | None = None
    search_cv: int | None = None

    def __post_init__(self):
        datasets = (tuple(k for k, t in TASKS.items() if t.default) if self.datasets is None
                    else tuple(self.datasets))
        unknown = [d for d in datasets if d not in TASKS]
        if unknown or not datasets:
            raise ValueError(f"datasets must be among {', '.join(TASKS)}, got {list(datasets)}")
        object.__setattr__(self, "datasets", tuple(d for d in TASKS if d in datasets))
        # The fields keep what was asked (None stays None, so that ``replace`` derives
        # the defaults again); what the run does on its tasks is derived below.
        methods = resolve_methods(default_methods() if self.methods is None else self.methods)
        if self.methods is not None:
            object.__setattr__(self, "methods", methods)
        if self.only_on is not None:
            only_on = {m: tuple(t) for m, t in self.only_on.items()}
        elif self.methods is None:  # the default methods, each on its declared tasks
            only_on = {m: METHODS[m].default_tasks for m in methods
                       if METHODS[m].default_tasks is not None}
        else:  # methods named: every one on every task
            only_on = {}
        unknown = sorted(set(only_on) - set(methods))
        if unknown:
            raise ValueError(f"only_on names methods the run does not have: {unknown}")
        unknown = sorted({t for tasks in only_on.values() for t in tasks} - set(TASKS))
        if unknown:
            raise ValueError(f"only_on names unknown tasks {unknown}; the tasks are "
                             f"{', '.join(TASKS)}")
        if self.only_on is not None:
            object.__setattr__(self, "only_on", only_on)
        # Restricted to the run's tasks: a method on none of them is left out, one on
        # all of them needs no entry.
        only_on = {m: tuple(d for d in self.datasets if d in tasks)
                   for m, tasks in only_on.items()}
        object.__setattr__(self, "_run_methods",
                           tuple(m for m in methods if only_on.get(m, True)))
        object.__setattr__(self, "_restrictions", {
            m: t for m, t in only_on.items() if len(t) < len(self.datasets) and t})
        if not self.run_methods:
            raise ValueError("no method selected")
        known = _size_settings(TASKS.names())
        unknown = sorted(set(self.sizes) - set(known))
        if unknown:
            raise ValueError(f"unknown size settings {unknown}; the tasks declare "
                             f"{', '.join(known)}")
        for name, value in self.sizes.items():
            if value is not None and (int(value) != value or value < 1):
                raise ValueError(f"{name} must be a positive integer, got {value}")
        object.__setattr__(self, "sizes", {k: v for k, v in self.sizes.items() if v is not None})
        if self.folds is not None and (int(self.folds) != self.folds or self.folds < 2):
            raise ValueError(f"folds must be an integer >= 2, got {self.folds}")
        for name in ("bilm_dim", "bilm_epochs", "mix_epochs", "skipgram_epochs", "finetune_epochs"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("mix_cv", "search_cv"):
            if getattr(self, name) is not None and getattr(self, name) < 2:
                raise ValueError(f"{name} must be >= 2, got {getattr(self, name)}")
        if self.max_splits is not None and (int(self.max_splits) != self.max_splits
                                            or self.max_splits < 1):
            raise ValueError(f"max_splits must be an integer >= 1, got {self.max_splits}")

    @classmethod
    def quick_run(cls, **changes) -> "BenchmarkSettings":
        """A smoke run (its report gives its wall time): each task's quick slice, the first
        of 2 folds, a 64-wide biLM for 2 epochs. Its numbers show that everything runs, not how the methods
        compare."""
        sizes = {name: value for key, task in TASKS.items()
                 for name, value in task.protocol.quick_sizes(key).items()}
        base = cls(quick=True, folds=2, sizes=sizes, bilm_dim=64, bilm_epochs=2, mix_epochs=3,
                   mix_cv=2, skipgram_epochs=5, max_splits=1)
        return replace(base, **changes)

    @property
    def run_methods(self) -> tuple[str, ...]:
        """The methods the run has: :attr:`methods` (or the default ones) less those
        :attr:`only_on` gives none of its tasks."""
        return self._run_methods

    @property
    def restrictions(self) -> dict:
        """``{method: tasks}`` for the run's methods that run on some of its tasks only
        (:attr:`only_on`, or the methods' defaults, restricted to :attr:`datasets`)."""
        return dict(self._restrictions)

    def methods_for(self, dataset: str) -> tuple[str, ...]:
        """The methods the run gives ``dataset``, in order (:attr:`only_on` leaves some
        out)."""
        return tuple(m for m in self.run_methods
                     if dataset in self._restrictions.get(m, (dataset,)))

    def __eq__(self, other):
        """Settings are equal when they run the same (:meth:`to_dict`)."""
        if not isinstance(other, BenchmarkSettings):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self):
        import json

        return hash(json.dumps(self.to_dict(), sort_keys=True))

    def size(self, name: str) -> int | None:
        """A size setting (None: all documents); unset, the task's own."""
        return self.sizes[name] if name in self.sizes else _full_size(name)

    def n_folds(self, dataset: str) -> int | None:
        """Cross-validation folds of ``dataset`` (None: it has a standard split)."""
        protocol = TASKS[dataset].protocol
        if not isinstance(protocol, CrossValidation):
            return None
        return self.folds if self.folds is not None else protocol.folds

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

    def finetune_params(self) -> dict:
        """The overrides of ElmoClassifier's defaults (empty in the full suite)."""
        return {} if self.finetune_epochs is None else {"epochs": self.finetune_epochs}

    def skipgram_params(self) -> dict:
        """The overrides of SkipGramVectorizer's defaults (empty in the full suite)."""
        return {} if self.skipgram_epochs is None else {"epochs": self.skipgram_epochs}

    def to_dict(self) -> dict:
        """Plain data, as results record it: every size setting of the registered tasks
        by name, in the tasks' order: as the run uses it (None: all documents) for its
        tasks, as set (None where unset) for the others."""
        return {"datasets": list(self.datasets), "methods": list(self.run_methods),
                # absent where empty: the results of runs before it read the same
                **({"only_on": {m: list(tasks) for m, tasks in self._restrictions.items()}}
                   if self._restrictions else {}),
                "seed": self.seed, "quick": self.quick, "folds": self.folds,
                **{name: self.size(name) if key in self.datasets else self.sizes.get(name)
                   for key in TASKS.names()
                   for name in TASKS[key].protocol.size_settings(key)},
                "bilm_dim": self.bilm_dim, "bilm_epochs": self.bilm_epochs,
                "mix_epochs": self.mix_epochs, "mix_cv": self.mix_cv,
                "skipgram_epochs": self.skipgram_epochs,
                # absent where unset: the results of runs before it read the same
                **{name: getattr(self, name)
                   for name in ("max_splits", "finetune_epochs", "search_cv")
                   if getattr(self, name) is not None}}

    @classmethod
    def from_dict(cls, data: dict) -> "BenchmarkSettings":
        """Settings from :meth:`to_dict`'s plain data (a results file's ``settings``)."""
        sizes = set(_size_settings(TASKS.names()))
        # no only_on: every method ran on every task
        return cls(**{"only_on": {}, **{k: v for k, v in data.items() if k not in sizes}},
                   sizes={k: v for k, v in data.items() if k in sizes and v is not None})

    def bilms(self, dataset: str | None = None) -> tuple[str, ...]:
        """The biLMs the methods need per split, in the order of
        :data:`~elmofeat.suite.bilms.BILM_SOURCES` (the order they are made in): of the
        methods of ``dataset`` (:meth:`methods_for`), or of every task's (None). A task
        whose rows read no biLM of its own pretrains none."""
        methods = self.run_methods if dataset is None else self.methods_for(dataset)
        needed = {METHODS[m].bilm for m in methods} - {None}
        return tuple(b for b in BILM_SOURCES if b in needed)

    @property
    def uses_glove(self) -> bool:
        return any(METHODS[m].needs_glove for m in self.run_methods)

    @staticmethod
    def size_settings() -> tuple[str, ...]:
        """Every size setting the registered tasks declare."""
        return _size_settings(TASKS.names())
