"""The suite's targets, checked against its results (met or missed, and by how much).

Every check compares mean accuracies over the splits of a task; "TF-IDF" is the better
of the two TF-IDF rows (C=1 and C=10) that the run has, so that no target is met
against a weakened baseline. A target names its rows through the method registry (a
method's key, or a group of mixes: ``every:<group>``, ``best:<group>``) and the tasks it
applies to by their ``kind`` (:mod:`elmofeat.suite.tasks`): a new task of a known kind
gets its targets, a new mix its rows in every group-wide check.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..mixes import DEFAULT_LAYER_MIX, get_mix
from .bilms import GENERAL_MODEL
from .methods import METHODS
from .paired import TFIDF_ROWS
from .tasks import TASKS


@dataclass
class Check:
    target: str
    task: str
    met: bool
    detail: str


@dataclass(frozen=True)
class Target:
    """``rows`` against ``against`` on the tasks of ``kinds``: met when the gap is at
    least ``margin`` (above it for a margin of 0).

    ``rows``: a method key, ``"every:<mix group>"`` (one check per row of the group) or
    ``"best:<mix group>"`` (the group's best row); ``against``: a method key,
    ``"tfidf"`` (the better TF-IDF row) or ``"better:<a>,<b>"`` (the best of those).
    ``what`` and ``against_label`` name the two sides in the details (None: the row's
    label). ``tasks``: the task keys it applies to, where an issue set it for those
    tasks alone (None: every task of its kinds).
    """

    name: str
    rows: str
    against: str
    margin: float
    against_label: str
    kinds: tuple = ("topic", "polarity")
    what: str | None = None
    tasks: tuple | None = None


_DEFAULT_MIX = get_mix(DEFAULT_LAYER_MIX).label
_SHORT_TASKS = ("ag_news", "cr", "mpqa")

TARGETS = (
    Target("SkipGramVectorizer within 3 points of SVDVectorizer", "skipgram", "svd", -0.03,
           "SVD", what="skip-gram"),
    Target("every ELMo mix (defaults) above SVDVectorizer", "every:elmo", "svd", 0, "SVD"),
    Target("best ELMo mix (defaults) 1 point above TF-IDF", "best:elmo", "tfidf", 0.01, "TF-IDF",
           kinds=("topic",)),
    Target("every ELMo + GloVe mix above GloVe mean", "every:elmo-glove", "glove", 0,
           "GloVe mean"),
    Target("best ELMo + GloVe mix within 2 points of TF-IDF", "best:elmo-glove", "tfidf", -0.02,
           "TF-IDF", kinds=("polarity",)),
    Target("hybrid 1 point above TF-IDF", "hybrid", "tfidf", 0.01, "TF-IDF"),
    Target("hybrid 1 point above TF-IDF", "hybrid-search", "tfidf", 0.01, "TF-IDF"),
    # The general model's (issue 41): its default (ElmoVectorizer's default mix) at or
    # above TF-IDF and within 1 point of the sentence encoder a user would pick instead on
    # every task; its hybrid 1 point above TF-IDF and at or above the encoder.
    Target(f"default ElmoVectorizer ({GENERAL_MODEL}, {_DEFAULT_MIX} mix) at or above TF-IDF",
           f"general-{DEFAULT_LAYER_MIX}", "tfidf", -1e-12, "TF-IDF"),
    Target(f"default ElmoVectorizer ({GENERAL_MODEL}, {_DEFAULT_MIX} mix) within 1 point of "
           "all-MiniLM-L6-v2", f"general-{DEFAULT_LAYER_MIX}", "minilm", -0.01, "MiniLM"),
    Target(f"{GENERAL_MODEL} hybrid at or above all-MiniLM-L6-v2", "general-hybrid", "minilm",
           -1e-12, "MiniLM"),
    Target(f"{GENERAL_MODEL} hybrid 1 point above TF-IDF", "general-hybrid", "tfidf", 0.01, "TF-IDF"),
    Target(f"{GENERAL_MODEL} hybrid 1 point above TF-IDF", "general-hybrid-search", "tfidf", 0.01,
           "TF-IDF"),
    # Labels that shape the biLM (issue 70): on the short tasks at or above the encoder
    # and a point above TF-IDF; on R8 at or above TF-IDF; on long posts at or above the
    # default's frozen features.
    Target(f"fine-tuned {GENERAL_MODEL} (ElmoClassifier) at or above all-MiniLM-L6-v2",
           "general-finetuned", "minilm", -1e-12, "MiniLM", tasks=_SHORT_TASKS),
    Target(f"fine-tuned {GENERAL_MODEL} (ElmoClassifier) 1 point above TF-IDF",
           "general-finetuned", "tfidf", 0.01, "TF-IDF", tasks=_SHORT_TASKS),
    Target(f"fine-tuned {GENERAL_MODEL} (ElmoClassifier) at or above TF-IDF",
           "general-finetuned", "tfidf", -1e-12, "TF-IDF", tasks=("r8",)),
    Target(f"fine-tuned {GENERAL_MODEL} (ElmoClassifier) at or above the default "
           "ElmoVectorizer", "general-finetuned", f"general-{DEFAULT_LAYER_MIX}", -1e-12,
           "the default", tasks=("20ng",)),
    # A combination never below its own parts (issue 72): the stacked hybrid at or above
    # the better of its two blocks' rows, a point above TF-IDF, at or above the encoder.
    Target("stacked hybrid at or above the better of its blocks", "general-stacked",
           f"better:tfidf,general-{DEFAULT_LAYER_MIX}", -1e-12, "the better block"),
    Target("stacked hybrid 1 point above TF-IDF", "general-stacked", "tfidf", 0.01, "TF-IDF"),
    Target("stacked hybrid at or above all-MiniLM-L6-v2", "general-stacked", "minilm", -1e-12,
           "MiniLM"),
)


def _accuracy(stats, method):
    return stats[method]["accuracy"]["mean"] if method in stats else None


def _tfidf(stats):
    values = [_accuracy(stats, m) for m in TFIDF_ROWS if m in stats]
    return max(values) if values else None


def _reference(against: str, stats) -> float | None:
    """The accuracy a target compares with: a method's, the better TF-IDF row's
    (``"tfidf"``), or the best of several (``"better:<a>,<b>"``; None unless the run has
    every one of them)."""
    if against == "tfidf":
        return _tfidf(stats)
    if against.startswith("better:"):
        values = [_reference(part, stats) for part in against.split(":", 1)[1].split(",")]
        return None if None in values else max(values)
    return _accuracy(stats, against)


def _compare(target, task, value, reference, margin, what, against) -> Check:
    gap = value - reference
    met = gap > margin if margin == 0 else gap >= margin
    need = "a gap > 0" if margin == 0 else f"a gap ≥ {margin:+.2f}"
    detail = (f"{what} {value:.4f} vs {against} {reference:.4f}: {gap:+.4f} "
              f"({'met' if met else 'missed'}; needs {need})")
    return Check(target, task, met, detail)


def _rows(selector: str, stats) -> list[str]:
    if ":" not in selector:
        return [selector] if selector in stats else []
    how, group = selector.split(":", 1)
    rows = [m for m in stats if m in METHODS and METHODS[m].mix_group == group]
    if how == "best" and rows:
        return [max(rows, key=lambda m: _accuracy(stats, m))]
    return rows


def evaluate_targets(summary: dict, titles: dict) -> list[Check]:
    """Evaluate every target the run's methods and tasks allow, task by task in the
    order of :data:`TARGETS`."""
    checks = []
    for key, stats in summary.items():
        kind = TASKS[key].kind if key in TASKS else None
        for target in TARGETS:
            if kind not in target.kinds or (target.tasks is not None and key not in target.tasks):
                continue
            reference = _reference(target.against, stats)
            if reference is None:
                continue
            checks += [_compare(target.name, titles[key], _accuracy(stats, row), reference,
                                target.margin, target.what or METHODS[row].label,
                                target.against_label)
                       for row in _rows(target.rows, stats)]
    return checks
