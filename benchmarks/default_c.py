"""How far ``LogisticRegression()``'s default ``C=1`` is from the best C on ElmoVectorizer's features.

The quickstart follows ``ElmoVectorizer()`` with a plain ``LogisticRegression``. Scaling
the features by ``s`` is the same model as multiplying ``C`` by ``s**2`` (the penalty
leaves the intercept alone), so one curve of accuracy against C per task says what any
feature scale would give at ``C=1``. This script draws that curve on the first suite
split of every task, for the two feature sources a user meets:

* ``en-base``: ``ElmoVectorizer(random_state=0)``, the shipped biLM, default mix and bag;
* ``own``: ``ElmoVectorizer(BiLM(random_state=0))``, a biLM pretrained on the split's
  training texts (the reference experiment's setting).

The features are taken unscaled (``feature_scale_`` 1, as before ``FEATURE_SCALE``), so
the curve's C is the C multiplier of the scale table: the library's ``FEATURE_SCALE``
is the scale whose multiplier had the smallest mean inner-CV shortfall over both
sources.

Per source and split: the inner 3-fold cross-validated accuracy of every C
(``LogisticRegressionCV``'s scores, training documents only: what a choice of scale may
use) and the test accuracy of ``LogisticRegression(C=c, max_iter=3000)`` fitted on all
training documents (features minus their training mean, the same model), and the test
accuracy and iterations of the quickstart's ``LogisticRegression(max_iter=2000)`` and
of a bare ``LogisticRegression()`` (100 iterations) on the features as they come.

The fitted biLMs and each finished (source, split) are kept under ``--work`` (default
``~/elmofeat-work/default_c``) so that a stopped run continues where it stopped.

Writes benchmarks/results/default_c.{json,md}.
Run: python benchmarks/default_c.py [--data-home DIR] [--work DIR] [--sources en-base own]
     [--time-search SOURCE:TASK ...]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

from _common import markdown_table, write_results

import joblib
import numpy as np

from elmofeat import BiLM, ElmoVectorizer
from elmofeat.datasets import get_data_home
from elmofeat.elmo.vectorizer import FEATURE_SCALE
from elmofeat.suite import BenchmarkSettings
from elmofeat.suite.data import load_dataset
from elmofeat.suite.methods import classifier

TASKS = ("ag_news", "r8", "cr", "mpqa", "20ng")
SOURCES = ("en-base", "own")
#: The suite's grid with one step below it: a smaller scale moves the best C down.
PENALTIES = (0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)


def features(source: str, split, work: Path, name: str):
    """Training and test features of ``source`` on ``split`` (the biLM kept in ``work``)."""
    if source == "en-base":
        vectorizer = ElmoVectorizer(random_state=0, cache_dir=None)
    else:
        cached = work / f"{name}-bilm.joblib"
        if cached.exists():
            bilm = joblib.load(cached)
        else:
            bilm = BiLM(random_state=0).fit(split.X_train)
            joblib.dump(bilm, cached)
        vectorizer = ElmoVectorizer(bilm, random_state=0, cache_dir=None)
    train = vectorizer.fit_transform(split.X_train)
    # unscaled: the curve's C is then the multiplier a feature scale gives C
    vectorizer.feature_scale_ = 1.0
    return train / FEATURE_SCALE, vectorizer.transform(split.X_test)


def curve(train, y_train, test, y_test) -> dict:
    """Inner-CV and test accuracy of every C of :data:`PENALTIES`, and the plain
    classifiers' test accuracy and iterations."""
    from joblib import Parallel, delayed
    from sklearn.linear_model import LogisticRegression

    mean = train.mean(axis=0, dtype=np.float64).astype(train.dtype)
    centred, centred_test = train - mean, test - mean
    search = classifier(None, seed=0).set_params(Cs=list(PENALTIES)).fit(centred, y_train)
    # per class (legacy): (folds, Cs); scikit-learn 1.9's: (folds, l1 ratios, Cs)
    scores = search.scores_
    folds = np.asarray(next(iter(scores.values())) if isinstance(scores, dict) else scores)
    cv = folds.reshape(folds.shape[0], -1, len(PENALTIES))[:, 0, :].mean(axis=0)

    def test_accuracy(C):
        model = LogisticRegression(C=C, max_iter=3000).fit(centred, y_train)
        return float(np.mean(model.predict(centred_test) == y_test))

    tests = Parallel(n_jobs=2)(delayed(test_accuracy)(C) for C in PENALTIES)
    plain = {}
    for label, max_iter in (("quickstart", 2000), ("bare", 100)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the bare one may stop before converging
            model = LogisticRegression(max_iter=max_iter).fit(train, y_train)
        plain[label] = {"accuracy": float(np.mean(model.predict(test) == y_test)),
                        "iterations": int(np.max(model.n_iter_)), "max_iter": max_iter}
    return {"cv": [float(v) for v in cv], "test": tests, "plain": plain,
            "rms_length": float(np.sqrt(np.mean(np.sum(np.square(centred, dtype=np.float64),
                                                       axis=1))))}


def search_seconds(train, y_train) -> dict:
    """Seconds of the suite's C search (``elmofeat.suite.methods.classifier``) on the
    centred features unscaled and at ``FEATURE_SCALE``, alternated twice (the best of
    two each), with the C each chose and the solver's most iterations."""
    centred = train - train.mean(axis=0, dtype=np.float64).astype(train.dtype)
    timed = {}
    for scale in (1.0, FEATURE_SCALE) * 2:
        begin = time.perf_counter()
        search = classifier(None, seed=0).fit(centred * np.float32(scale), y_train)
        seconds = time.perf_counter() - begin
        key = "unscaled" if scale == 1.0 else "scaled"
        best = min(seconds, timed.get(key, {}).get("seconds", np.inf))
        timed[key] = {"seconds": best, "C": float(np.ravel(search.C_)[0]),
                      "iterations": int(np.max(search.n_iter_))}
    return timed


def shortfalls(entries: dict) -> list[list]:
    """Rows of the scale table: for each multiplier of C (a feature scale ``sqrt(m)``),
    the shortfall of ``C=1`` from the best C, mean / worst over the tasks: in test
    accuracy (from the CV-chosen C's) per source, and in inner-CV accuracy (training
    documents only: what a choice of scale may use) over both sources."""
    def cell(gaps):
        return f"{np.mean(gaps):.2f} / {np.max(gaps):.2f}" if gaps else ""

    rows = []
    for index, multiplier in enumerate(PENALTIES):
        cells, cv = [f"{multiplier:g}", f"{np.sqrt(multiplier):.3g}"], []
        for source in SOURCES:
            found = [entries[s, t] for s, t in entries if s == source]
            cells.append(cell([100 * (e["test"][int(np.argmax(e["cv"]))] - e["test"][index])
                               for e in found]))
            cv += [100 * (max(e["cv"]) - e["cv"][index]) for e in found]
        rows.append([*cells, cell(cv)])
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--work", default=str(Path.home() / "elmofeat-work" / "default_c"))
    parser.add_argument("--sources", nargs="+", default=list(SOURCES), choices=SOURCES)
    parser.add_argument("--time-search", nargs="*", default=[], metavar="SOURCE:TASK",
                        help="time the suite's C search on these stored features, unscaled "
                             "and scaled (alone on the machine: it is a timing)")
    args = parser.parse_args()
    home, work = Path(get_data_home(args.data_home)), Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    settings = BenchmarkSettings()
    entries, splits = {}, {}
    for source in SOURCES:  # en-base on every task first: it pretrains nothing
        for task in TASKS:
            stored = work / f"{source}-{task}.json"
            if stored.exists():
                entries[source, task] = json.loads(stored.read_text())
                continue
            if source not in args.sources:
                continue
            if task not in splits:
                splits[task] = load_dataset(task, settings, home).splits[0]
            split = splits[task]
            print(f"{source} on {task} ({split.name})", flush=True)
            begin = time.perf_counter()
            cached = work / f"{source}-{task}-features.npz"
            if cached.exists():
                with np.load(cached) as stored_features:
                    train, test = stored_features["train"], stored_features["test"]
            else:
                train, test = features(source, split, work, task)
                np.savez(cached, train=train, test=test)
            entry = curve(train, np.asarray(split.y_train), test, np.asarray(split.y_test))
            entry.update(split=split.name, n_train=len(split.X_train), n_test=len(split.X_test),
                         n_features=int(train.shape[1]),
                         seconds=time.perf_counter() - begin)
            stored.write_text(json.dumps(entry))
            entries[source, task] = entry

    for name in args.time_search:
        source, task = name.split(":")
        stored = work / f"{source}-{task}.json"
        with np.load(work / f"{source}-{task}-features.npz") as cached:
            train = cached["train"]
        split = load_dataset(task, settings, home).splits[0]
        print(f"timing the C search on {source} {task}", flush=True)
        entries[source, task]["search"] = search_seconds(train, np.asarray(split.y_train))
        stored.write_text(json.dumps(entries[source, task]))

    detail = []
    for (source, task), entry in entries.items():
        best = int(np.argmax(entry["cv"]))
        one = PENALTIES.index(1.0)
        detail.append([source, task, f"{PENALTIES[best]:g}", f"{entry['test'][best]:.4f}",
                       f"{entry['test'][one]:.4f}",
                       f"{entry['plain']['quickstart']['accuracy']:.4f} "
                       f"({entry['plain']['quickstart']['iterations']})",
                       f"{entry['plain']['bare']['accuracy']:.4f} "
                       f"({entry['plain']['bare']['iterations']})",
                       f"{entry['rms_length']:.3g}"])
    curves = [[source, task, *(f"{c:.4f}" for c in entry["test"])]
              for (source, task), entry in entries.items()]
    timings = [[source, task, *(f"{entry['search'][k]['seconds']:.1f} (C {entry['search'][k]['C']:g}, "
                                f"{entry['search'][k]['iterations']} iterations)"
                                for k in ("unscaled", "scaled"))]
               for (source, task), entry in entries.items() if "search" in entry]
    markdown = (
        "## C=1 on ElmoVectorizer's features\n\n"
        "First suite split of each task. Best C: chosen by inner 3-fold CV on the "
        "training documents from " + ", ".join(f"{c:g}" for c in PENALTIES) + "; test "
        "accuracy at it and at C=1 (features unscaled, as before `FEATURE_SCALE`, minus "
        "their training mean; max_iter=3000); "
        "the quickstart's `LogisticRegression(max_iter=2000)` and a bare "
        "`LogisticRegression()` on the features as they come (iterations used); the "
        "features' root-mean-square row length after centring.\n\n"
        + markdown_table(["source", "task", "best C", "at best C", "at C=1",
                          "quickstart (iterations)", "bare (iterations)", "rms length"],
                         detail)
        + "\n\nFeatures scaled by s are C multiplied by s²: accuracy at C=1 after "
        "such a scale, in points below the best C's, mean / worst over the tasks: test "
        "accuracy against the CV-chosen C's, per source, and inner-CV accuracy against "
        "its best, over both sources. `ElmoVectorizer`'s `FEATURE_SCALE` is "
        f"{FEATURE_SCALE:.4g}.\n\n"
        + markdown_table(["C multiplier", "feature scale", *(f"{s}: test" for s in SOURCES),
                          "inner CV, both"], shortfalls(entries))
        + "\n\nTest accuracy by C:\n\n"
        + markdown_table(["source", "task", *(f"{c:g}" for c in PENALTIES)], curves) + "\n"
        + ("\nSeconds of the suite's C search (`LogisticRegressionCV` over 0.001 to 100, "
           "3 folds in parallel, on the centred training features; the best of two runs, "
           "alternated), with the C it chose and the solver's most iterations: the "
           "features unscaled and at `FEATURE_SCALE`. The same models, as C times the "
           "squared scale; large C, weak regularisation, is where the solver iterates "
           "longest.\n\n"
           + markdown_table(["source", "task", "unscaled", "scaled"], timings) + "\n"
           if timings else ""))
    write_results("default_c", {"penalties": list(PENALTIES),
                                "entries": [{"source": s, "task": t, **e}
                                            for (s, t), e in entries.items()]}, markdown)


if __name__ == "__main__":
    main()
