"""Fine-tuning a biLM on labels (issue 70): ULMFiT's recipe with the head started from
the linear probe (LP-FT)."""

import numpy as np
import pytest
import torch

from elmofeat.bilm import finetune
from elmofeat.bilm.batching import make_batch, make_windows
from elmofeat.bilm.finetune import (concat_pool, concat_pool_flat, fine_tune,
                                    slanted_triangular)

from ..estimator_checks import make_topic_corpus
from .conftest import weights_of


@pytest.fixture(scope="module")
def labelled():
    docs, y = make_topic_corpus(160)
    return docs, np.array([f"topic {t}" for t in y])


def test_concat_pool_reads_padded_windows_as_embed_flat_reads_texts(fitted, labelled):
    texts = labelled[0][:12] + [""]
    layers, offsets = fitted.embed_flat(texts)
    flat = concat_pool_flat(layers, offsets)
    tokens = [t[:fitted.max_len] for t in fitted.tokenize(texts)]
    windows = make_windows(tokens[:12], fitted.vocabulary_, fitted.max_len, with_types=False)
    batch = make_batch(windows, np.arange(12), None)
    lm = fitted.language_model_.eval()
    with torch.no_grad():
        padded = concat_pool(lm.encoder.layer_representations(batch.inputs, batch.lengths),
                             batch.lengths).numpy()
    np.testing.assert_allclose(padded, flat[:12], rtol=1e-4, atol=1e-5)
    assert not flat[12].any()  # a text without tokens pools to zeros
    width = layers.shape[2]
    # mean, max, then the top layer's forward state at the last token, backward at the first
    first = layers[offsets[0]:offsets[1]]
    np.testing.assert_allclose(flat[0, -width:-width // 2], first[-1, -1, :width // 2])
    np.testing.assert_allclose(flat[0, -width // 2:], first[0, -1, width // 2:])


def test_without_a_better_epoch_the_linear_probe_is_returned(fitted, labelled):
    """LP-FT: the head starts as the probe; where no epoch lowers the held-out loss (a
    zero learning rate), the result is the probe on the model given."""
    from sklearn.linear_model import LogisticRegression

    texts, y = labelled
    tuned = fine_tune(fitted, texts, y, epochs=1, learning_rate=0.0, probe_C=1.0)
    assert tuned.bilm is fitted and tuned.best_epoch == 0
    layers, offsets = fitted.embed_flat(texts)
    pooled = concat_pool_flat(layers, offsets)
    train, _ = finetune._validation_split(np.unique(y, return_inverse=True)[1], 0.1, 0)
    mean, scale = pooled[train].mean(0), pooled[train].std(0) + 1e-6
    probe = LogisticRegression(max_iter=2000, random_state=0).fit(
        (pooled[train] - mean) / scale, y[train])
    expected = probe.decision_function((pooled - mean) / scale)
    np.testing.assert_allclose(tuned.decision_function(texts), expected, rtol=1e-3, atol=1e-3)
    assert (tuned.predict(texts) == probe.predict((pooled - mean) / scale)).all()


def _always_better(monkeypatch):
    losses = iter(np.linspace(1.0, 0.1, 20))
    monkeypatch.setattr(finetune, "_held_out_loss", lambda *a: (float(next(losses)), 0.5))


def test_gradual_unfreezing_trains_the_top_first_and_the_word_table_never(
        fitted, labelled, monkeypatch):
    _always_better(monkeypatch)
    before = weights_of(fitted)
    texts, y = labelled
    one = fine_tune(fitted, texts, y, epochs=1, learning_rate=1e-2).bilm.language_model_
    changed = {k for k, v in one.state_dict().items() if not torch.equal(v, before[k])}
    assert any(".layers.1." in k for k in changed)  # the top LSTM layer, both directions
    assert not any(".layers.0." in k for k in changed) and "encoder.token_layer" not in str(changed)
    _always_better(monkeypatch)
    every = fine_tune(fitted, texts, y, epochs=1, learning_rate=1e-2,
                      gradual_unfreezing=False).bilm.language_model_
    changed = {k for k, v in every.state_dict().items() if not torch.equal(v, before[k])}
    assert any(".layers.0." in k for k in changed)
    assert "encoder.token_layer.projection.weight" in changed or \
        "encoder.token_layer.projection.weight" not in before  # a projection learns, if any
    assert "encoder.token_layer.embedding.weight" not in changed
    for name, tensor in fitted.language_model_.state_dict().items():  # the model given
        assert torch.equal(tensor, before[name]), name


def test_fine_tuning_learns_the_labels_and_is_seeded(fitted, labelled):
    texts, y = labelled
    first = fine_tune(fitted, texts, y, epochs=2, learning_rate=5e-3, random_state=1)
    assert [h["epoch"] for h in first.history] == [0, 1, 2]
    best = first.history[first.best_epoch]["held_out_loss"]
    assert best == min(h["held_out_loss"] for h in first.history)
    assert (first.predict(texts) == y).mean() > 0.9
    assert list(first.classes) == sorted(set(y))
    again = fine_tune(fitted, texts, y, epochs=2, learning_rate=5e-3, random_state=1)
    np.testing.assert_array_equal(first.decision_function(texts), again.decision_function(texts))
    proba = first.predict_proba(texts[:5])
    np.testing.assert_allclose(proba.sum(1), 1, rtol=1e-5)
    # a text's scores do not depend on the others in the call
    np.testing.assert_array_equal(first.decision_function(texts[3:4]),
                                  first.decision_function(texts[:9])[3:4])


def test_the_slanted_triangular_schedule_warms_up_then_decays():
    factors = [slanted_triangular(step, 100) for step in range(100)]
    assert factors[0] == pytest.approx(1 / 32) and max(factors) == factors[10] == 1.0
    assert all(a < b for a, b in zip(factors[:10], factors[1:11]))
    assert all(a > b for a, b in zip(factors[10:-1], factors[11:]))


@pytest.mark.parametrize("kwargs, error, match", [
    ({"y": ["a"] * 160}, ValueError, "at least 2 classes"),
    ({"y": ["a", "b"]}, ValueError, "one label per text"),
    ({"epochs": 0}, ValueError, "epochs must be a positive integer"),
    ({"validation_fraction": 1.0}, ValueError, "validation_fraction"),
])
def test_bad_input_is_named(fitted, labelled, kwargs, error, match):
    texts, y = labelled
    kwargs = {"y": y, **kwargs}
    with pytest.raises(error, match=match):
        fine_tune(fitted, texts, kwargs.pop("y"), **kwargs)
    with pytest.raises(TypeError, match="sequence of str"):
        fine_tune(fitted, "one text", ["a"])


def test_the_probe_chooses_its_c_quietly(labelled):
    """probe_C=None searches C by inner CV without scikit-learn's FutureWarnings (a
    library leaves the user's warnings as they were, and says nothing they did not ask)."""
    import warnings

    rng = np.random.default_rng(0)
    pooled = rng.normal(size=(120, 10)).astype(np.float32)
    codes = (pooled[:, 0] > 0).astype(np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mean, scale, weight, bias = finetune._probe(pooled, codes, 2, None, 0)
    assert weight.shape == (2, 10) and bias.shape == (2,)
    standardised = (pooled - mean) / scale
    assert ((standardised @ weight.T + bias).argmax(1) == codes).mean() > 0.9


def test_without_early_stopping_every_row_trains_and_the_last_epoch_is_kept(fitted, labelled):
    texts, y = labelled
    tuned = fine_tune(fitted, texts, y, epochs=2, early_stopping=False)
    assert tuned.best_epoch == 2 and tuned.bilm is not fitted
    assert [h["held_out_loss"] for h in tuned.history] == [None, None, None]
    # every row trained: the rows early stopping would hold out change the model too
    held = fine_tune(fitted, texts, y, epochs=2, learning_rate=1e-3, early_stopping=True)
    assert not np.array_equal(tuned.decision_function(texts[:5]),
                              held.decision_function(texts[:5]))


def test_the_copy_shares_the_frozen_word_table_and_leaves_the_model_given_as_it_was(
        fitted, labelled):
    texts, y = labelled
    lm = fitted.language_model_
    table = lm.encoder.token_layer.embedding.weight
    trainable = table.requires_grad
    before = weights_of(fitted)
    tuned = fine_tune(fitted, texts, y, epochs=1, early_stopping=False, learning_rate=1e-2)
    student = tuned.bilm.language_model_
    # one read-only twin of the table for every fine-tuned copy, not a table per copy
    shared = student.encoder.token_layer.embedding.weight
    assert shared.is_inference() and shared.equal(table)
    again = fine_tune(fitted, texts[:40], y[:40], epochs=1, early_stopping=False)
    assert again.bilm.language_model_.encoder.token_layer.embedding.weight is shared
    assert student.encoder.forward_lstm is not lm.encoder.forward_lstm
    assert table.requires_grad == trainable and table.grad is None
    for name, value in weights_of(fitted).items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)
    changed = weights_of(tuned.bilm)
    assert any(not np.array_equal(changed[n], before[n]) for n in before)


def test_class_weights_weigh_the_loss_and_the_probe(fitted, labelled):
    texts, y = labelled
    rare = y == y[0]
    favoured = fine_tune(fitted, texts, y, epochs=1, early_stopping=False, probe_C=0.01,
                         class_weight={label: (50.0 if label == y[0] else 1.0)
                                       for label in np.unique(y)})
    plain = fine_tune(fitted, texts, y, epochs=1, early_stopping=False, probe_C=0.01)
    assert rare.any()
    assert (favoured.predict(texts) == y[0]).sum() > (plain.predict(texts) == y[0]).sum()
    with pytest.raises(ValueError, match="class_weight"):
        fine_tune(fitted, texts, y, class_weight={"no such class": 2.0})
