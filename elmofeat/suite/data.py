"""The train/test splits of the suite: stratified folds (AG News, CR, MPQA) and R8's
standard split."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import StratifiedKFold, train_test_split

from ..datasets import load_ag_news, load_cr, load_mpqa, load_r8

TITLES = {"ag_news": "AG News", "r8": "R8", "cr": "CR", "mpqa": "MPQA"}
KINDS = {"ag_news": "news topic, 4 classes, ~40 words",
         "r8": "newswire topic, 8 classes, long documents",
         "cr": "product-review sentiment, 2 classes, ~20 words",
         "mpqa": "opinion polarity of short phrases, 2 classes, ~3 words"}


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


def _cross_validated(key, data, target, class_names, size, folds, seed, partition) -> Dataset:
    X, y = _stratified_slice(data, target, size, seed)
    X = np.asarray(X, dtype=object)
    splitter = StratifiedKFold(folds, shuffle=True, random_state=seed)
    splits = [Split(f"fold {k + 1}/{folds}", list(X[train]), y[train], list(X[test]), y[test])
              for k, (train, test) in enumerate(splitter.split(X, y))]
    protocol = (f"{len(X):,} documents of {partition}, stratified {folds}-fold "
                f"cross-validation (seed {seed}); every biLM is pretrained on the training "
                "folds only")
    return Dataset(key, TITLES[key], protocol, list(class_names), splits)


def load_dataset(key: str, settings, data_home=None) -> Dataset:
    """The splits of one dataset as the settings ask for them."""
    seed, folds = settings.seed, settings.n_folds(key)
    if key == "ag_news":
        news = load_ag_news(data_home, subset="test")
        return _cross_validated(key, news.data, news.target, news.target_names,
                                settings.ag_news_documents, folds, seed,
                                "the 7,600-row AG News test partition")
    if key == "cr":
        cr = load_cr(data_home)
        return _cross_validated(key, cr.data, cr.target, cr.target_names,
                                settings.cr_documents, folds, seed, "CR (3,775 sentences)")
    if key == "mpqa":
        mpqa = load_mpqa(data_home)
        return _cross_validated(key, mpqa.data, mpqa.target, mpqa.target_names,
                                settings.mpqa_documents, folds, seed,
                                "MPQA (10,606 phrases)")
    if key == "r8":
        r8 = load_r8(data_home, subset="all")  # one label coding for both partitions
        train, test = r8.partition == "train", r8.partition == "test"
        data = np.asarray(r8.data, dtype=object)
        X_train, y_train = _stratified_slice(data[train], r8.target[train],
                                             settings.r8_train_documents, seed)
        X_test, y_test = _stratified_slice(data[test], r8.target[test],
                                           settings.r8_test_documents, seed)
        protocol = (f"R8 standard split: {len(X_train):,} training and {len(X_test):,} test "
                    "documents; every biLM is pretrained on the training documents only")
        return Dataset(key, TITLES[key], protocol, list(r8.target_names),
                       [Split("standard split", X_train, y_train, X_test, y_test)])
    raise ValueError(f"unknown dataset {key!r}")
