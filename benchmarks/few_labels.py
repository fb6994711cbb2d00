"""Few labels, many texts: a learning curve on AG News and CR.

For every fold of the suite's splits (the same folds as ``elmofeat benchmark``), every
text of the training part is available unlabelled: the biLM (and SVD) learn from all
of them, and the classifier sees the labels of only 50, 200, 1,000 or all training
documents (a stratified draw, the same for every method). TF-IDF + LR and GloVe mean +
LR get the same labels. Rows:

* TF-IDF + LR, C=1 and C=10 (the labelled documents only: TF-IDF has no use for the rest);
* GloVe 6B 50d mean + LR;
* SVDVectorizer fitted on every training text, LR on the labelled ones;
* ElmoVectorizer, frozen / concatenated / trainable / mlp, with a biLM pretrained on every training
  text (defaults), LR on the labelled ones;
* the same frozen features with ``SelfTrainingClassifier(LogisticRegression())``, fed
  every training text with ``y = -1`` for the unlabelled ones;
* TF-IDF, SVD and the frozen and trainable mixes followed by ``LogisticRegressionCV``:
  the classifier's C chosen by stratified 3-fold cross-validation on the labelled
  documents alone (a dense feature's scale acts as C, and the C that suits 50 labels
  is not the one that suits 3,800; the other rows keep the library's C=1 or 10);
* a diagnostic: the frozen mix's token layer alone (``mix_weights=(1, 0, 0)``), the
  biLM's word embedding, which starts from (and keeps) the same PPMI + SVD vectors;
* ELMo + GloVe, frozen and trainable mixes: a second biLM pretrained on every training
  text with ``pretrained_vectors=<GloVe 6B 50d>`` (its token layer starts from GloVe).

* each shipped general model (``en-small``: rows ``general-*``; ``en-base``, the
  default: rows ``base-*``; nothing pretrained): frozen, concatenated, trainable and MLP
  mixes, the frozen, concatenated and trainable mixes with C searched, the frozen mix
  with self-training, and the frozen mix of a copy adapted (1 epoch) to every training
  text.

* fine-tuning on the labelled texts (issue 70), ``en-base``: ``base-finetuned-cv``
  (``ElmoVectorizer(fine_tune_epochs=3)`` fitted on every training text with ``y = -1``
  for the unlabelled ones, its cross-fitted features of the labelled rows, C searched)
  and ``base-classifier`` (``ElmoClassifier`` on the labelled texts alone).

Writes benchmarks/results/few_labels.{json,md}; ``--rows`` runs some rows only,
``--sizes`` some numbers of labels only, and with ``--add`` joins them to the rows
already in the results file (same folds; the file keeps the first run's machine and
names each addition's); ``--rewrite`` runs nothing and writes the markdown again.
Run: python benchmarks/few_labels.py [--datasets ag_news cr] [--folds 5] [--data-home DIR]
     [--rows ROW ...] [--sizes 200 ...] [--add | --rewrite]
"""

from __future__ import annotations

import argparse
import time

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.semi_supervised import SelfTrainingClassifier
from threadpoolctl import threadpool_limits

from elmofeat import BiLM, ElmoClassifier, ElmoVectorizer, SVDVectorizer
from elmofeat import WordVectorsVectorizer
from elmofeat.suite import BenchmarkSettings
from elmofeat.suite.data import load_dataset
from elmofeat.suite.run import load_glove
from elmofeat.datasets import get_data_home

SIZES = (50, 200, 1000, None)  # None: every training label
#: The general models shipped with elmofeat, by the prefix of their rows.
SHIPPED = {"general": "en-small", "base": "en-base"}
#: The rows of a shipped model (after its prefix), and how the table names them.
SHIPPED_ROWS = {"frozen": "frozen", "concat": "concatenated", "trainable": "trainable",
                "mlp": "MLP", "frozen-cv": "frozen, C searched",
                "concat-cv": "concatenated, C searched", "trainable-cv": "trainable, C searched",
                "frozen-selftraining": "frozen + SelfTrainingClassifier (all texts)",
                "adapted-frozen": "adapted to all texts (1 epoch), frozen"}
#: Fine-tuning on the labelled texts (issue 70), en-base: the vectorizer fitted on every
#: training text with y = -1 for the unlabelled ones (it fine-tunes on the labelled,
#: learns its bag on all, cross-fits the labelled rows), LR with C searched on the
#: labelled rows; and ElmoClassifier on the labelled texts alone.
FINE_TUNED_ROWS = {"base-finetuned-cv": "ELMo en-base fine-tuned (3 epochs), C searched",
                   "base-classifier": "ElmoClassifier (en-base, labelled texts)"}
ROWS = ("tfidf", "tfidf-c10", "tfidf-cv", "glove", "svd", "svd-cv", "elmo-frozen",
        "elmo-concat", "elmo-trainable", "elmo-mlp", "elmo-frozen-selftraining", "elmo-frozen-cv",
        "elmo-trainable-cv", "elmo-token", "elmo-glove-frozen", "elmo-glove-trainable",
        *(f"{prefix}-{row}" for prefix in SHIPPED for row in SHIPPED_ROWS), *FINE_TUNED_ROWS)
DEFAULT_ELMO = tuple(r for r in ROWS if r.startswith("elmo-") and not r.startswith("elmo-glove")
                     and r != "elmo-token")
GLOVE_ELMO = ("elmo-glove-frozen", "elmo-glove-trainable")
TFIDF_ROWS = ("tfidf", "tfidf-c10", "tfidf-cv")
# C searched on the labelled documents: 1e-3 ... 1e3, three per decade.
CS = np.logspace(-3, 3, 19)
LABELS = {"tfidf": "TF-IDF + LR", "tfidf-c10": "TF-IDF + LR (C=10)", "glove": "GloVe 50d mean",
          "svd": "SVDVectorizer (all texts)", "elmo-frozen": "ELMo frozen (all texts)",
          "elmo-concat": "ELMo concatenated (all texts)",
          "elmo-trainable": "ELMo trainable (all texts)", "elmo-mlp": "ELMo MLP (all texts)",
          "elmo-frozen-selftraining": "ELMo frozen + SelfTrainingClassifier (all texts)",
          "tfidf-cv": "TF-IDF + LR (C searched)", "svd-cv": "SVDVectorizer (all texts), C searched",
          "elmo-frozen-cv": "ELMo frozen (all texts), C searched",
          "elmo-trainable-cv": "ELMo trainable (all texts), C searched",
          "elmo-token": "ELMo token layer alone (all texts; diagnostic)",
          "elmo-glove-frozen": "ELMo + GloVe frozen (all texts)",
          "elmo-glove-trainable": "ELMo + GloVe trainable (all texts)",
          **{f"{prefix}-{row}": f"ELMo {model} {label}" for prefix, model in SHIPPED.items()
             for row, label in SHIPPED_ROWS.items()}, **FINE_TUNED_ROWS}

def _labelled(y, size, seed):
    """Indices of a stratified draw of ``size`` labelled documents (all if None)."""
    if size is None or size >= len(y):
        return np.arange(len(y))
    chosen, _ = train_test_split(np.arange(len(y)), train_size=size, stratify=y,
                                 random_state=seed)
    return np.sort(chosen)


def _score(model, X_fit, y_fit, X_test, y_test):
    with threadpool_limits(1, user_api="blas"):
        model.fit(X_fit, y_fit)
        return float(np.mean(model.predict(X_test) == y_test))


def _tuned(seed):
    """LogisticRegression whose C is chosen on the labelled documents it is fitted on."""
    return LogisticRegressionCV(Cs=CS, cv=StratifiedKFold(3, shuffle=True, random_state=seed),
                                l1_ratios=(0.0,), scoring="accuracy", max_iter=3000,
                                use_legacy_attributes=False)


class _Shared:
    """What the rows of a fold share, built when a row first needs it: the biLMs
    pretrained on every training text, SVD fitted on them."""

    def __init__(self, X_train, seed, glove):
        self.X_train, self.seed, self.glove = X_train, seed, glove
        self._built, self.pretrain_seconds = {}, None

    def get(self, name):
        if name not in self._built:
            start = time.perf_counter()
            if name == "bilm":  # every training text, no label
                self._built[name] = BiLM(random_state=self.seed).fit(self.X_train)
                self.pretrain_seconds = time.perf_counter() - start
            elif name == "glove_bilm":
                self._built[name] = BiLM(random_state=self.seed,
                                         pretrained_vectors=self.glove).fit(self.X_train)
            elif name == "svd":
                self._built[name] = SVDVectorizer(random_state=self.seed).fit(self.X_train)
        return self._built[name]


def _elmo(shared, bilm, mix, y_l, seed, **params):
    cv = min(5, int(np.bincount(y_l).min())) if mix != "frozen" else 5
    source = shared.get(bilm) if bilm in ("bilm", "glove_bilm") else bilm
    return ElmoVectorizer(source, layer_mix=mix, cache_dir=None, random_state=seed, cv=cv,
                          **params)


def _row_model(row, shared, y_l, seed, glove):
    """``features -> classifier`` of one row (the self-training row is built apart)."""
    lr = LogisticRegression(max_iter=3000)
    if row in ("tfidf", "tfidf-c10", "tfidf-cv"):
        clf = {"tfidf": lr, "tfidf-c10": LogisticRegression(max_iter=3000, C=10),
               "tfidf-cv": _tuned(seed)}[row]
        return make_pipeline(TfidfVectorizer(sublinear_tf=True), clf)
    if row == "glove":
        return make_pipeline(WordVectorsVectorizer(glove), lr)
    if row in ("svd", "svd-cv"):  # fitted on every training text, not refitted
        return make_pipeline(FrozenEstimator(shared.get("svd")), _tuned(seed) if row == "svd-cv" else lr)
    if row == "elmo-token":  # the frozen mix's token layer alone (diagnostic)
        return make_pipeline(_elmo(shared, "bilm", "frozen", y_l, seed, mix_weights=(1, 0, 0)), lr)
    family, _, rest = row.partition("-")
    if family in SHIPPED:
        bilm, name = SHIPPED[family], rest
        params = {}
        if name.startswith("adapted-"):
            name, params = name[len("adapted-"):], {"adapt_epochs": 1}
    elif row.startswith("elmo-glove-"):
        bilm, name, params = "glove_bilm", row[len("elmo-glove-"):], {}
    else:
        bilm, name, params = "bilm", rest, {}
    mix, _, tuned = name.partition("-")
    return make_pipeline(_elmo(shared, bilm, mix, y_l, seed, **params),
                         _tuned(seed) if tuned == "cv" else lr)


def _fine_tuned_score(row, X_train, y_train, chosen, seed, X_test, y_test) -> float:
    """A row of :data:`FINE_TUNED_ROWS` on one draw of labelled texts."""
    if row == "base-classifier":
        model = ElmoClassifier("en-base", random_state=seed)
        return _score(model, [X_train[i] for i in chosen], y_train[chosen], X_test, y_test)
    partial = np.full(len(y_train), -1)
    partial[chosen] = y_train[chosen]
    cv = min(5, int(np.unique(y_train[chosen], return_counts=True)[1].min()))
    vectorizer = ElmoVectorizer("en-base", fine_tune_epochs=3, cv=cv, cache_dir=None,
                                random_state=seed)
    features = vectorizer.fit_transform(X_train, partial)  # cross-fitted labelled rows
    with threadpool_limits(1, user_api="blas"):
        model = _tuned(seed).fit(features[chosen], y_train[chosen])
        return float(np.mean(model.predict(vectorizer.transform(X_test)) == y_test))


def run_split(split, seed, glove, rows=ROWS, sizes=SIZES):
    X_train, y_train = split.X_train, np.asarray(split.y_train)
    shared = _Shared(X_train, seed, glove)
    out = {"scores": {}}
    for size in sizes:
        chosen = _labelled(y_train, size, seed)
        X_l, y_l = [X_train[i] for i in chosen], y_train[chosen]
        scores = {}
        for row in rows:
            if row in FINE_TUNED_ROWS:
                scores[row] = _fine_tuned_score(row, X_train, y_train, chosen, seed,
                                                split.X_test, split.y_test)
            elif row.endswith("-selftraining"):  # every training text, y = -1 unlabelled
                partial = np.full(len(y_train), -1)
                partial[chosen] = y_l
                bilm = SHIPPED.get(row.partition("-")[0], "bilm")
                model = make_pipeline(_elmo(shared, bilm, "frozen", y_l, seed),
                                      SelfTrainingClassifier(LogisticRegression(max_iter=3000)))
                scores[row] = _score(model, X_train, partial, split.X_test, split.y_test)
            else:
                scores[row] = _score(_row_model(row, shared, y_l, seed, glove),
                                     X_l, y_l, split.X_test, split.y_test)
        label = "all" if size is None else str(size)
        out["scores"][label] = scores
        print(f"  {label} labels: " + ", ".join(f"{k} {v:.3f}" for k, v in scores.items()),
              flush=True)
    if shared.pretrain_seconds is not None:
        out["pretrain_seconds"] = shared.pretrain_seconds
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["ag_news", "cr"], choices=["ag_news", "cr"])
    parser.add_argument("--folds", type=int, default=None,
                        help="folds (default: the suite's: AG News 3, CR 5)")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS),
                        help="rows to run (default: all)")
    parser.add_argument("--sizes", nargs="+", default=None,
                        help="numbers of labels to run (default: 50 200 1000 all)")
    parser.add_argument("--add", action="store_true",
                        help="add the rows run to the existing results (same folds)")
    parser.add_argument("--rewrite", action="store_true",
                        help="run nothing: write the markdown again from the stored results")
    args = parser.parse_args()
    home = get_data_home(args.data_home)
    rows_run = tuple(r for r in ROWS if r in args.rows)
    sizes = SIZES if args.sizes is None else tuple(
        None if size == "all" else int(size) for size in args.sizes)
    previous, stored = None, None
    if args.add or args.rewrite:
        import json

        from _common import RESULTS, environment

        stored = json.loads((RESULTS / "few_labels.json").read_text())
        previous = stored["results"]
        added = stored.get("added", [])
        if args.add:  # who measured what: the first run's machine, then each addition's
            added = [*added, {"rows": list(rows_run), "sizes": list(args.sizes or ["all"]),
                              "environment": environment()}]
    settings = BenchmarkSettings(datasets=tuple(args.datasets), folds=args.folds)
    datasets = [load_dataset(key, settings, home) for key in settings.datasets]
    glove = load_glove(home, datasets)
    results, sections = {}, []
    for dataset in datasets:
        splits = []
        for index, split in enumerate(dataset.splits):
            if args.rewrite:
                splits.append(previous[dataset.key][index])
                continue
            print(f"{dataset.title} {split.name}", flush=True)
            entry = run_split(split, settings.seed + index, glove, rows_run, sizes)
            if previous is not None:  # the earlier rows of the same fold, then these
                old = previous[dataset.key][index]
                for size, scores in entry["scores"].items():
                    old["scores"][size].update(scores)
                entry = old
            splits.append(entry)
        results[dataset.key] = splits
        columns = list(splits[0]["scores"])

        def present(row, size):  # a row may be run at some sizes only (--sizes)
            return all(row in sp["scores"][size] for sp in splits)

        rows = []
        for row in (r for r in ROWS if any(present(r, size) for size in columns)):
            cells = []
            for size in columns:
                values = [s["scores"][size][row] for s in splits] if present(row, size) else []
                cells.append(f"{np.mean(values):.4f} ± {np.std(values):.4f}" if values else "")
            rows.append([LABELS[row], *cells])
        n_train = len(dataset.splits[0].X_train)
        header = ["method", *[f"{s} labels" if s != "all" else f"all ({n_train:,})"
                              for s in columns]]

        def best(family, size):
            return max(np.mean([sp["scores"][size][r] for sp in splits]) for r in family
                       if present(r, size))

        def gaps(family):
            family = [r for r in family if present(r, columns[0])]
            if not family:
                return "not run"
            return ", ".join(f"{s}: {best(family, s) - best(TFIDF_ROWS, s):+.4f}"
                             for s in columns)

        def fine_tuned_gaps():
            run = [s for s in columns if any(present(r, s) for r in FINE_TUNED_ROWS)]
            return ", ".join(f"{s}: {best(FINE_TUNED_ROWS, s) - best(TFIDF_ROWS, s):+.4f}"
                             for s in run) or "not run"
        sections.append(
            f"#### {dataset.title}\n\n{dataset.protocol}; biLM pretrained on the {n_train:,} "
            f"training texts of each fold, labels drawn from them (stratified, seeded).\n\n"
            + markdown_table(header, rows)
            + f"\n\nBest ELMo row (default biLM) minus the best TF-IDF row, by number of "
            f"labels: {gaps(DEFAULT_ELMO)}; best ELMo + GloVe row minus it: {gaps(GLOVE_ELMO)}; "
            + "; ".join(f"best row of the shipped {model} minus it: "
                        f"{gaps([r for r in ROWS if r.startswith(prefix + '-')])}"
                        for prefix, model in SHIPPED.items())
            + f"; best fine-tuned row (issue 70) minus it: {fine_tuned_gaps()}. "
            + (f"biLM pretraining {np.mean([s['pretrain_seconds'] for s in splits]):.0f} s "
               "per fold." if all("pretrain_seconds" in s for s in splits) else "") + "\n")
    markdown = ("### Accuracy with few labels and many unlabelled texts\n\n"
                "Mean ± std over folds. Every LogisticRegression has max_iter=3000; \"C searched\": "
                "`LogisticRegressionCV`, C from 1e-3 to 1e3 (19 values) by stratified 3-fold "
                "cross-validation on the labelled documents.\n\n"
                + "\n".join(sections))
    payload = {"sizes": [str(s) for s in SIZES], "results": results}
    if stored is not None:  # the first run's machine stays the file's; additions say theirs
        payload["added"] = added
        markdown += "".join(
            f"\nRows {', '.join(entry['rows'])} ({', '.join(entry['sizes'])} labels) were added "
            f"with `--add` on {entry['environment']['cpu']}, "
            f"{entry['environment']['cpu_count']} CPUs, {entry['environment']['date']}.\n"
            for entry in added)
    write_results("few_labels", payload, markdown,
                  environment=None if stored is None else stored["environment"])


if __name__ == "__main__":
    main()
