"""The train/test splits of the suite's tasks, as each task's protocol declares them
(stratified folds, or the task's standard split; see :mod:`elmofeat.suite.tasks`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import StratifiedKFold, train_test_split

from .tasks import TASKS, CrossValidation


@dataclass
class Split:
    name: str
    X_train: list
    y_train: np.ndarray
    X_test: list
    y_test: np.ndarray


@dataclass
class Dataset:
    key: str
    title: str
    protocol: str
    class_names: list
    splits: list


def _stratified_slice(X, y, size, seed):
    """``size`` documents with the class proportions of ``y`` (all of them if None)."""
    if size is None or size >= len(X):
        return list(X), np.asarray(y)
    kept, _, y_kept, _ = train_test_split(list(X), y, train_size=size, stratify=y,
                                          random_state=seed)
    return kept, np.asarray(y_kept)


def _cross_validated(task, data, target, size, folds, seed, max_splits=None) -> tuple[list, str]:
    X, y = _stratified_slice(data, target, size, seed)
    X = np.asarray(X, dtype=object)
    splitter = StratifiedKFold(folds, shuffle=True, random_state=seed)
    splits = [Split(f"fold {k + 1}/{folds}", list(X[train]), y[train], list(X[test]), y[test])
              for k, (train, test) in enumerate(splitter.split(X, y))][:max_splits]
    protocol = (f"{len(X):,} documents of {task.protocol.partition}, stratified {folds}-fold "
                f"cross-validation (seed {seed})"
                + (f", its first {len(splits)} fold{'s' * (len(splits) > 1)} run"
                   if len(splits) < folds else "")
                + "; every biLM is pretrained on the training folds only")
    return splits, protocol


def _fixed_split(task, bunch, train_size, test_size, seed) -> tuple[list, str]:
    partition = np.asarray(bunch.partition)
    train, test = partition == "train", partition == "test"
    data = np.asarray(bunch.data, dtype=object)
    X_train, y_train = _stratified_slice(data[train], bunch.target[train], train_size, seed)
    X_test, y_test = _stratified_slice(data[test], bunch.target[test], test_size, seed)
    counts = []
    for kept, whole, what in ((X_train, train, "training"), (X_test, test, "test")):
        counts.append(f"{len(kept):,} {what}" if len(kept) == whole.sum() else
                      f"{len(kept):,} of its {whole.sum():,} {what}")
    sampled = "" if (len(X_train), len(X_test)) == (train.sum(), test.sum()) else (
        f" (a stratified sample, seed {seed})")
    protocol = (f"{task.title} standard split: {counts[0]} and {counts[1]} documents"
                f"{sampled}; every biLM is pretrained on the training documents only")
    return [Split(task.protocol.name, X_train, y_train, X_test, y_test)], protocol


def load_dataset(key: str, settings, data_home=None) -> Dataset:
    """The splits of one task as the settings ask for them."""
    task = TASKS[key]
    bunch = task.load(data_home)
    sizes = [settings.size(name) for name in task.protocol.size_settings(key)]
    if isinstance(task.protocol, CrossValidation):
        splits, protocol = _cross_validated(task, bunch.data, bunch.target, *sizes,
                                            settings.n_folds(key), settings.seed,
                                            settings.max_splits)
    else:
        splits, protocol = _fixed_split(task, bunch, *sizes, settings.seed)
    return Dataset(key, task.title, protocol, list(bunch.target_names), splits)
