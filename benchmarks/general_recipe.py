"""The general model's recipe, found by measurement: candidates scored under the suite's
protocol (issue 41).

Each candidate biLM is pretrained on a slice of the staged corpus (a mix of its
registers: Wikipedia, Wikinews, dialogue, old books; every k-th paragraph of each, so
that every register gives its share of about ``--words`` words), then its features are
scored on the whole development suite the way the suite compares rows:

* the splits: CR and MPQA stratified 5-fold, AG News one stratified 80/20 split of its
  7,600 rows (the first of 5 folds), R8 its standard split (``BenchmarkSettings(folds=5)``
  and :func:`elmofeat.suite.data.load_dataset`, seed 0);
* the features: ``ElmoVectorizer(bilm)`` with its defaults (layer mix, pooling,
  scaling), fitted on each split's training texts;
* the classifier: the suite's (:func:`elmofeat.suite.methods.classifier`),
  ``LogisticRegressionCV`` with C chosen by inner stratified 3-fold cross-validation
  over ``PENALTIES`` on the training texts alone.

The reference rows are scored the same way: TF-IDF (``sublinear_tf``), the shipped
en-small and, where the optional ``minilm`` extra is installed, all-MiniLM-L6-v2
(sentence-transformers' ``encode``, mean of its token states, normalised), the
sentence encoder a user would pick instead. Held-out perplexity is measured on each
held-out slice of the corpus (Wikipedia, Wikinews, the three dialogue files together,
Gutenberg), on about ``--heldout-words`` words of each: every k-th paragraph of its files,
k chosen to give that many.

Writes benchmarks/results/general_recipe.{json,md}; each run adds or replaces its own
rows. Models are kept under ``--work`` (outside the work tree), so a stopped run
resumes: a candidate whose model is there is scored again, not pretrained again.

A saved model is scored the same way as ``NAME=PATH`` (a model folder or a file).

Run: python benchmarks/general_recipe.py [NAME ... | NAME=PATH ...] [--data-home DIR] [--work DIR]
     python benchmarks/general_recipe.py --list
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
from _common import RESULTS, environment, markdown_table, write_results
from card_facts import paired_cell

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from elmofeat import BiLM, ElmoVectorizer
from elmofeat.bilm.corpus import TextFiles
from elmofeat.datasets import get_data_home
from elmofeat.suite.data import load_dataset
from elmofeat.suite.methods import classifier
from elmofeat.suite.settings import BenchmarkSettings
from general_model import Snapshots  # weights kept after fractions of the steps

TASKS = ("ag_news", "r8", "cr", "mpqa")
#: The C grid of every row stored in general_recipe.json and long_documents.json: the
#: suite's before 20 Newsgroups joined it (it searches wider since), pinned here so
#: that new rows stay comparable with the stored ones.
PENALTIES = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
#: Splits scored per task (AG News: one 80/20 split of its 7,600 rows).
MAX_SPLITS = {"ag_news": 1}

#: The corpus's registers: training files under ``<data home>/corpus``.
REGISTERS = {
    "wikipedia": ("wikipedia_train_*.txt.gz",),
    "wikinews": ("wikinews_train.txt.gz",),
    "dialogue": ("dialogue_*_train.txt.gz",),
    "old": ("gutenberg_train_*.txt.gz", "brown_nltk.txt.gz",
            "us_presidential_speeches_nltk.txt.gz"),
}
HELDOUT = {
    "wikipedia": ("wikipedia_heldout.txt.gz",),
    "wikinews": ("wikinews_heldout.txt.gz",),
    "dialogue": ("dialogue_*_heldout.txt.gz",),
    "gutenberg": ("gutenberg_heldout.txt.gz",),
}
#: Corpus mixes: each register's share of the slice's words.
CORPORA = {
    "old": {"old": 1.0},
    # the first modern slice: about 41% Wikipedia, 23% Wikinews, 36% dialogue
    "modern": {"wikipedia": 0.4, "wikinews": 0.25, "dialogue": 0.35},
    "modern+old": {"wikipedia": 0.3, "wikinews": 0.2, "dialogue": 0.25, "old": 0.25},
    "encyclopaedic": {"wikipedia": 0.6, "wikinews": 0.3, "dialogue": 0.1},
    "conversational": {"wikipedia": 0.25, "wikinews": 0.15, "dialogue": 0.6},
}
GLOVE_50 = "{data_home}/glove/glove.6B.50d.txt.gz"
#: GloVe 6B 100d, converted by benchmarks/convert_glove_100d.py (``--glove-100d``).
GLOVE_100 = "{glove_100d}"
#: en-small's configuration (elmofeat.models.recipes), the starting point.
SMALL = dict(token_layer="word", embedding_dim=128, hidden_dim=128,
             pretrained_vectors=GLOVE_50, pretrained_words=200_000)


@dataclass(frozen=True)
class Candidate:
    """A biLM to pretrain (one epoch over ``words`` words of ``corpus``) and score;
    ``snapshots``: fractions of its steps after which a copy of its weights is scored
    too (the tokens-seen curve, from one run)."""

    corpus: str
    words: int
    params: dict = field(default_factory=dict)
    snapshots: tuple = ()
    note: str = ""


CANDIDATES = {
    "modern-3m": Candidate("modern", 3_000_000, SMALL, note="en-small's configuration"),
    "old-3m": Candidate("old", 3_000_000, SMALL, note="the old corpus, as en-small read"),
    "modern+old-3m": Candidate("modern+old", 3_000_000, SMALL),
    "encyclopaedic-3m": Candidate("encyclopaedic", 3_000_000, SMALL),
    "conversational-3m": Candidate("conversational", 3_000_000, SMALL),
    "modern-3m-256": Candidate("modern", 3_000_000, {**SMALL, "embedding_dim": 256,
                                                     "hidden_dim": 256}, note="width"),
    "modern-3m-vocab100k": Candidate("modern", 3_000_000, {**SMALL, "max_features": 100_000},
                                     note="words predicted"),
    "modern-3m-glove100": Candidate("modern", 3_000_000,
                                    {**SMALL, "pretrained_vectors": GLOVE_100},
                                    note="token layer: GloVe 6B 100d"),
    "modern-3m-svd": Candidate("modern", 3_000_000,
                               {"token_layer": "word", "embedding_dim": 128, "hidden_dim": 128},
                               note="token layer: word vectors of the corpus (SVD), no GloVe"),
    "modern-3m-char": Candidate("modern", 3_000_000, {"token_layer": "char"},
                                note="char-CNN token layer, BiLM's defaults"),
    "modern-12m": Candidate("modern", 12_000_000, SMALL, snapshots=(0.25, 0.5),
                            note="tokens seen: snapshots at 3M and 6M words"),
}
REFERENCES = ("tfidf", "en-small", "minilm")


# -- the corpus ------------------------------------------------------------------------

def register_files(home: Path, patterns) -> TextFiles:
    return TextFiles([str(home / "corpus" / p) for p in patterns])


def register_words(home: Path, work: Path) -> dict:
    """Words (whitespace-separated) of each register's training files, counted once and
    kept in ``work`` (keyed by the files' fingerprint)."""
    cache = work / "register_words.json"
    stored = json.loads(cache.read_text()) if cache.is_file() else {}
    counts = {}
    for name, patterns in REGISTERS.items():
        files = register_files(home, patterns)
        key = files.fingerprint()
        if stored.get(name, {}).get("fingerprint") != key:
            stored[name] = {"fingerprint": key,
                            "words": sum(len(text.split()) for text in files)}
            cache.write_text(json.dumps(stored, indent=1))
        counts[name] = stored[name]["words"]
    return counts


def corpus_slice(home: Path, work: Path, corpus: str, n_words: int) -> tuple[list, dict]:
    """About ``n_words`` words of ``corpus``: every k-th paragraph of each register, k
    chosen so that the register gives its share. Returns the texts and the words read
    per register."""
    totals = register_words(home, work)
    texts, words = [], {}
    for register, share in CORPORA[corpus].items():
        every = max(1, round(totals[register] / (share * n_words)))
        kept = [text for i, text in enumerate(register_files(home, REGISTERS[register]))
                if i % every == 0]
        texts += kept
        words[register] = sum(len(text.split()) for text in kept)
    return texts, words


def heldout_slices(home: Path, n_words: int) -> dict:
    """About ``n_words`` words of each held-out slice: every k-th paragraph of its files
    (the dialogue slice: of its three files alike)."""
    slices = {}
    for name, patterns in HELDOUT.items():
        texts = list(register_files(home, patterns))
        every = max(1, round(sum(len(t.split()) for t in texts) / n_words))
        slices[name] = texts[::every]
    return slices


# -- the protocol ----------------------------------------------------------------------

def suite_splits(home: Path) -> dict:
    settings = BenchmarkSettings(folds=5)
    return {task: load_dataset(task, settings, home).splits[:MAX_SPLITS.get(task)]
            for task in TASKS}


def searched_accuracy(train, y_train, test, y_test) -> tuple[float, float]:
    """Accuracy of the suite's classifier (C chosen by inner stratified 3-fold CV on the
    training features); returns it and the chosen C."""
    model = classifier(None, seed=0).set_params(Cs=list(PENALTIES)).fit(train, y_train)
    return float(np.mean(model.predict(test) == y_test)), float(np.ravel(model.C_)[0])


def score(make_features, splits: dict, accuracy=None) -> dict:
    """``make_features() -> vectorizer`` scored on every split: per task the mean, each
    split's accuracy and chosen C, and the seconds its features took. ``accuracy``:
    ``(train, y_train, test, y_test) -> (accuracy, C)`` (default
    :func:`searched_accuracy`)."""
    accuracy_of = accuracy or searched_accuracy
    scores = {}
    for task, task_splits in splits.items():
        accuracies, penalties, seconds = [], [], 0.0
        for split in task_splits:
            start = time.perf_counter()
            vectorizer = make_features()
            train = vectorizer.fit_transform(split.X_train)
            test = vectorizer.transform(split.X_test)
            seconds += time.perf_counter() - start
            accuracy, C = accuracy_of(train, split.y_train, test, split.y_test)
            accuracies.append(accuracy)
            penalties.append(C)
        scores[task] = {"mean": float(np.mean(accuracies)), "splits": accuracies,
                        "C": penalties, "feature_seconds": round(seconds, 1)}
        print(f"  {task}: {scores[task]['mean']:.4f} (C {penalties})", flush=True)
    return scores


def elmo_features(bilm, adapt_epochs: int = 0):
    """``ElmoVectorizer``'s defaults on ``bilm``, seeded, no disk cache; with
    ``adapt_epochs``, a copy of ``bilm`` adapted to each split's training texts (never
    its test texts) first."""
    return lambda: ElmoVectorizer(bilm, adapt_epochs=adapt_epochs, cache_dir=None,
                                  random_state=0)


class MiniLMFeatures:
    """The suite's all-MiniLM-L6-v2 anchor (the ``minilm`` extra), each text encoded
    once per process: its features depend on the text alone, so the folds share them."""

    def __init__(self):
        from elmofeat.suite.sentence_encoder import SentenceEncoderVectorizer

        self.encoder = SentenceEncoderVectorizer().fit(["a"])
        self.seen = {}

    def fit_transform(self, texts):
        return self.transform(texts)

    def transform(self, texts):
        new = list(dict.fromkeys(t for t in texts if t not in self.seen))
        if new:
            self.seen.update(zip(new, self.encoder.transform(new)))
        return np.stack([self.seen[t] for t in texts])


# -- the runs --------------------------------------------------------------------------

def stored_rows() -> dict:
    path = RESULTS / "general_recipe.json"
    return json.loads(path.read_text())["rows"] if path.is_file() else {}


def heldout_perplexity(bilm, heldout: dict) -> dict:
    return {name: round(float(bilm.perplexity(texts)), 1) for name, texts in heldout.items()}


def resolve(params: dict, places: dict) -> dict:
    """``params`` with each ``{place}`` in a string replaced by ``places[place]``."""

    def fill(value):
        for key, place in places.items():
            value = value.replace("{" + key + "}", str(place)) if isinstance(value, str) else value
        return value

    return {k: fill(v) for k, v in params.items()}





def pretrain(name: str, candidate: Candidate, home: Path, work: Path, places: dict) -> tuple:
    """The candidate's biLM (and its snapshots), from ``work`` when a run before made
    them."""
    path = work / f"{name}.pt"
    snapshot_paths = {f: work / f"{name}@{f:g}.pt" for f in candidate.snapshots}  # row names
    words_file = work / f"{name}.words.json"  # the slice's words, kept beside the model
    if path.is_file() and all(p.is_file() for p in snapshot_paths.values()):
        if not words_file.is_file():  # kept by a run before the words were
            words = corpus_slice(home, work, candidate.corpus, candidate.words)[1]
            words_file.write_text(json.dumps(words))
        return (BiLM.load(path), {f: BiLM.load(p) for f, p in snapshot_paths.items()},
                json.loads(words_file.read_text()))
    texts, words = corpus_slice(home, work, candidate.corpus, candidate.words)
    print(f"{name}: {len(texts):,} paragraphs, {sum(words.values()):,} words {words}",
          flush=True)
    snapshots = Snapshots(candidate.snapshots)
    from elmofeat.bilm import estimator

    original = estimator.standard_callbacks
    estimator.standard_callbacks = lambda *a, **k: [*original(*a, **k), snapshots]
    try:
        bilm = BiLM(max_epochs=1, validation_fraction=0.01, random_state=0,
                    **resolve(candidate.params, places)).fit(texts)
    finally:
        estimator.standard_callbacks = original
    tokens = bilm.history_[-1]["training_tokens"]
    partials = {}
    for fraction, state in snapshots.states.items():
        partial = copy.deepcopy(bilm)
        partial.language_model_.load_state_dict(state)
        partial.history_ = [{**bilm.history_[-1], "fraction_of_steps": fraction,
                             "training_tokens": int(round(fraction * tokens)),
                             "seconds": fraction * bilm.history_[-1]["seconds"]}]
        partial.save(snapshot_paths[fraction])
        partials[fraction] = partial
    bilm.save(path)
    words_file.write_text(json.dumps(words))
    return bilm, partials, words


def model_row(bilm, heldout, splits, adapt_epochs: int = 0, **facts) -> dict:
    history = bilm.history_
    row = {**facts,
           "tokens_seen": int(sum(h.get("training_tokens", 0) for h in history)),
           "fit_minutes": round(sum(h["seconds"] for h in history) / 60, 1),
           "heldout_perplexity": heldout_perplexity(bilm, heldout)}
    if adapt_epochs:
        row["adapt_epochs"] = adapt_epochs
    return {**row, "scores": score(elmo_features(bilm, adapt_epochs), splits)}


def run(names, home: Path, work: Path, heldout_words: int, glove_100d: Path,
        adapt_epochs: int = 0) -> None:
    splits = suite_splits(home)
    heldout = heldout_slices(home, heldout_words)
    rows = stored_rows()
    for name in names:
        print(f"== {name}", flush=True)
        if name == "tfidf":
            rows[name] = {"config": "TfidfVectorizer(sublinear_tf=True)",
                          "scores": score(lambda: TfidfVectorizer(sublinear_tf=True), splits)}
        elif name == "minilm":
            try:
                features = MiniLMFeatures()
            except ImportError as exc:
                print(f"minilm skipped: the optional extra is not installed ({exc})")
                continue
            rows[name] = {"config": "all-MiniLM-L6-v2 (sentence-transformers), normalised",
                          "scores": score(lambda: features, splits)}
        elif name == "en-small":
            rows[adapted(name, adapt_epochs)] = model_row(
                BiLM.from_pretrained("en-small"), heldout, splits, adapt_epochs,
                config="the shipped en-small")
        elif "=" in name:  # a saved model: NAME=FOLDER (a model folder) or NAME=FILE
            name, path = name.split("=", 1)
            rows[adapted(name, adapt_epochs)] = model_row(
                load_model(path), heldout, splits, adapt_epochs,
                config={"model": str(Path(path).expanduser())})
        else:
            candidate = CANDIDATES[name]
            places = {"data_home": home, "glove_100d": glove_100d}
            bilm, partials, words = pretrain(name, candidate, home, work, places)
            config = {"corpus": candidate.corpus, **candidate.params}
            for fraction, partial in sorted(partials.items()):
                key = f"{name}@{fraction:g}"
                rows[key] = model_row(partial, heldout, splits, config=config,
                                      words_read=words, fraction_of_steps=fraction,
                                      note=candidate.note)
                write(rows, heldout_words)
            rows[name] = model_row(bilm, heldout, splits, config=config, words_read=words,
                                   note=candidate.note)
        write(rows, heldout_words)


def adapted(name: str, adapt_epochs: int) -> str:
    """A row's name: ``NAME+adaptK`` when the model was adapted for ``K`` epochs."""
    return f"{name}+adapt{adapt_epochs}" if adapt_epochs else name


def load_model(path) -> BiLM:
    """A saved biLM: a model folder (``save_pretrained``) or a file (``save``)."""
    path = Path(path).expanduser()
    return BiLM.from_pretrained(path) if path.is_dir() else BiLM.load(path)


def stored_model(name: str, work: Path, row: dict | None = None):
    """The biLM behind a stored row: the shipped model, a saved model the row names, or
    a candidate (or snapshot) kept in ``work``; None for the rows without one."""
    if name == "en-small":
        return BiLM.from_pretrained("en-small")
    config = (row or {}).get("config")
    if isinstance(config, dict) and "model" in config:
        return load_model(config["model"])
    path = work / f"{name}.pt"
    return BiLM.load(path) if path.is_file() else None


def refresh_perplexity(names, home: Path, work: Path, heldout_words: int) -> None:
    """Measure the held-out perplexity of stored rows again (a change of the held-out
    sample), leaving their scores as they are."""
    heldout = heldout_slices(home, heldout_words)
    rows = stored_rows()
    for name in names:
        bilm = stored_model(name, work, rows[name]) if name in rows else None
        if bilm is not None:
            rows[name]["heldout_perplexity"] = heldout_perplexity(bilm, heldout)
            print(name, rows[name]["heldout_perplexity"], flush=True)
    write(rows, heldout_words)


def write(rows: dict, heldout_words: int, stored_environment: dict | None = None) -> None:
    """Write the results files; ``stored_environment``: the machine facts of the stored
    file, when its markdown is only written again (``--rewrite``)."""
    now = environment()
    ppl_names = list(HELDOUT)
    header = ["row", "corpus", "tokens seen", "fit min", *TASKS, "mean",
              *(f"ppl {n}" for n in ppl_names), "measured on"]
    table = []
    for name, row in rows.items():
        row.setdefault("measured", {key: now[key] for key in ("cpu", "cpu_count", "date")})
        means = [row["scores"][t]["mean"] for t in TASKS]
        ppl = row.get("heldout_perplexity", {})
        config = row["config"]
        table.append([name, config.get("corpus", "") if isinstance(config, dict) else "",
                      f"{row['tokens_seen']:,}" if row.get("tokens_seen") else "",
                      row.get("fit_minutes", ""), *(f"{m:.4f}" for m in means),
                      f"{np.mean(means):.4f}", *(f"{ppl[n]:.1f}" if n in ppl else ""
                                                  for n in ppl_names),
                      f"{row['measured']['cpu']}, {row['measured']['date'][:10]}"])
    corpora = "; ".join(f"{name}: " + ", ".join(f"{r} {s:.0%}" for r, s in mix.items())
                        for name, mix in CORPORA.items())
    markdown = (
        "## General model: the recipe, under the suite's protocol\n\n"
        "Mean accuracy over CR and MPQA (stratified 5-fold), AG News (one stratified "
        "80/20 split of its 7,600 rows) and R8 (its standard split); features from "
        "`ElmoVectorizer(bilm)`'s defaults fitted on each training split, "
        "LogisticRegression's C chosen by inner 3-fold CV over "
        f"{', '.join(f'{c:g}' for c in PENALTIES)}. Each candidate read one epoch of a "
        "slice of the corpus (every k-th paragraph of each register, so that each gives "
        f"its share of the words). Corpora: {corpora}. Held-out perplexity on about "
        f"{heldout_words:,} words of each held-out slice, every k-th paragraph of its "
        "files (both directions; comparable "
        "between models with the same vocabulary only). `fit min`: the model's training "
        "minutes from its own history, on the host that trained it, which is not always "
        "the host that scored it (`measured on`). `name@f`: the candidate's "
        "weights after a fraction f of its steps.\n\n"
        + markdown_table(header, table) + "\n")
    if "en-small" in rows:  # the shipped default, on the same splits
        paired = [[f"{name} minus en-small", *(paired_cell(row, rows["en-small"], t)
                                                for t in TASKS)]
                  for name, row in rows.items() if name != "en-small"]
        markdown += (
            "\nEach row minus en-small on the same splits, paired: the difference in "
            "accuracy split by split, in points, mean ± std (the sample std of the "
            "differences, ddof=1; the suite's report gives the population std, ddof=0) and "
            "the splits on which the row is above (AG News and R8: one split each). A mean "
            "inside its spread is not a win.\n\n" + markdown_table(["rows", *TASKS], paired) + "\n")
    markdown += equal_size_table(rows) + default_variants_table(rows)
    write_results("general_recipe", {"rows": rows, "penalties": list(PENALTIES),
                                     "heldout_words": heldout_words}, markdown,
                  environment=stored_environment)


#: The candidate that the others of its size change one thing of (corpus, token layer,
#: width, vocabulary).
EQUAL_SIZE_BASELINE = "modern-3m"
#: The row of the default's first build (GloVe 6B 50d; the shipped en-base is the row
#: ``en-base-glove100``): rows named after it (``en-base+adapt3``, ``en-base-glove100``)
#: are its weights adapted or changed, or its recipe with one change.
DEFAULT_MODEL = "en-base"


def paired_table(rows: dict, names: list, base: str, caption: str) -> str:
    """Each of ``names`` minus ``base``, paired split by split ("" when either is
    missing)."""
    if base not in rows or not names:
        return ""
    paired = [[f"{n} minus {base}", *(paired_cell(rows[n], rows[base], t) for t in TASKS)]
              for n in names]
    return f"\n{caption}\n\n" + markdown_table(["rows", *TASKS], paired) + "\n"


def equal_size_table(rows: dict) -> str:
    """Each scored candidate of the baseline's size minus the baseline, paired: what one
    change does at equal words read."""
    base = CANDIDATES[EQUAL_SIZE_BASELINE]
    names = [n for n in rows if n in CANDIDATES and n != EQUAL_SIZE_BASELINE
             and CANDIDATES[n].words == base.words]
    return paired_table(rows, names, EQUAL_SIZE_BASELINE,
                        f"Each candidate of {EQUAL_SIZE_BASELINE}'s size ({base.words:,} words) "
                        f"minus {EQUAL_SIZE_BASELINE}, paired as above: one change of corpus, "
                        "token layer, width or vocabulary at equal words read.")


def default_variants_table(rows: dict) -> str:
    """Each row built on the shipped default (its weights adapted or trained further, or
    its recipe with one change) minus the default, paired."""
    names = [n for n in rows if n != DEFAULT_MODEL and n.startswith(DEFAULT_MODEL)
             and n[len(DEFAULT_MODEL)] in "+-"]
    return paired_table(rows, names, DEFAULT_MODEL,
                        f"Each row built on {DEFAULT_MODEL} (its weights adapted to the task's "
                        "texts or trained further, or its recipe with one change) minus "
                        f"{DEFAULT_MODEL}, paired as above.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="candidates and reference rows to run, "
                        "or NAME=PATH to score a saved model "
                        f"(default: {', '.join(REFERENCES)} then every candidate)")
    parser.add_argument("--list", action="store_true", help="list the candidates")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--work", default=os.path.expanduser("~/elmofeat-work/recipe"),
                        help="where candidate models are kept (outside the work tree)")
    parser.add_argument("--heldout-words", type=int, default=100_000)
    parser.add_argument("--adapt-epochs", type=int, default=0,
                        help="score en-small and NAME=PATH rows with their biLM adapted "
                        "to each split's training texts for this many epochs "
                        "(rows NAME+adaptK)")
    parser.add_argument("--rewrite", action="store_true",
                        help="write the markdown again from the stored rows (nothing runs)")
    parser.add_argument("--perplexity-only", action="store_true",
                        help="measure the held-out perplexity of the named stored rows again")
    parser.add_argument("--glove-100d", type=Path,
                        default=Path("~/elmofeat-work/glove/glove.6B.100d.txt.gz").expanduser(),
                        help="GloVe 6B 100d text file (benchmarks/convert_glove_100d.py)")
    args = parser.parse_args()
    if args.list:
        for name, candidate in CANDIDATES.items():
            print(f"{name}: {candidate}")
        return
    if args.rewrite:
        stored = json.loads((RESULTS / "general_recipe.json").read_text())
        write(stored["rows"], stored["heldout_words"], stored["environment"])
        return
    names = args.names or [*REFERENCES, *CANDIDATES]
    unknown = [n for n in names if n not in CANDIDATES and n not in REFERENCES and "=" not in n]
    if unknown:
        parser.error(f"unknown names {unknown}; known: {[*REFERENCES, *CANDIDATES]}")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    home = Path(get_data_home(args.data_home))
    if args.perplexity_only:
        refresh_perplexity(args.names or list(stored_rows()), home, work, args.heldout_words)
        return
    run(names, home, work, args.heldout_words, args.glove_100d, args.adapt_epochs)


if __name__ == "__main__":
    main()
