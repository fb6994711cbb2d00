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

from .methods import METHODS

TFIDF_ROWS = ("tfidf", "tfidf-c10")


def best_tfidf(dataset: dict) -> str | None:
    """The TF-IDF row with the better mean accuracy over the task's splits."""
    means = {m: np.mean([s["methods"][m]["accuracy"] for s in dataset["splits"]])
             for m in TFIDF_ROWS if all(m in s["methods"] for s in dataset["splits"])}
    return max(means, key=means.get) if means else None


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
            if method in TFIDF_ROWS or not all(method in s["methods"] for s in dataset["splits"]):
                continue
            gaps = np.array([s["methods"][method]["accuracy"] - s["methods"][reference]["accuracy"]
                             for s in dataset["splits"]])
            out[key][method] = {"mean": float(gaps.mean()), "std": float(gaps.std()),
                                "above": int((gaps > 0).sum()), "splits": len(gaps),
                                "against": reference}
    return out


def paired_section(results: dict) -> list[str]:
    """The report's table of paired differences (Markdown lines)."""
    from .report import markdown_table

    gaps = paired_differences(results)
    keys = [k for k in results["datasets"] if k in gaps]
    if not keys:
        return []
    methods = [m for m in results["settings"]["methods"] if m not in TFIDF_ROWS]
    rows = []
    for method in methods:
        cells = []
        for key in keys:
            gap = gaps[key].get(method)
            cells.append("" if gap is None else (
                f"{100 * gap['mean']:+.2f}" if gap["splits"] == 1 else
                f"{100 * gap['mean']:+.2f} ± {100 * gap['std']:.2f} ({gap['above']}/{gap['splits']})"))
        rows.append([METHODS[method].label, *cells])
    against = ", ".join(f"{results['datasets'][k]['title']}: "
                        f"{METHODS[best_tfidf(results['datasets'][k])].label}" for k in keys)
    return ["", "### Against TF-IDF, split by split", "",
            "Accuracy minus that of the better TF-IDF row on the same split, in points: mean "
            "± std of the paired differences, and (in brackets) the splits on which the row is "
            f"above TF-IDF ({against}). A mean inside its spread is not a win.", "",
            markdown_table(["method", *(results["datasets"][k]["title"] for k in keys)], rows)]
