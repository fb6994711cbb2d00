"""The suite's targets, checked against its results (met or missed, and by how much).

Every check compares mean accuracies over the splits of a task; "TF-IDF" is the better
of the two TF-IDF rows (C=1 and C=10) that the run has, so that no target is met
against a weakened baseline.
"""

from __future__ import annotations

from dataclasses import dataclass

from .methods import METHODS
from .paired import TFIDF_ROWS

DEFAULT_MIXES = ("elmo-trainable", "elmo-frozen", "elmo-mlp")
GLOVE_MIXES = ("elmo-glove-trainable", "elmo-glove-frozen", "elmo-glove-mlp")


@dataclass
class Check:
    target: str
    task: str
    met: bool
    detail: str


def _accuracy(stats, method):
    return stats[method]["accuracy"]["mean"] if method in stats else None


def _tfidf(stats):
    values = [_accuracy(stats, m) for m in TFIDF_ROWS if m in stats]
    return max(values) if values else None


def _label(method):
    return METHODS[method].label


def _compare(target, task, value, reference, margin, what, against) -> Check:
    gap = value - reference
    met = gap > margin if margin == 0 else gap >= margin
    need = "a gap > 0" if margin == 0 else f"a gap ≥ {margin:+.2f}"
    detail = (f"{what} {value:.4f} vs {against} {reference:.4f}: {gap:+.4f} "
              f"({'met' if met else 'missed'}; needs {need})")
    return Check(target, task, met, detail)


def evaluate_targets(summary: dict, titles: dict) -> list[Check]:
    """Evaluate every target the run's methods and tasks allow."""
    checks = []
    for key, stats in summary.items():
        task = titles[key]
        tfidf = _tfidf(stats)
        if "skipgram" in stats and "svd" in stats:
            checks.append(_compare("SkipGramVectorizer within 3 points of SVDVectorizer", task,
                                   _accuracy(stats, "skipgram"), _accuracy(stats, "svd"), -0.03,
                                   "skip-gram", "SVD"))
        checks += _mix_checks(stats, task, DEFAULT_MIXES, "svd", "SVD",
                              "every ELMo mix (defaults) above SVDVectorizer",
                              tfidf if key in ("ag_news", "r8") else None, 0.01,
                              "best ELMo mix (defaults) 1 point above TF-IDF")
        checks += _mix_checks(stats, task, GLOVE_MIXES, "glove", "GloVe mean",
                              "every ELMo + GloVe mix above GloVe mean",
                              tfidf if key in ("cr", "mpqa") else None, -0.02,
                              "best ELMo + GloVe mix within 2 points of TF-IDF")
        for hybrid in ("hybrid", "hybrid-search"):
            if hybrid in stats and tfidf is not None:
                checks.append(_compare("hybrid 1 point above TF-IDF", task,
                                       _accuracy(stats, hybrid), tfidf, 0.01,
                                       _label(hybrid), "TF-IDF"))
        checks += _general_checks(stats, key, task, tfidf)
    return checks


def _general_checks(stats, key, task, tfidf) -> list:
    """The general model's targets: its default (frozen mix) at or above TF-IDF on CR
    and MPQA and within 1 point of it on AG News and R8; its hybrid 1 point above."""
    if tfidf is None:
        return []
    checks = []
    if "general-frozen" in stats:
        at_least = key in ("cr", "mpqa")
        checks.append(_compare(
            "default ElmoVectorizer (en-small, frozen mix) at or above TF-IDF" if at_least
            else "default ElmoVectorizer (en-small, frozen mix) within 1 point of TF-IDF",
            task, _accuracy(stats, "general-frozen"), tfidf, -1e-12 if at_least else -0.01,
            _label("general-frozen"), "TF-IDF"))
    for hybrid in ("general-hybrid", "general-hybrid-search"):
        if hybrid in stats:
            checks.append(_compare("en-small hybrid 1 point above TF-IDF", task,
                                   _accuracy(stats, hybrid), tfidf, 0.01, _label(hybrid),
                                   "TF-IDF"))
    return checks


def _mix_checks(stats, task, family, baseline, baseline_label, every_name, tfidf, margin,
                best_name) -> list:
    """Every mix of ``family`` above ``baseline``; the best of them ``margin`` from
    TF-IDF (when ``tfidf`` is given)."""
    checks = []
    mixes = [m for m in family if m in stats]
    if baseline in stats:
        checks += [_compare(every_name, task, _accuracy(stats, mix), _accuracy(stats, baseline),
                            0, _label(mix), baseline_label) for mix in mixes]
    if mixes and tfidf is not None:
        best = max(mixes, key=lambda m: _accuracy(stats, m))
        checks.append(_compare(best_name, task, _accuracy(stats, best), tfidf, margin,
                               _label(best), "TF-IDF"))
    return checks
