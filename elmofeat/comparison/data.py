"""The train/test splits of the comparison: AG News folds and R8's standard split."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import StratifiedKFold, train_test_split

from ..datasets import load_ag_news, load_r8

TITLES = {"ag_news": "AG News", "r8": "R8"}


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


def load_dataset(key: str, settings, data_home=None) -> Dataset:
    """The splits of one dataset as the settings ask for them."""
    if key == "ag_news":
        news = load_ag_news(data_home, subset="test")
        X, y = _stratified_slice(news.data, news.target, settings.ag_news_documents, settings.seed)
        X = np.asarray(X, dtype=object)
        folds = StratifiedKFold(settings.folds, shuffle=True, random_state=settings.seed)
        splits = [
            Split(f"fold {k + 1}/{settings.folds}", list(X[train]), y[train], list(X[test]), y[test])
            for k, (train, test) in enumerate(folds.split(X, y))
        ]
        protocol = (f"{len(X):,} documents of the 7,600-row AG News partition, stratified "
                    f"{settings.folds}-fold cross-validation (seed {settings.seed}); the biLM is "
                    "pretrained on the training folds only")
        return Dataset(key, TITLES[key], protocol, list(news.target_names), splits)
    if key == "r8":
        r8 = load_r8(data_home, subset="all")  # one label coding for both partitions
        train, test = r8.partition == "train", r8.partition == "test"
        data = np.asarray(r8.data, dtype=object)
        X_train, y_train = _stratified_slice(data[train], r8.target[train],
                                             settings.r8_train_documents, settings.seed)
        X_test, y_test = _stratified_slice(data[test], r8.target[test],
                                           settings.r8_test_documents, settings.seed)
        protocol = (f"R8 standard split: {len(X_train):,} training and {len(X_test):,} test "
                    "documents; the biLM is pretrained on the training documents only")
        return Dataset(key, TITLES[key], protocol, list(r8.target_names),
                       [Split("standard split", X_train, y_train, X_test, y_test)])
    raise ValueError(f"unknown dataset {key!r}")
