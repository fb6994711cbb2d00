"""Layer probe: what each biLM layer, scale and hybrid weight is worth, on the first split
of every suite task (the suite's split and seed, the from-scratch default ``BiLM``).

Studies (``--studies``, all by default), each scored with LogisticRegression:

* ``layers``: each layer alone (a frozen mix with one weight), the default frozen mix and
  the three layers concatenated, against SVDVectorizer (C=1).
* ``train-embedding``: the same frozen mix with the word embedding trained during
  pretraining (``freeze_embedding=False``) against kept at its SVD start (the default).
* ``scales``: LogisticRegression's penalty is fixed (C=1), so multiplying every feature
  by c acts as C * c**2: the frozen and trainable mixes' features at several multipliers,
  at a total variance of 1 (TF-IDF's scale; C=1 and C=10), standardised, and (trainable)
  without its learned gamma.
* ``test-texts``: does the biLM memorise its training texts? A second biLM pretrained on
  the training and the test texts (no labels); both mixes of both, and each biLM's
  last-epoch training and held-out perplexity.
* ``hybrid``: make_hybrid (TF-IDF + the frozen mix, C=10) at several weights of the ELMo
  block, next to TF-IDF alone (what ``DEFAULT_ELMO_WEIGHT`` rests on).

Writes benchmarks/results/layer_probe.{json,md} after every study (a stopped run keeps
the studies it finished; ``--resume`` skips them). Tasks not named in ``--tasks`` keep
their stored results. Docs and docstrings cite these results.
Run: python benchmarks/layer_probe.py [--tasks ag_news r8 cr mpqa] [--studies ...]
     [--resume] [--data-home DIR]
"""

from __future__ import annotations

import argparse
import json

# first: the command's process settings (_common) apply before torch loads
from _common import RESULTS, markdown_table, write_results

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline, make_union
from sklearn.preprocessing import StandardScaler

import elmofeat
from elmofeat import BiLM, ElmoVectorizer, SVDVectorizer, make_hybrid
from elmofeat.suite import BenchmarkSettings
from elmofeat.suite.data import load_dataset
from elmofeat.datasets import get_data_home
from elmofeat.runtime import numerics_fingerprint

STUDIES = ("layers", "train-embedding", "scales", "test-texts", "hybrid")
TASKS = ("ag_news", "r8", "cr", "mpqa")
HYBRID_WEIGHTS = (0.05, 0.1, 0.2, 0.35, 0.5, 1.0)
MULTIPLIERS = (0.25, 0.5, 1, 2, 4, 8)
ONE_HOT = {"token layer": [1, 0, 0], "LSTM layer 1": [0, 1, 0], "LSTM layer 2": [0, 0, 1]}


def accuracy(estimator, split, C=1.0) -> float:
    model = make_pipeline(estimator, LogisticRegression(max_iter=3000, C=C))
    model.fit(split.X_train, split.y_train)
    return round(float(np.mean(model.predict(split.X_test) == np.asarray(split.y_test))), 4)


def scored(train, test, split, C=1.0) -> float:
    clf = LogisticRegression(max_iter=3000, C=C).fit(train, split.y_train)
    return round(float(np.mean(clf.predict(test) == np.asarray(split.y_test))), 4)


def frozen(bilm, weights=None):
    return ElmoVectorizer(bilm, layer_mix="frozen", mix_weights=weights, cache_dir=None,
                          random_state=0)


def study_layers(bilm, split, seed) -> dict:
    out = {"svd": accuracy(SVDVectorizer(random_state=0), split)}
    for name, weights in ONE_HOT.items():
        out[name] = accuracy(frozen(bilm, weights), split)
    out["frozen mix"] = accuracy(frozen(bilm), split)
    out["concatenated"] = accuracy(make_union(*[frozen(bilm, w) for w in ONE_HOT.values()]),
                                   split)
    return out


def study_train_embedding(bilm, split, seed) -> dict:
    trained = BiLM(random_state=seed, freeze_embedding=False).fit(split.X_train)
    out = {}
    for label, model in (("kept", bilm), ("trained", trained)):
        for name, weights in {**ONE_HOT, "frozen mix": None}.items():
            out[f"{name}, embedding {label}"] = accuracy(frozen(model, weights), split)
        out[f"validation perplexity, embedding {label}"] = round(
            model.history_[-1]["validation_perplexity"], 1)
    return out


def study_scales(bilm, split, seed) -> dict:
    out = {}
    for mix in ("frozen", "trainable"):
        vec = ElmoVectorizer(bilm, layer_mix=mix, cache_dir=None, random_state=0)
        train = vec.fit_transform(split.X_train, split.y_train)
        test = vec.transform(split.X_test)
        gamma = float(getattr(vec.mix_, "gamma", 1.0))
        out[f"{mix}: gamma"] = round(gamma, 4)
        out[f"{mix}: feature rms"] = round(float(np.sqrt(np.mean(train ** 2))), 4)
        for c in MULTIPLIERS:
            out[f"{mix}: x{c}"] = scored(c * train, c * test, split)
        # TF-IDF's scale: unit-norm rows have a total variance below 1, for which
        # LogisticRegression's default C is made; the mixes' layers have unit variance
        # per feature, a total variance of about their width.
        unit = 1 / np.sqrt(train.astype(np.float64).var(axis=0).sum())
        out[f"{mix}: unit total variance"] = scored(unit * train, unit * test, split)
        out[f"{mix}: unit total variance, C=10"] = scored(unit * train, unit * test, split, C=10)
        scaler = StandardScaler().fit(train)
        out[f"{mix}: standardised"] = scored(scaler.transform(train), scaler.transform(test),
                                             split)
        if mix == "trainable":
            out[f"{mix}: without gamma"] = scored(train / gamma, test / gamma, split)
    return out


def study_test_texts(bilm, split, seed) -> dict:
    both = BiLM(random_state=seed).fit(list(split.X_train) + list(split.X_test))
    out = {}
    for label, model in (("training texts", bilm), ("training + test texts", both)):
        last = model.history_[-1]
        out[f"{label}: training perplexity"] = round(last["train_perplexity"], 1)
        out[f"{label}: held-out perplexity"] = round(last["validation_perplexity"], 1)
        for mix in ("frozen", "trainable"):
            vec = ElmoVectorizer(model, layer_mix=mix, cache_dir=None, random_state=0)
            out[f"{label}: {mix} mix"] = accuracy(vec, split)
    return out


def study_hybrid(bilm, split, seed) -> dict:
    out = {"TF-IDF alone": accuracy(TfidfVectorizer(sublinear_tf=True), split, C=10)}
    for weight in HYBRID_WEIGHTS:
        hybrid = make_hybrid(frozen(bilm), elmo_weight=weight)
        out[f"hybrid, elmo_weight={weight}"] = accuracy(hybrid, split, C=10)
    return out


RUN = {"layers": study_layers, "train-embedding": study_train_embedding,
       "scales": study_scales, "test-texts": study_test_texts, "hybrid": study_hybrid}


def render(results: dict) -> str:
    parts = ["First split of each suite task (its split and seed), the from-scratch "
             "default `BiLM(random_state=seed)`; accuracy unless the row says otherwise."]
    tasks = [t for t in TASKS if t in results["tasks"]]
    for study in STUDIES:
        rows = {}
        for task in tasks:
            for name, value in results["tasks"][task].get(study, {}).items():
                rows.setdefault(name, {})[task] = value
        if not rows:
            continue
        parts.append(f"\n**{study}**\n")
        parts.append(markdown_table(["", *tasks], [
            [name, *[("" if task not in values else f"{values[task]:g}") for task in tasks]]
            for name, values in rows.items()]))
    # Each task's studies come from one machine (resume never mixes them); say which.
    machines = []
    for task in tasks:
        machine = results["tasks"][task].get("machine")
        machines.append(f"{task}: " + ("not recorded (measured before tasks recorded it)"
                                       if machine is None else
                                       f"{machine['cpu']}, {'bf16' if machine['bf16_training'] else 'fp32'}"
                                       f" training on {machine['device']}"))
    parts.append("\nMeasured on (per task): " + "; ".join(machines) + ".")
    return "\n".join(parts) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS))
    parser.add_argument("--studies", nargs="+", choices=STUDIES, default=list(STUDIES))
    parser.add_argument("--resume", action="store_true",
                        help="keep the studies of the --tasks in results/layer_probe.json "
                        "that are done (tasks not named are always kept), "
                        "for tasks measured on a machine with this one's numerics (CPU, "
                        "bf16 training); a task measured elsewhere is run again whole")
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--cache-gib", type=int, default=12,
                        help="layer representations kept for reuse across studies (GiB)")
    args = parser.parse_args()
    stored = RESULTS / "layer_probe.json"
    # Tasks not run now keep their stored results; those run start over unless --resume.
    results = {"tasks": json.loads(stored.read_text())["tasks"] if stored.is_file() else {}}
    if not args.resume:
        for task in args.tasks:
            results["tasks"].pop(task, None)
    home = get_data_home(args.data_home)
    machine = numerics_fingerprint()
    # Every study reads the same biLM's layers of the same texts: keep them all.
    elmofeat.set_config(representation_cache_bytes=args.cache_gib << 30)
    for task in args.tasks:
        settings = BenchmarkSettings(datasets=(task,))
        split = load_dataset(task, settings, home).splits[0]
        done = results["tasks"].setdefault(task, {})
        # One task's studies share one biLM, whose weights depend on the machine (bf16
        # training where native, the CPU's kernels): never mix machines within a task.
        if done.get("machine") != machine:
            if done:
                print(f"{task}: its studies were measured on another machine "
                      f"({done.get('machine')}); running them again", flush=True)
            done.clear()
            done["machine"] = machine
        todo = [s for s in args.studies if s not in done]
        if not todo:
            continue
        bilm = BiLM(random_state=settings.seed).fit(split.X_train)
        for study in todo:
            done[study] = RUN[study](bilm, split, settings.seed)
            print(task, study, done[study], flush=True)
            write_results("layer_probe", results, render(results))
        elmofeat.clear_caches()


if __name__ == "__main__":
    main()
