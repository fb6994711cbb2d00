"""The defects of the fifth hostile probe (`../shared/notes/probe-5.md`, D1 to D29), each
as the probe found it: every test here fails on 344dc95."""

import copy

import numpy as np
import pytest
import torch

from elmofeat import BiLM, ElmoVectorizer
from elmofeat.elmo import caches as _bilm_cache

from .estimator_checks import make_topic_corpus

SMALL = dict(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16, random_state=0)


@pytest.fixture(scope="module")
def texts():
    return make_topic_corpus(60)[0]


@pytest.fixture(scope="module")
def base(texts):
    return BiLM(**SMALL).fit(texts)


@pytest.fixture(autouse=True)
def _fresh_caches():
    _bilm_cache.BILMS.clear()
    _bilm_cache.REPRESENTATIONS.clear()
    yield
    _bilm_cache.BILMS.clear()
    _bilm_cache.REPRESENTATIONS.clear()


def adapt(bilm, texts, cache_dir=None, **params):
    return ElmoVectorizer(bilm, adapt_epochs=1, random_state=0, cache_dir=cache_dir,
                          **params).fit(texts)


# -- D1: the adapted-biLM cache key covers everything that defines the adapted model --

@pytest.mark.parametrize("change", [dict(learning_rate=1e-7), dict(max_len=8),
                                    dict(batch_size=4), dict(dropout=0.5),
                                    dict(validation_fraction=0.5), dict(min_count=1)])
def test_an_adaptation_of_a_base_with_other_parameters_is_another_model(base, texts, change):
    first = adapt(base, texts)
    changed = adapt(copy.deepcopy(base).set_params(**change), texts)
    assert changed.bilm_ is not first.bilm_
    name, value = next(iter(change.items()))
    assert getattr(changed.bilm_, name) == value


def test_the_run_settings_of_an_adaptation_do_not_adapt_twice(base, texts):
    quiet = adapt(base, texts)
    loud = adapt(copy.deepcopy(base).set_params(verbose=True), texts)
    assert loud.bilm_ is quiet.bilm_  # verbose says how a fit runs, not what it computes


def test_the_disk_cache_never_serves_one_experiment_to_another(base, texts, tmp_path):
    experiment = adapt(copy.deepcopy(base).set_params(max_len=8, learning_rate=0.05), texts,
                       cache_dir=tmp_path)
    _bilm_cache.BILMS.clear()  # a later process: the disk cache alone remembers
    plain = adapt(base, texts, cache_dir=tmp_path)
    assert (plain.bilm_.max_len, plain.bilm_.learning_rate) == (base.max_len,
                                                                  base.learning_rate)
    _bilm_cache.BILMS.clear()
    reference = adapt(base, texts)
    np.testing.assert_array_equal(plain.transform(texts), reference.transform(texts))
    assert experiment.bilm_.max_len == 8
    assert len(list(tmp_path.glob("bilm-*.pt"))) == 2


def test_a_file_planted_under_an_adaptation_key_is_not_served(base, texts, tmp_path):
    adapt(base, texts, cache_dir=tmp_path)
    (planted,) = tmp_path.glob("bilm-*.pt")
    other = copy.deepcopy(base).set_params(max_len=5)
    other.save(planted)  # another model under the key
    _bilm_cache.BILMS.clear()
    served = adapt(base, texts, cache_dir=tmp_path)
    assert served.bilm_.max_len == base.max_len and served.bilm_.warm_start


# -- D17: a RandomState never writes biLMs to the cache folder --------------------------

def test_a_random_state_instance_writes_nothing_to_the_cache_folder(base, texts, tmp_path):
    vectorizer = ElmoVectorizer(base, adapt_epochs=1, cache_dir=tmp_path,
                                random_state=np.random.RandomState(0))
    for _ in range(2):
        vectorizer.fit(texts)
    assert not list(tmp_path.glob("bilm-*.pt"))
    scratch = ElmoVectorizer(BiLM(**{**SMALL, "random_state": None}), cache_dir=tmp_path,
                             random_state=np.random.RandomState(0))
    scratch.fit(texts)
    assert not list(tmp_path.glob("bilm-*.pt"))


# -- D2, D4, D5, D12: the process-wide shared model is read-only by every route ---------

DOCS = ["the cat sat on the mat .", "stocks fell sharply on monday", "a dog barked"]


@pytest.fixture
def shared():
    """Two vectorizers on the process's shared en-base, and the features before."""
    import elmofeat

    a = ElmoVectorizer().fit(DOCS)
    b = ElmoVectorizer().fit(DOCS)
    assert b.bilm_ is a.bilm_
    yield a, b, a.transform(DOCS)
    elmofeat.clear_caches()


def test_the_shared_model_refuses_in_place_weight_changes(shared):
    a, b, before = shared
    lm = b.bilm_.language_model_
    with pytest.raises(RuntimeError, match="[Ii]nference tensor"):
        lm.load_state_dict({k: v * 1.5 for k, v in lm.state_dict().items()})
    with pytest.raises(RuntimeError, match="[Ii]nference tensor"), torch.no_grad():
        for p in lm.parameters():
            p.mul_(1.5)
    optimizer = torch.optim.AdamW(lm.parameters(), lr=0.1)
    with pytest.raises(RuntimeError, match="[Ii]nference tensor"):
        for p in lm.parameters():
            p.grad = torch.ones_like(p)
        optimizer.step()
    np.testing.assert_array_equal(a.transform(DOCS), before)


def test_the_shared_model_changed_by_half_is_no_longer_used_nor_pickled(shared):
    import pickle

    a, b, before = shared
    b.bilm_.language_model_.half()
    with pytest.raises(ValueError, match="changed in place"):
        a.transform(DOCS)
    with pytest.raises(ValueError, match="changed in place"):
        pickle.dumps(a)
    fresh = ElmoVectorizer().fit(DOCS)  # later fits read the model afresh
    assert fresh.bilm_ is not a.bilm_
    np.testing.assert_array_equal(fresh.transform(DOCS), before)


@pytest.mark.parametrize("name, value", [("max_len", 4), ("lowercase", False),
                                         ("layer_scales_", np.ones(3, np.float32))])
def test_plain_attribute_writes_on_the_shared_model_are_refused(shared, name, value):
    a, b, before = shared
    with pytest.raises(ValueError, match=f"setting {name} would change this BiLM"):
        setattr(b.bilm_, name, value)
    np.testing.assert_array_equal(a.transform(DOCS), before)


def test_train_mode_on_the_shared_modules_never_reaches_features(shared):
    a, b, before = shared
    b.bilm_.language_model_.train()
    state = torch.random.get_rng_state()
    np.testing.assert_array_equal(a.transform(DOCS), before)
    np.testing.assert_array_equal(a.transform(DOCS), before)
    assert torch.equal(torch.random.get_rng_state(), state)  # no dropout drew from it
    assert b.bilm_.language_model_.training  # the user's setting, put back


def test_the_shared_model_layer_scales_are_read_only(shared):
    a, _, _ = shared
    scales = a.bilm_.layer_scales_
    assert not scales.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        scales *= 10


def test_an_adaptation_of_the_shared_model_still_trains(shared):
    a, _, before = shared
    adapted = ElmoVectorizer(adapt_epochs=1, random_state=0, cache_dir=None).fit(DOCS * 4)
    assert adapted.bilm_ is not a.bilm_
    assert not np.array_equal(adapted.transform(DOCS), before)
    np.testing.assert_array_equal(a.transform(DOCS), before)


# -- D3: in-place weight changes reach the features of documents seen in fit --------------

def test_documents_seen_in_fit_get_the_new_weights_features(base, texts):
    bilm = copy.deepcopy(base)
    vectorizer = ElmoVectorizer(bilm, cache_dir=None).fit(texts)
    seen, unseen = vectorizer.transform(texts[:5]), vectorizer.transform(["common1 common2"])
    with torch.no_grad():
        for p in bilm.language_model_.parameters():
            p.mul_(1.5)
    assert not np.allclose(vectorizer.transform(texts[:5]), seen)
    assert not np.allclose(vectorizer.transform(["common1 common2"]), unseen)


def test_load_state_dict_on_a_private_model_is_seen_too(base, texts):
    bilm = copy.deepcopy(base)
    vectorizer = ElmoVectorizer(bilm, cache_dir=None).fit(texts)
    seen = vectorizer.transform(texts[:5])
    lm = bilm.language_model_
    lm.load_state_dict({k: v * 2 for k, v in lm.state_dict().items()})
    assert not np.allclose(vectorizer.transform(texts[:5]), seen)


# -- D7: a vectorizer fitted on a GPU transforms on a CPU-only machine ---------------------

def test_a_vectorizer_fitted_for_another_device_transforms_here(base, texts):
    import pickle

    vectorizer = ElmoVectorizer(copy.deepcopy(base), cache_dir=None).fit(texts)
    expected = vectorizer.transform(texts[:4])
    vectorizer.__dict__["device"] = "cuda"  # the state ElmoVectorizer(device="cuda").fit leaves
    vectorizer.bilm_.device = "cuda"
    loaded = pickle.loads(pickle.dumps(vectorizer))
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="torch sees no cuda device"):
            loaded.transform(texts[:4])
    np.testing.assert_array_equal(loaded.set_params(device="cpu").transform(texts[:4]),
                                  expected)
    np.testing.assert_array_equal(loaded.set_params(device="auto").transform(texts[:4]),
                                  expected)
    assert loaded.bilm_.device == "cuda"  # the fitted biLM itself is left as it was


# -- D14: a seeded adaptation leaves torch's global random state as it was ----------------

def test_a_seeded_adaptation_leaves_the_global_torch_random_state(base, texts):
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    copy.deepcopy(base).set_params(warm_start=True, max_epochs=1, random_state=0).fit(texts)
    assert torch.equal(torch.rand(3), expected)


# -- D13: WordVectorsVectorizer's shared vectors cannot be changed through one vectorizer --

def test_the_shared_word_vectors_change_for_no_other_vectorizer(tmp_path):
    import pickle

    import elmofeat
    from elmofeat import WordVectorsVectorizer

    path = tmp_path / "wv.txt"
    path.write_text("cat 1 0\ndog 0 1\nmat 1 1\n")
    docs = ["cat dog", "mat"]
    a = WordVectorsVectorizer(str(path)).fit(docs)
    b = WordVectorsVectorizer(path).fit(docs)
    before = a.transform(docs)
    b.keyed_vectors_.vectors = b.keyed_vectors_.vectors * 2  # b's own view only
    np.testing.assert_array_equal(a.transform(docs), before)
    np.testing.assert_array_equal(b.transform(docs), before * 2)
    with pytest.raises(TypeError, match="shared, read-only"):
        b.keyed_vectors_.add_vector("zorblax", np.ones(2, np.float32))
    fresh = WordVectorsVectorizer(path).fit(docs)
    assert "zorblax" not in fresh.keyed_vectors_.key_to_index and len(fresh.keyed_vectors_) == 3
    private = copy.deepcopy(a.keyed_vectors_)  # the way out the message gives
    private.add_vector("zorblax", np.ones(2, np.float32))
    assert len(private) == 4 and len(a.keyed_vectors_) == 3
    for loaded in (pickle.loads(pickle.dumps(a)), elmofeat.load(elmofeat.dump(a, tmp_path / "a.skops"))):
        np.testing.assert_array_equal(loaded.transform(docs), before)


# -- the version counters weights_key relies on (torch's Tensor._version: tested range) ---

def test_version_counters_move_on_every_in_place_route_of_this_torch():
    from elmofeat.runtime.torch_helpers import weights_stamp

    module = torch.nn.Linear(3, 3)
    stamps = [weights_stamp(module)]
    with torch.no_grad():
        module.weight.mul_(2)
    stamps.append(weights_stamp(module))
    module.load_state_dict({k: v + 1 for k, v in module.state_dict().items()})
    stamps.append(weights_stamp(module))
    module(torch.ones(1, 3)).sum().backward()
    torch.optim.SGD(module.parameters(), lr=0.1).step()
    stamps.append(weights_stamp(module))
    module.half()
    stamps.append(weights_stamp(module))
    assert len(set(stamps)) == len(stamps)
    assert weights_stamp(module) == stamps[-1]  # and nothing moves it otherwise
