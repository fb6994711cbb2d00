import gzip
import pickle
import subprocess
import sys
import textwrap

import joblib
import numpy as np
import pytest
import torch
from gensim.models import KeyedVectors

from elmofeat import BiLM, SkipGramVectorizer
from elmofeat.bilm.dropout import ByteDropout, random_bytes
from elmofeat.bilm.highway import Highway
from elmofeat.bilm.model import BiLMModule, reverse_padded
from elmofeat.bilm.pretrained import load_word_vectors
from elmofeat.bilm.softmax import AdaptiveSoftmax, FullSoftmax, SampledSoftmax
from elmofeat.bilm.token_layers import CharCNN, WordEmbedding
from elmofeat.bilm.train import LanguageModel
from elmofeat.exceptions import ElmofeatVersionWarning

from .estimator_checks import make_topic_corpus

TINY = dict(embedding_dim=16, hidden_dim=16, max_epochs=2, batch_size=16, random_state=0)


@pytest.fixture(scope="module")
def corpus():
    docs, _ = make_topic_corpus(160)
    return docs


@pytest.fixture(scope="module")
def fitted(corpus):
    return BiLM(**TINY).fit(corpus)


def _weights(bilm):
    return {k: v.clone() for k, v in bilm.language_model_.state_dict().items()}


# ------------------------------------------------------------------------ the model


def test_reverse_padded_reverses_within_length_only():
    x = torch.arange(10).reshape(2, 5)
    out = reverse_padded(x, torch.tensor([3, 5]))
    assert out.tolist() == [[2, 1, 0, 3, 4], [9, 8, 7, 6, 5]]
    assert torch.equal(reverse_padded(out, torch.tensor([3, 5])), x)


@pytest.mark.parametrize("projection", [False, True])
def test_directions_never_see_the_token_they_predict(projection):
    torch.manual_seed(0)
    module = BiLMModule(WordEmbedding(50, 8), hidden_dim=12 if projection else 8,
                        projection=projection, dropout=0.0).eval()
    ids = torch.randint(4, 50, (1, 9))
    lengths = torch.tensor([9])
    _, fwd, bwd = module(ids, lengths)
    changed = ids.clone()
    changed[0, 5] = (changed[0, 5] + 1 - 4) % 46 + 4  # a different word at position 5
    _, fwd2, bwd2 = module(changed, lengths)
    for a, b in zip(fwd, fwd2):  # forward state at t <= 4 (predicts t + 1 <= 5) is unchanged
        assert torch.allclose(a[0, :5], b[0, :5]) and not torch.allclose(a[0, 5:], b[0, 5:])
    for a, b in zip(bwd, bwd2):  # backward state at t >= 6 (predicts t - 1 >= 5) is unchanged
        assert torch.allclose(a[0, 6:], b[0, 6:]) and not torch.allclose(a[0, :6], b[0, :6])


def test_padding_does_not_change_real_positions():
    torch.manual_seed(0)
    module = BiLMModule(WordEmbedding(30, 8), hidden_dim=8, dropout=0.0).eval()
    ids = torch.randint(4, 30, (1, 6))
    alone = module.layer_representations(ids, torch.tensor([6]))
    padded = torch.cat([ids, torch.zeros(1, 4, dtype=torch.long)], dim=1)
    batch = module.layer_representations(padded, torch.tensor([6]))
    torch.testing.assert_close(batch[:, :6], alone)


def test_reverse_padded_works_on_feature_tensors_and_its_gradient_flows_back():
    x = torch.randn(3, 5, 2, requires_grad=True)
    lengths = torch.tensor([5, 2, 4])
    out = reverse_padded(x, lengths)
    for row, n in enumerate(lengths.tolist()):
        assert torch.equal(out[row, :n], x[row, :n].flip(0))
        assert torch.equal(out[row, n:], x[row, n:])
    (out * torch.arange(30.0).view(3, 5, 2)).sum().backward()
    torch.testing.assert_close(x.grad, reverse_padded(torch.arange(30.0).view(3, 5, 2), lengths))


def test_lm_scores_each_direction_on_the_targets_it_must_predict():
    """The loss pairs every state with the right target, whatever order it works in."""
    torch.manual_seed(0)
    bilm = BiLMModule(WordEmbedding(40, 8), hidden_dim=8, dropout=0.0)
    lm = LanguageModel(bilm, FullSoftmax(8, 40), dropout=0.0).eval()
    ids = torch.randint(4, 40, (3, 7))
    lengths = torch.tensor([7, 4, 6])
    ids[1, 4:], ids[2, 6:] = 0, 0
    with torch.no_grad():
        total, count = lm.log_likelihood(ids, ids, lengths)
    # Spelled out in the original order: forward state t predicts t + 1, backward t - 1.
    with torch.no_grad():
        _, fwd, bwd = bilm(ids, lengths)
        expected = 0.0
        for row, n in enumerate(lengths.tolist()):
            for t in range(n - 1):
                expected += lm.softmax.log_likelihood(fwd[-1][row, t:t + 1], ids[row, t + 1:t + 2])
                expected += lm.softmax.log_likelihood(bwd[-1][row, t + 1:t + 2], ids[row, t:t + 1])
    assert count == 2 * int((lengths - 1).sum())
    assert total == pytest.approx(float(expected), rel=1e-5)


def test_random_bytes_are_uniform_and_follow_the_seed():
    torch.manual_seed(0)
    draws = random_bytes(256 * 400 + 3)
    assert draws.dtype == torch.uint8 and draws.shape == (256 * 400 + 3,)
    counts = torch.bincount(draws.long(), minlength=256).double()
    chi_square = float(((counts - counts.mean()) ** 2 / counts.mean()).sum())
    assert chi_square < 350  # 255 degrees of freedom: p < 1e-4 above 350
    torch.manual_seed(0)
    assert torch.equal(random_bytes(256 * 400 + 3), draws)


def test_byte_dropout_drops_at_its_rate_and_keeps_the_mean():
    torch.manual_seed(0)
    dropout = ByteDropout(0.1)
    assert dropout.p == 26 / 256
    x = torch.ones(200, 500)
    out = dropout(x)
    dropped = float((out == 0).float().mean())
    assert abs(dropped - dropout.p) < 0.005
    assert abs(float(out.mean()) - 1.0) < 0.01
    torch.testing.assert_close(out[out != 0], torch.full_like(out[out != 0], 256 / 230))
    dropout.eval()
    assert dropout(x) is x
    assert ByteDropout(0.0).train()(x) is x


def test_hidden_dim_without_projection_is_rejected():
    with pytest.raises(ValueError, match="projection"):
        BiLMModule(WordEmbedding(10, 8), hidden_dim=16, projection=False)


@pytest.mark.parametrize("make", [
    lambda: FullSoftmax(8, 40),
    lambda: SampledSoftmax(8, 40, n_samples=10),
    lambda: AdaptiveSoftmax(8, 40),
])
def test_softmax_log_likelihoods_are_normalised(make):
    torch.manual_seed(0)
    softmax = make().eval()
    hidden = torch.randn(3, 8)
    total = torch.stack([
        softmax.log_likelihood(hidden, torch.full((3,), w, dtype=torch.long)).exp()
        for w in range(40)
    ]).sum(0)
    torch.testing.assert_close(total, torch.ones(3), rtol=1e-4, atol=1e-4)


def test_sampled_softmax_trains_on_samples_and_evaluates_exactly():
    torch.manual_seed(0)
    softmax = SampledSoftmax(8, 500, n_samples=20)
    hidden, targets = torch.randn(16, 8), torch.randint(0, 500, (16,))
    exact = FullSoftmax.loss(softmax, hidden, targets)
    softmax.eval()
    torch.testing.assert_close(softmax.loss(hidden, targets), exact)
    softmax.train()
    sampled = softmax.loss(hidden, targets)
    assert torch.isfinite(sampled) and not torch.isclose(sampled, exact)


def test_char_cnn_starts_with_words_pointing_different_ways():
    """Without the feature norm, distinct words start nearly parallel (cosine ~0.9)."""
    from elmofeat.bilm.token_layers import encode_words_as_bytes

    torch.manual_seed(0)
    layer = CharCNN(64)
    words = ["the", "market", "stocks", "microsoft", "iraq", "said", "on", "tuesday"]
    with torch.no_grad():
        out = layer(torch.from_numpy(encode_words_as_bytes(words, 20))[None])[0]
    unit = out / out.norm(dim=1, keepdim=True)
    n = len(words)
    mean_cosine = float(((unit @ unit.T).sum() - n) / (n * n - n))
    assert mean_cosine < 0.6
    with torch.no_grad():
        layer.feature_norm = torch.nn.Identity()
        out = layer(torch.from_numpy(encode_words_as_bytes(words, 20))[None])[0]
    unit = out / out.norm(dim=1, keepdim=True)
    assert float(((unit @ unit.T).sum() - n) / (n * n - n)) > 0.8


def test_highway_gate_carries_the_input_or_transforms_it():
    torch.manual_seed(0)
    highway = Highway(4, n_layers=1)
    x = torch.randn(5, 4)
    layer = highway.layers[0]
    with torch.no_grad():
        layer.weight[4:].zero_()  # gate = sigmoid(bias) whatever x is
        layer.bias[4:].fill_(30.0)
        torch.testing.assert_close(highway(x), x)  # gate open: the input is carried
        layer.bias[4:].fill_(-30.0)
        transform = torch.relu(x @ layer.weight[:4].T + layer.bias[:4])
        torch.testing.assert_close(highway(x), transform)  # gate shut: transformed
    fresh = Highway(4, n_layers=1)
    torch.testing.assert_close(fresh.layers[0].bias[4:], torch.ones(4))  # starts carrying


def test_char_cnn_gives_distinct_vectors_to_unseen_words():
    torch.manual_seed(0)
    layer = CharCNN(8, filters=((1, 4), (2, 4)), n_highway=1)
    from elmofeat.bilm.token_layers import encode_words_as_bytes

    chars = torch.from_numpy(encode_words_as_bytes(["zyxq", "qxyz", "zyxq"], 10))[None]
    out = layer(chars)[0]
    assert out.shape == (3, 8)
    assert not torch.allclose(out[0], out[1]) and torch.allclose(out[0], out[2])


# ---------------------------------------------------------------------- fit / embed


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


def test_early_stopping_keeps_the_best_epoch(corpus):
    bilm = BiLM(**{**TINY, "max_epochs": 30, "patience": 1, "learning_rate": 0.05,
                   "validation_fraction": 0.3}).fit(corpus)
    ppl = [h["validation_perplexity"] for h in bilm.history_]
    assert bilm.n_epochs_ < 30
    assert ppl[-1] >= min(ppl)


def test_same_random_state_same_weights_and_no_global_side_effects(corpus):
    torch.manual_seed(123)
    rng_before, threads_before = torch.get_rng_state(), torch.get_num_threads()
    a = BiLM(**{**TINY, "n_threads": 1}).fit(corpus)
    assert torch.equal(torch.get_rng_state(), rng_before)
    assert torch.get_num_threads() == threads_before
    b = BiLM(**TINY).fit(corpus)
    for (name, x), y in zip(_weights(a).items(), _weights(b).values()):
        assert torch.equal(x, y), name
    c = BiLM(**{**TINY, "random_state": 1}).fit(corpus)
    assert not torch.equal(_weights(a)["bilm.forward_lstm.layers.0.weight_ih_l0"],
                           _weights(c)["bilm.forward_lstm.layers.0.weight_ih_l0"])


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
    assert lm.softmax.weight is lm.bilm.token_layer.embedding.weight


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
    ({"n_threads": True}, TypeError, "n_threads must be a number, got the boolean"),
    ({"embedding_dim": True}, TypeError, "embedding_dim must be a number"),
    ({"min_count": 10_000}, ValueError, "vocabulary is empty"),
    ({"embedding_dim": 16, "hidden_dim": 8}, ValueError, "hidden_dim=8 is below embedding_dim=16"),
    ({"pretrained_vectors": 3.5}, TypeError, "pretrained_vectors"),
    ({"token_init": "glove"}, ValueError, "token_init must be one of"),
    ({"dropout": 0.999}, ValueError, "dropout == 0.999, must be <= 0.99"),
    ({"learning_rate": float("nan")}, ValueError, "learning_rate must be a finite number"),
    ({"clip_norm": float("inf")}, ValueError, "clip_norm must be a finite number"),
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


# ----------------------------------------------------------------- pretrained vectors


def _glove_file(path, words, dim, header=False, gz=False):
    rng = np.random.RandomState(0)
    vectors = rng.randn(len(words), dim).astype(np.float32)
    lines = [f"{len(words)} {dim}"] if header else []
    lines += [w + " " + " ".join(f"{x:.6f}" for x in v) for w, v in zip(words, vectors)]
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return dict(zip(words, vectors))


@pytest.mark.parametrize("header, gz", [(False, False), (True, False), (False, True)])
def test_word_vector_files_are_read_with_or_without_header(tmp_path, header, gz):
    path = tmp_path / ("v.txt.gz" if gz else "v.txt")
    truth = _glove_file(path, ["alpha", "beta", "gamma"], 4, header, gz)
    kv = load_word_vectors(path)
    assert kv.index_to_key == ["alpha", "beta", "gamma"]
    np.testing.assert_allclose(kv["beta"], truth["beta"], atol=1e-6)
    with pytest.raises(FileNotFoundError, match="not found"):
        load_word_vectors(tmp_path / "missing.txt")


def test_word_embedding_initialisation_from_pretrained_rows():
    pretrained = np.array([[np.nan] * 3, [1, 2, 3], [np.nan] * 3, [4, 5, 6]], dtype=np.float32)
    torch.manual_seed(0)
    layer = WordEmbedding(4, 3, pretrained)
    weight = layer.embedding.weight.detach().numpy()
    np.testing.assert_array_equal(weight[1], [1, 2, 3])
    np.testing.assert_array_equal(weight[0], 0)  # padding
    assert np.isfinite(weight[2]).all() and layer.projection is None
    wide = WordEmbedding(4, 8, pretrained)
    assert wide.projection is not None and wide(torch.tensor([[1, 3]])).shape == (1, 2, 8)


def test_fit_with_pretrained_keyed_vectors_logs_coverage(corpus, caplog):
    kv = KeyedVectors(vector_size=10)
    words = [f"topic0word{i}" for i in range(12)] + ["common1", "notinthecorpus"]
    kv.add_vectors(words, np.random.RandomState(0).randn(len(words), 10).astype(np.float32))
    with caplog.at_level("INFO", logger="elmofeat"):
        bilm = BiLM(**{**TINY, "max_epochs": 1, "pretrained_vectors": kv}).fit(corpus)
    assert bilm.pretrained_coverage_["found"] == 13
    assert bilm.pretrained_coverage_["missing"] == len(bilm.vocabulary_) - 4 - 13
    assert "pretrained vectors cover 13" in caplog.text
    assert bilm.language_model_.bilm.token_layer.projection is not None  # 10 -> 16
    assert bilm.embed(["topic0word1 ."])[0].shape == (2, 3, 32)


def test_fit_with_glove_file_and_with_vectorizers(corpus, tmp_path, monkeypatch):
    import elmofeat.bilm.pretrained as pretrained

    path = tmp_path / "glove.txt"
    _glove_file(path, ["topic0word1", "common2", ".", "unused", "words"], 16)
    asked = []
    original = pretrained.load_word_vectors
    monkeypatch.setattr(pretrained, "load_word_vectors",
                        lambda p, words=None: asked.append(words) or original(p, words))
    bilm = BiLM(**{**TINY, "max_epochs": 1, "pretrained_vectors": str(path)}).fit(corpus)
    assert bilm.pretrained_coverage_["found"] == 3
    # The file is read for the vocabulary's words only (the specials are never looked up).
    assert sorted(asked[0]) == sorted(bilm.vocabulary_.tokens[4:])
    assert bilm.language_model_.bilm.token_layer.projection is None
    fitted_vec = SkipGramVectorizer(vector_size=16, min_count=1, random_state=0).fit(corpus)
    a = BiLM(**{**TINY, "max_epochs": 1, "pretrained_vectors": fitted_vec}).fit(corpus)
    b = BiLM(**{**TINY, "max_epochs": 1,
                "pretrained_vectors": SkipGramVectorizer(vector_size=16, min_count=1, random_state=0)}).fit(corpus)
    assert a.pretrained_coverage_["found"] > 40
    for x, y in zip(_weights(a).values(), _weights(b).values()):
        assert torch.equal(x, y)


def test_corpus_vectors_are_the_svd_vectors_of_the_training_texts(corpus):
    from elmofeat import SVDVectorizer
    from elmofeat._text import Vocabulary
    from elmofeat.bilm.batching import SPECIALS, UNK
    from elmofeat.bilm.pretrained import corpus_vectors

    tokens = BiLM()._tokenize(corpus)
    vocabulary = Vocabulary.build(tokens, min_count=2, specials=SPECIALS, unknown=UNK)
    matrix, coverage = corpus_vectors(tokens, vocabulary, len(SPECIALS), 8, np.random.RandomState(0))
    assert np.isnan(matrix[:4]).all() and coverage == {"found": len(vocabulary) - 4, "missing": 0}
    np.testing.assert_allclose(np.linalg.norm(matrix[4:], axis=1).mean(), 1.0, rtol=1e-5)
    svd = SVDVectorizer(n_components=8, min_count=2, token_pattern=BiLM().token_pattern,
                        random_state=np.random.RandomState(0)).fit(corpus)
    expected = svd.keyed_vectors_[vocabulary.tokens[4:]]
    # The same vectors up to one scale factor (the SVD vectorizer does not rescale).
    ratio = np.linalg.norm(expected, axis=1) / np.linalg.norm(matrix[4:], axis=1)
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-4)
    np.testing.assert_allclose(matrix[4:] * ratio[0], expected, rtol=1e-3, atol=1e-5)
    # A vocabulary smaller than the embedding: the extra columns are small noise.
    wide, _ = corpus_vectors(tokens, vocabulary, len(SPECIALS), 200, np.random.RandomState(0))
    assert np.isfinite(wide[4:]).all() and wide.shape == (len(vocabulary), 200)


def test_token_init_svd_starts_the_embedding_from_the_counts(corpus):
    from elmofeat.bilm import estimator

    started = {}
    original = estimator.BiLM._build_language_model

    def spy(self, n_words, pretrained=None, input_dim=None):
        started["pretrained"] = None if pretrained is None else pretrained.copy()
        return original(self, n_words, pretrained, input_dim)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(estimator.BiLM, "_build_language_model", spy)
        svd = BiLM(**{**TINY, "max_epochs": 1}).fit(corpus)
        assert started["pretrained"] is not None and np.isfinite(started["pretrained"][4:]).all()
        BiLM(**{**TINY, "max_epochs": 1, "token_init": "random"}).fit(corpus)
        assert started["pretrained"] is None
        BiLM(**{**TINY, "max_epochs": 1, "token_layer": "char"}).fit(corpus)
        assert started["pretrained"] is None  # ignored by the character CNN
    again = BiLM(**{**TINY, "max_epochs": 1}).fit(corpus)
    for x, y in zip(_weights(svd).values(), _weights(again).values()):
        assert torch.equal(x, y)


def test_files_from_before_token_init_load_as_random_init(fitted, tmp_path):
    fitted.save(tmp_path / "bilm.pt")
    payload = torch.load(tmp_path / "bilm.pt", weights_only=True)
    assert '"token_init": "svd"' in payload["params"]
    payload["params"] = payload["params"].replace('"token_init": "svd", ', "")
    payload["format_version"] = 2  # written before checksums, as such files were
    del payload["checksum"]
    torch.save(payload, tmp_path / "old.pt")
    assert BiLM.load(tmp_path / "old.pt").token_init == "random"
    assert BiLM.load(tmp_path / "bilm.pt").token_init == "svd"


# ----------------------------------------------------------------------- persistence


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


def test_format_1_files_load_unless_they_hold_the_old_char_cnn(fitted, tmp_path):
    fitted.save(tmp_path / "bilm.pt")
    payload = torch.load(tmp_path / "bilm.pt", weights_only=True)
    payload["format_version"] = 1
    torch.save(payload, tmp_path / "word_v1.pt")
    loaded = BiLM.load(tmp_path / "word_v1.pt")
    assert loaded.vocabulary_.tokens == fitted.vocabulary_.tokens
    payload["params"] = payload["params"].replace('"token_layer": "word"', '"token_layer": "char"')
    assert '"token_layer": "char"' in payload["params"]
    torch.save(payload, tmp_path / "char_v1.pt")
    with pytest.raises(ValueError, match="fit the model again"):
        BiLM.load(tmp_path / "char_v1.pt")


def test_failed_save_keeps_the_previous_file(fitted, tmp_path, monkeypatch):
    path = tmp_path / "bilm.pt"
    fitted.save(path)
    before = path.read_bytes()

    def broken_save(obj, f, *args, **kwargs):
        with open(f, "wb") as out:
            out.write(b"partial")
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
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=300)
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), np.concatenate(expected))
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(np.concatenate(restored.embed(corpus[:3])), np.concatenate(expected))



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
    assert BiLM(precision="bf16")._bf16(training=False) is True
    assert BiLM(precision="fp32")._bf16(training=True) is False

# ----------------------------------------------------------------------- checkpoints


def test_interrupted_fit_resumes_to_the_same_weights(corpus, tmp_path, monkeypatch):
    params = {**TINY, "max_epochs": 3, "patience": None, "checkpoint_every": 3}
    uninterrupted = BiLM(**params, checkpoint_dir=tmp_path / "a").fit(corpus)
    assert (tmp_path / "a" / "checkpoint.pt").is_file()

    original_step = torch.optim.AdamW.step
    calls = {"n": 0}

    def step_then_crash(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 17:  # mid-epoch 2, two steps after the checkpoint at step 15
            raise KeyboardInterrupt
        return original_step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.AdamW, "step", step_then_crash)
    with pytest.raises(KeyboardInterrupt):
        BiLM(**params, checkpoint_dir=tmp_path / "b").fit(corpus)
    monkeypatch.setattr(torch.optim.AdamW, "step", original_step)
    state = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=True)
    assert state["global_step"] == 15 and state["epoch"] == 1
    resumed = BiLM(**params, checkpoint_dir=tmp_path / "b").fit(corpus)
    for (name, x), y in zip(_weights(uninterrupted).items(), _weights(resumed).values()):
        assert torch.equal(x, y), name
    # A checkpoint of other texts is refused, not silently resumed.
    with pytest.raises(ValueError, match="other texts or parameters"):
        BiLM(**params, checkpoint_dir=tmp_path / "b").fit(corpus[:50])
    # So is one written by another elmofeat version, or a foreign file.
    state["format"] = "elmofeat-bilm-checkpoint-1"
    torch.save(state, tmp_path / "b" / "checkpoint.pt")
    with pytest.raises(ValueError, match="another elmofeat version"):
        BiLM(**params, checkpoint_dir=tmp_path / "b").fit(corpus)
    torch.save({"weights": torch.zeros(2)}, tmp_path / "b" / "checkpoint.pt")
    with pytest.raises(ValueError, match="not an elmofeat biLM checkpoint"):
        BiLM(**params, checkpoint_dir=tmp_path / "b").fit(corpus)


# ------------------------------------------------------------------------ torchrun


def test_torchrun_ddp_two_processes_stay_in_sync(corpus, tmp_path):
    texts = tmp_path / "corpus.txt"
    texts.write_text("\n".join(corpus))
    params = '{"embedding_dim": 16, "hidden_dim": 16, "max_epochs": 2, "batch_size": 8, "random_state": 0}'
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         "-m", "elmofeat.bilm.distributed", "--texts", str(texts), "--output",
         str(tmp_path / "ddp.pt"), "--params", params, "--digest-dir", str(tmp_path / "digests")],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "find_unused_parameters" not in result.stderr  # gradients averaged by the engine
    assert f"model saved to {(tmp_path / 'ddp.pt').resolve()}" in result.stdout
    digests = {p.name: p.read_text() for p in (tmp_path / "digests").iterdir()}
    assert set(digests) == {"rank0.txt", "rank1.txt"}
    assert digests["rank0.txt"] == digests["rank1.txt"]
    loaded = BiLM.load(tmp_path / "ddp.pt")
    from elmofeat.bilm.io import weights_digest

    assert weights_digest(loaded) == digests["rank0.txt"]
    assert loaded.n_epochs_ == 2 and loaded.history_[0]["validation_perplexity"] > 1


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
     "invalid parameter: embedding_dim"),
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
