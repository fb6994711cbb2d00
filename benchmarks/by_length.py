"""What to use for which length of text: the table at the top of
docs/choosing_features.md, written by ``make_docs.py`` from the suite's results.

For each length of text the suite has (short: CR and MPQA; paragraphs and articles: AG
News and R8; long posts: 20 Newsgroups), the candidate with the best mean accuracy over
that length's tasks, among the rows measured on the committed report's splits: the
report's own (`docs/report/results.json`: the default `ElmoVectorizer()`, TF-IDF,
`make_hybrid`, `ElmoClassifier`) and `benchmarks/stacking.py`'s (`StackingVectorizer`
rows, on the same splits). Each task's cell gives its accuracy, its paired difference
from TF-IDF and from all-MiniLM-L6-v2 (mean over splits, in points), and its cost: fit
and prediction seconds per 1,000 documents of a split (training and test), on the
machine that measured it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = {"short sentences and phrases": ("cr", "mpqa"),
           "paragraphs and articles": ("ag_news", "r8"),
           "long posts": ("20ng",)}
#: report rows a user can pick (the anchors are compared, not recommended)
REPORT_CANDIDATES = {"general-concat": "`ElmoVectorizer()`",
                     "general-finetuned": "`ElmoClassifier()`",
                     "general-hybrid": "`make_hybrid()`", "tfidf": "TF-IDF"}
#: stacking.py rows a user can pick, with what to write
STACKING_CANDIDATES = {"stacked": "`StackingVectorizer()` (TF-IDF + `ElmoVectorizer()`)",
                       "stacked-char": "`StackingVectorizer` (TF-IDF, char n-grams, `ElmoVectorizer()`)",
                       "stacked-12": "`StackingVectorizer` (TF-IDF 1-2-grams, `ElmoVectorizer()`)"}


def _report_rows(results: dict) -> dict:
    """method -> task -> (split accuracies, seconds per 1,000 documents per split)."""
    rows = {}
    for task, dataset in results["datasets"].items():
        splits = dataset["splits"]
        for method in {m for s in splits for m in s["methods"]}:
            if all(method in s["methods"] for s in splits):
                rows.setdefault(method, {})[task] = (
                    [s["methods"][method]["accuracy"] for s in splits],
                    [1000 * s["methods"][method]["seconds"] / (s["train_size"] + s["test_size"])
                     for s in splits])
    return rows


def _stacking_rows(stacking: dict, results: dict) -> dict:
    rows = {}
    for name, row in stacking.get("rows", {}).items():
        for task, score in row["scores"].items():
            splits = results["datasets"].get(task, {}).get("splits")
            if not splits or len(splits) != len(score["splits"]):
                continue  # not one of the report's tasks (20ng-3000), or not every split
            rows.setdefault(name, {})[task] = (
                score["splits"], [1000 * s / (split["train_size"] + split["test_size"])
                                  for s, split in zip(score["seconds"], splits)])
    return rows


def block(report: Path = ROOT / "docs" / "report" / "results.json",
          stacking: Path = ROOT / "benchmarks" / "results" / "stacking.json") -> str:
    if not report.is_file():
        return "_The suite has not run yet._"
    results = json.loads(report.read_text())
    rows = _report_rows(results)
    labels = {m: label for m, label in REPORT_CANDIDATES.items() if m in rows}
    if stacking.is_file():
        # its candidates only: the anchors' rows (TF-IDF, the default) stay the report's
        stacked = {name: row for name, row in
                   _stacking_rows(json.loads(stacking.read_text()), results).items()
                   if name in STACKING_CANDIDATES}
        rows.update(stacked)
        labels.update({m: label for m, label in STACKING_CANDIDATES.items() if m in stacked})
    lines = ["| text length | task | use | accuracy | minus TF-IDF | minus MiniLM | "
             "s per 1,000 documents (TF-IDF, MiniLM) |", "|---|---|---|---|---|---|---|"]
    for length, tasks in LENGTHS.items():
        tasks = [t for t in tasks if t in results["datasets"]]
        whole = [m for m in labels if all(t in rows[m] for t in tasks)]
        if not tasks or not whole:
            continue
        best = max(whole, key=lambda m: np.mean([np.mean(rows[m][t][0]) for t in tasks]))
        for task in tasks:
            accuracy, cost = rows[best][task]

            def minus(anchor):
                if anchor not in rows or task not in rows[anchor]:
                    return "—"
                return f"{100 * np.mean(np.subtract(accuracy, rows[anchor][task][0])):+.2f}"

            def seconds(method):
                return f"{np.mean(rows[method][task][1]):.1f}" if task in rows.get(method, {}) else "—"

            lines.append(f"| {length} | {results['datasets'][task]['title']} | {labels[best]} | "
                         f"{np.mean(accuracy):.4f} | {minus('tfidf')} | {minus('minilm')} | "
                         f"{np.mean(cost):.1f} ({seconds('tfidf')}, {seconds('minilm')}) |")
    return ("From the suite's splits (`elmofeat benchmark --output docs/report` and "
            "`python benchmarks/stacking.py`): for each length of text, the row with the "
            "best mean accuracy over that length's tasks, among the default "
            "`ElmoVectorizer()`, `ElmoClassifier()`, `make_hybrid()`, TF-IDF and the "
            "`StackingVectorizer` rows; its differences from TF-IDF and all-MiniLM-L6-v2 "
            "on the same splits (mean, in points), and its fit and prediction seconds per "
            "1,000 documents on 2 CPU cores (each row as its own run measured it: the "
            "report's rows in the report, the stacked ones in `benchmarks/results/stacking.md`). "
            "Written by `python benchmarks/make_docs.py`.\n\n"
            + "\n".join(lines))


if __name__ == "__main__":
    print(block())
