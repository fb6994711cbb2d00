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


def test_the_shared_model_refuses_to_serve_after_in_place_weight_changes(shared):
    # torch refuses these edits of inference tensors after applying them (the sixth
    # probe's D1): the values are checked before use, so the change is refused there.
    a, b, before = shared
    lm = b.bilm_.language_model_
    with pytest.raises(RuntimeError, match="[Ii]nference tensor"):
        lm.load_state_dict({k: v * 1.5 for k, v in lm.state_dict().items()})
    with pytest.raises(ValueError, match="values of its weights were changed in place"):
        a.transform(DOCS)
    fresh = ElmoVectorizer().fit(DOCS)  # later fits read the model afresh
    np.testing.assert_array_equal(fresh.transform(DOCS), before)


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
    a, b, _ = shared
    unseen = ["a new sentence the fit never read", "and another one"]  # not cached
    before = a.transform(unseen)
    b.bilm_.language_model_.train()
    state = torch.random.get_rng_state()
    np.testing.assert_array_equal(a.transform(unseen), before)
    np.testing.assert_array_equal(a.transform(unseen), before)
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
    private.add_vectors(["zorblax"], np.ones((1, 2), np.float32))
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


# -- D6, D9, D21: one output-safety rule, checked before any work ------------------------

def _pretrain(*args):
    from elmofeat.cli import main

    return main(["pretrain", *map(str, args), "--epochs", "1", "--embedding-dim", "8",
                 "--hidden-dim", "8", "--quiet"])


@pytest.fixture
def small_texts(tmp_path, texts):
    path = tmp_path / "small.txt"
    path.write_text("\n".join(texts) + "\n")
    return path


def test_pretrain_never_writes_into_a_folder_that_holds_files(small_texts, tmp_path, capsys):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "config.json").write_text('{"my": "project settings"}')
    (project / "bilm.pt").write_text("precious")
    assert _pretrain(small_texts, "--pretrained", "-o", project) == 1
    assert "holds files already" in capsys.readouterr().err
    assert (project / "config.json").read_text() == '{"my": "project settings"}'
    assert (project / "bilm.pt").read_text() == "precious"
    assert _pretrain(small_texts, "--pretrained", "-o", project, "--force") == 0
    assert BiLM.from_pretrained(project).embedding_dim == 8


def test_save_pretrained_never_writes_into_a_folder_that_holds_files(base, tmp_path):
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "config.json").write_text("mine")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        base.save_pretrained(folder)
    assert (folder / "config.json").read_text() == "mine"
    base.save_pretrained(tmp_path / "new")
    with pytest.raises(FileExistsError):  # a model saved before is a folder with files too
        base.save_pretrained(tmp_path / "new")
    base.save_pretrained(tmp_path / "new", overwrite=True)
    base.save_pretrained(folder, overwrite=True)
    assert BiLM.from_pretrained(folder).embedding_dim == base.embedding_dim


def test_pretrain_never_writes_over_its_word_vectors(small_texts, tmp_path, capsys):
    glove = tmp_path / "myglove.txt"
    glove.write_text("topic0word0 0.1 0.2\ncommon1 0.3 0.4\n")
    before = glove.read_bytes()
    assert _pretrain(small_texts, "-o", glove, "--glove", glove) == 1
    assert "is the input" in capsys.readouterr().err
    assert glove.read_bytes() == before


def test_pretrain_refuses_one_folder_for_model_and_checkpoints(small_texts, tmp_path, capsys):
    same = tmp_path / "same"
    assert _pretrain(small_texts, "-o", same, "--checkpoint-dir", same) == 1
    assert "--checkpoint-dir" in capsys.readouterr().err
    assert not same.exists()  # refused before the work
    assert _pretrain(small_texts, "-o", tmp_path / "m.pt", "--checkpoint-dir", tmp_path / "ck") == 0


# -- D11: every line of an error reaches the user --------------------------------------------

def test_the_command_line_prints_every_line_of_an_error(tmp_path, capsys, monkeypatch):
    from elmofeat.cli import main

    monkeypatch.setenv("ELMOFEAT_DATA", str(tmp_path / "nothing"))
    assert main(["embed", "en-base", "cr", "-o", str(tmp_path / "x.npy")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("elmofeat embed: error: CR not found")
    assert "custrev.pos" in err and "load_cr(download_if_missing=True)" in err


# -- D8: a missing Parquet engine is said before the documents are embedded ---------------

def test_parquet_output_without_an_engine_fails_before_the_work(tmp_path, capsys, monkeypatch):
    import importlib.util

    from elmofeat.cli import embed, main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("pyarrow", "fastparquet") else real(name, *a))
    called = []
    monkeypatch.setattr(embed, "load_model", lambda *a: called.append(a))
    (tmp_path / "t.txt").write_text("the cat\n")
    assert main(["embed", "en-base", str(tmp_path / "t.txt"), "-o", str(tmp_path / "f.parquet")]) == 1
    assert "pip install 'elmofeat[parquet]'" in capsys.readouterr().err
    assert not called


# -- D18: JSON Lines are read as records, never as plain lines ------------------------------

def test_json_lines_are_read_by_key(tmp_path):
    from elmofeat.cli._inputs import read_texts

    path = tmp_path / "t.jsonl"
    path.write_text('{"text": "the cat sat", "label": 1}\n{"text": "a dog", "label": 0}\n')
    assert read_texts(str(path)) == ["the cat sat", "a dog"]
    array = tmp_path / "t.json"
    array.write_text('[{"body": "one"}, {"body": "two"}]')
    assert read_texts(str(array), "body") == ["one", "two"]
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="one JSON object per document"):
        read_texts(str(tmp_path / "bad.json"))


# -- D22: a full disk under numpy's writer is said in the user's words ----------------------

def test_numpy_short_writes_are_a_full_disk():
    from elmofeat._files import _out_of_space

    assert _out_of_space(OSError("1152000 requested and 523232 written"))
    assert not _out_of_space(OSError("something else"))


# -- D23: --seed is checked as a seed, and named -------------------------------------------

@pytest.mark.parametrize("command", ["benchmark", "pretrain"])
def test_a_negative_seed_is_refused_naming_the_option(command, capsys, tmp_path):
    from elmofeat.cli import main

    extra = ["--output", str(tmp_path / "o")] if command == "benchmark" else ["x.txt", "-o", "m.pt"]
    with pytest.raises(SystemExit) as exit_:
        main([command, *extra, "--seed", "-1"])
    assert exit_.value.code == 2
    assert "--seed: must be an integer from 0 to 4294967295" in capsys.readouterr().err


# -- D10, D20: a local folder named like a registered model --------------------------------

def test_embed_warns_when_a_local_folder_shadows_the_name(base, tmp_path, monkeypatch, capsys):
    from elmofeat.cli import main
    from elmofeat.exceptions import ShadowedModelWarning

    monkeypatch.chdir(tmp_path)
    base.save_pretrained("en-base")
    (tmp_path / "t.txt").write_text("the cat\n")
    with pytest.warns(ShadowedModelWarning, match="loading the local"):
        assert main(["embed", "en-base", "t.txt", "-o", "o.npy", "--quiet"]) == 0
    assert np.load("o.npy").shape == (1, 3 * 2 * base.embedding_dim)


@pytest.mark.parametrize("make", [lambda p: (p.mkdir(), (p / "notes.txt").write_text("x")),
                                  lambda p: p.write_text("not a model"),
                                  lambda p: p.symlink_to(p.parent / "gone")])
def test_a_local_non_model_named_en_base_leaves_the_default_working(tmp_path, monkeypatch, make):
    from elmofeat.exceptions import ShadowedModelWarning

    monkeypatch.chdir(tmp_path)
    make(tmp_path / "en-base")
    with pytest.warns(ShadowedModelWarning, match="not a model.*loading the registered model"):
        vectorizer = ElmoVectorizer().fit(["the cat sat"])
    assert vectorizer.bilm_.n_output_words_ > 50_000  # the shipped en-base


# D19 (a model file carrying a catastrophic token pattern): see test_probe6.py's D2.


# -- D15: an adaptation on a handful of documents keeps the model's layer scales ----------

def test_adapting_on_one_document_keeps_the_layer_scales(base):
    adapted = copy.deepcopy(base).set_params(warm_start=True, max_epochs=1, random_state=0)
    adapted.fit(["topic0word1 common2 topic0word3"])
    np.testing.assert_array_equal(adapted.layer_scales_, base.layer_scales_)
    assert not np.allclose(base.layer_scales_, 1)


# -- D24: a relative folder given to register() is the user's folder ----------------------

def test_register_takes_a_relative_folder_from_the_working_directory(base, tmp_path, monkeypatch):
    from elmofeat.bilm import hub

    monkeypatch.chdir(tmp_path)
    base.save_pretrained("models/my-model")
    hub.register("probe5-model", sha256=hub.file_sha256("models/my-model/bilm.pt"),
                 folder="models/my-model")
    try:
        monkeypatch.chdir("/")  # a later working directory does not matter
        assert BiLM.from_pretrained("probe5-model").embedding_dim == base.embedding_dim
        (tmp_path / "models/my-model/bilm.pt").unlink()
        with pytest.raises(FileNotFoundError, match="restore the model folder"):
            BiLM.from_pretrained("probe5-model")
    finally:
        del hub.REGISTRY["probe5-model"]


# -- D25: a label-free mix given a scalar or a generator y --------------------------------

def test_a_scalar_y_is_refused_clearly_and_a_generator_is_read(base, texts):
    with pytest.raises(ValueError, match="X has 60 documents but y has a scalar"):
        ElmoVectorizer(base, cache_dir=None).fit(texts, 5)
    labels = make_topic_corpus(60)[1]
    ElmoVectorizer(base, cache_dir=None).fit(texts, (label for label in labels))
    with pytest.raises(ValueError, match="X has 60 documents but y has 3 labels"):
        ElmoVectorizer(base, cache_dir=None).fit(texts, (label for label in labels[:3]))


# -- D29: a damaged shipped model is not sent to a download it does not have --------------

def test_a_damaged_folder_model_says_how_to_get_it_back(base, tmp_path):
    from elmofeat.bilm import hub

    weights = base.save_pretrained(tmp_path / "m")
    hub.register("probe5-damaged", sha256="0" * 64, folder=str(tmp_path / "m"))
    try:
        with pytest.raises(ValueError) as error:
            BiLM.from_pretrained("probe5-damaged")
        assert "download" not in str(error.value) and "restore the model folder" in str(error.value)
    finally:
        del hub.REGISTRY["probe5-damaged"]
    assert weights.is_file()


# -- a copy of a shipped folder with its config.json changed (left from the 0.2.0 probe) --

def test_a_copy_of_en_small_with_other_layer_scales_is_refused(tmp_path):
    import json
    import shutil

    from elmofeat.bilm import hub

    shipped = hub.PACKAGE_MODELS / "en-small"
    copy_ = tmp_path / "en-small-copy"
    shutil.copytree(shipped, copy_)
    assert BiLM.from_pretrained(copy_).layer_scales_ is not None  # an exact copy loads
    config = json.loads((copy_ / "config.json").read_text())
    config["layer_scales"] = [1.0, 1.0, 1.0]
    (copy_ / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="holds the weights of the pretrained model 'en-small'"):
        BiLM.from_pretrained(copy_)


# -- the README's first command with --quick cannot write over the committed report --------

def test_a_quick_run_never_writes_over_a_full_runs_report(tmp_path, capsys, monkeypatch):
    import json

    from elmofeat.cli import main

    report = tmp_path / "report"
    report.mkdir()
    full = {"settings": {"datasets": ["ag_news"], "seed": 0, "quick": False, "folds": None}}
    (report / "results.json").write_text(json.dumps(full))
    (report / "report.md").write_text("# elmofeat benchmark report\n\nthe full run")
    ran = []
    monkeypatch.setattr("elmofeat.suite.run_benchmark", lambda *a, **k: ran.append(a))
    assert main(["benchmark", "--quick", "--output", str(report), "--no-figures"]) == 1
    err = capsys.readouterr().err
    assert "holds the report of a full run with other settings" in err and "--force" in err
    assert (report / "report.md").read_text().endswith("the full run") and not ran


def test_a_quick_run_has_its_own_default_folder(tmp_path, monkeypatch, data_home):
    from elmofeat.cli import main

    # the data home as an absolute path: the command checks its data before it runs
    monkeypatch.setenv("ELMOFEAT_DATA", str(data_home.resolve()))
    monkeypatch.chdir(tmp_path)
    written = {}
    monkeypatch.setattr("elmofeat.suite.run_benchmark",
                        lambda *a, **k: {"wall_seconds": 1.0})

    def write_report(results, output, **kwargs):
        written["output"] = output
        return {"report.md": output / "report.md"}

    monkeypatch.setattr("elmofeat.suite.write_report", write_report)
    assert main(["benchmark", "--quick", "--no-figures"]) == 0
    assert written["output"].name == "elmofeat-report-quick"


# -- D16: a seeded vectorizer adapts once across the workers of a parallel search ---------

def test_a_seeded_adaptation_is_the_same_in_every_worker(base, texts):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_validate
    from sklearn.pipeline import Pipeline

    from elmofeat.bilm.io import weights_digest

    labels = make_topic_corpus(60)[1]
    everything = np.arange(len(texts))
    results = cross_validate(
        Pipeline([("elmo", ElmoVectorizer(base, adapt_epochs=1, random_state=0, cache_dir=None)),
                  ("clf", LogisticRegression(max_iter=200))]),
        texts, labels, cv=[(everything, everything[:10])] * 2, n_jobs=2, return_estimator=True)
    digests = {weights_digest(e["elmo"].bilm_) for e in results["estimator"]}
    assert len(digests) == 1


# -- D28: what a fit does to NumPy's global random state, as the user guide says ----------

def test_a_seeded_fit_leaves_numpys_global_state_and_an_unseeded_one_draws(base, texts):
    np.random.seed(7)
    expected = np.random.rand()
    np.random.seed(7)
    ElmoVectorizer(base, random_state=0, cache_dir=None).fit(texts)
    assert np.random.rand() == expected
    np.random.seed(7)
    ElmoVectorizer(base, cache_dir=None).fit(texts)  # random_state=None: scikit-learn's way
    assert np.random.rand() != expected
