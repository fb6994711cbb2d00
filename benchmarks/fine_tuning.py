"""Labels that shape the biLM (issue 70), first measurements: ULMFiT-style fine-tuning of
en-base (:func:`elmofeat.bilm.finetune.fine_tune`) as a classifier, on the suite's tasks
and splits.

Every row is scored on ``benchmarks/distillation.py``'s splits (CR and MPQA stratified
5-fold, AG News one stratified 80/20 split of its 7,600 rows, R8 its standard split, 20
Newsgroups the suite's seeded 600 / 600 sample), so that it pairs with that file's
reference rows (TF-IDF, ``ElmoVectorizer()`` on en-base, all-MiniLM-L6-v2, each with
LogisticRegression's C searched). Each split: ``fine_tune(en-base, X_train, y_train,
...)``, then the accuracy of its predictions on ``X_test``. Rows:

* ``probe``: the head alone on the frozen biLM (the linear probe on concat pooling,
  standardised, C chosen by inner 3-fold CV), what fine-tuning starts from;
* ``ft``: ``fine_tune``'s defaults (3 epochs, gradual unfreezing, discriminative rates
  with decay 2.6, slanted triangular schedule at 1e-3, the best held-out epoch);
* ``vectorizer``: ``ElmoVectorizer("en-base", fine_tune_epochs=3)``'s defaults (the
  library's recipe: every row trains, the last epoch kept), its ``fit_transform`` on the
  training texts and labels (cross-fitted over 5 folds: 6 fine-tunings per split) then
  LogisticRegression with C searched on those features, scored on ``transform``'s
  features of the test texts: the pipeline a user builds;
* ``vectorizer-in-sample``: the same, but the classifier learns from ``fit(X_train,
  y_train).transform(X_train)``: features of the training texts from the model
  fine-tuned on their own labels (an ablation of the cross-fitting, which a Pipeline
  does not do: its ``fit`` calls ``fit_transform``);
* ``classifier``: ``ElmoClassifier("en-base")``'s defaults: the same fine-tuning, then
  its head, a logistic regression (C searched) on the fine-tuned biLM's
  ``ElmoVectorizer`` features of the training texts (in-sample, as
  ``vectorizer-in-sample``; measured before 2026-11-29 its head was the fine-tuning's
  own, on first-window concat pooling);
* ``classifier-all``, ``-e1``, ``-e5``, ``-adapted``: its ablations: every layer
  trained from the first step (no gradual unfreezing); 1 or 5 epochs instead of 3; one
  epoch of LM adaptation on the split's training texts first (ULMFiT's second stage).
  The head alone on the frozen biLM is the ``en-base`` reference.

Training reads each text's first 64 tokens (en-base's window); prediction reads whole
texts. No LM adaptation on the split's texts first, but in ``classifier-adapted``.
``fit s``: the row's own fine-tuning (the in-process cache is emptied before each
split, so no row reuses another's model).

Writes ``benchmarks/results/fine_tuning.{json,md}``; each run adds or replaces its rows.
Run: python benchmarks/fine_tuning.py [ROW ...] [--tasks cr mpqa ...] [--data-home DIR]
     python benchmarks/fine_tuning.py --rewrite   (the markdown again, nothing run)
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
from _common import RESULTS, cpu_description, markdown_table, write_results
from card_facts import paired_cell
import distillation

import numpy as np

from elmofeat import BiLM, ElmoClassifier, ElmoVectorizer
from elmofeat.bilm.finetune import fine_tune
from elmofeat.datasets import get_data_home
from elmofeat.elmo.fine_tuning import FINE_TUNED

#: ``fine_tune`` called directly (its own settings), then the estimators at their
#: defaults: the vectorizer's cross-fitted features with LogisticRegression (C searched),
#: and the classifier.
ROWS = {"probe": {"learning_rate": 0.0, "epochs": 1},
        "ft": {},
        "vectorizer": {"estimator": "ElmoVectorizer", "fine_tune_epochs": 3},
        "vectorizer-in-sample": {"estimator": "ElmoVectorizer", "fine_tune_epochs": 3,
                                 "cross_fit": False},
        "classifier": {"estimator": "ElmoClassifier"},
        # ablations of the classifier's recipe (the head alone on the frozen biLM is the
        # en-base reference: ElmoVectorizer() + LogisticRegression, C searched)
        "classifier-all": {"estimator": "ElmoClassifier", "gradual_unfreezing": False},
        "classifier-e1": {"estimator": "ElmoClassifier", "epochs": 1},
        "classifier-e5": {"estimator": "ElmoClassifier", "epochs": 5},
        "classifier-adapted": {"estimator": "ElmoClassifier", "adapt_epochs": 1}}
REFERENCES = ("tfidf", "en-base", "minilm")
BASE = "en-base"
NAME = "fine_tuning"


def _run_split(settings: dict, split, base) -> tuple[float, float, int | None]:
    """``(accuracy, fit seconds, best epoch)`` of one row on one split."""
    settings = dict(settings)
    estimator = settings.pop("estimator", None)
    FINE_TUNED.clear()  # each row pays for its own fine-tuning
    start = time.perf_counter()
    if estimator == "ElmoVectorizer":  # cross-fitted features, C searched on them
        cross_fit = settings.pop("cross_fit", True)
        vectorizer = ElmoVectorizer(BASE, cache_dir=None, random_state=0, **settings)
        train = (vectorizer.fit_transform(split.X_train, split.y_train) if cross_fit else
                 vectorizer.fit(split.X_train, split.y_train).transform(split.X_train))
        seconds = time.perf_counter() - start
        accuracy = distillation.searched_accuracy(train, split.y_train,
                                                  vectorizer.transform(split.X_test),
                                                  split.y_test)[0]
        return accuracy, seconds, None
    if estimator == "ElmoClassifier":
        # no disk cache: an adaptation is paid for, never read from an earlier run
        model = ElmoClassifier(BASE, cache_dir=None, random_state=0,
                               **settings).fit(split.X_train, split.y_train)
        epoch = model.best_epoch_
    else:
        model = fine_tune(base, split.X_train, split.y_train, random_state=0, **settings)
        epoch = model.best_epoch
    seconds = time.perf_counter() - start
    return float(np.mean(model.predict(split.X_test) == split.y_test)), seconds, epoch


def score_row(settings: dict, splits: dict, base) -> dict:
    scores = {}
    for task, task_splits in splits.items():
        accuracies, seconds, epochs = [], [], []
        for split in task_splits:
            accuracy, fit_seconds, epoch = _run_split(settings, split, base)
            accuracies.append(accuracy)
            seconds.append(round(fit_seconds, 1))
            epochs.append(epoch)
        scores[task] = {"mean": float(np.mean(accuracies)), "splits": accuracies,
                        "fit_seconds": seconds, "best_epoch": epochs}
        print(f"  {task}: {scores[task]['mean']:.4f} ({seconds} s, best epochs {epochs})",
              flush=True)
    return scores


def write(rows: dict, environment: dict | None = None) -> None:
    references = json.loads((RESULTS / "distillation.json").read_text())["rows"]
    tasks = [t for t in distillation.TASKS if any(t in r["scores"] for r in rows.values())]
    table = [[name, json.dumps(row["settings"]) if row["settings"] else "defaults",
              *(f"{row['scores'][t]['mean']:.4f}" if t in row["scores"] else "" for t in tasks),
              *(f"{np.mean(row['scores'][t]['fit_seconds']):.1f}" if t in row["scores"] else ""
                for t in tasks)]
             for name, row in rows.items()]
    table += [[name, "distillation.json's row", *(f"{references[name]['scores'][t]['mean']:.4f}"
                                                  for t in tasks), *([""] * len(tasks))]
              for name in REFERENCES]
    paired = [[f"{name} minus {ref}", *(paired_cell(row, references[ref], t)
                                        if t in row["scores"] else "" for t in tasks)]
              for name, row in rows.items() for ref in REFERENCES]
    # an ablation against the estimator it ablates, on the same splits
    paired += [[f"{name} minus classifier", *(paired_cell(row, rows["classifier"], t)
                                              if t in row["scores"]
                                              and t in rows["classifier"]["scores"] else ""
                                              for t in tasks)]
               for name, row in rows.items()
               if name.startswith("classifier-") and "classifier" in rows]
    markdown = (
        "## Fine-tuning en-base on the labels (issue 70)\n\n"
        "`elmofeat.bilm.finetune.fine_tune` on each split's training texts, its predictions "
        "scored on the split's test texts; the splits of `benchmarks/distillation.py` (CR "
        "and MPQA stratified 5-fold, AG News one 80/20 split, R8 its standard split, 20 "
        "Newsgroups the suite's 600 / 600 sample), so that each row pairs with that file's "
        "references (C searched). Training reads each text's first 64 tokens. Rows "
        "`vectorizer` (`ElmoVectorizer(fine_tune_epochs=3)`, its cross-fitted "
        "`fit_transform` then LogisticRegression with C searched) and `classifier` "
        "(`ElmoClassifier()`: its head a logistic regression, C searched, on the "
        "fine-tuned biLM's `ElmoVectorizer` features) are the library's estimators at "
        "their defaults, `classifier-*` its ablations; `classifier-own-head` is "
        "`ElmoClassifier()` as it was before 2026-11-29 (the fine-tuning's own head on "
        "first-window concat pooling), kept for comparison; `probe` and `ft` "
        "call `fine_tune` with the settings shown. `fit s`: seconds per split of the "
        "row's fine-tuning (`fine_tune` or `ElmoClassifier.fit`, the probe's frozen "
        "features included; for `vectorizer`, its `fit_transform`: 6 fine-tunings), on "
        f"{os.cpu_count()} CPUs, {cpu_description()}, fp32.\n\n"
        + markdown_table(["row", "settings", *tasks, *(f"fit s {t}" for t in tasks)], table)
        + "\n\nEach row minus a reference on the same splits, paired: the difference in "
        "accuracy split by split, in points, mean ± std (ddof=1) and the splits on which "
        "the row is above. A mean inside its spread is not a win.\n\n"
        + markdown_table(["rows", *tasks], paired) + "\n")
    write_results(NAME, {"rows": rows}, markdown, environment=environment)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="*", metavar="ROW",
                        help=f"rows to run, of {', '.join(ROWS)} (default: all)")
    parser.add_argument("--tasks", nargs="+", default=list(distillation.TASKS),
                        choices=list(distillation.TASKS))
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--rewrite", action="store_true",
                        help="run nothing: write the markdown again from the stored rows")
    args = parser.parse_args()
    unknown = [row for row in args.rows if row not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}; choose from {', '.join(ROWS)}")
    path = RESULTS / f"{NAME}.json"
    if args.rewrite:
        stored = json.loads(path.read_text())
        write(stored["rows"], stored["environment"])
        return
    splits = {t: s for t, s in distillation.splits_of(Path(get_data_home(args.data_home))).items()
              if t in args.tasks}
    rows = json.loads(path.read_text())["rows"] if path.is_file() else {}
    base = BiLM.from_pretrained(BASE)
    for name in args.rows or list(ROWS):
        print(f"== {name}", flush=True)
        previous = rows.get(name, {}).get("scores", {})
        rows[name] = {"settings": ROWS[name], "measured": {"cpu": cpu_description(),
                                                           "date": time.strftime("%Y-%m-%d")},
                      "scores": {**previous, **score_row(ROWS[name], splits, base)}}
        write(rows)


if __name__ == "__main__":
    main()
