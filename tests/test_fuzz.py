"""Property-based fuzzing: random text, parameters and labels thrown at every estimator
and at the command line.

The property everywhere: a ``TypeError`` / ``ValueError`` (or, for a path, a
``FileNotFoundError``; for a diverged pretraining, a ``FloatingPointError``) whose message
names the problem, or finite features of the documented shape. Never another exception,
never NaN.

Examples per property are bounded for CI (the ``ci`` profile); ``python
benchmarks/fuzz.py`` runs the same properties with many more examples.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elmofeat import BiLM, ElmoVectorizer, SkipGramVectorizer, SVDVectorizer
from elmofeat.elmo import caches as _bilm_cache
from elmofeat.cli import main

from .estimator_checks import make_topic_corpus

settings.register_profile("ci", max_examples=15, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                 HealthCheck.too_slow])
settings.register_profile("long", max_examples=int(os.environ.get("FUZZ_EXAMPLES", 400)),
                          deadline=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                 HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

TINY_BILM = dict(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16, random_state=0)
ALLOWED = (TypeError, ValueError)

# Text with everything that breaks naive code: control characters, NUL, lone surrogates,
# combining marks, right-to-left text, emoji, long runs, blanks.
_ALPHABET = st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF,
                          exclude_categories=())
documents = st.lists(
    st.one_of(
        st.text(_ALPHABET, max_size=40),
        st.sampled_from(["", " ", "\x00", "\ud800", "\n\t\r", "a" * 5000, "word " * 300,
                         "\u202e\u0301x", "😀 🚀", "the cat sat on the mat ."]),
    ),
    min_size=0, max_size=12,
)


def _estimators():
    X, y = make_topic_corpus(60)
    fitted = {
        "svd": SVDVectorizer(n_components=6, min_count=1, random_state=0).fit(X),
        "skipgram": SkipGramVectorizer(vector_size=6, min_count=1, epochs=2, random_state=0).fit(X),
        "elmo-frozen": ElmoVectorizer(BiLM(**TINY_BILM), cache_dir=None).fit(X),
        "elmo-mlp": ElmoVectorizer(BiLM(**TINY_BILM), layer_mix="mlp", mlp_dim=6, mix_epochs=1,
                                   cv=2, cache_dir=None, random_state=0).fit(X, y),
    }
    fitted["bilm"] = fitted["elmo-frozen"].bilm_
    return X, y, fitted


@pytest.fixture(scope="module")
def fitted():
    _bilm_cache.BILMS.clear()
    return _estimators()


def _check_features(features, n_documents, width):
    assert features.shape == (n_documents, width)
    assert features.dtype == np.float32
    assert np.isfinite(features).all()


@pytest.mark.parametrize("name", ["svd", "skipgram", "elmo-frozen", "elmo-mlp"])
@given(docs=documents)
def test_transform_of_random_text(fitted, name, docs):
    _, _, estimators = fitted
    vec = estimators[name]
    width = len(vec.get_feature_names_out())
    _check_features(vec.transform(docs), len(docs), width)


@given(docs=documents)
def test_bilm_embed_and_perplexity_of_random_text(fitted, docs):
    bilm = fitted[2]["bilm"]
    layers = bilm.embed(docs)
    assert len(layers) == len(docs)
    for doc_layers in layers:
        assert doc_layers.shape[1:] == (3, 16) and np.isfinite(doc_layers).all()
    if any(layers_.size for layers_ in layers):
        assert np.isfinite(bilm.perplexity(docs))


@given(docs=documents)
def test_fit_on_random_text(docs):
    """Fitting on junk: a clear error (e.g. no words at all) or finite features."""
    for make in (lambda: SVDVectorizer(n_components=2, min_count=1, random_state=0),
                 lambda: ElmoVectorizer(BiLM(**{**TINY_BILM, "min_count": 1}), cache_dir=None)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                features = make().fit_transform(docs)
        except ALLOWED as exc:
            assert str(exc), "an error must say what is wrong"
            continue
        assert features.shape[0] == len(docs) and np.isfinite(features).all()


# Values that break parameter handling: wrong types, NaN, infinities, negatives, zero,
# bools where numbers are expected, junk strings, containers.
values = st.one_of(
    st.integers(-3, 8), st.sampled_from([0, 1, 2, True, False, None]),
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.sampled_from([float("nan"), float("inf"), -1.0, 0.0, 0.5, 1.5, 1e3]),
    st.text(max_size=8), st.sampled_from(["random", "mean", "auto", "cpu", "cuda", "("]),
    st.lists(st.floats(-2, 2), max_size=4), st.just(object()),
)
# Parameters left out: those that name files or folders (fuzzed with paths elsewhere).
_SKIP = {"cache_dir", "checkpoint_dir", "pretrained_vectors", "tokenizer"}


def _small(estimator):
    if isinstance(estimator, ElmoVectorizer):
        return ElmoVectorizer(BiLM(**TINY_BILM), cache_dir=None, mix_epochs=1, cv=2, mlp_dim=4)
    return estimator


ESTIMATORS = {
    "svd": lambda: SVDVectorizer(n_components=4, min_count=1, random_state=0),
    "skipgram": lambda: SkipGramVectorizer(vector_size=4, min_count=1, epochs=1, random_state=0),
    "elmo": lambda: _small(ElmoVectorizer()),
    "bilm": lambda: BiLM(**TINY_BILM),
}


@pytest.mark.parametrize("name", list(ESTIMATORS))
@given(data=st.data())
def test_random_parameter_values(name, data):
    X, y = make_topic_corpus(40)
    estimator = ESTIMATORS[name]()
    keys = sorted(set(estimator.get_params(deep=False)) - _SKIP)
    key = data.draw(st.sampled_from(keys), label="parameter")
    value = data.draw(values, label="value")
    estimator.set_params(**{key: value})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if name == "bilm":
                estimator.fit(X)
                out = estimator.embed(X[:3])
                assert all(np.isfinite(layers).all() for layers in out)
                return
            features = estimator.fit_transform(X, y)
    except (*ALLOWED, FloatingPointError) as exc:
        assert str(exc), f"{key}={value!r}: an error must say what is wrong"
        return
    assert features.shape[0] == len(X) and np.isfinite(features).all(), (key, value)


labels = st.lists(st.one_of(st.integers(-1, 3), st.sampled_from([None, float("nan"), "a", "b"]),
                            st.floats(allow_nan=True, width=32)), min_size=40, max_size=40)


@given(y=labels)
def test_random_labels_for_a_supervised_mix(fitted, y):
    X = make_topic_corpus(40)[0]
    vec = ElmoVectorizer(fitted[2]["bilm"], layer_mix="trainable", mix_epochs=1, cv=2,
                         cache_dir=None, random_state=0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            features = vec.fit_transform(X, np.array(y, dtype=object))
    except ALLOWED as exc:
        assert str(exc)
        return
    _check_features(features, len(X), 16)


@given(content=st.binary(max_size=300))
def test_cli_embed_of_random_input_files(fitted, tmp_path_factory, content, capsys):
    folder = tmp_path_factory.mktemp("cli")
    model = folder / "bilm.pt"
    if not model.exists():
        fitted[2]["bilm"].save(model)
    texts = folder / "texts.txt"
    texts.write_bytes(content)
    code = main(["embed", str(model), str(texts), "-o", str(folder / "f.npy")])
    err = capsys.readouterr().err
    assert code in (0, 1)
    if code == 1:
        assert err.startswith("elmofeat embed: error: ") and len(err.strip().splitlines()) == 1
    else:
        assert np.isfinite(np.load(folder / "f.npy")).all()


@given(content=st.binary(max_size=2000))
def test_every_loader_refuses_random_files_clearly(tmp_path_factory, content):
    import elmofeat

    path = tmp_path_factory.mktemp("files") / "model"
    path.write_bytes(content)
    for load in (BiLM.load, elmofeat.load):
        with pytest.raises(ValueError):
            load(path)
