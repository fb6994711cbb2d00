"""A general biLM taught by a sentence encoder (issue 69): train, then score under the
suite's protocol beside en-base, TF-IDF and all-MiniLM-L6-v2.

**Training** (``train``): a copy of en-base (:func:`elmofeat.bilm.distillation.distill`)
learns, beside its LM loss (weight ``--lm-weight``), to give all-MiniLM-L6-v2's vector
of each of the first ``--texts`` teacher texts (``benchmarks/teacher_texts.py``'s
store: corpus pieces of every register, their vectors computed once) from a head over
its pooled layers. ``--epochs`` passes, AdamW at ``--learning-rate`` decaying linearly
to zero. The run keeps a checkpoint under ``--work``, so the same command resumes a
stopped run; the trained model (``NAME.pt``), its head (``NAME.head.pt``) and the
run's facts (``NAME.json``) stay there.

**Scoring** (``score``): every row is scored on the same splits, the way
``benchmarks/general_recipe.py`` scores a candidate, with 20 Newsgroups added: CR and
MPQA stratified 5-fold, AG News one stratified 80/20 split of its 7,600 rows (the first
of 5 folds), R8 its standard split, 20 Newsgroups the suite's seeded 600 / 600 sample
of its bydate split (``BenchmarkSettings(folds=5)``, seed 0). The classifier is the
suite's (:func:`elmofeat.suite.methods.classifier`): LogisticRegressionCV with C chosen
by inner stratified 3-fold CV over the suite's grid, on the training features alone.
Rows:

* ``tfidf``: ``TfidfVectorizer(sublinear_tf=True)``;
* ``minilm``: all-MiniLM-L6-v2 (the ``minilm`` extra), normalised;
* ``en-base``: ``ElmoVectorizer()``'s defaults (the shipped model, the contextual bag);
* ``NAME``: the student's layers, through ``ElmoVectorizer``'s defaults;
* ``NAME:head``: the student's head output (its vector for the teacher's), normalised;
* ``NAME:both``: the two side by side, the head's block as long (root mean square over
  the training rows) as the centred layer features';
* ``NAME=FOLDER``: a student exported as a model folder (``train --save-pretrained``,
  ``benchmarks/distilled_model.py``), its shipped 16-bit weights, through
  ``ElmoVectorizer``'s defaults.

``score --long`` scores the rows on 20 Newsgroups at ``long_documents.py``'s sample
(3,000 / 3,000 posts) instead, kept beside their suite scores.

Writes ``benchmarks/results/distillation.{json,md}``; each run adds or replaces its
rows. The learning curve over teacher texts is the ``NAME`` rows trained on nested
prefixes of the store (``--texts``), at equal or growing passes.

Run: python benchmarks/distillation.py train --texts 100000 [--epochs 1] [--name NAME]
     python benchmarks/distillation.py train ... --save-pretrained FOLDER   (a model folder)
     python benchmarks/distillation.py score NAME [NAME ...] [--references] [--long]
     python benchmarks/distillation.py score NAME=FOLDER   (an exported folder's weights)
     python benchmarks/distillation.py cosine NAME [NAME ...] [--frozen 25000]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from pathlib import Path

# first: the command's process settings (_common) apply before torch loads
from _common import cpu_description, markdown_table, write_results
from card_facts import paired_cell
import general_recipe as recipe
import teacher_texts

import numpy as np
import torch
from sklearn.feature_extraction.text import TfidfVectorizer

from elmofeat import BiLM, ElmoVectorizer
from elmofeat.bilm import hub
from elmofeat.bilm.distillation import DocumentHead, head_vectors, pooled_layers
from elmofeat.datasets import get_data_home
from elmofeat.suite.data import load_dataset
from elmofeat.suite.methods import PENALTIES, classifier
from elmofeat.suite.settings import BenchmarkSettings

TASKS = ("ag_news", "r8", "cr", "mpqa", "20ng")
#: 20 Newsgroups at long_documents.py's sample (3,000 / 3,000 posts): ``score --long``
LONG_TASK = "20ng-3000"
BASE = "en-base"
DEFAULT_WORK = Path("~/elmofeat-work/distill").expanduser()
#: A student's training facts kept in its rows.
TRAINING_FACTS = ("from", "teacher", "texts", "settings", "train_minutes", "device", "host",
                  "history")
RESULTS_NAME = "distillation"


# -- training --------------------------------------------------------------------------

def run_name(args) -> str:
    return args.name or (f"distil-{args.texts // 1000}k-e{args.epochs}"
                         + (f"-lm{args.lm_weight:g}" if args.lm_weight != 1 else "")
                         + (f"-{args.loss}" if args.loss != "cosine" else "")
                         + ("-frozen-table" if args.freeze_word_table else ""))


def train(args) -> None:
    """Train the student (resuming a stopped run), or find it trained already with the
    same settings; with ``--save-pretrained``, write it as a model folder."""
    name, work = run_name(args), args.work
    work.mkdir(parents=True, exist_ok=True)
    rows, targets = teacher_texts.load_teacher(args.store, args.texts)
    settings = {"epochs": args.epochs, "lm_weight": args.lm_weight, "loss": args.loss,
                "batch": args.batch, "learning_rate": args.learning_rate, "seed": args.seed,
                "freeze_word_table": args.freeze_word_table}
    done = work / f"{name}.json"
    if done.is_file() and (work / f"{name}.pt").is_file():
        facts = json.loads(done.read_text())
        # students trained before the setting existed trained their table
        if ({"freeze_word_table": False, **facts["settings"]} != settings
                or facts["texts"] != len(rows)):
            raise SystemExit(f"{work / name}.pt was trained with other settings "
                             f"({facts['settings']}, {facts['texts']:,} texts): give --name")
        print(f"{name}: trained already ({done})", flush=True)
    else:
        distill_student(name, work, rows, targets, settings, args)
    if args.save_pretrained is not None:
        import distilled_model

        bilm, _, facts = load_student(name, work)
        facts = dict(facts, student=name, registers=dict(
            Counter(r["register"] for r in rows)))
        weights = distilled_model.export(bilm, facts, [r["text"] for r in rows],
                                         args.save_pretrained, overwrite=args.overwrite)
        print(f"wrote {args.save_pretrained} (weights SHA-256 "
              f"{hub.file_sha256(weights)}); score it with: python benchmarks/"
              f"distillation.py score NAME={args.save_pretrained}", flush=True)


def distill_student(name: str, work: Path, rows, targets, settings: dict, args) -> None:
    from elmofeat.bilm.distillation import distill

    base = BiLM.from_pretrained(BASE)
    print(f"{name}: {len(rows):,} teacher texts, {args.epochs} epoch(s)", flush=True)
    start = time.perf_counter()
    result = distill(base, [r["text"] for r in rows], targets, lm_weight=args.lm_weight,
                     loss=args.loss, freeze_word_table=args.freeze_word_table,
                     epochs=args.epochs, batch_size=args.batch,
                     learning_rate=args.learning_rate, random_state=args.seed,
                     device=args.device, checkpoint=work / f"{name}.ckpt",
                     checkpoint_every=200, verbose=True)
    if not all(h["complete"] for h in result.history):
        raise SystemExit("stopped before the end: run the same command again to resume")
    minutes = sum(h["seconds"] for h in result.history) / 60
    result.bilm.save(work / f"{name}.pt")
    torch.save({"state": result.head.state_dict(),
                "shape": [int(result.head.scales.numel()), int(base.output_dim_),
                          int(targets.shape[1])]}, work / f"{name}.head.pt")
    manifest = teacher_texts.read_manifest(args.store)
    facts = {"from": BASE, "teacher": manifest["teacher"],
             "teacher_package": manifest["teacher_package"], "texts": len(rows),
             "teacher_texts_sha256": manifest["texts_sha256"], "settings": settings,
             "history": result.history, "train_minutes": round(minutes, 1),
             "wall_minutes": round((time.perf_counter() - start) / 60, 1),
             "device": args.device or "cpu",
             "host": f"{os.cpu_count()} CPUs, {cpu_description()}"
                     if (args.device or "cpu") == "cpu" else args.device}
    (work / f"{name}.json").write_text(json.dumps(facts, indent=1))
    (work / f"{name}.ckpt").unlink(missing_ok=True)
    print(json.dumps(facts["history"]), f"{minutes:.1f} min", flush=True)


def load_student(name: str, work: Path):
    bilm = BiLM.load(work / f"{name}.pt")
    saved = torch.load(work / f"{name}.head.pt", weights_only=True)
    head = DocumentHead(*saved["shape"], scales=np.ones(saved["shape"][0]))
    head.load_state_dict(saved["state"])
    return bilm, head.eval(), json.loads((work / f"{name}.json").read_text())


# -- scoring ---------------------------------------------------------------------------

def splits_of(home: Path) -> dict:
    settings = BenchmarkSettings(folds=5)
    return {task: load_dataset(task, settings, home).splits[:recipe.MAX_SPLITS.get(task)]
            for task in TASKS}


def searched_accuracy(train, y_train, test, y_test) -> tuple[float, float]:
    model = classifier(None, seed=0).fit(train, y_train)
    return float(np.mean(model.predict(test) == y_test)), float(np.ravel(model.C_)[0])


def score(make_features, splits: dict) -> dict:
    """general_recipe's scoring with the suite's C grid (the features are scaled since
    general_recipe pinned its grid)."""
    return recipe.score(make_features, splits, accuracy=searched_accuracy)


class PerText:
    """Features that depend on the text alone, computed once per text in this process
    (the folds share them): ``encode(texts) -> (n, dim)``."""

    def __init__(self, encode):
        self.encode, self.seen = encode, {}

    def fit_transform(self, texts):
        return self.transform(texts)

    def transform(self, texts):
        new = list(dict.fromkeys(t for t in texts if t not in self.seen))
        if new:
            self.seen.update(zip(new, self.encode(new)))
        return np.stack([self.seen[t] for t in texts])


def unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1)


def head_encoder(bilm, head):
    def encode(texts):
        layers, offsets = bilm.embed_flat(texts)
        return unit(head_vectors(head, layers, offsets))
    return encode


class Both:
    """The layers' features (``ElmoVectorizer``'s defaults) and the head's unit vectors
    side by side, the head's block scaled to the root-mean-square length of the centred
    layer features of the training rows."""

    def __init__(self, bilm, head_features: PerText):
        self.bilm, self.head_features = bilm, head_features

    def fit_transform(self, texts):
        self.layers = recipe.elmo_features(self.bilm)()
        dense = self.layers.fit_transform(texts)
        centred = dense - dense.mean(0)
        self.weight = float(np.sqrt(np.mean(np.sum(centred ** 2, 1))))
        return np.hstack([dense, self.weight * self.head_features.transform(texts)])

    def transform(self, texts):
        return np.hstack([self.layers.transform(texts),
                          self.weight * self.head_features.transform(texts)])


def stored_rows() -> dict:
    path = recipe.RESULTS / f"{RESULTS_NAME}.json"
    return json.loads(path.read_text())["rows"] if path.is_file() else {}


def long_splits(home: Path) -> dict:
    """20 Newsgroups at ``long_documents.py``'s sample: 3,000 / 3,000 posts (seed 0)."""
    import long_documents

    return {LONG_TASK: [long_documents.newsgroups_split(home)]}


def score_rows(names, references: bool, home: Path, work: Path, long: bool = False) -> None:
    """Score the rows on the suite's splits (``long``: on :func:`long_splits` only);
    a row's scores on other tasks are kept."""
    splits = long_splits(home) if long else splits_of(home)
    rows = stored_rows()
    measured = {"cpu": cpu_description(), "cpu_count": os.cpu_count(),
                "date": time.strftime("%Y-%m-%d")}

    def put(row: str, config, make, **extra) -> None:
        print(f"== {row}", flush=True)
        kept = rows.get(row, {}).get("scores", {})
        if long:  # the suite's rows keep their own measurement's facts
            rows.setdefault(row, {"config": config, "measured": measured, **extra})
            rows[row]["measured_long"] = measured
        else:  # the long sample's scores and facts stay
            long_facts = {k: v for k, v in rows.get(row, {}).items() if k == "measured_long"}
            rows[row] = {"config": config, "measured": measured, **extra, **long_facts}
        rows[row]["scores"] = {**kept, **score(make, splits)}
        write(rows)

    if references:
        put("tfidf", "TfidfVectorizer(sublinear_tf=True)",
            lambda: TfidfVectorizer(sublinear_tf=True))
        put(BASE, "ElmoVectorizer() (en-base, defaults)",
            recipe.elmo_features(BiLM.from_pretrained(BASE)))
        try:
            features = recipe.MiniLMFeatures()
        except ImportError as exc:
            print(f"minilm skipped: the optional extra is not installed ({exc})")
        else:
            put("minilm", "all-MiniLM-L6-v2 (sentence-transformers), normalised",
                lambda: features)
    for spec in names:
        if "=" in spec:  # an exported folder: its own weights, its layers' features
            import distilled_model

            name, folder = spec.split("=", 1)
            facts = json.loads((Path(folder) / distilled_model.PROVENANCE).read_text())
            config = json.loads((Path(folder) / hub.CONFIG_NAME).read_text())
            put(name, {"model": name, "student": facts["student"], "features": "layers",
                       "weights_sha256": config["weights_sha256"]},
                recipe.elmo_features(BiLM.from_pretrained(folder)),
                training={k: facts[k] for k in TRAINING_FACTS})
            continue
        name, _, kinds = spec.partition(":")
        kinds = kinds.split(",") if kinds else ["layers", "head", "both"]
        bilm, head, facts = load_student(name, work)
        head_features = PerText(head_encoder(bilm, head))
        makers = {"layers": (name, recipe.elmo_features(bilm)),
                  "head": (f"{name}:head", lambda: head_features),
                  "both": (f"{name}:both", lambda: Both(bilm, head_features))}
        for kind in kinds:
            row, make = makers[kind]
            put(row, {"student": name, "features": kind}, make,
                training={k: facts[k] for k in TRAINING_FACTS})


def teacher_cosine(names, work: Path, frozen: int = 0, perplexity_words: int = 0,
                   home: Path | None = None) -> None:
    """Each student's mean cosine between its head's vectors and the teacher's, on the
    held-out store's texts (``teacher_texts.py --heldout``) and on the first as many
    of its training texts; kept in the student's rows. ``frozen``: also en-base's, a
    head alone fitted on this many training texts (:func:`frozen_head_cosine`).
    ``perplexity_words``: also each model's held-out perplexity (both directions) on
    about this many words of each held-out slice of the corpus (general_recipe's
    slices), en-base's beside them: whether a student is still a language model."""
    slices = recipe.heldout_slices(home, perplexity_words) if perplexity_words else None
    heldout_rows, heldout = teacher_texts.load_teacher(teacher_texts.DEFAULT_HELDOUT_STORE)
    trained_rows, trained = teacher_texts.load_teacher(teacher_texts.DEFAULT_STORE,
                                                       len(heldout_rows))
    rows = stored_rows()
    if frozen:
        rows[BASE]["teacher_cosine"] = frozen_head_cosine(frozen)
        print(f"{BASE}, a head alone: {rows[BASE]['teacher_cosine']}", flush=True)
    if slices:
        rows[BASE]["heldout_perplexity"] = recipe.heldout_perplexity(
            BiLM.from_pretrained(BASE), slices)
    for name in names:
        bilm, head, _ = load_student(name, work)
        encode = head_encoder(bilm, head)
        cosines = {"heldout": float(np.mean(np.sum(
                       encode([r["text"] for r in heldout_rows]) * unit(heldout), 1))),
                   "training": float(np.mean(np.sum(
                       encode([r["text"] for r in trained_rows]) * unit(trained), 1))),
                   "texts": len(heldout_rows)}
        perplexity = recipe.heldout_perplexity(bilm, slices) if slices else None
        print(f"{name}: {cosines} {perplexity or ''}", flush=True)
        for row in (name, f"{name}:head", f"{name}:both"):
            if row in rows:
                rows[row]["teacher_cosine"] = cosines
                if perplexity:
                    rows[row]["heldout_perplexity"] = perplexity
    write(rows)


def frozen_head_cosine(n_texts: int) -> dict:
    """What a head alone reaches: en-base's layers kept as they are, the head's linear
    map fitted by least squares (ridge, alpha 1) from the pooled layers of the first
    ``n_texts`` training texts to the teacher's vectors; its mean cosine on the
    held-out texts. The reference the students' cosines are read against."""
    from sklearn.linear_model import Ridge

    base = BiLM.from_pretrained(BASE)

    def pooled(texts):
        parts = []
        for start in range(0, len(texts), 2000):
            layers, offsets = base.embed_flat(texts[start:start + 2000])
            parts.append(pooled_layers(layers, offsets, base.layer_scales_))
        return np.concatenate(parts)

    rows, targets = teacher_texts.load_teacher(teacher_texts.DEFAULT_STORE, n_texts)
    heldout_rows, heldout = teacher_texts.load_teacher(teacher_texts.DEFAULT_HELDOUT_STORE)
    ridge = Ridge(alpha=1.0).fit(pooled([r["text"] for r in rows]), targets)
    predicted = unit(ridge.predict(pooled([r["text"] for r in heldout_rows])))
    return {"heldout": float(np.mean(np.sum(predicted * unit(heldout), 1))),
            "texts": len(heldout_rows), "fitted_on": n_texts}


# -- the results file ------------------------------------------------------------------

FEATURES = {"layers": "its layers, `ElmoVectorizer()`'s defaults", "head": "its head's vector",
            "both": "both side by side"}


# Students trained while tests ran on the same two cores (2026-11-28): their training
# minutes are upper bounds, not this host's cost.
SHARED_HOST = {"distil-100k-e1-lm0", "distil-100k-e4-lm0.1"}


def describe(name: str, row: dict) -> list:
    training = row.get("training")
    if training is None:
        return [name, row["config"], "", "", ""]
    settings = training["settings"]
    student = row["config"].get("student", name.split(":")[0])
    shared = " (beside other jobs: an upper bound)" if student in SHARED_HOST else ""
    features = FEATURES[row["config"]["features"]]
    if "model" in row["config"]:
        features = f"`ElmoVectorizer(bilm={name!r})`, the shipped 16-bit {student}"
    return [name, features, f"{training['texts']:,}",
            f"{settings['epochs']} (LM weight {settings['lm_weight']:g}, {settings['loss']})",
            f"{training['train_minutes']:.1f} on {training['host']}{shared}"]


def teacher_facts() -> dict | None:
    """The stores' sizes and encoding cost (from their manifests), or None without one."""
    facts = {}
    for name, store in (("training", teacher_texts.DEFAULT_STORE),
                        ("heldout", teacher_texts.DEFAULT_HELDOUT_STORE)):
        manifest = teacher_texts.read_manifest(store)
        if manifest is not None:
            chunks = manifest["chunks"].values()
            seconds = sum(c["seconds"] for c in chunks)
            facts[name] = {"texts": manifest["texts_rows"], "teacher": manifest["teacher"],
                           "encoding_minutes": round(seconds / 60, 1),
                           "texts_per_second": round(manifest["texts_rows"] / seconds),
                           "hosts": sorted({c.get("host", c["device"]) for c in chunks}),
                           "texts_sha256": manifest["texts_sha256"]}
    return facts or None


def write(rows: dict, teacher: dict | None = None) -> None:
    header = ["row", "features", "teacher texts", "epochs", "train min", "cosine held out",
              "ppl wikipedia / dialogue", *TASKS, "mean of 4", "mean of 5", "measured on"]
    table = []
    for name, row in rows.items():
        means = [row["scores"][t]["mean"] for t in TASKS if t in row["scores"]]
        complete = len(means) == len(TASKS)
        cosine = row.get("teacher_cosine", {}).get("heldout")
        ppl = row.get("heldout_perplexity")
        table.append([*describe(name, row), "" if cosine is None else f"{cosine:.3f}",
                      "" if not ppl else f"{ppl['wikipedia']:.1f} / {ppl['dialogue']:.1f}",
                      *(f"{m:.4f}" for m in means),
                      *([""] * (len(TASKS) - len(means))),
                      f"{np.mean(means[:4]):.4f}" if len(means) >= 4 else "",
                      f"{np.mean(means):.4f}" if complete else "",
                      f"{row['measured']['cpu']}, {row['measured']['date']}"])
    markdown = (
        "## Distillation: en-base taught by all-MiniLM-L6-v2 (issue 69)\n\n"
        "Students: copies of en-base trained so that a head over their pooled layers "
        "(mean and max of each layer, one linear map) gives all-MiniLM-L6-v2's "
        "normalised vector of each teacher text, the LM loss beside it "
        "(`elmofeat.bilm.distillation.distill`). Teacher texts: the first N pieces of "
        "`benchmarks/teacher_texts.py`'s store (one to three sentences of the corpus's "
        "training files, every register: "
        + ", ".join(f"{r} {s:.0%}" for r, s in teacher_texts.SHARES.items())
        + "). Accuracy under the suite's protocol: CR and MPQA stratified 5-fold, AG "
        "News one stratified 80/20 split of its 7,600 rows, R8 its standard split, 20 "
        "Newsgroups the suite's seeded 600 / 600 sample; LogisticRegressionCV, C chosen "
        "by inner 3-fold CV over " + ", ".join(f"{c:g}" for c in PENALTIES)
        + ". `mean of 4`: without 20 Newsgroups (general_recipe's tasks). "
        "`cosine held out`: the mean cosine between the student's head vector and the "
        "teacher's on 2,000 pieces of the corpus's held-out files (`teacher_texts.py "
        "--heldout`), texts no student trained on; en-base's: a head alone, its linear "
        "map fitted by ridge regression on en-base's unchanged pooled layers (`cosine "
        "--frozen N`). `ppl`: held-out perplexity (both directions) on about 20,000 "
        "words of the corpus's held-out Wikipedia and dialogue slices (`cosine "
        "--perplexity-words 20000`; general_recipe's slices at another size). "
        "`train min`: the student's training, on the host it names.\n\n"
        + markdown_table(header, table) + "\n")
    for base in (BASE, "minilm", "tfidf"):
        if base not in rows:
            continue
        others = [n for n in rows if n != base and all(t in rows[n]["scores"] for t in TASKS)]
        paired = [[f"{n} minus {base}", *(paired_cell(rows[n], rows[base], t) for t in TASKS)]
                  for n in others]
        markdown += (f"\nEach row minus {base} on the same splits, paired: the difference in "
                     "accuracy split by split, in points, mean ± std (ddof=1) and the "
                     "splits on which the row is above (AG News, R8 and 20 Newsgroups: one "
                     "split each). A mean inside its spread is not a win.\n\n"
                     + markdown_table(["rows", *TASKS], paired) + "\n")
    long_rows = [n for n in rows if LONG_TASK in rows[n]["scores"]]
    if long_rows:
        bases = [b for b in (BASE, "tfidf", "minilm") if b in long_rows]
        table = [[n, f"{rows[n]['scores'][LONG_TASK]['mean']:.4f}",
                  f"{rows[n]['scores'][LONG_TASK]['feature_seconds']:.1f}",
                  *(paired_cell(rows[n], rows[b], LONG_TASK) if n != b else ""
                    for b in bases),
                  f"{rows[n]['measured_long']['cpu']}, {rows[n]['measured_long']['date']}"]
                 for n in long_rows]
        markdown += ("\n20 Newsgroups at `benchmarks/long_documents.py`'s sample, 3,000 / "
                     "3,000 posts (seed 0) of its bydate split (`score --long`): one split, "
                     "the same classifier and C search; `feature s`: fit and transform of "
                     "the features, seconds on the host named.\n\n"
                     + markdown_table(["row", "accuracy", "feature s",
                                       *(f"minus {b}" for b in bases), "measured on"], table)
                     + "\n")
    stored = json.loads((recipe.RESULTS / f"{RESULTS_NAME}.json").read_text()).get("teacher") \
        if (recipe.RESULTS / f"{RESULTS_NAME}.json").is_file() else None
    teacher = teacher or teacher_facts() or stored
    if teacher:
        # the held-out store was encoded beside a training run: its time is no figure
        markdown += "\nTeacher stores: " + "; ".join(
            f"{kind}, {t['texts']:,} texts encoded by {t['teacher']}"
            + ("" if kind == "heldout" else
               f" in {t['encoding_minutes']} min ({t['texts_per_second']} a second, "
               f"on {'; '.join(t['hosts'])})") for kind, t in teacher.items()) + ".\n"
    write_results(RESULTS_NAME, {"rows": rows, "penalties": list(PENALTIES),
                                 "teacher": teacher}, markdown)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fit = sub.add_parser("train", help="distil en-base on the first --texts teacher texts")
    fit.add_argument("--texts", type=int, default=100_000)
    fit.add_argument("--epochs", type=int, default=1)
    fit.add_argument("--lm-weight", type=float, default=1.0)
    fit.add_argument("--loss", default="cosine")
    fit.add_argument("--batch", type=int, default=64)
    fit.add_argument("--learning-rate", type=float, default=2e-3)
    fit.add_argument("--seed", type=int, default=0)
    fit.add_argument("--device", default=None)
    fit.add_argument("--freeze-word-table", action="store_true",
                     help="keep the word table at en-base's values (default: it trains)")
    fit.add_argument("--name", default=None)
    fit.add_argument("--save-pretrained", type=Path, default=None, metavar="FOLDER",
                     help="write the student as a pretrained-model folder "
                          "(benchmarks/distilled_model.py)")
    fit.add_argument("--overwrite", action="store_true",
                     help="with --save-pretrained: write into a folder that holds files")
    rate = sub.add_parser("score", help="score students (NAME, or NAME:layers,head,both)")
    rate.add_argument("names", nargs="*")
    rate.add_argument("--references", action="store_true",
                      help="also score tfidf, en-base and minilm")
    rate.add_argument("--long", action="store_true",
                      help="score on 20 Newsgroups' 3,000 / 3,000 sample only")
    rate.add_argument("--data-home", default=None)
    sub.add_parser("rewrite", help="write the markdown again from the stored rows")
    near = sub.add_parser("cosine", help="each student's head against the teacher on "
                          "held-out texts")
    near.add_argument("names", nargs="*")
    near.add_argument("--frozen", type=int, default=0, metavar="N",
                      help="also a head alone on en-base, fitted on N training texts")
    near.add_argument("--perplexity-words", type=int, default=0, metavar="N",
                      help="also held-out perplexity on about N words of each slice")
    near.add_argument("--data-home", default=None)
    for command in (fit, rate, near):
        command.add_argument("--work", type=Path, default=DEFAULT_WORK)
    fit.add_argument("--store", type=Path, default=teacher_texts.DEFAULT_STORE)
    args = parser.parse_args()
    if args.command == "train":
        train(args)
    elif args.command == "score":
        score_rows(args.names, args.references, Path(get_data_home(args.data_home)),
                   args.work, long=args.long)
    elif args.command == "cosine":
        teacher_cosine(args.names, args.work, args.frozen, args.perplexity_words,
                       Path(get_data_home(args.data_home)))
    else:
        write(stored_rows())


if __name__ == "__main__":
    main()
