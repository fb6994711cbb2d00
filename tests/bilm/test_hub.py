"""Pretrained models by name: registry, folders, 16-bit weights, checked downloads."""

import functools
import http.server
import json
import threading

import numpy as np
import pytest
import torch

from elmofeat import BiLM
from elmofeat.bilm import hub

from .conftest import TINY


@pytest.fixture
def registry(monkeypatch):
    """A registry of this test's own (the real one is left as it was)."""
    monkeypatch.setattr(hub, "REGISTRY", {})
    monkeypatch.setattr(hub, "_VERIFIED", {})
    return hub.REGISTRY


@pytest.fixture
def served(tmp_path):
    """A folder served over HTTP on 127.0.0.1 (never the network); yields (folder, url)."""
    folder = tmp_path / "served"
    folder.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield folder, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()


def test_save_pretrained_writes_a_folder_that_loads_by_path(fitted, tmp_path):
    weights = fitted.save_pretrained(tmp_path / "model", card="# A card\n")
    assert weights == tmp_path / "model" / "bilm.pt"
    config = json.loads((tmp_path / "model" / "config.json").read_text())
    assert config["weights_sha256"] == hub.file_sha256(weights)
    assert config["params"]["embedding_dim"] == 16
    assert (tmp_path / "model" / "README.md").read_text() == "# A card\n"
    payload = torch.load(weights, weights_only=True)
    floats = [t for t in payload["state_dict"].values() if t.is_floating_point()]
    assert floats and all(t.dtype == torch.float16 for t in floats)
    for source in (tmp_path / "model", weights, str(tmp_path / "model")):
        loaded = BiLM.from_pretrained(source)
        assert all(p.dtype == torch.float32 for p in loaded.language_model_.parameters())
        a = fitted.embed(["topic0word1 common2"])[0]
        b = loaded.embed(["topic0word1 common2"])[0]
        # 16-bit weights: the same features to about three digits.
        np.testing.assert_allclose(a, b, atol=2e-2 * np.abs(a).max())


def test_a_model_folder_keeps_no_run_settings_of_its_author(fitted, tmp_path):
    import copy

    noisy = copy.deepcopy(fitted).set_params(verbose=True, n_threads=1, checkpoint_every=5,
                                             device="cpu")
    noisy.save_pretrained(tmp_path / "m")
    loaded = BiLM.from_pretrained(tmp_path / "m")
    assert (loaded.verbose, loaded.n_threads, loaded.checkpoint_every) == (False, None, None)
    assert loaded.device == BiLM().device
    # and a file that holds them anyway (en-small's own says verbose=True) loads without
    noisy.save(tmp_path / "noisy.pt")
    loaded = BiLM.from_pretrained(tmp_path / "noisy.pt")
    assert (loaded.verbose, loaded.n_threads, loaded.checkpoint_every) == (False, None, None)
    assert BiLM.from_pretrained("en-small").verbose is False
    assert noisy.verbose is True  # the saved biLM itself is unchanged
    assert loaded.embedding_dim == fitted.embedding_dim


def test_float32_and_bfloat16_storage(fitted, tmp_path):
    fitted.save_pretrained(tmp_path / "f32", dtype="float32")
    loaded = BiLM.from_pretrained(tmp_path / "f32")
    for x, y in zip(fitted.language_model_.state_dict().values(),
                    loaded.language_model_.state_dict().values()):
        assert torch.equal(x, y)
    fitted.save_pretrained(tmp_path / "bf16", dtype="bfloat16")
    assert BiLM.from_pretrained(tmp_path / "bf16").embed(["common1"])[0].shape == (1, 3, 32)
    with pytest.raises(ValueError, match="dtype must be one of"):
        fitted.save_pretrained(tmp_path / "x", dtype="int8")


def test_a_registered_folder_loads_by_name_and_is_checked(fitted, tmp_path, registry):
    weights = fitted.save_pretrained(tmp_path / "tiny")
    hub.register("tiny", sha256=hub.file_sha256(weights), folder=str(tmp_path / "tiny"))
    assert BiLM.from_pretrained("tiny").n_output_words_ == fitted.n_output_words_
    # A changed byte is refused with the expected and found checksums.
    data = bytearray(weights.read_bytes())
    data[-10] ^= 1
    weights.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="have SHA-256 .* expected"):
        BiLM.from_pretrained("tiny")


def test_a_registered_url_is_downloaded_once_checked_and_cached(fitted, tmp_path, registry,
                                                                served):
    folder, url = served
    weights = fitted.save_pretrained(folder / "tiny")
    digest = hub.file_sha256(weights)
    hub.register("tiny-remote", sha256=digest, url=f"{url}/tiny/bilm.pt")
    cache = tmp_path / "cache"
    first = BiLM.from_pretrained("tiny-remote", cache_dir=cache)
    cached = list(cache.rglob("bilm.pt"))
    assert len(cached) == 1 and hub.file_sha256(cached[0]) == digest
    # Served no more: the cached copy is used.
    weights.unlink()
    second = BiLM.from_pretrained("tiny-remote", cache_dir=cache)
    for x, y in zip(first.language_model_.state_dict().values(),
                    second.language_model_.state_dict().values()):
        assert torch.equal(x, y)
    # The cache folder defaults to $ELMOFEAT_CACHE/models.
    assert hub.cache_folder(None).name == "models"


def test_a_download_with_the_wrong_checksum_is_refused_and_not_kept(fitted, tmp_path, registry,
                                                                    served):
    folder, url = served
    fitted.save_pretrained(folder / "tiny")
    hub.register("wrong", sha256="ab" * 32, url=f"{url}/tiny/bilm.pt")
    with pytest.raises(ValueError, match="download was refused"):
        BiLM.from_pretrained("wrong", cache_dir=tmp_path / "cache")
    assert not list((tmp_path / "cache").rglob("bilm.pt"))
    hub.register("missing", sha256="ab" * 32, url=f"{url}/nothing/bilm.pt")
    with pytest.raises(OSError, match="could not download"):
        BiLM.from_pretrained("missing", cache_dir=tmp_path / "cache")


def test_names_and_paths_that_are_not_models_say_so(tmp_path, registry):
    with pytest.raises(ValueError, match="neither a registered pretrained model"):
        BiLM.from_pretrained("no-such-model")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="has no bilm.pt"):
        BiLM.from_pretrained(tmp_path / "empty")
    with pytest.raises(TypeError, match="registered name or a path"):
        BiLM.from_pretrained(3)
    with pytest.raises(ValueError, match="exactly one of"):
        hub.register("x", sha256="0" * 64)
    with pytest.raises(ValueError, match="64 hexadecimal"):
        hub.register("x", sha256="xyz", url="http://127.0.0.1/x")
    hub.register("x", sha256="0" * 64, url="http://127.0.0.1/x")
    with pytest.raises(ValueError, match="already registered"):
        hub.register("x", sha256="0" * 64, url="http://127.0.0.1/x")
    hub.register("x", sha256="1" * 64, url="http://127.0.0.1/x", replace=True)
    assert hub.REGISTRY["x"].sha256 == "1" * 64


# ------------------------------------------------------------ pretrained words
def test_pretrained_words_are_read_but_not_predicted(corpus, tmp_path):
    path = tmp_path / "vectors.txt"
    rng = np.random.default_rng(0)
    words = ["common1", "common2", "outsider", "stranger"]
    path.write_text("".join(f"{w} " + " ".join(f"{v:.4f}" for v in rng.normal(size=8)) + "\n"
                            for w in words))
    bilm = BiLM(**TINY, pretrained_vectors=str(path), pretrained_words=4).fit(corpus)
    tokens = bilm.vocabulary_.tokens
    assert tokens[-2:] == ["outsider", "stranger"]
    assert bilm.n_output_words_ == len(tokens) - 2
    assert bilm.language_model_.softmax.adaptive.n_classes == bilm.n_output_words_
    table = bilm.language_model_.encoder.token_layer.embedding.weight.detach().numpy()
    expected = np.array(path.read_text().splitlines()[2].split()[1:], dtype=np.float32)
    np.testing.assert_allclose(table[tokens.index("outsider")], expected, rtol=1e-6)
    # The word gets its own vector, not <unk>'s.
    a = bilm.embed(["outsider"])[0][0, 0]
    b = bilm.embed(["zzzunknown"])[0][0, 0]
    assert not np.allclose(a, b)
    # Saved and loaded with the split between read and predicted words.
    bilm.save(tmp_path / "m.pt")
    loaded = BiLM.load(tmp_path / "m.pt")
    assert loaded.n_output_words_ == bilm.n_output_words_
    np.testing.assert_allclose(loaded.embed(["outsider"])[0], bilm.embed(["outsider"])[0],
                               atol=1e-6)
    assert np.isfinite(loaded.perplexity(["outsider common1 stranger"]))
    with pytest.raises(ValueError, match="pretrained_words needs pretrained_vectors"):
        BiLM(**TINY, pretrained_words=4).fit(corpus)
    # A loaded model (its vectors are not saved) adapts: it reads those words already.
    loaded.set_params(warm_start=True, max_epochs=1).fit(corpus[:40])
    assert loaded.vocabulary_.tokens[:len(tokens)] == tokens


# ------------------------------------------------------------------- warm start
def test_warm_start_continues_from_the_weights_and_reads_new_words(corpus, fitted):
    import copy

    new_texts = [d.replace("common1", "novelword") for d in corpus[:80]]
    start = copy.deepcopy(fitted)
    before = start.perplexity(new_texts)
    adapted = start.set_params(warm_start=True, max_epochs=2, patience=None).fit(new_texts)
    assert adapted is start
    assert len(adapted.history_) == len(fitted.history_) + 2
    assert [h.get("warm_start", False) for h in adapted.history_][-2:] == [True, True]
    assert "novelword" in adapted.vocabulary_.tokens
    assert adapted.n_output_words_ == fitted.n_output_words_  # read, not predicted
    assert adapted.perplexity(new_texts) < before
    # The new word is read through a vector mapped from its contexts: near common1's.
    table = adapted.language_model_.encoder.token_layer.embedding.weight.detach().numpy()
    tokens = adapted.vocabulary_.tokens
    new, old = table[tokens.index("novelword")], table[tokens.index("common1")]
    others = table[4:fitted.n_output_words_]
    cosine = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))  # noqa: E731
    assert cosine(new, old) > np.median([cosine(new, o) for o in others])
    # Same seed, same adapted weights.
    again = copy.deepcopy(fitted).set_params(warm_start=True, max_epochs=2,
                                             patience=None).fit(new_texts)
    for x, y in zip(adapted.language_model_.state_dict().values(),
                    again.language_model_.state_dict().values()):
        assert torch.equal(x, y)


def test_warm_start_refuses_a_changed_architecture(corpus, fitted):
    import copy

    bilm = copy.deepcopy(fitted).set_params(warm_start=True, hidden_dim=32)
    with pytest.raises(ValueError, match="architecture parameters were changed"):
        bilm.fit(corpus[:20])


def test_warm_start_on_an_unfitted_biLM_is_an_ordinary_fit(corpus):
    a = BiLM(**TINY, warm_start=True).fit(corpus)
    b = BiLM(**TINY).fit(corpus)
    for x, y in zip(a.language_model_.state_dict().values(),
                    b.language_model_.state_dict().values()):
        assert torch.equal(x, y)


def test_a_registered_model_loads_without_version_warnings(fitted, tmp_path, registry,
                                                           monkeypatch):
    import warnings

    from elmofeat.bilm import io

    weights = fitted.save_pretrained(tmp_path / "tiny")
    hub.register("tiny", sha256=hub.file_sha256(weights), folder=str(tmp_path / "tiny"))
    # Pretend every package has moved on since the file was saved.
    monkeypatch.setattr(io, "version_stamps", lambda packages: {p: "99" for p in packages})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        BiLM.from_pretrained("tiny")  # its bytes are checked against the registry
    with pytest.warns(Warning, match="saved with other versions"):
        BiLM.from_pretrained(weights)  # a file by path still says so
