"""Every row against TF-IDF, split by split: the paired difference and how often it wins.

A difference of means hides how the splits vary together: the same split is hard for
every method. On each split a row's accuracy is compared with the TF-IDF row that is
the better one over the task (C=1 or C=10, chosen by mean, as the targets choose it);
the mean and standard deviation of those paired differences, and the number of splits
on which the row is above, say whether a gap is a win or inside the split-to-split
spread.
"""

from __future__ import annotations

import numpy as np


TFIDF_ROWS = ("tfidf", "tfidf-c10")


def has_row(dataset: dict, method: str) -> bool:
    """Whether every split of a task has ``method``'s row (a run may give a row some
    tasks only: ``BenchmarkSettings.only_on``); False for a task with no splits."""
    splits = dataset["splits"]
    return bool(splits) and all(method in s["methods"] for s in splits)


def best_tfidf(dataset: dict) -> str | None:
    """The TF-IDF row with the better mean accuracy over the task's splits."""
    means = {m: np.mean([s["methods"][m]["accuracy"] for s in dataset["splits"]])
             for m in TFIDF_ROWS if has_row(dataset, m)}
    return max(means, key=means.get) if means else None


def tfidf_reference(results: dict) -> str:
    """How the docs name the reference row: "the better TF-IDF row" where a run has several
    TF-IDF rows (C fixed at 1 and at 10), "the TF-IDF row" where it has one."""
    ran = {m for d in results["datasets"].values() for s in d["splits"] for m in s["methods"]
           if m in TFIDF_ROWS}
    return "the better TF-IDF row" if len(ran) > 1 else "the TF-IDF row"


def paired_gap(dataset: dict, method: str, against: str) -> dict | None:
    """``method`` minus ``against`` split by split on one task: ``{"mean", "std", "above",
    "splits", "against"}`` (accuracy fractions); None unless every split has both rows."""
    if not (has_row(dataset, method) and has_row(dataset, against)):
        return None
    gaps = np.array([s["methods"][method]["accuracy"] - s["methods"][against]["accuracy"]
                     for s in dataset["splits"]])
    return {"mean": float(gaps.mean()), "std": float(gaps.std()),
            "above": int((gaps > 0).sum()), "splits": len(gaps), "against": against}


def paired_differences(results: dict) -> dict:
    """``{task: {method: {"mean", "std", "above", "splits", "against"}}}`` for every
    method that is not TF-IDF, against the task's better TF-IDF row."""
    out = {}
    for key, dataset in results["datasets"].items():
        reference = best_tfidf(dataset)
        if reference is None or not dataset["splits"]:
            continue
        out[key] = {}
        for method in results["settings"]["methods"]:
            gap = None if method in TFIDF_ROWS else paired_gap(dataset, method, reference)
            if gap is not None:
                out[key][method] = gap
    return out
