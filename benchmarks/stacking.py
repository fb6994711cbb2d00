"""A hybrid that never loses to its own parts (issue 72): ``StackingVectorizer`` against
``make_hybrid`` and its own blocks, on the suite's splits and on 20 Newsgroups at
3,000 / 3,000 posts.

Every row is a vectorizer followed by the suite's classifier (dense features centred,
``LogisticRegressionCV`` over the suite's C grid, stratified 3-fold on the training
documents), on the splits of the committed report (``docs/report``: the suite's
defaults, seed 0), so that each row pairs split by split with the report's (TF-IDF,
the default ``ElmoVectorizer()``, ``make_hybrid()``, all-MiniLM-L6-v2), read from
``docs/report/results.json``, not run again. ``tfidf`` and ``elmo`` are run here too:
they must give the report's figures (a check that the splits are the same), and they
are the rows of the 20 Newsgroups sample of 3,000 / 3,000 posts
(``long_documents.py``'s), where the report has none.

Rows:

* ``tfidf``: ``TfidfVectorizer(sublinear_tf=True)``, the suite's TF-IDF row;
  ``tfidf-12``: word 1- and 2-grams, ``min_df=2``; ``char``: character 2- to 5-grams
  within word boundaries, sublinear, ``min_df=2``: the lexical blocks a user would tune;
* ``elmo``: ``ElmoVectorizer()`` (``en-base``, its defaults, the contextual bag);
  ``elmo-nobag``: ``bag_size=None`` (the pooled layers alone); ``elmo-bag4000``: a bag of
  4,000 codes;
* ``union``: ``make_hybrid()``'s construction with ``ElmoVectorizer()`` (one C for both
  blocks, the dense block at weight 0.2);
* ``stacked``: ``StackingVectorizer([tfidf, elmo])`` at its defaults (a logistic
  regression per block, C by log-loss, 5-fold cross-fitted scores, blended by one
  weight per block) with ``n_jobs=3``: its C searches and folds in worker processes,
  as the suite's classifier runs its own; ``stacked-scores``: ``combine="scores"``
  (both blocks' scores side by side, the design measured first);
  ``stacked-char``: ``[tfidf, char, elmo]``; ``stacked-12``: ``[tfidf-12, elmo]``;
  ``stacked-nobag`` / ``stacked-bag4000``: with that ELMo block; ``stacked-lexical``:
  ``[tfidf, char]``, no ELMo.

The ELMo features of a split are computed once per setting and shared by the rows
(looked up by text): a row's seconds are its own fit and prediction plus its blocks'
features (``seconds``: what a user's pipeline would take, measured on the machine
named in the results).

Writes ``benchmarks/results/stacking.{json,md}``; each run adds or replaces its rows.
Run: python benchmarks/stacking.py [ROW ...] [--tasks ag_news cr ... 20ng-3000]
     python benchmarks/stacking.py --rewrite
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
from _common import RESULTS, cpu_description, markdown_table, write_results
from card_facts import paired_cell, suite_row
import long_documents

import numpy as np
from joblib import cpu_count
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline

from elmofeat import ElmoVectorizer, StackingVectorizer
from elmofeat.datasets import get_data_home
from elmofeat.suite import BenchmarkSettings
from elmofeat.suite.centring import CentreDense
from elmofeat.suite.data import load_dataset
from elmofeat.suite.methods import classifier

NAME = "stacking"
ROOT = Path(__file__).resolve().parents[1]
SUITE_TASKS = ("ag_news", "r8", "cr", "mpqa", "20ng")
TASKS = (*SUITE_TASKS, "20ng-3000")
#: The report's rows each row is paired with.
REFERENCES = {"tfidf": "TF-IDF", "general-concat": "the default", "general-hybrid": "make_hybrid",
              "minilm": "MiniLM"}

ELMO_SETTINGS = {"elmo": {}, "elmo-nobag": {"bag_size": None}, "elmo-bag4000": {"bag_size": 4000}}


def _lexical(kind: str):
    if kind == "tfidf":
        return TfidfVectorizer(sublinear_tf=True)
    if kind == "tfidf-12":
        return TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=2)
    return TfidfVectorizer(sublinear_tf=True, analyzer="char_wb", ngram_range=(2, 5), min_df=2)


#: row -> its blocks: a lexical kind, or an ELMo setting
ROWS = {"tfidf": ["tfidf"], "tfidf-12": ["tfidf-12"], "char": ["char"],
        "elmo": ["elmo"], "elmo-nobag": ["elmo-nobag"], "elmo-bag4000": ["elmo-bag4000"],
        "union": ["union"],
        "stacked": ["tfidf", "elmo"], "stacked-scores": ["tfidf", "elmo"],
        "stacked-char": ["tfidf", "char", "elmo"],
        "stacked-12": ["tfidf-12", "elmo"], "stacked-nobag": ["tfidf", "elmo-nobag"],
        "stacked-bag4000": ["tfidf", "elmo-bag4000"], "stacked-lexical": ["tfidf", "char"]}
#: rows whose StackingVectorizer is not at its default combine
COMBINE = {"stacked-scores": "scores"}


class _Shared:
    """A table of features by text, shared (never copied) by the clones of a row."""

    def __init__(self, table: dict):
        self.table = table

    def __deepcopy__(self, memo):
        return self


class Lookup(TransformerMixin, BaseEstimator):
    """The ELMo features computed once for the split, by text."""

    def __init__(self, shared=None):
        self.shared = shared

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return np.vstack([self.shared.table[x] for x in X])

    def get_feature_names_out(self, input_features=None):
        width = len(next(iter(self.shared.table.values())))
        return np.asarray([f"elmo{i}" for i in range(width)], dtype=object)


class ElmoFeatures:
    """Each ELMo setting's features of one split, computed on first use: a table by text
    and the seconds the vectorizer took (fit on the training texts, transform both)."""

    def __init__(self, split, seed: int):
        self.split, self.seed, self.done = split, seed, {}

    def __call__(self, setting: str) -> tuple[_Shared, float]:
        if setting not in self.done:
            start = time.perf_counter()
            vectorizer = ElmoVectorizer("en-base", random_state=self.seed,
                                        **ELMO_SETTINGS[setting])
            train = vectorizer.fit_transform(self.split.X_train)
            test = vectorizer.transform(self.split.X_test)
            seconds = time.perf_counter() - start
            table = dict(zip(self.split.X_train, train))
            table.update(zip(self.split.X_test, test))
            self.done[setting] = (_Shared(table), seconds)
        return self.done[setting]


def _block(name: str, features: ElmoFeatures):
    """``(estimator, seconds of precomputed features)`` of one block."""
    if name in ELMO_SETTINGS:
        shared, seconds = features(name)
        return Lookup(shared), seconds
    return _lexical(name), 0.0


def _vectorizer(row: str, features: ElmoFeatures, seed: int):
    blocks = ROWS[row]
    if blocks == ["union"]:
        shared, seconds = features("elmo")
        return _union(Lookup(shared)), seconds
    built = [(name, *_block(name, features)) for name in blocks]
    seconds = sum(s for _, _, s in built)
    if len(built) == 1:
        return built[0][1], seconds
    # each block's C search in worker processes, as the suite's classifier runs its own
    stack = StackingVectorizer([(name, estimator) for name, estimator, _ in built],
                               combine=COMBINE.get(row, "blend"), n_jobs=min(3, cpu_count()),
                               random_state=seed)
    return stack, seconds


def _union(dense):
    """make_hybrid's union around any dense block."""
    from elmofeat import make_hybrid

    return make_hybrid(dense, tfidf=_lexical("tfidf"))


def splits_of(home: Path, tasks) -> dict:
    settings = BenchmarkSettings()
    splits = {task: load_dataset(task, settings, home).splits
              for task in tasks if task in SUITE_TASKS}
    if "20ng-3000" in tasks:
        splits["20ng-3000"] = [long_documents.newsgroups_split(home)]
    return splits


def score_rows(rows, splits: dict) -> dict:
    scores = {row: {} for row in rows}
    for task, task_splits in splits.items():
        per_row = {row: {"splits": [], "seconds": [], "C": []} for row in rows}
        for index, split in enumerate(task_splits):
            seed = BenchmarkSettings().seed + index  # the suite's seed of the split
            features = ElmoFeatures(split, seed)
            for row in rows:
                vectorizer, feature_seconds = _vectorizer(row, features, seed)
                start = time.perf_counter()
                model = make_pipeline(vectorizer, CentreDense(), classifier(None, seed))
                model.fit(split.X_train, split.y_train)
                accuracy = float(np.mean(model.predict(split.X_test) == split.y_test))
                record = per_row[row]
                record["splits"].append(accuracy)
                record["seconds"].append(round(time.perf_counter() - start + feature_seconds, 1))
                record["C"].append(float(np.ravel(model[-1].C_)[0]))
                print(f"  {task} {split.name} {row}: {accuracy:.4f} "
                      f"({record['seconds'][-1]} s)", flush=True)
        for row in rows:
            record = per_row[row]
            scores[row][task] = {"mean": float(np.mean(record["splits"])), **record}
    return scores


def _report_rows() -> dict:
    results = json.loads((ROOT / "docs" / "report" / "results.json").read_text())
    rows = {}
    for method in REFERENCES:
        row = suite_row(results, method)
        if row is not None:
            rows[method] = row
    return rows


def _same_splits(rows: dict, references: dict) -> str:
    """Whether the rows ``tfidf`` and ``elmo`` scored what the report's TF-IDF and
    default rows scored on every split: the check that the splits are the report's."""
    lines = []
    for mine, theirs in (("tfidf", "tfidf"), ("elmo", "general-concat")):
        if mine not in rows or theirs not in references:
            continue
        tasks = [t for t in rows[mine]["scores"] if t in references[theirs]["scores"]]
        differ = [t for t in tasks if not np.allclose(rows[mine]["scores"][t]["splits"],
                                                      references[theirs]["scores"][t]["splits"])]
        lines.append(f"`{mine}` against the report's `{theirs}` on {', '.join(tasks)}: "
                     + (f"differs on {', '.join(differ)}" if differ else "the same on every split"))
    return "\n\n".join(lines)


def write(rows: dict, environment: dict | None = None) -> None:
    references = _report_rows()
    tasks = [t for t in TASKS if any(t in r["scores"] for r in rows.values())]
    table = [[name, " + ".join(ROWS.get(name, [name])),
              *(f"{row['scores'][t]['mean']:.4f}" if t in row["scores"] else "" for t in tasks),
              *(f"{np.mean(row['scores'][t]['seconds']):.1f}" if t in row["scores"] else ""
                for t in tasks)]
             for name, row in rows.items()]
    table += [[f"report: {label}", method,
               *(f"{references[method]['scores'][t]['mean']:.4f}"
                 if t in references.get(method, {}).get("scores", {}) else "" for t in tasks),
               *([""] * len(tasks))]
              for method, label in REFERENCES.items() if method in references]
    others = {"tfidf": rows.get("tfidf"), "elmo": rows.get("elmo"),
              "report make_hybrid": references.get("general-hybrid"),
              "report MiniLM": references.get("minilm")}
    # the blend against the side-by-side scores it replaced
    pairs = [(name, label, other) for name, row in rows.items() if name not in ("tfidf", "elmo")
             for label, other in others.items() if other is not None]
    if "stacked" in rows and "stacked-scores" in rows:
        pairs.append(("stacked", "stacked-scores", rows["stacked-scores"]))
    paired = [[f"{name} minus {label}", *(
                  paired_cell(rows[name], other, t)
                  if t in rows[name]["scores"] and t in other["scores"] else "" for t in tasks)]
              for name, label, other in pairs]
    long_posts = _long_posts(rows)
    cost = [[f"{name} / elmo", *(
                f"{np.mean(row['scores'][t]['seconds']) / np.mean(rows['elmo']['scores'][t]['seconds']):.2f}x"
                if t in row["scores"] and t in rows.get("elmo", {}).get("scores", {}) else ""
                for t in tasks)]
            for name, row in rows.items() if name not in ("tfidf", "elmo")]
    markdown = (
        "## Stacked hybrid (issue 72)\n\n"
        "Each row's vectorizer, then the suite's classifier (dense features centred, C "
        "chosen by inner 3-fold CV over the suite's grid), on the splits of the committed "
        "report (`docs/report`; `20ng-3000`: 20 Newsgroups at 3,000 / 3,000 posts, "
        "`long_documents.py`'s sample). `report:` rows are the report's own, read from "
        "`docs/report/results.json`. Seconds per split: the row's fit and prediction, its "
        f"blocks' features included, on {cpu_description()}, fp32.\n\n"
        + markdown_table(["row", "blocks", *tasks, *(f"s {t}" for t in tasks)], table)
        + "\n\n" + _same_splits(rows, references)
        + "\n\nEach row minus another on the same splits, paired: in points, mean ± std "
        "(ddof=1) and the splits on which the row is above. A mean inside its spread is not "
        "a win.\n\n" + markdown_table(["rows", *tasks], paired)
        + "\n\nCost against the default's features (`elmo`, the same `ElmoVectorizer()` "
        "features): each row's mean seconds per split over `elmo`'s.\n\n"
        + markdown_table(["rows", *tasks], cost) + "\n" + long_posts)
    write_results(NAME, {"rows": rows}, markdown, environment=environment)


#: the lexical rows a user of long posts would tune, and the tasks of long posts
LEXICAL, LONG_TASKS = ("tfidf", "tfidf-12", "char"), ("20ng", "20ng-3000")


def _long_posts(rows: dict) -> str:
    """Each row on the long posts against the strongest lexical row alone on the same
    split (the best of ``LEXICAL`` there), in points; empty without lexical rows."""
    best = {}
    for task in LONG_TASKS:
        lexical = [(rows[r]["scores"][task]["mean"], r) for r in LEXICAL
                   if r in rows and task in rows[r]["scores"]]
        if lexical:
            best[task] = max(lexical)
    if not best:
        return ""
    table = [[name, *(f"{100 * (row['scores'][t]['mean'] - best[t][0]):+.2f}"
                      if t in best and t in row["scores"] else "" for t in LONG_TASKS)]
             for name, row in rows.items()]
    table.append(["(the strongest lexical row)",
                  *(f"{best[t][1]} {best[t][0]:.4f}" if t in best else "" for t in LONG_TASKS)])
    return ("\n## Long posts: each row against the strongest lexical row alone\n\n"
            "On 20 Newsgroups (one split each), each row minus the best of the lexical rows "
            f"({', '.join(f'`{r}`' for r in LEXICAL)}) on that sample, in points.\n\n"
            + markdown_table(["row", *LONG_TASKS], table) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="*", metavar="ROW",
                        help=f"rows to run, of {', '.join(ROWS)} (default: all)")
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--rewrite", action="store_true",
                        help="run nothing: write the markdown again from the stored rows")
    args = parser.parse_args()
    unknown = [row for row in args.rows if row not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}; choose from {', '.join(ROWS)}")
    path = RESULTS / f"{NAME}.json"
    stored = json.loads(path.read_text()) if path.is_file() else {"rows": {}}
    if args.rewrite:
        write(stored["rows"], stored.get("environment"))
        return
    rows = stored["rows"]
    names = args.rows or list(ROWS)
    # written after each task, so that a run stopped midway keeps the tasks it finished
    for task, task_splits in splits_of(Path(get_data_home(args.data_home)), args.tasks).items():
        scores = score_rows(names, {task: task_splits})
        for name in names:
            previous = rows.get(name, {}).get("scores", {})
            rows[name] = {"blocks": ROWS[name], "measured": {"cpu": cpu_description(),
                                                             "date": time.strftime("%Y-%m-%d")},
                          "scores": {**previous, **scores[name]}}
        write(rows)


if __name__ == "__main__":
    main()
