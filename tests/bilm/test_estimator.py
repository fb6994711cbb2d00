"""elmofeat.bilm.estimator: the BiLM estimator (fit, embed, parameters, precision)."""

import numpy as np
import pytest
import torch

from elmofeat import BiLM
from .conftest import TINY, weights_of


def test_embed_shapes_and_empty_document(fitted, corpus):
    out = fitted.embed([corpus[0], "", "unseen words here ."])
    n_tokens = len(fitted._tokenize([corpus[0]])[0])
    assert out[0].shape == (n_tokens, 3, 32) and out[0].dtype == np.float32
    assert out[1].shape == (0, 3, 32)
    assert out[2].shape == (4, 3, 32)
    # The token layer is [e; e]: both halves equal.
    np.testing.assert_array_equal(out[0][:, 0, :16], out[0][:, 0, 16:])
    assert fitted.output_dim_ == 32 and fitted.n_representations_ == 3


def test_embed_does_not_depend_on_the_batch(fitted, corpus):
    together = fitted.embed(corpus[:12])
    for doc, layers in zip(corpus[:12], together):
        np.testing.assert_allclose(fitted.embed([doc])[0], layers, rtol=1e-5, atol=1e-5)
    streamed = list(fitted.iter_embed(iter(corpus[:12]), batch_size=3, chunk_size=5))
    for a, b in zip(streamed, together):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_long_documents_are_split_into_windows_not_truncated(corpus):
    bilm = BiLM(**{**TINY, "max_len": 8, "max_epochs": 1}).fit(corpus)
    long_doc = " ".join(corpus[:6])
    n_tokens = len(bilm._tokenize([long_doc])[0])
    assert n_tokens > 20
    layers = bilm.embed([long_doc])[0]
    assert layers.shape[0] == n_tokens
    tokens = bilm._tokenize([long_doc])[0]
    first_window = bilm.embed([" ".join(tokens[:8])])[0]
    np.testing.assert_allclose(layers[:8], first_window, rtol=1e-5, atol=1e-5)


def test_training_lowers_validation_perplexity(corpus):
    bilm = BiLM(**{**TINY, "max_epochs": 6, "patience": None, "validation_fraction": 0.2,
                   "learning_rate": 0.02}).fit(corpus)
    ppl = [h["validation_perplexity"] for h in bilm.history_]
    assert len(ppl) == 6 and ppl[-1] < 0.8 * ppl[0]
    assert all(h["tokens_per_second"] > 0 and h["train_perplexity"] > 1 for h in bilm.history_)
    assert ppl[-1] < 0.75 * len(bilm.vocabulary_)  # well below uniform guessing


def test_same_random_state_same_weights_and_no_global_side_effects(corpus):
    torch.manual_seed(123)
    rng_before, threads_before = torch.get_rng_state(), torch.get_num_threads()
    a = BiLM(**{**TINY, "n_threads": 1}).fit(corpus)
    assert torch.equal(torch.get_rng_state(), rng_before)
    assert torch.get_num_threads() == threads_before
    b = BiLM(**TINY).fit(corpus)
    for (name, x), y in zip(weights_of(a).items(), weights_of(b).values()):
        assert torch.equal(x, y), name
    c = BiLM(**{**TINY, "random_state": 1}).fit(corpus)
    assert not torch.equal(weights_of(a)["encoder.forward_lstm.layers.0.weight_ih_l0"],
                           weights_of(c)["encoder.forward_lstm.layers.0.weight_ih_l0"])


@pytest.mark.parametrize("token_layer, softmax", [
    ("word", "sampled"), ("word", "full"), ("char", "adaptive"), ("char", "sampled"),
])
def test_token_layers_and_softmaxes_train(corpus, token_layer, softmax):
    bilm = BiLM(**{**TINY, "token_layer": token_layer, "softmax": softmax, "n_samples": 30,
                   "hidden_dim": 24, "char_filters": ((1, 8), (2, 8), (3, 16))}).fit(corpus)
    out = bilm.embed(["topic1word2 unseenword ."])[0]
    assert out.shape == (3, 3, 32) and np.isfinite(out).all()
    assert np.isfinite(bilm.perplexity(corpus[:10]))
    if token_layer == "char":  # unseen words get their own token vector
        other = bilm.embed(["topic1word2 otherunseen ."])[0]
        assert not np.allclose(out[1, 0], other[1, 0])


def test_unseen_words_share_unk_in_the_word_layer(fitted):
    a, b = fitted.embed(["qqqnew", "zzznew"])
    np.testing.assert_array_equal(a[0, 0], b[0, 0])


def test_tied_weights_share_the_embedding(corpus):
    bilm = BiLM(**{**TINY, "softmax": "full", "tie_weights": True}).fit(corpus)
    lm = bilm.language_model_
    assert lm.softmax.weight is lm.encoder.token_layer.embedding.weight


def test_verbose_says_what_it_pretrains_and_shows_one_bar_over_all_epochs(corpus, capsys):
    bilm = BiLM(**{**TINY, "max_epochs": 2, "patience": None, "verbose": True}).fit(corpus)
    err = capsys.readouterr().err
    assert "pretraining the biLM:" in err and "at most 2 epochs" in err
    assert "biLM epoch 2/2" in err and "tok_s" in err and "val_ppl" in err
    assert len(bilm.history_) == 2
    # The bar counts the batches of every epoch: its total is epochs x batches per epoch.
    import re
    bars = [part for part in re.split(r"[\r\n]", err) if part.startswith("biLM epoch")]
    totals = {int(m) for bar in bars for m in re.findall(r"\| *\d+/(\d+) \[", bar)}
    per_epoch = int(re.search(r"in ([\d,]+) batches per epoch", err).group(1).replace(",", ""))
    assert totals == {2 * per_epoch}, (totals, per_epoch)


@pytest.mark.parametrize("params, error, match", [
    ({"token_layer": "bytes"}, ValueError, "token_layer"),
    ({"softmax": "hierarchical"}, ValueError, "softmax"),
    ({"precision": "fp16"}, ValueError, "precision"),
    ({"embedding_dim": 0}, ValueError, "embedding_dim"),
    ({"dropout": 1.0}, ValueError, "dropout"),
    ({"learning_rate": 0}, ValueError, "learning_rate"),
    ({"tie_weights": True}, ValueError, "tie_weights"),
    ({"token_layer": "char", "pretrained_vectors": "x.txt"}, ValueError, "pretrained_vectors"),
    ({"char_filters": ((1, 0),)}, ValueError, "char_filters"),
    ({"char_filters": "abc"}, ValueError, "char_filters"),
    ({"device": "tpu"}, ValueError, "device"),
    ({"n_threads": True}, TypeError, "'n_threads' parameter of BiLM must be an int .* Got True"),
    ({"embedding_dim": True}, TypeError, "'embedding_dim' parameter of BiLM must be an int"),
    ({"min_count": 10_000}, ValueError, "vocabulary is empty"),
    ({"embedding_dim": 16, "hidden_dim": 8}, ValueError, "hidden_dim=8 is below embedding_dim=16"),
    ({"pretrained_vectors": 3.5}, TypeError, "pretrained_vectors"),
    ({"token_init": "glove"}, ValueError, "'token_init' parameter of BiLM must be a str among"),
    ({"dropout": 0.999}, ValueError, r"'dropout' parameter .* range \[0.0, 0.99\]. Got 0.999"),
    ({"learning_rate": float("nan")}, ValueError, "'learning_rate' parameter .* Got nan"),
    ({"clip_norm": float("inf")}, ValueError, "'clip_norm' parameter .* Got inf"),
    ({"verbose": "loud"}, ValueError, "'verbose' parameter of BiLM"),
    ({"freeze_embedding": "yes"}, ValueError, "'freeze_embedding' parameter of BiLM"),
])
def test_bad_parameters_raise_clear_errors(corpus, params, error, match):
    with pytest.raises(error, match=match):
        BiLM(**{**TINY, **params}).fit(corpus)


def test_a_diverging_run_stops_with_a_clear_error(corpus):
    with pytest.raises(FloatingPointError, match="diverged.*lower learning_rate"):
        BiLM(**{**TINY, "learning_rate": 1e3, "clip_norm": 1e6}).fit(corpus)


def test_bad_input_raises_clear_errors(fitted):
    with pytest.raises(TypeError, match="single str"):
        BiLM(**TINY).fit("one document")
    with pytest.raises(TypeError, match=r"X\[1\] is None"):
        fitted.embed(["ok", None])
    with pytest.raises(TypeError, match="single str"):
        fitted.embed("one document")
    with pytest.raises(TypeError, match="single str"):
        next(fitted.iter_embed("one document"))
    with pytest.raises(ValueError, match="empty"):
        BiLM(**TINY).fit([])


def test_unfitted_embed_raises():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        BiLM().embed(["a"])


@pytest.mark.parametrize("avx512_bf16, amx, expected", [
    (True, False, True), (False, True, True), (False, False, False),
])
def test_auto_precision_trains_in_bf16_only_where_the_cpu_has_it(monkeypatch, avx512_bf16, amx,
                                                                  expected):
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx)
    auto = BiLM(precision="auto")
    assert auto._bf16(training=True) is expected
    assert auto._bf16(training=False) is False  # inference stays in fp32
    assert BiLM(precision="fp32")._bf16(training=True) is False


def test_bf16_precision_runs_where_torch_can_and_says_why_not_elsewhere(corpus, monkeypatch):
    from elmofeat.runtime import torch_helpers as _torch

    monkeypatch.setattr(_torch, "bf16_runs", lambda device_type: True)
    monkeypatch.setattr("elmofeat.bilm.estimator.bf16_runs", lambda device_type: True)
    assert BiLM(precision="bf16")._bf16(training=False) is True
    monkeypatch.setattr("elmofeat.bilm.estimator.bf16_runs", lambda device_type: False)
    with pytest.raises(ValueError, match="no bfloat16 LSTM on this cpu"):
        BiLM(**{**TINY, "precision": "bf16"}).fit(corpus)
    # On this machine: either it trains in bf16, or the estimator refuses it clearly.
    monkeypatch.undo()
    if _torch.bf16_runs("cpu"):
        bilm = BiLM(**{**TINY, "precision": "bf16", "max_epochs": 1}).fit(corpus)
        assert np.isfinite(bilm.history_[0]["train_perplexity"])
    else:
        with pytest.raises(ValueError, match="precision='auto'"):
            BiLM(**{**TINY, "precision": "bf16"}).fit(corpus)


def test_char_validation_uses_the_validation_sets_own_byte_table(corpus, monkeypatch):
    # Each Windows numbers its own word types, so validation needs its own byte table.
    from elmofeat.bilm import train as train_module
    from elmofeat.bilm.batching import char_table

    seen = []
    original = train_module.evaluate_perplexity

    def spy(lm, windows, chars, *args, **kwargs):
        seen.append((windows, chars))
        return original(lm, windows, chars, *args, **kwargs)

    monkeypatch.setattr(train_module, "evaluate_perplexity", spy)
    BiLM(**{**TINY, "token_layer": "char", "max_epochs": 1, "validation_fraction": 0.25,
            "char_filters": ((1, 8), (2, 8))}).fit(corpus)
    (windows, chars), = seen
    np.testing.assert_array_equal(chars, char_table(windows.types, 20))


def test_iter_embed_names_the_index_in_the_whole_stream(fitted):
    documents = (("a b" if i != 1200 else None) for i in range(1300))
    with pytest.raises(TypeError, match=r"X\[1200\] is None"):
        for _ in fitted.iter_embed(documents, chunk_size=512):
            pass


@pytest.mark.parametrize("token_layer", ["char", "word"])
def test_lone_surrogates_are_read_by_both_token_layers(token_layer):
    """A badly decoded file leaves lone surrogates; the char-CNN used to raise
    UnicodeEncodeError on them while the word layer read them."""
    texts = ["the cat \udc80 sat", "a dog \ud800ran"] * 6
    bilm = BiLM(token_layer=token_layer, embedding_dim=8, hidden_dim=8, max_epochs=1,
                min_count=1, random_state=0).fit(texts)
    layers = bilm.embed(["the \udc80 cat", "\udfff"])
    assert layers[0].shape == (3, 3, 16) and all(np.isfinite(x).all() for x in layers)


def test_scale_sample_is_seeded_and_capped_in_documents_and_tokens(monkeypatch):
    from elmofeat.bilm import training_data

    docs = [["w"] * n for n in np.random.RandomState(0).randint(1, 60, size=5000)]
    picked = training_data.scale_sample_indices(docs, np.random.RandomState(3))
    again = training_data.scale_sample_indices(docs, np.random.RandomState(3))
    np.testing.assert_array_equal(picked, again)
    assert np.all(np.diff(picked) > 0)  # sorted, no repeats
    tokens = sum(len(docs[i]) for i in picked)
    # Random documents until the token budget is reached: the last one crosses it.
    assert training_data.SCALE_SAMPLE_TOKENS <= tokens < training_data.SCALE_SAMPLE_TOKENS + 60
    assert len(picked) <= training_data.SCALE_SAMPLE
    # Long documents: at least two, so that a spread exists.
    long = [["w"] * 100_000 for _ in range(5)]
    assert len(training_data.scale_sample_indices(long, np.random.RandomState(0))) == 2
    # Short ones: the document cap binds.
    monkeypatch.setattr(training_data, "SCALE_SAMPLE", 7)
    assert len(training_data.scale_sample_indices(docs, np.random.RandomState(0))) == 7


def test_layer_scales_are_the_spread_of_the_sampled_training_documents(corpus, monkeypatch):
    from elmofeat.bilm import training_data
    from elmofeat.mixes.base import layer_spread

    calls = []
    original = training_data.scale_sample_indices

    def recording(docs, random_state):
        calls.append((docs, original(docs, random_state)))
        return calls[-1][1]

    monkeypatch.setattr(training_data, "scale_sample_indices", recording)
    monkeypatch.setattr(training_data, "SCALE_SAMPLE_TOKENS", 300)  # a part of the corpus
    bilm = BiLM(**{**TINY, "max_epochs": 1}).fit(corpus)
    (docs, picked), = calls
    assert 2 <= len(picked) < len(docs)
    assert 300 <= sum(len(docs[i]) for i in picked) < 300 + max(map(len, docs))
    # The fitted biLM's scales are its layers' spread over that sample, to the bit.
    expected = layer_spread(*bilm.embed_tokens([docs[i] for i in picked]))
    np.testing.assert_array_equal(bilm.layer_scales_, expected)
    assert not np.allclose(expected, 1)
