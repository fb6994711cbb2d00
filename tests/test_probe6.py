"""The defects of the sixth hostile probe (`../shared/notes/probe-6.md`, D1 to D17), each
as the probe found it: each test of a fix fails on a517b10, the commit before them."""

import copy
import pickle

import numpy as np
import pytest
import torch

import elmofeat
from elmofeat import BiLM, ElmoVectorizer
from elmofeat.elmo import caches as _bilm_cache

from .estimator_checks import make_topic_corpus
from .test_probe5 import SMALL, base, texts  # noqa: F401 (fixtures: a small fitted biLM)

FIT = ["the cat sat on the mat .", "stocks fell sharply on monday", "a dog barked"]
# Never seen in fit: their layers are computed afresh, from the weights as they are now.
UNSEEN = ["parliament voted on the budget today", "the rover landed after a long trip"]


@pytest.fixture(autouse=True)
def _fresh_caches():
    elmofeat.clear_caches()
    yield
    elmofeat.clear_caches()


@pytest.fixture
def shared():
    """A vectorizer on the process's shared en-base, its shared language model, and the
    features of texts fit read and of texts it did not."""
    a = ElmoVectorizer(bag_size=None).fit(FIT)
    assert ElmoVectorizer(bag_size=None).fit(FIT).bilm_ is a.bilm_
    return a, a.bilm_.language_model_, a.transform(FIT), a.transform(UNSEEN)


def _numpy_view(lm):
    for p in lm.parameters():
        p.detach().numpy()[...] *= 1.5


def _inference_mode(lm):
    with torch.inference_mode():
        for p in lm.parameters():
            p.mul_(1.5)


def _refused_no_grad(lm):
    with torch.no_grad():
        lm.encoder.token_layer.projection.weight.mul_(2)  # torch raises after applying it


def _refused_load_state_dict(lm):
    lm.load_state_dict({k: v * 1.5 for k, v in lm.state_dict().items()})


def _refused_optimizer_step(lm):
    for p in lm.parameters():
        p.grad = torch.ones_like(p)
    torch.optim.SGD(lm.parameters(), lr=0.1).step()


def _storage(lm):
    p = lm.encoder.forward_lstm.layers[0].weight_hh_l0
    alias = torch.empty(0).set_(p.untyped_storage(), p.storage_offset(), p.shape, p.stride())
    alias.mul_(1.5)


def _copy_shares_parameters(lm):
    with torch.no_grad():
        copy.copy(lm).encoder.token_layer.projection.weight.mul_(1.5)


def _one_word_row(lm, vocabulary):
    # One row of the word table: the row of a word the fit never read.
    table = lm.encoder.token_layer.embedding.weight
    table.detach().numpy()[vocabulary.index.get_loc("parliament")] += 1.0


ROUTES = [_numpy_view, _inference_mode, _refused_no_grad, _refused_load_state_dict,
          _refused_optimizer_step, _storage, _copy_shares_parameters]


# -- D1, D4: an in-place change of the shared model, by any route, is refused before use --

@pytest.mark.parametrize("route", ROUTES, ids=lambda f: f.__name__)
def test_a_changed_shared_model_serves_no_features_nor_pickles(shared, route):
    a, lm, _, _ = shared
    try:
        route(lm)
    except RuntimeError:
        pass  # torch's refusal comes after the change: what it says is not relied on
    with pytest.raises(ValueError, match="values of its weights were changed in place"):
        a.transform(UNSEEN)
    with pytest.raises(ValueError, match="values of its weights were changed"):
        a.transform(FIT)  # texts fit read: their cached layers are not served either
    with pytest.raises(ValueError, match="values of its weights were changed"):
        pickle.dumps(a)
    with pytest.raises(ValueError, match="values of its weights were changed"):
        a.bilm_.embed(UNSEEN)


def test_a_changed_word_row_is_seen_by_the_texts_that_read_it_only(shared):
    a, lm, fit_features, _ = shared
    _one_word_row(lm, a.bilm_.vocabulary_)
    np.testing.assert_array_equal(a.transform(FIT), fit_features)  # they never read it
    with pytest.raises(ValueError, match="values of its weights were changed"):
        a.transform(["the parliament"])
    with pytest.raises(ValueError, match="values of its weights were changed"):
        pickle.dumps(a)  # a pickle names the model: every row is checked


@pytest.mark.parametrize("route", [_numpy_view, _refused_load_state_dict],
                         ids=lambda f: f.__name__)
def test_later_fits_read_the_model_afresh(shared, route):
    a, lm, fit_features, unseen_features = shared
    try:
        route(lm)
    except RuntimeError:
        pass
    fresh = ElmoVectorizer(bag_size=None).fit(FIT)
    assert fresh.bilm_ is not a.bilm_
    np.testing.assert_array_equal(fresh.transform(UNSEEN), unseen_features)
    np.testing.assert_array_equal(fresh.transform(FIT), fit_features)


def test_an_adaptation_of_a_changed_shared_model_is_refused(shared, tmp_path):
    a, lm, _, _ = shared
    _numpy_view(lm)
    with pytest.raises(ValueError, match="values of its weights were changed"):
        ElmoVectorizer(a.bilm_, adapt_epochs=1, random_state=0,
                       cache_dir=tmp_path).fit(FIT * 4)
    assert not list(tmp_path.rglob("*.pt"))  # nothing cached under the untouched key


def test_a_forward_hook_on_the_shared_model_is_refused(shared):
    a, lm, _, unseen_features = shared
    handle = lm.encoder.token_layer.register_forward_hook(lambda m, i, o: o * 1.5)
    with pytest.raises(ValueError, match="forward hook is set on it"):
        a.transform(UNSEEN)
    with pytest.raises(ValueError, match="forward hook"):
        pickle.dumps(a)
    handle.remove()
    np.testing.assert_array_equal(a.transform(UNSEEN), unseen_features)


def test_a_global_forward_hook_is_refused_on_the_shared_model(shared):
    a, _, _, unseen_features = shared
    handle = torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: None)
    try:
        with pytest.raises(ValueError, match="forward hook is set on it.*global"):
            a.transform(UNSEEN)
    finally:
        handle.remove()
    np.testing.assert_array_equal(a.transform(UNSEEN), unseen_features)


def test_the_shared_model_layer_scales_cannot_be_changed_behind_its_back(shared):
    a, _, _, _ = shared
    scales = a.bilm_.layer_scales_
    scales.setflags(write=True)  # numpy allows it on an array that owns its data
    scales *= 10
    with pytest.raises(ValueError, match="changed in place"):
        a.transform(UNSEEN)


# -- D6: a private biLM changed through .data or a NumPy view keeps no stale layers --------

def _by_data(lm):
    with torch.no_grad():
        for p in lm.parameters():
            p.data.mul_(1.5)


@pytest.mark.parametrize("route", [_by_data, _numpy_view], ids=lambda f: f.__name__)
def test_a_private_model_changed_by_any_route_gives_its_new_features(base, texts, route):
    bilm = copy.deepcopy(base)
    vectorizer = ElmoVectorizer(bilm, cache_dir=None, bag_size=None).fit(texts)
    seen = texts[:5]
    before = vectorizer.transform(seen)
    route(bilm.language_model_)
    after = vectorizer.transform(seen)
    elmofeat.clear_caches()  # the reference: the same vectorizer, nothing cached
    np.testing.assert_array_equal(after, vectorizer.transform(seen))
    assert not np.allclose(after, before)
    np.testing.assert_array_equal(
        np.concatenate(bilm.embed(seen)),
        np.concatenate(copy.deepcopy(bilm).embed(seen)))


def test_a_private_model_with_a_hook_bypasses_the_layer_cache(base, texts):
    bilm = copy.deepcopy(base)
    vectorizer = ElmoVectorizer(bilm, cache_dir=None, bag_size=None).fit(texts)
    before = vectorizer.transform(texts[:5])
    handle = bilm.language_model_.encoder.token_layer.register_forward_hook(
        lambda m, i, o: o * 1.5)
    hooked = vectorizer.transform(texts[:5])
    assert not np.allclose(hooked, before)  # the user's hook is the user's: it applies
    handle.remove()
    np.testing.assert_array_equal(vectorizer.transform(texts[:5]), before)  # nothing stale


# -- D2: a token pattern from a file runs only if elmofeat vetted it or its user trusts it --

# The probe's four ways past 0.3.0's list of forbidden shapes, a named backreference, and
# the shape that list knew.
HOSTILE = [r"(\w+\s?)(?#c)+$", "(?x)(\\w+\\s?) +$", "(?x)(?:\\w#[\n+\\s?)+$ #]",
           r"(\w\s?\w?)+$", r"(?P<a>\w+)(?P=a)", r"(\w+\s?)+$"]


def _crafted(base, pattern):
    crafted = copy.deepcopy(base)
    crafted.__dict__["token_pattern"] = pattern  # as someone else writes the file
    return crafted


@pytest.mark.parametrize("pattern", HOSTILE)
def test_a_model_file_with_another_pattern_is_refused_at_load(base, tmp_path, pattern):
    _crafted(base, pattern).save(tmp_path / "m.pt")
    with pytest.raises(ValueError, match="not one of elmofeat's vetted patterns"):
        BiLM.load(tmp_path / "m.pt")


@pytest.mark.parametrize("pattern", HOSTILE[:2])
def test_a_skops_file_with_another_pattern_is_refused_at_load(base, tmp_path, pattern):
    vectorizer = ElmoVectorizer(base, cache_dir=None, bag_size=None).fit(["x y", "y z"])
    vectorizer.bilm_ = _crafted(base, pattern)
    elmofeat.dump(vectorizer, tmp_path / "v.skops")
    with pytest.raises(ValueError, match="not one of elmofeat's vetted patterns"):
        elmofeat.load(tmp_path / "v.skops")


def test_a_model_folder_with_another_pattern_is_refused(base, tmp_path):
    _crafted(base, HOSTILE[0]).save_pretrained(tmp_path / "m")
    with pytest.raises(ValueError, match="not one of elmofeat's vetted patterns"):
        BiLM.from_pretrained(tmp_path / "m")
    with pytest.raises(ValueError, match="not one of elmofeat's vetted patterns"):
        ElmoVectorizer(str(tmp_path / "m")).fit(["x y"])


def test_embed_refuses_a_model_file_with_another_pattern(base, tmp_path, capsys):
    from elmofeat.cli import main

    _crafted(base, HOSTILE[0]).save(tmp_path / "m.pt")
    (tmp_path / "t.txt").write_text("a" * 40 + "!\n")
    assert main(["embed", str(tmp_path / "m.pt"), str(tmp_path / "t.txt"),
                 "-o", str(tmp_path / "x.npy")]) != 0
    assert "not one of elmofeat's vetted patterns" in capsys.readouterr().err
    assert not (tmp_path / "x.npy").exists()


def test_a_pattern_the_user_trusts_loads_from_files(base, tmp_path):
    custom = r"[a-z]+"
    _crafted(base, custom).save(tmp_path / "m.pt")
    with elmofeat.config_context(trusted_token_patterns=[custom]):
        assert BiLM.load(tmp_path / "m.pt").token_pattern == custom
    assert elmofeat.get_config()["trusted_token_patterns"] == ()
    with pytest.raises(TypeError, match="list of str"):
        elmofeat.set_config(trusted_token_patterns=custom)


def test_patterns_given_in_code_pickle_copy_and_cache_as_they_are(base, texts, tmp_path):
    # The user's own pattern: a pickle runs code anyway, and the disk cache holds files
    # this process wrote for the same pattern.
    custom = r"[a-z]+"
    bilm = BiLM(**{**SMALL, "token_pattern": custom})
    assert pickle.loads(pickle.dumps(bilm)).token_pattern == custom
    assert copy.deepcopy(bilm).token_pattern == custom
    fitted = ElmoVectorizer(bilm, cache_dir=tmp_path, bag_size=None).fit(texts)
    elmofeat.clear_caches()
    again = ElmoVectorizer(bilm, cache_dir=tmp_path, bag_size=None).fit(texts)
    np.testing.assert_array_equal(again.transform(texts[:3]), fitted.transform(texts[:3]))
    assert len(list(tmp_path.rglob("bilm-*.pt"))) == 1  # read back, not pretrained again


def test_every_shipped_default_pattern_is_vetted():
    from elmofeat import SkipGramVectorizer, SVDVectorizer
    from elmofeat.text import VETTED_TOKEN_PATTERNS

    for estimator in (BiLM(), SVDVectorizer(), SkipGramVectorizer()):
        assert estimator.token_pattern in VETTED_TOKEN_PATTERNS.values()


# -- issue 71, item 5: the default is repeatable ------------------------------------------

def test_the_default_vectorizer_fitted_twice_gives_the_same_features():
    texts = make_topic_corpus(80)[0]
    first = ElmoVectorizer(bag_size=16).fit(texts).transform(UNSEEN)
    elmofeat.clear_caches()
    second = ElmoVectorizer(bag_size=16).fit(texts).transform(UNSEEN)
    np.testing.assert_array_equal(first, second)
    seeded = ElmoVectorizer(bag_size=16, random_state=3).fit(texts).transform(UNSEEN)
    assert not np.array_equal(seeded, first)  # an int still selects the draws


# -- D3, D14: benchmark writes only into a folder of its own files -----------------------

def _benchmark(*args):
    from elmofeat.cli import main

    return main(["benchmark", "--quick", "--datasets", "cr", "--methods", "tfidf",
                 "--no-figures", "--no-progress", *args])


@pytest.mark.parametrize("files", [{"report.md": "my own report, weeks of work"},
                                   {"results.json": '{"mine": true}'},
                                   {"custrev.pos": "a review\n"}])
def test_benchmark_never_writes_over_a_users_files(tmp_path, capsys, files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert _benchmark("-o", str(tmp_path)) != 0
    assert "holds files this command did not write" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(files)  # nothing added
    for name, text in files.items():
        assert (tmp_path / name).read_text() == text


def test_a_report_folder_of_its_own_files_is_written_again():
    from pathlib import Path

    from elmofeat.cli.benchmark import refuse_foreign_files

    report = Path(__file__).resolve().parents[1] / "docs" / "report"  # the committed one
    refuse_foreign_files(report)  # its own files only: no error


@pytest.mark.parametrize("content, message", [
    ('{"x": 1}', "is not a report's results"), ("[1, 2]", "is not a report's results"),
    ('{"settings": {"seed": ', "is not a report's results (not JSON")])
def test_add_to_a_folder_whose_results_are_not_a_report_says_so(tmp_path, capsys,
                                                                 content, message):
    (tmp_path / "results.json").write_text(content)
    assert _benchmark("--add-to", str(tmp_path)) == 1
    err = capsys.readouterr().err
    assert message in err and "results.json" in err and "Traceback" not in err


# -- D10: pretrain and embed replace no file they did not create, nor an input -------------

TINY_CLI = ["--embedding-dim", "8", "--hidden-dim", "8", "--epochs", "1", "--quiet"]


def test_pretrain_never_replaces_an_unrelated_file(tmp_path, capsys):
    from elmofeat.cli import main

    (tmp_path / "t.txt").write_text("\n".join(make_topic_corpus(20)[0]) + "\n")
    (tmp_path / "notes.md").write_text("precious")
    args = ["pretrain", str(tmp_path / "t.txt"), "-o", str(tmp_path / "notes.md"), *TINY_CLI]
    assert main(args) == 1
    assert "exists: writing the model would replace it" in capsys.readouterr().err
    assert (tmp_path / "notes.md").read_text() == "precious"
    assert main([*args, "--force"]) == 0  # the user says so
    assert BiLM.load(tmp_path / "notes.md").embedding_dim == 8


@pytest.mark.parametrize("inside", ["texts", "vectors"])
def test_force_never_replaces_an_input_inside_the_model_folder(tmp_path, capsys, inside):
    from elmofeat.cli import main

    folder = tmp_path / "out"
    folder.mkdir()
    texts = "\n".join(make_topic_corpus(20)[0]) + "\n"
    args = ["pretrain", "--pretrained", "-o", str(folder), "--force", *TINY_CLI]
    if inside == "texts":
        (folder / "bilm.pt").write_text(texts)  # the texts, under the weights' name
        args.insert(1, str(folder / "bilm.pt"))
    else:
        (tmp_path / "t.txt").write_text(texts)
        (folder / "config.json").write_text("{}")  # stands for word vectors in the folder
        args[1:1] = [str(tmp_path / "t.txt"), "--glove", str(folder / "config.json")]
    assert main(args) == 1
    assert "is inside --output" in capsys.readouterr().err
    if inside == "texts":
        assert (folder / "bilm.pt").read_text() == texts


def test_embed_never_replaces_an_existing_file_without_force(base, tmp_path, capsys):
    from elmofeat.cli import main

    base.save(tmp_path / "m.pt")
    (tmp_path / "t.txt").write_text("the cat sat\n")
    (tmp_path / "x.npy").write_bytes(b"mine")
    args = ["embed", str(tmp_path / "m.pt"), str(tmp_path / "t.txt"), "-o", str(tmp_path / "x.npy")]
    assert main(args) == 1
    assert "exists" in capsys.readouterr().err and (tmp_path / "x.npy").read_bytes() == b"mine"
    assert main([*args, "--force"]) == 0
    assert np.load(tmp_path / "x.npy").shape[0] == 1


# -- D5: an absurd thread count runs on the CPUs there are --------------------------------

def test_a_million_threads_run_on_the_cpus_of_this_process(base, texts):
    from joblib import cpu_count

    from elmofeat.runtime.threads import ThreadPolicy

    before = torch.get_num_threads()
    with ThreadPolicy(1_000_000).applied():
        assert torch.get_num_threads() == cpu_count()
    assert torch.get_num_threads() == before
    expected = ElmoVectorizer(base, cache_dir=None, bag_size=None).fit(texts).transform(texts[:3])
    vectorizer = ElmoVectorizer(base, cache_dir=None, bag_size=None, n_threads=1_000_000)
    np.testing.assert_array_equal(vectorizer.fit(texts).transform(texts[:3]), expected)


# -- D7: a model folder's layer scales are numbers in float32's normal range ---------------

@pytest.mark.parametrize("values", [[1e-50, 1.0, 1.0], [1e-45, 1.0, 1.0],
                                    ["0.3", "0.1", "0.2"], [True, True, True]])
def test_a_folder_with_layer_scales_out_of_range_or_of_another_type_is_refused(base, tmp_path,
                                                                               values):
    import json

    older = copy.deepcopy(base)
    older.layer_scales_ = None  # weights saved before their scales (en-small's format)
    older.save_pretrained(tmp_path / "tp")
    config = json.loads((tmp_path / "tp" / "config.json").read_text())
    config["layer_scales"] = values
    (tmp_path / "tp" / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="invalid layer scales"):
        BiLM.from_pretrained(tmp_path / "tp")


# -- D8: the adapted model's key is its base's full state; D9: identical texts -----------

def test_bases_with_other_layer_scales_are_other_adaptations(base):
    b1, b2 = copy.deepcopy(base), copy.deepcopy(base)
    b2.layer_scales_ = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    kw = dict(adapt_epochs=1, random_state=0, cache_dir=None, bag_size=None)
    v1 = ElmoVectorizer(b1, **kw).fit(["topic0word1 common2 topic0word3"])
    v2 = ElmoVectorizer(b2, **kw).fit(["topic0word1 common2 topic0word3"])
    assert v2.bilm_ is not v1.bilm_
    np.testing.assert_array_equal(v2.bilm_.layer_scales_, [1.0, 2.0, 3.0])


def test_adapting_on_identical_texts_keeps_the_layer_scales(base):
    adapted = copy.deepcopy(base).set_params(warm_start=True, max_epochs=1, random_state=0)
    adapted.fit(["topic0word1 common2 topic0word3"] * 3)
    np.testing.assert_array_equal(adapted.layer_scales_, base.layer_scales_)
    assert not np.allclose(base.layer_scales_, 1)


# -- D11: an edited model folder is read afresh -------------------------------------------

def test_an_edited_config_of_a_model_folder_is_read_afresh(base, texts, tmp_path):
    import json

    older = copy.deepcopy(base)
    older.layer_scales_ = None  # the scales live in config.json (en-small's format)
    older.save_pretrained(tmp_path / "tp")
    config_path = tmp_path / "tp" / "config.json"

    def set_scales(values):
        config = json.loads(config_path.read_text())
        config["layer_scales"] = values
        config_path.write_text(json.dumps(config))

    set_scales([0.3, 0.1, 0.2])
    first = ElmoVectorizer(str(tmp_path / "tp"), bag_size=None).fit(texts)
    np.testing.assert_allclose(first.bilm_.layer_scales_, [0.3, 0.1, 0.2])
    set_scales([3, 1, 2])
    again = ElmoVectorizer(str(tmp_path / "tp"), bag_size=None).fit(texts)
    np.testing.assert_allclose(again.bilm_.layer_scales_, [3, 1, 2])
    # clear_caches forgets the process's copy too
    shared = again.bilm_
    elmofeat.clear_caches()
    assert ElmoVectorizer(str(tmp_path / "tp"), bag_size=None).fit(texts).bilm_ is not shared


# -- D16: a folder given to register() with "~" is the user's folder -----------------------

def test_register_takes_a_home_folder(base, tmp_path, monkeypatch):
    from elmofeat.bilm import hub

    monkeypatch.setenv("HOME", str(tmp_path))
    base.save_pretrained(tmp_path / "models" / "m")
    hub.register("probe6-model", sha256=hub.file_sha256(tmp_path / "models/m/bilm.pt"),
                 folder="~/models/m")
    try:
        assert BiLM.from_pretrained("probe6-model").embedding_dim == base.embedding_dim
    finally:
        del hub.REGISTRY["probe6-model"]


# -- D13: embed refuses options a saved vectorizer overrides; D15: messages in our words ---

def _cli(*args):
    from elmofeat.cli import main

    return main(list(args))


@pytest.fixture
def saved_vectorizer(base, texts, tmp_path):
    vectorizer = ElmoVectorizer(base, cache_dir=None, bag_size=None).fit(texts)
    elmofeat.dump(vectorizer, tmp_path / "v.skops")
    (tmp_path / "t.txt").write_text("the cat sat\nthe dog ran\n")
    return tmp_path


@pytest.mark.parametrize("option", [["--pooling", "max"], ["--layer-mix", "frozen"],
                                    ["--mix-weights", "1", "0", "0"]])
def test_embed_refuses_bilm_options_with_a_fitted_vectorizer(saved_vectorizer, capsys, option):
    d = saved_vectorizer
    assert _cli("embed", str(d / "v.skops"), str(d / "t.txt"), "-o", str(d / "a.npy"),
                *option) == 1
    assert "apply to a BiLM" in capsys.readouterr().err
    assert not (d / "a.npy").exists()


def test_embed_takes_n_jobs_with_a_fitted_vectorizer(saved_vectorizer, capsys):
    d = saved_vectorizer
    assert _cli("embed", str(d / "v.skops"), str(d / "t.txt"), "-o", str(d / "a.npy")) == 0
    assert _cli("embed", str(d / "v.skops"), str(d / "t.txt"), "-o", str(d / "b.npy"),
                "--n-jobs", "2") == 0
    np.testing.assert_array_equal(np.load(d / "a.npy"), np.load(d / "b.npy"))


def test_a_users_file_in_the_checkpoint_folder_is_named_plainly(tmp_path, capsys):
    (tmp_path / "t.txt").write_text("\n".join(make_topic_corpus(20)[0]) + "\n")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "checkpoint.pt").write_text("my notes")
    assert _cli("pretrain", str(tmp_path / "t.txt"), "-o", str(tmp_path / "m.pt"),
                "--checkpoint-dir", str(tmp_path / "proj"), *TINY_CLI) == 1
    err = capsys.readouterr().err
    assert "is not an elmofeat biLM checkpoint" in err and "weights_only" not in err
    assert (tmp_path / "proj" / "checkpoint.pt").read_text() == "my notes"


def test_a_checkpoint_folder_that_is_an_input_names_its_option(tmp_path, capsys):
    (tmp_path / "t.txt").write_text("the cat\n")
    assert _cli("pretrain", str(tmp_path / "t.txt"), "-o", str(tmp_path / "m.pt"),
                "--checkpoint-dir", str(tmp_path / "t.txt"), *TINY_CLI) == 1
    assert f"--checkpoint-dir {tmp_path / 't.txt'} is the input" in capsys.readouterr().err


def test_embed_of_one_json_object_says_what_it_expected(base, tmp_path, capsys):
    base.save(tmp_path / "m.pt")
    (tmp_path / "obj.json").write_text('{"text": "the cat sat"}')
    assert _cli("embed", str(tmp_path / "m.pt"), str(tmp_path / "obj.json"), "-o",
                str(tmp_path / "x.npy")) == 1
    err = capsys.readouterr().err
    assert "not a JSON array of objects" in err and "scalar values" not in err


def test_embed_of_a_model_that_does_not_read_texts_says_so(tmp_path, capsys):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    pipe = make_pipeline(StandardScaler(), LogisticRegression()).fit([[0.0], [1.0]], [0, 1])
    elmofeat.dump(pipe, tmp_path / "p.skops")
    (tmp_path / "t.txt").write_text("the cat sat on the mat\n")
    assert _cli("embed", str(tmp_path / "p.skops"), str(tmp_path / "t.txt"), "-o",
                str(tmp_path / "x.npy")) == 1
    err = capsys.readouterr().err
    assert "StandardScaler, does not take texts" in err


@pytest.mark.parametrize("args, message", [
    (["embed", "en-base", "t.txt", "-o", "x.npy", "--n-jobs", "0"], "--n-jobs: must be an integer other than 0"),
    (["pretrain", "t.txt", "-o", "m.pt", "--max-time", "-5"], "--max-time: must be a number of seconds > 0")])
def test_option_values_are_checked_by_the_command_line(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.txt").write_text("the cat\n")
    with pytest.raises(SystemExit):
        _cli(*args)
    assert message in capsys.readouterr().err
