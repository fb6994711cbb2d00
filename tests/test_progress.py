"""Progress bars: on with verbose (and in the CLI), silent by default in library calls."""

import hashlib

import pytest

from elmofeat import BiLM, ElmoVectorizer, SkipGramVectorizer
from elmofeat.cli import main
from elmofeat.datasets import RemoteFile, fetch_file

from .estimator_checks import make_topic_corpus

TINY = dict(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0)


@pytest.fixture(scope="module")
def texts():
    return make_topic_corpus(60)[0]


@pytest.fixture(scope="module")
def bilm(texts):
    return BiLM(**TINY).fit(texts)


def test_transform_and_embed_bars_only_with_verbose(texts, bilm, capsys):
    vec = ElmoVectorizer(bilm, cache_dir=None).fit(texts)
    capsys.readouterr()
    vec.transform(texts)
    bilm.embed(texts[:5])
    assert capsys.readouterr().err == ""  # library calls are quiet by default
    vec.set_params(verbose=True).transform(texts)
    assert "ElmoVectorizer.transform" in capsys.readouterr().err
    loud = BiLM(**{**TINY, "verbose": True, "validation_fraction": 0.2}).fit(texts)
    err = capsys.readouterr().err
    assert "pretraining the biLM" in err and "biLM validation, epoch 1" in err
    loud.perplexity(texts[:5])
    assert "BiLM.perplexity" in capsys.readouterr().err
    bilm.perplexity(texts[:5])
    assert capsys.readouterr().err == ""
    loud.embed(texts[:5])
    assert "BiLM.embed" in capsys.readouterr().err


def test_every_stage_of_a_fit_a_user_waits_for_has_a_bar_with_verbose(texts, bilm, capsys):
    """The layers' spread, the contextual bag's sample and codebook, cross-fitting: each
    its bar (time left: tqdm's) under verbose, and the same features as a quiet fit."""
    import numpy as np

    labels = make_topic_corpus(60)[1]
    quiet = ElmoVectorizer(bilm, bag_size=6, cache_dir=None, random_state=0).fit_transform(texts)
    assert capsys.readouterr().err == ""
    loud = ElmoVectorizer(bilm, bag_size=6, cache_dir=None, random_state=0,
                          verbose=True).fit_transform(texts)
    err = capsys.readouterr().err
    for stage in ("ElmoVectorizer.fit: layer spread", "contextual bag, its sample",
                  "contextual bag, its codebook", "k-means"):
        assert stage in err, stage
    assert "layer spread:   0%|          | 0/60" in err  # a bar over every document
    np.testing.assert_array_equal(loud, quiet)
    ElmoVectorizer(bilm, layer_mix="trainable", bag_size=None, mix_epochs=1, cv=2,
                   cache_dir=None, random_state=0, verbose=True).fit_transform(texts, labels)
    assert "cross-fitting the mix" in capsys.readouterr().err
    ElmoVectorizer(bilm, fine_tune_epochs=1, bag_size=None, cv=2, cache_dir=None,
                   random_state=0, verbose=True).fit_transform(texts, labels)
    err = capsys.readouterr().err
    assert "cross-fitting the fine-tuning:   0%|          | 0/2" in err  # a step a fold


def test_skipgram_epochs_bar(texts, capsys):
    SkipGramVectorizer(vector_size=4, min_count=1, epochs=3, random_state=0).fit(texts)
    assert capsys.readouterr().err == ""
    SkipGramVectorizer(vector_size=4, min_count=1, epochs=3, random_state=0, verbose=True).fit(texts)
    err = capsys.readouterr().err
    assert "skip-gram" in err and "3/3" in err


def test_download_bar(tmp_path, capsys):
    source = tmp_path / "data.bin"
    source.write_bytes(b"x" * 5000)
    remote = RemoteFile("data.bin", source.as_uri(), "sha256:" + hashlib.sha256(b"x" * 5000).hexdigest())
    fetch_file(remote, tmp_path / "a")
    assert capsys.readouterr().err == ""
    fetch_file(remote, tmp_path / "b", progress=True)
    assert "data.bin" in capsys.readouterr().err


def test_cli_embed_shows_progress_unless_quiet(bilm, texts, tmp_path, capsys):
    bilm.save(tmp_path / "bilm.pt")
    (tmp_path / "texts.txt").write_text("\n".join(texts))
    args = ["embed", str(tmp_path / "bilm.pt"), str(tmp_path / "texts.txt"), "-o", str(tmp_path / "f.npy")]
    assert main(args) == 0
    assert "ElmoVectorizer.transform" in capsys.readouterr().err
    assert main([*args, "--quiet", "--force"]) == 0  # the same output: replaced on request
    assert "ElmoVectorizer.transform" not in capsys.readouterr().err
