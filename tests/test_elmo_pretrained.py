"""ElmoVectorizer with a pretrained biLM named or loaded, and its adaptation to X."""

import copy
from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from elmofeat import BiLM, ElmoVectorizer
from elmofeat.elmo import caches as _bilm_cache
from elmofeat.bilm import hub

from .estimator_checks import make_topic_corpus

DATA = Path(__file__).parent / "data"

SMALL_BILM = dict(embedding_dim=8, hidden_dim=8, max_epochs=1, batch_size=16, random_state=0)


@pytest.fixture(scope="module")
def corpus():
    return make_topic_corpus(120)


@pytest.fixture(scope="module")
def general(corpus, tmp_path_factory):
    """A small 'general' model saved as a pretrained folder."""
    folder = tmp_path_factory.mktemp("general") / "tiny-general"
    bilm = BiLM(**SMALL_BILM).fit(corpus[0][:60])
    bilm.save_pretrained(folder, dtype="float32")
    return folder


@pytest.fixture(autouse=True)
def _fresh_caches(monkeypatch):
    _bilm_cache.BILMS.clear()
    _bilm_cache.REPRESENTATIONS.clear()
    monkeypatch.setattr(_bilm_cache, "_PRETRAINED", __import__("collections").OrderedDict())
    yield


def test_a_named_or_path_biLM_is_loaded_once_and_never_trained(corpus, general, monkeypatch):
    X, y = corpus
    monkeypatch.setitem(hub.REGISTRY, "tiny-general", hub.ModelSource(
        "tiny-general", hub.file_sha256(general / "bilm.pt"), folder=str(general)))
    loads = []
    original = BiLM.load.__func__
    monkeypatch.setattr(BiLM, "load", classmethod(
        lambda cls, *a, **k: loads.append(a) or original(cls, *a, **k)))
    fits = []
    monkeypatch.setattr(BiLM, "_fit", lambda self, X: fits.append(1))
    by_name = ElmoVectorizer("tiny-general", cache_dir=None, random_state=0).fit(X)
    by_path = ElmoVectorizer(general, cache_dir=None, random_state=0).fit(X)
    assert by_name.bilm_ is by_path.bilm_  # one shared copy
    assert len(loads) == 1 and not fits
    np.testing.assert_array_equal(by_name.transform(X[:5]), by_path.transform(X[:5]))
    # A search over the mix clones the vectorizer: still one load, no pretraining.
    search = GridSearchCV(Pipeline([("elmo", ElmoVectorizer("tiny-general", cache_dir=None,
                                                            random_state=0)),
                                    ("clf", LogisticRegression(max_iter=500))]),
                          {"elmo__layer_mix": ["frozen", "trainable"]}, cv=2).fit(X, y)
    assert len(loads) == 1 and not fits
    assert search.best_estimator_.named_steps["elmo"].bilm_ is by_name.bilm_
    assert clone(by_name).bilm == "tiny-general"


def test_adaptation_trains_a_copy_once_and_changes_the_features(corpus, general):
    X, y = corpus
    base = BiLM.from_pretrained(general)
    before = copy.deepcopy(base.language_model_.state_dict())
    plain = ElmoVectorizer(base, cache_dir=None, random_state=0).fit(X)
    adapted = ElmoVectorizer(base, adapt_epochs=2, cache_dir=None, random_state=0).fit(X)
    assert adapted.bilm_ is not base
    for name, tensor in base.language_model_.state_dict().items():
        assert torch.equal(tensor, before[name]), name  # the pretrained model is untouched
    assert [h.get("warm_start", False) for h in adapted.bilm_.history_][-2:] == [True, True]
    assert adapted.bilm_.perplexity(X) < base.perplexity(X)
    assert not np.allclose(adapted.transform(X[:5]), plain.transform(X[:5]))
    # Clones of a search share one adapted copy (the cache), and the same seed gives
    # the same adapted model.
    again = ElmoVectorizer(base, adapt_epochs=2, cache_dir=None, random_state=0).fit(X)
    assert again.bilm_ is adapted.bilm_
    _bilm_cache.BILMS.clear()
    fresh = ElmoVectorizer(base, adapt_epochs=2, cache_dir=None, random_state=0).fit(X)
    np.testing.assert_array_equal(fresh.transform(X[:5]), adapted.transform(X[:5]))


def test_adaptation_is_cached_on_disk_across_processes(corpus, general, tmp_path):
    X, _ = corpus
    ElmoVectorizer(general, adapt_epochs=1, cache_dir=tmp_path, random_state=0).fit(X)
    assert len(list(tmp_path.glob("bilm-*.pt"))) == 1
    _bilm_cache.BILMS.clear()
    reloaded = ElmoVectorizer(general, adapt_epochs=1, cache_dir=tmp_path, random_state=0).fit(X)
    assert reloaded.bilm_.history_[-1]["warm_start"] is True
    assert (tmp_path / "pretrain.log").read_text().count("\n") == 1


def test_adapt_epochs_needs_a_pretrained_biLM(corpus):
    X, _ = corpus
    with pytest.raises(ValueError, match="adapt_epochs continues the pretraining"):
        ElmoVectorizer(BiLM(**SMALL_BILM), adapt_epochs=1, cache_dir=None).fit(X)
    with pytest.raises(ValueError, match="neither a registered pretrained model"):
        ElmoVectorizer("no-such-model", cache_dir=None).fit(X)


def test_a_pickle_names_the_shipped_model_instead_of_holding_its_weights(corpus, general,
                                                                         monkeypatch, tmp_path):
    import pickle

    import elmofeat

    X, y = corpus
    monkeypatch.setitem(hub.REGISTRY, "tiny-general", hub.ModelSource(
        "tiny-general", hub.file_sha256(general / "bilm.pt"), folder=str(general)))
    # no bag: its codebook would weigh in both pickles alike
    vec = ElmoVectorizer("tiny-general", bag_size=None, cache_dir=None, random_state=0).fit(X)
    elsewhere = tmp_path / "copy"  # the same weights, not the registered folder
    __import__("shutil").copytree(general, elsewhere)
    by_path = ElmoVectorizer(elsewhere, bag_size=None, cache_dir=None, random_state=0).fit(X)
    small, full = pickle.dumps(vec), pickle.dumps(by_path)
    assert len(small) < len(full) / 3  # the path's biLM is held, the name's is named
    # The registered folder by path is the same (checked) shared copy: named too.
    same = ElmoVectorizer(general, bag_size=None, cache_dir=None, random_state=0).fit(X)
    assert same.bilm_ is vec.bilm_ and len(pickle.dumps(same)) < len(full) / 3
    restored = pickle.loads(small)
    assert restored.bilm_ is vec.bilm_  # the process's shared copy
    np.testing.assert_array_equal(restored.transform(X[:5]), vec.transform(X[:5]))
    # The same through elmofeat.dump / load (no pickle).
    path = elmofeat.dump(vec, tmp_path / "vec.skops")
    np.testing.assert_array_equal(elmofeat.load(path).transform(X[:5]), vec.transform(X[:5]))
    # Another elmofeat shipping other weights under the name refuses it clearly.
    monkeypatch.setitem(hub.REGISTRY, "tiny-general", hub.ModelSource(
        "tiny-general", "0" * 64, folder=str(general)))
    with pytest.raises(ValueError, match="has other weights"):
        pickle.loads(small)
    del hub.REGISTRY["tiny-general"]
    with pytest.raises(ValueError, match="does not have it"):
        pickle.loads(small)
    # An adapted copy is not the shipped model: its weights are held.
    monkeypatch.setitem(hub.REGISTRY, "tiny-general", hub.ModelSource(
        "tiny-general", hub.file_sha256(general / "bilm.pt"), folder=str(general)))
    adapted = ElmoVectorizer("tiny-general", adapt_epochs=1, cache_dir=None, random_state=0).fit(X)
    assert len(pickle.dumps(adapted)) > len(small) * 3


def test_the_default_is_the_shipped_general_model(corpus, monkeypatch):
    X, y = corpus
    for name in ("en-base", "en-small", "en-distil"):  # all ship, pinned, within the size limit
        source = hub.REGISTRY[name]
        folder = hub.PACKAGE_MODELS / source.folder
        assert hub.file_sha256(folder / "bilm.pt") == source.sha256
        assert hub.config_digest(folder / "config.json") == source.config_sha256
        assert (folder / "bilm.pt").stat().st_size < 60 * 2**20
        card = (folder / "README.md").read_text()
        assert source.sha256 in card and "Held-out perplexity" in card
    fits = []
    monkeypatch.setattr(BiLM, "_fit", lambda self, X: fits.append(1))
    vec = ElmoVectorizer(random_state=0).fit(X[:40])
    assert not fits  # nothing pretrained
    assert vec.get_params()["bilm"] == "en-base"
    assert vec.bilm_ is _bilm_cache.shared_pretrained("en-base")
    assert vec.bilm_.verbose is False  # no progress bars of the model's author
    features = vec.transform(["A smartphone with a great battery.", ""])
    # The default mix concatenates the three layers; the contextual bag follows.
    assert features.shape == (2, 3 * vec.bilm_.output_dim_ + vec.bag_.n_features)
    assert vec.bag_.n_features > 1 and np.isfinite(features).all()
    assert not features[1].any()  # an empty document is a zero vector
    # The modern corpus predicts "smartphone"; the old books' model reads it through
    # its GloVe vector only.
    assert "smartphone" in vec.bilm_.vocabulary_.tokens[:vec.bilm_.n_output_words_]
    old = _bilm_cache.shared_pretrained("en-small")
    assert "smartphone" in old.vocabulary_.tokens[old.n_output_words_:]


def test_the_distilled_model_is_en_base_taught_and_says_by_whom():
    """en-distil (issue 69): en-base's vocabulary, its layers trained further, its own
    layer spreads, and a card and provenance that name the teacher, its licence, the
    teacher texts and the cost."""
    import json

    base, student = BiLM.from_pretrained("en-base"), BiLM.from_pretrained("en-distil")
    assert student.vocabulary_.tokens == base.vocabulary_.tokens
    ours, theirs = student.language_model_.state_dict(), base.language_model_.state_dict()
    assert ours.keys() == theirs.keys()
    changed = {k for k in ours if not torch.equal(ours[k], theirs[k])}
    assert any("forward_lstm" in k for k in changed) and any("backward_lstm" in k for k in changed)
    folder = hub.PACKAGE_MODELS / hub.REGISTRY["en-distil"].folder
    facts = json.loads((folder / "distillation.json").read_text())
    # the word table trained (its rows of the teacher texts' words), as the card says
    table = "encoder.token_layer.embedding.weight"
    moved = int((ours[table] != theirs[table]).any(1).sum())
    assert moved == facts["word_table"]["rows_changed"] > 0
    assert f"{moved:,} of its {len(ours[table]):,} rows moved" in (folder / "README.md").read_text()
    assert facts["from"] == "en-base" and facts["teacher"] == "all-MiniLM-L6-v2"
    np.testing.assert_allclose(student.layer_scales_, facts["layer_scales"]["values"])
    assert not np.allclose(student.layer_scales_, base.layer_scales_, rtol=0.02)
    card = (folder / "README.md").read_text()
    assert f"{facts['texts']:,} pieces" in card and facts["teacher_texts_sha256"] in card
    assert "all-MiniLM-L6-v2" in card and "Apache-2.0" in card
    assert f"{facts['train_minutes']:.1f} min on {facts['host']}" in card
    assert f"--texts {facts['texts']} --epochs {facts['settings']['epochs']}" in card
    assert "Apache License" in (folder / "licenses" / "all-MiniLM-L6-v2.LICENSE.Apache-2.0.txt"
                                ).read_text()
    for text in (hub.PACKAGE_MODELS / "en-base" / "licenses").glob("*.txt"):
        assert (folder / "licenses" / text.name).read_text() == text.read_text()
    vec = ElmoVectorizer("en-distil", random_state=0).fit(
        ["a first text about the markets", "a second text about a phone", "a third"])
    assert vec.transform(["the markets fell"]).shape == (1, 768 + vec.bag_.n_features)


def test_a_pickle_of_the_0_2_0_default_keeps_its_model_and_features():
    """A vectorizer fitted and saved by elmofeat 0.2.0 with ElmoVectorizer()'s default
    of then (en-small; tests/data, written by joblib.dump and elmofeat.dump) loads en-small,
    not the new default, and gives the features it gave then."""
    import joblib

    import elmofeat

    texts = ["the battery lasts all day and the screen is great",
             "stocks fell sharply after the central bank raised rates",
             "can you book a table for two at seven tonight ?",
             "a terrible , noisy camera that broke within a week"]
    expected = np.load(DATA / "elmo_default_0.2.0_features.npy")
    for loaded in (joblib.load(DATA / "elmo_default_0.2.0.pkl"),
                   elmofeat.load(DATA / "elmo_default_0.2.0.skops")):
        assert loaded.get_params()["bilm"] == "en-small"
        assert loaded.bilm_ is _bilm_cache.shared_pretrained("en-small")
        np.testing.assert_allclose(loaded.transform(texts), expected, rtol=1e-5, atol=1e-6)


def test_what_defines_a_shipped_models_features_is_all_checked(tmp_path, monkeypatch):
    """en-small's layer scales live in its config.json: a changed value there changed
    every feature with no error, and an unreadable file was taken for an old model."""
    import json
    import shutil

    shipped = hub.PACKAGE_MODELS / hub.REGISTRY["en-small"].folder
    folder = tmp_path / "copy"
    shutil.copytree(shipped, folder)
    source = hub.REGISTRY["en-small"]
    monkeypatch.setitem(hub.REGISTRY, "copy", hub.ModelSource(
        "copy", source.sha256, folder=str(folder), config_sha256=source.config_sha256))
    config = json.loads((folder / "config.json").read_text())
    # Line endings and indentation (a checkout may change them) do not count.
    (folder / "config.json").write_text(json.dumps(config, indent=1).replace("\n", "\r\n"))
    assert BiLM.from_pretrained("copy").layer_scales_.tolist() == pytest.approx(
        config["layer_scales"])
    changed = dict(config, layer_scales=[1.0, 1.0, 1e-4])
    (folder / "config.json").write_text(json.dumps(changed))
    with pytest.raises(ValueError, match="configuration of pretrained model 'copy'.*changed"):
        BiLM.from_pretrained("copy")
    (folder / "config.json").write_text("{oops")
    with pytest.raises(ValueError, match="config.json cannot be read"):
        BiLM.from_pretrained("copy")
    # The same folder loaded by its path (no registry pin): an unreadable config.json
    # beside weights that need its layer scales is an error, not an unscaled model.
    with pytest.raises(ValueError, match="holds the layer scales"):
        BiLM.from_pretrained(folder)
    with pytest.raises(ValueError, match="config_sha256 must be 64 hexadecimal"):
        hub.register("x", sha256="0" * 64, folder="x", config_sha256="abc")


# -- probe 0.2.0, cases 1, 4 and 9 ------------------------------------------------------

def _count_fits(monkeypatch) -> list:
    fits = []
    original = BiLM._fit
    monkeypatch.setattr(BiLM, "_fit", lambda self, X, threads: fits.append(len(X))
                        or original(self, X, threads))
    return fits


def test_an_unseeded_adaptation_runs_once_per_training_set_and_is_never_written(
        corpus, general, tmp_path, monkeypatch):
    X, y = corpus
    fits = _count_fits(monkeypatch)
    # (no bag: an unseeded fit draws its own codebook)
    a = ElmoVectorizer(general, adapt_epochs=1, bag_size=None, cache_dir=tmp_path).fit(X)
    b = ElmoVectorizer(general, adapt_epochs=1, bag_size=None, cache_dir=tmp_path).fit(X)
    assert a.bilm_ is b.bilm_ and len(fits) == 1
    np.testing.assert_array_equal(a.transform(X[:5]), b.transform(X[:5]))
    # A search adapts once per training set, whatever the grid: the 2 folds' (the
    # refit on all of X reuses the adaptation above).
    fits.clear()
    GridSearchCV(Pipeline([("elmo", ElmoVectorizer(general, adapt_epochs=1, cache_dir=tmp_path)),
                           ("clf", LogisticRegression(max_iter=500))]),
                 {"elmo__layer_mix": ["concat", "frozen", "trainable"]}, cv=2).fit(X, y)
    assert fits == [60, 60]
    # Nothing that no later session could draw again is written to the cache.
    assert not list(tmp_path.glob("bilm-*.pt"))
    # A seeded adaptation is written (and reused by a later process).
    ElmoVectorizer(general, adapt_epochs=1, cache_dir=tmp_path, random_state=3).fit(X)
    assert len(list(tmp_path.glob("bilm-*.pt"))) == 1


def test_an_unseeded_vectorizer_pretrains_its_biLM_once_and_never_writes_it(
        corpus, tmp_path, monkeypatch):
    X, _ = corpus
    fits = _count_fits(monkeypatch)
    monkeypatch.setattr("elmofeat.elmo.vectorizer.BiLM",
                        lambda random_state: BiLM(**{**SMALL_BILM, "random_state": random_state}))
    a = ElmoVectorizer(None, cache_dir=tmp_path).fit(X[:60])
    b = ElmoVectorizer(None, cache_dir=tmp_path).fit(X[:60])
    assert a.bilm_ is b.bilm_ and len(fits) == 1 and a.bilm_.random_state is None
    assert not list(tmp_path.glob("bilm-*.pt"))


def test_a_shared_biLM_refuses_to_change_in_place_and_a_copy_may(corpus, general):
    X, _ = corpus
    a = ElmoVectorizer(general, cache_dir=None, random_state=0).fit(X)
    before = a.transform(X[:5])
    b = ElmoVectorizer(general, cache_dir=None, random_state=0).fit(X)
    assert b.bilm_ is a.bilm_  # one copy per process
    with pytest.raises(ValueError, match="loaded once for the whole process.*deepcopy"):
        b.bilm_.set_params(warm_start=True, max_epochs=1)
    with pytest.raises(ValueError, match="fit would change this BiLM in place"):
        b.bilm_.fit(X)
    # Copy on write keeps the modules: new parameters are fine, training them in place not.
    twin = b.bilm_.shared_copy().set_params(warm_start=True, max_epochs=1)
    with pytest.raises(ValueError, match="in place"):
        twin.fit(X)
    private = copy.deepcopy(b.bilm_).set_params(warm_start=True, max_epochs=1).fit(X)
    assert private.perplexity(X) < a.bilm_.perplexity(X)
    np.testing.assert_array_equal(a.transform(X[:5]), before)
    # A biLM the cache keeps for every fit on the same texts is shared the same way.
    adapted = ElmoVectorizer(general, adapt_epochs=1, cache_dir=None, random_state=0).fit(X)
    with pytest.raises(ValueError, match="its cache"):
        adapted.bilm_.set_params(max_epochs=3)


def test_a_pickle_holds_the_biLM_in_use_when_it_is_not_the_shipped_one(
        corpus, general, monkeypatch, tmp_path):
    import pickle

    import elmofeat

    X, _ = corpus
    monkeypatch.setitem(hub.REGISTRY, "tiny-general", hub.ModelSource(
        "tiny-general", hub.file_sha256(general / "bilm.pt"), folder=str(general)))
    vec = ElmoVectorizer("tiny-general", adapt_epochs=1, random_state=0, cache_dir=None).fit(X)
    reference = vec.transform(X[:5])
    vec.set_params(adapt_epochs=0)  # not refitted: it still uses its adapted biLM
    for restored in (pickle.loads(pickle.dumps(vec)),
                     elmofeat.load(elmofeat.dump(vec, tmp_path / "v.skops"))):
        np.testing.assert_array_equal(restored.transform(X[:5]), reference)


def test_a_local_folder_named_like_a_registered_model_is_loaded_and_said(
        corpus, general, monkeypatch, tmp_path):
    import pickle

    from elmofeat.exceptions import ShadowedModelWarning

    X, _ = corpus
    monkeypatch.setitem(hub.REGISTRY, "tiny-general", hub.ModelSource(
        "tiny-general", hub.file_sha256(general / "bilm.pt"), folder=str(general)))
    shipped = ElmoVectorizer("tiny-general", cache_dir=None, random_state=0).fit(X)
    pickled = pickle.dumps(shipped)
    monkeypatch.chdir(tmp_path)
    BiLM(**{**SMALL_BILM, "hidden_dim": 12}).fit(X[:30]).save_pretrained("tiny-general")
    with pytest.warns(ShadowedModelWarning, match="loading the local one") as said:
        assert BiLM.from_pretrained("tiny-general").hidden_dim == 12
    with pytest.warns(ShadowedModelWarning) as said_too:
        assert ElmoVectorizer("tiny-general", cache_dir=None).fit(X).bilm_.hidden_dim == 12
    assert len(said) == len(said_too) == 1  # said once
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert BiLM.from_pretrained("./tiny-general").hidden_dim == 12  # a path: no warning
        # A pickle that names the registered model loads that one, not the folder.
        restored = pickle.loads(pickled)
    assert restored.bilm_.hidden_dim == 8
    np.testing.assert_array_equal(restored.transform(X[:5]), shipped.transform(X[:5]))
