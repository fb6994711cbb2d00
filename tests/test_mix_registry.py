"""Layer mixes come from one registry (elmofeat.mixes): a mix declared in one file plus one
registry line works everywhere a built-in one does."""

import functools
import inspect

import numpy as np
import pytest
from joblib import parallel_config

import elmofeat
from elmofeat import BiLM, ElmoVectorizer, mixes
from elmofeat._param_validation import InvalidParameterError

from . import toy_mix
from .estimator_checks import (CHECKS, check_pickle_in_fresh_process, check_pipeline_and_grid_search,
                               check_safe_file_in_fresh_process, make_topic_corpus)

TINY_BILM = dict(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16, random_state=0)
# What a fresh process runs before loading a file that holds the toy mix.
PRELUDE = "import elmofeat.mixes, tests.toy_mix; elmofeat.mixes.register(tests.toy_mix.SPEC)"


@pytest.fixture
def toy_registered():
    mixes.register(toy_mix.SPEC)  # the one registry line
    yield toy_mix.SPEC
    mixes.unregister("top")


@pytest.fixture(scope="module")
def corpus():
    return make_topic_corpus()


def _toy_vectorizer():
    return ElmoVectorizer(BiLM(**TINY_BILM), layer_mix="top", mix_epochs=3, cv=2,
                          cache_dir=None, random_state=0)


def test_the_builtin_mixes_are_registered_in_order():
    assert mixes.mix_names() == ("trainable", "frozen", "concat", "mlp")
    assert not mixes.get_mix("frozen").needs_labels and not mixes.get_mix("concat").needs_labels
    assert mixes.get_mix("trainable").commutes_with_mean_pooling
    assert not mixes.get_mix("mlp").commutes_with_mean_pooling


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_a_registered_toy_mix_passes_the_contract_suite(toy_registered, check, corpus, tmp_path):
    X, y = corpus
    if check in (check_pickle_in_fresh_process, check_safe_file_in_fresh_process):
        check = functools.partial(check, prelude=PRELUDE)
    # A registered mix exists in the processes that register it (documented): the search's
    # workers are threads here; process workers would import the registering module.
    backend = "threading" if check is check_pipeline_and_grid_search else "loky"
    with parallel_config(backend=backend):
        if "tmp_path" in inspect.signature(check).parameters:
            check(_toy_vectorizer(), X, y, tmp_path=tmp_path)
        else:
            check(_toy_vectorizer(), X, y)


def test_a_toy_mix_dumps_and_loads_and_learns(toy_registered, corpus, tmp_path):
    X, y = corpus
    vec = _toy_vectorizer().fit(X, y)
    assert isinstance(vec.mix_, toy_mix.TopLayerMix)
    assert vec.layer_weights_ is None and vec.gamma_ is None
    assert vec.__sklearn_tags__().target_tags.required
    loaded = elmofeat.load(elmofeat.dump(vec, tmp_path / "toy.skops"))
    np.testing.assert_array_equal(loaded.transform(X), vec.transform(X))
    # It learned: its features separate the topics better than the untrained map's.
    untrained = ElmoVectorizer(BiLM(**TINY_BILM), layer_mix="top", mix_epochs=1,
                               mix_learning_rate=1e-9, cv=2, cache_dir=None,
                               random_state=0).fit(X, y)
    assert not np.allclose(untrained.transform(X), vec.transform(X))


def test_an_unregistered_mix_is_refused_and_its_types_untrusted(corpus, tmp_path):
    X, y = corpus
    with pytest.raises(InvalidParameterError, match="layer_mix"):
        ElmoVectorizer(BiLM(**TINY_BILM), layer_mix="top", cache_dir=None).fit(X, y)
    assert "tests.toy_mix.TopLayerMix" not in mixes.trusted_type_names()
    mixes.register(toy_mix.SPEC)
    try:
        vec = _toy_vectorizer().fit(X, y)
        path = elmofeat.dump(vec, tmp_path / "toy.skops")
    finally:
        mixes.unregister("top")
    with pytest.raises(ValueError, match="does not trust: tests.toy_mix.TopLayerMix"):
        elmofeat.load(path)


def test_registry_refuses_duplicates_and_non_specs():
    with pytest.raises(ValueError, match="registered already"):
        mixes.register(mixes.get_mix("frozen"))
    with pytest.raises(TypeError, match="MixSpec"):
        mixes.register("frozen")
    with pytest.raises(ValueError, match="layer_mix must be one of"):
        mixes.get_mix("nope")
    with pytest.raises(KeyError, match="nope"):
        mixes.unregister("nope")


def test_mix_weights_for_a_mix_that_does_not_read_them_is_refused(corpus):
    X, y = corpus
    vec = ElmoVectorizer(BiLM(**TINY_BILM), layer_mix="trainable", mix_weights=[1, 1, 1],
                         cache_dir=None)
    with pytest.raises(ValueError, match="only used with layer_mix='frozen'"):
        vec.fit(X, y)


def test_importing_the_registry_loads_no_heavy_package():
    import subprocess
    import sys

    code = ("import sys, elmofeat.mixes as m; m.mix_names(); "
            "print(sorted(k for k in ('torch', 'sklearn', 'scipy') if k in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_any_mix_is_applied_on_one_blas_thread(toy_registered, corpus):
    """A mix's products (the toy's matrix product too) run on one BLAS thread, so its
    features do not depend on BLAS's thread count (a fresh process with another count
    gave features 2e-7 apart with numpy 1.26's OpenBLAS)."""
    from threadpoolctl import threadpool_info

    X, y = corpus
    vec = _toy_vectorizer().fit(X, y)
    seen = []
    real_apply = toy_mix.TopLayerMix.apply

    def apply(self, layers):
        seen.extend(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")
        return real_apply(self, layers)

    toy_mix.TopLayerMix.apply = apply
    try:
        vec.transform(X[:5])
        vec.mix_.pool_stream([np.ones((3, 3, 16), np.float32)], "mean")
    finally:
        toy_mix.TopLayerMix.apply = real_apply
    assert seen and set(seen) == {1}
