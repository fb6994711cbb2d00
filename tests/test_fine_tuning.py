"""ElmoVectorizer(fine_tune_epochs=...) and ElmoClassifier: one fine-tuning, cross-fitted
features, shared by the candidates of a search, keyed by every setting (issue 70)."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from elmofeat import BiLM, ElmoClassifier, ElmoVectorizer
from elmofeat.bilm import finetune, sharing
from elmofeat.elmo.fine_tuning import FINE_TUNED

from .estimator_checks import make_topic_corpus

TINY_BILM = dict(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16, random_state=0)


@pytest.fixture(scope="module")
def corpus():
    docs, y = make_topic_corpus(80)
    return [f"{i} {doc}" for i, doc in enumerate(docs)], y  # every text its own


@pytest.fixture(scope="module")
def tiny(corpus):
    return BiLM(**TINY_BILM).fit(corpus[0])


@pytest.fixture
def calls(monkeypatch):
    """The texts of every fine-tuning this test runs (the cache starts empty)."""
    FINE_TUNED.clear()
    import functools

    made = []
    real = finetune.fine_tune

    @functools.wraps(real)  # its signature: what recipe() reads the defaults from
    def recording(bilm, texts, y, **settings):
        made.append(list(texts))
        return real(bilm, texts, y, **settings)

    monkeypatch.setattr(finetune, "fine_tune", recording)
    yield made
    FINE_TUNED.clear()


def vectorizer(bilm, **params):
    return ElmoVectorizer(bilm, **{"fine_tune_epochs": 1, "bag_size": 6, "cv": 2,
                                   "cache_dir": None, "random_state": 0, **params})


def test_without_labels_or_epochs_nothing_changes(corpus, tiny, calls):
    X, y = corpus
    plain = ElmoVectorizer(tiny, bag_size=6, cache_dir=None, random_state=0).fit(X)
    np.testing.assert_array_equal(vectorizer(tiny).fit(X).transform(X), plain.transform(X))
    np.testing.assert_array_equal(vectorizer(tiny, fine_tune_epochs=0).fit(X, y).transform(X),
                                  plain.transform(X))
    assert calls == []


def test_a_copy_is_fine_tuned_and_gives_the_features(corpus, tiny, calls):
    X, y = corpus
    before = {k: v.clone() for k, v in tiny.language_model_.state_dict().items()}
    tuned = vectorizer(tiny).fit(X, y)
    assert tuned.bilm_ is not tiny and sharing.is_shared(tuned.bilm_)
    for name, value in tiny.language_model_.state_dict().items():
        assert value.equal(before[name]), name
    plain = vectorizer(tiny, fine_tune_epochs=0).fit(X, y)
    assert not np.array_equal(tuned.transform(X), plain.transform(X))
    assert calls == [X]


def test_fit_transform_features_come_from_models_that_never_saw_those_rows(corpus, tiny, calls):
    import copy

    from elmofeat.elmo.fine_tuning import recipe

    X, y = corpus
    folds = [(np.arange(0, 80, 2), np.arange(1, 80, 2)),
             (np.arange(1, 80, 2), np.arange(0, 80, 2))]
    features = vectorizer(tiny, cv=folds).fit_transform(X, y)
    assert calls[0] == X  # the model transform uses: every labelled text
    assert calls[1:] == [[X[i] for i in train] for train, _ in folds]
    full = vectorizer(tiny, cv=folds).fit(X, y)
    assert len(calls) == 3  # the same fit again: the cached model
    seed = int(np.random.RandomState(0).randint(2**31 - 1))  # the fit's first draw
    for train, test in folds:
        fold = FINE_TUNED.get(tiny, [X[i] for i in train], y[train], recipe(1, seed))
        assert len(calls) == 3 and fold.bilm is not full.bilm_
        # that fold's model through the full fit's scales, mix and bag
        twin = copy.copy(full)
        twin.bilm_ = fold.bilm
        np.testing.assert_array_equal(features[test], twin.transform([X[i] for i in test]))


def test_unlabelled_rows_get_the_full_fit_features(corpus, tiny, calls):
    X, y = corpus
    partial = np.where(np.arange(len(y)) % 4 == 0, -1, y)
    vec = vectorizer(tiny)
    features = vec.fit_transform(X, partial)
    assert calls[0] == [X[i] for i in np.flatnonzero(partial != -1)]
    unlabelled = np.flatnonzero(partial == -1)
    np.testing.assert_array_equal(features[unlabelled],
                                  vec.transform([X[i] for i in unlabelled]))


def test_a_search_fine_tunes_once_per_training_set(corpus, tiny, calls):
    X, y = corpus
    pipe = Pipeline([("vec", vectorizer(tiny)), ("clf", LogisticRegression(max_iter=300))])
    grid = {"vec__layer_mix": ["concat", "frozen"], "vec__bag_size": [None, 6],
            "clf__C": [0.1, 1.0]}
    GridSearchCV(pipe, grid, cv=2).fit(X, y)
    # 2 outer splits and the refit, each: the full fit and its 2 cross-fitting folds;
    # the 8 candidates share them (without the cache: 8 * 2 * 3 + 3 = 51)
    assert len(calls) == 3 * 3
    assert len({tuple(c) for c in calls}) == 9


def test_every_setting_keys_the_fine_tuned_model(corpus, tiny, calls):
    X, y = corpus
    base = ElmoClassifier(tiny, epochs=1, random_state=0)
    first = base.fit(X, y).bilm_
    assert ElmoClassifier(tiny, epochs=1, random_state=0, verbose=True).fit(X, y).bilm_ is first
    assert ElmoClassifier(tiny, epochs=1, random_state=0, n_threads=1).fit(X, y).bilm_ is first
    assert len(calls) == 1
    changes = dict(epochs=2, learning_rate=2e-3, decay=2.0, gradual_unfreezing=False,
                   dropout=0.2, C=0.5, early_stopping=True, validation_fraction=0.2,
                   batch_size=8, class_weight="balanced", random_state=1)
    for name, value in changes.items():
        other = ElmoClassifier(tiny, **{"epochs": 1, "random_state": 0, name: value})
        assert other.fit(X, y).bilm_ is not first, name
    assert len(calls) == 1 + len(changes)
    ElmoClassifier(tiny, epochs=1, random_state=0).fit(X, y[::-1])  # other labels
    ElmoClassifier(tiny, epochs=1, random_state=0).fit(X[:60], y[:60])  # other texts
    assert len(calls) == 3 + len(changes)


def test_the_vectorizer_and_the_classifier_share_one_fine_tuning(corpus, tiny, calls):
    X, y = corpus
    clf = ElmoClassifier(tiny, epochs=1, random_state=0).fit(X, y)
    vec = vectorizer(tiny).fit(X, y)
    assert vec.bilm_ is clf.bilm_ and len(calls) == 1


def test_numeric_targets_are_refused_before_anything_trains(corpus, tiny, calls):
    X, _ = corpus
    with pytest.raises(ValueError, match="fine_tune_epochs=1 fine-tunes the biLM as a "
                                         "classifier"):
        vectorizer(tiny).fit(X, np.linspace(0, 1, len(X)))
    assert calls == []


def test_verbose_shows_the_fine_tuning_with_time_left(corpus, tiny, calls, capsys):
    X, y = corpus
    vectorizer(tiny, verbose=True).fit(X, y)
    err = capsys.readouterr().err
    assert "fine-tuning" in err and "<" in err  # tqdm's elapsed<remaining


def test_the_cached_copies_of_a_model_share_one_word_table(corpus, tiny, calls):
    """Marking a cached copy read-only made its tensors inference tensors, one new word
    table per fine-tuned copy of a user's own model; they now share one frozen twin."""
    X, y = corpus
    a = ElmoClassifier(tiny, epochs=1, random_state=0).fit(X, y).bilm_
    b = ElmoClassifier(tiny, epochs=2, random_state=0).fit(X, y).bilm_
    tables = [m.language_model_.encoder.token_layer.embedding.weight for m in (a, b)]
    assert tables[0] is tables[1] and a is not b
    assert tables[0].equal(tiny.language_model_.encoder.token_layer.embedding.weight)
