"""elmofeat.bilm.io: BiLM files and pickles, and how damaged or foreign files are refused."""

import pickle
from pathlib import Path
import textwrap

import joblib
import numpy as np
import pytest
import torch

from elmofeat import BiLM
from elmofeat.exceptions import ElmofeatVersionWarning

from ..fresh_process import run_fresh


def test_save_and_load_round_trip(fitted, corpus, tmp_path):
    path = tmp_path / "bilm.pt"
    fitted.save(path)
    loaded = BiLM.load(path)
    assert loaded.get_params() == {**fitted.get_params()}
    assert loaded.vocabulary_.tokens == fitted.vocabulary_.tokens
    assert loaded.history_ == fitted.history_
    for a, b in zip(loaded.embed(corpus[:5]), fitted.embed(corpus[:5])):
        np.testing.assert_array_equal(a, b)


def test_load_rejects_truncated_foreign_and_malicious_files(fitted, tmp_path):
    path = tmp_path / "bilm.pt"
    fitted.save(path)
    data = path.read_bytes()
    (tmp_path / "cut.pt").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="not a readable elmofeat BiLM file"):
        BiLM.load(tmp_path / "cut.pt")
    torch.save({"weights": torch.zeros(2)}, tmp_path / "foreign.pt")
    with pytest.raises(ValueError, match="not an elmofeat BiLM file"):
        BiLM.load(tmp_path / "foreign.pt")
    (tmp_path / "text.pt").write_text("hello")
    with pytest.raises(ValueError, match="not a readable"):
        BiLM.load(tmp_path / "text.pt")

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    torch.save({"format": "elmofeat-bilm", "x": Evil()}, tmp_path / "evil.pt")
    with pytest.raises(ValueError, match="not a readable"):
        BiLM.load(tmp_path / "evil.pt")
    with pytest.raises(FileNotFoundError):
        BiLM.load(tmp_path / "nothing.pt")


def test_load_checks_shapes_and_versions(fitted, tmp_path):
    path = tmp_path / "bilm.pt"
    fitted.save(path)
    from elmofeat.bilm.io import payload_checksum

    payload = torch.load(path, weights_only=True)
    payload["state_dict"]["bilm.token_layer.embedding.weight"] = torch.zeros(3, 3)
    payload["checksum"] = payload_checksum(payload)  # consistent, but the wrong shape
    torch.save(payload, tmp_path / "shapes.pt")
    with pytest.raises(ValueError, match="do not match"):
        BiLM.load(tmp_path / "shapes.pt")
    payload = torch.load(path, weights_only=True)
    payload["versions"] = payload["versions"].replace('"torch": "', '"torch": "0.1-')
    payload["checksum"] = payload_checksum(payload)
    torch.save(payload, tmp_path / "old.pt")
    with pytest.warns(ElmofeatVersionWarning, match="torch 0.1-"):
        BiLM.load(tmp_path / "old.pt")
    payload["format_version"] = 99
    torch.save(payload, tmp_path / "future.pt")
    with pytest.raises(ValueError, match="format 99"):
        BiLM.load(tmp_path / "future.pt")


def test_failed_save_keeps_the_previous_file(fitted, tmp_path, monkeypatch):
    path = tmp_path / "bilm.pt"
    fitted.save(path)
    before = path.read_bytes()

    def broken_save(obj, f, *args, **kwargs):
        if hasattr(f, "write"):  # a file object (save_torch_atomically's)
            f.write(b"partial")
        else:
            Path(f).write_bytes(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        fitted.save(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bilm.pt"]


def test_pickle_stores_numpy_weights_and_loads_in_a_fresh_process(fitted, corpus, tmp_path):
    state = fitted.__getstate__()
    assert "language_model_" not in state
    # NumPy float32 arrays: CPU by construction, and serialisable by skops too.
    assert all(isinstance(w, np.ndarray) and w.dtype == np.float32
               for w in state["_language_model_state"].values())
    assert state["_elmofeat_version_stamps"]["torch"] is not None
    assert "language_model_" in vars(fitted)  # pickling did not change the live object
    path = tmp_path / "bilm.joblib"
    joblib.dump(fitted, path)
    expected = fitted.embed(corpus[:3])
    code = textwrap.dedent(f"""
        import warnings, joblib, numpy as np
        warnings.simplefilter("error")
        bilm = joblib.load({str(path)!r})
        np.save({str(tmp_path / 'out.npy')!r}, np.concatenate(bilm.embed({corpus[:3]!r})))
    """)
    run_fresh(code, tmp_path)
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), np.concatenate(expected))
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(np.concatenate(restored.embed(corpus[:3])), np.concatenate(expected))


def _rewrite(path, target, change):
    payload = torch.load(path, weights_only=True)
    change(payload)
    torch.save(payload, target)
    return target


def test_corrupted_files_are_refused_by_their_checksum(fitted, tmp_path):
    fitted.save(tmp_path / "bilm.pt")
    name = next(iter(torch.load(tmp_path / "bilm.pt", weights_only=True)["state_dict"]))

    def flip_weight(payload):
        payload["state_dict"][name].view(-1)[0] += 1e-3  # one weight, checksum unchanged

    def flip_count(payload):
        payload["counts"][5] += 1

    def flip_param(payload):
        payload["params"] = payload["params"].replace('"dropout": 0.1', '"dropout": 0.2')

    for change in (flip_weight, flip_count, flip_param):
        path = _rewrite(tmp_path / "bilm.pt", tmp_path / f"{change.__name__}.pt", change)
        with pytest.raises(ValueError, match="corrupted: its checksum does not match"):
            BiLM.load(path)
    # Random bit flips in the file: refused, or (outside the contents) loaded unchanged.
    from elmofeat.bilm.io import weights_digest

    data = (tmp_path / "bilm.pt").read_bytes()
    rng = np.random.RandomState(0)
    for trial in range(30):
        damaged = bytearray(data)
        for position in rng.randint(0, len(data), size=rng.randint(1, 4)):
            damaged[position] ^= 1 << rng.randint(8)
        (tmp_path / "flipped.pt").write_bytes(bytes(damaged))
        try:
            loaded = BiLM.load(tmp_path / "flipped.pt")
        except ValueError:
            continue
        assert weights_digest(loaded) == weights_digest(fitted)
        assert loaded.vocabulary_.tokens == fitted.vocabulary_.tokens


@pytest.mark.parametrize("change, match", [
    (lambda p: p.pop("vocabulary"), "incomplete elmofeat BiLM file: 'vocabulary' is missing"),
    (lambda p: p.update(params=p["params"].replace('"dropout"', '"dropout_rate"')),
     "parameters this elmofeat does not know: dropout_rate"),
    (lambda p: p.update(params=p["params"].replace('"embedding_dim": 16', '"embedding_dim": -4')),
     "invalid parameter: The 'embedding_dim' parameter of BiLM"),
    (lambda p: p.update(fitted="{not json"), "damaged elmofeat BiLM file"),
])
def test_hand_edited_files_give_a_clear_error(fitted, tmp_path, change, match):
    from elmofeat.bilm.io import payload_checksum

    fitted.save(tmp_path / "bilm.pt")

    def edit(payload):
        change(payload)
        if "vocabulary" in payload:
            payload["checksum"] = payload_checksum(payload)  # an edit, not a corruption

    path = _rewrite(tmp_path / "bilm.pt", tmp_path / "edited.pt", edit)
    with pytest.raises(ValueError, match=match):
        BiLM.load(path)


@pytest.mark.parametrize("version", [1, 2])
def test_formats_no_release_wrote_are_refused_clearly(fitted, tmp_path, version):
    """Formats 1 and 2 (before the checksum) never left development: such a file is
    refused with what to do, not read through compatibility code."""
    fitted.save(tmp_path / "bilm.pt")
    payload = torch.load(tmp_path / "bilm.pt", weights_only=True)
    payload["format_version"] = version
    torch.save(payload, tmp_path / "old.pt")
    with pytest.raises(ValueError, match=f"format {version}; .* development version before "
                                         "0.1.0 wrote it; fit the model again"):
        BiLM.load(tmp_path / "old.pt")


def test_pickles_from_before_biLMs_measured_their_layer_spread_load(fitted):
    """0.1.0's pickles have no layer_scales_: they load, with None."""
    state = fitted.__getstate__()
    del state["layer_scales_"]
    old = BiLM.__new__(BiLM)
    old.__setstate__(state)
    assert old.layer_scales_ is None
    np.testing.assert_allclose(old.embed(["a b"])[0], fitted.embed(["a b"])[0])


def test_a_vocabulary_with_a_repeated_word_is_refused_at_load(fitted, tmp_path):
    # It passed every check and failed at first use, inside pandas.
    from elmofeat.bilm.io import payload_checksum

    path = tmp_path / "bilm.pt"
    fitted.save(path)
    payload = torch.load(path, weights_only=True)
    words = list(payload["vocabulary"])
    words[5] = words[6]
    payload["vocabulary"] = words
    payload["checksum"] = payload_checksum(payload)
    torch.save(payload, tmp_path / "twice.pt")
    with pytest.raises(ValueError, match=f"holds {words[6]!r} twice"):
        BiLM.load(tmp_path / "twice.pt")


def test_nothing_is_saved_into_the_shipped_models_folder(fitted, tmp_path):
    """A model saved there broke ElmoVectorizer() for every user until a reinstall."""
    import elmofeat
    from elmofeat.bilm import hub

    package = hub.PACKAGE_MODELS
    before = {p: p.stat().st_mtime_ns for p in package.rglob("*")}
    vectorizer = elmofeat.SVDVectorizer(n_components=2, min_count=1).fit(
        ["the cat sat", "the dog ran"] * 5)
    attempts = [lambda: fitted.save_pretrained(package / "en-small"),
                lambda: fitted.save_pretrained(package / "mine"),
                lambda: fitted.save_pretrained(package),
                lambda: fitted.save(package / "en-small" / "bilm.pt"),
                lambda: elmofeat.dump(vectorizer, package / "en-small" / "bilm.pt")]
    for attempt in attempts:
        with pytest.raises(ValueError, match="own models folder"):
            attempt()
    assert {p: p.stat().st_mtime_ns for p in package.rglob("*")} == before
    fitted.save_pretrained(tmp_path / "mine")  # anywhere else is fine
    assert (tmp_path / "mine" / "bilm.pt").is_file()


def test_saving_the_same_model_twice_gives_the_same_bytes(tmp_path):
    """A pinned SHA-256 can be reproduced: the file holds no trace of the temporary name
    it was written under (torch named the zip's folder after it)."""
    from elmofeat.bilm import hub

    texts = ["the cat sat on the mat .", "stocks fell on the news ."] * 8
    bilm = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0).fit(texts)
    bilm.save(tmp_path / "a.pt")
    bilm.save(tmp_path / "b.pt")
    first = bilm.save_pretrained(tmp_path / "one")
    second = bilm.save_pretrained(tmp_path / "two")
    assert hub.file_sha256(tmp_path / "a.pt") == hub.file_sha256(tmp_path / "b.pt")
    assert hub.file_sha256(first) == hub.file_sha256(second)
