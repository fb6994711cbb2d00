"""Distillation (issue 69): a copy of a fitted biLM trained so that a head over its
pooled layers gives a teacher's vector of each text, the LM loss beside it."""

import numpy as np
import pytest
import torch

from elmofeat.bilm.distillation import LOSSES, DocumentHead, distill, head_vectors

from .conftest import weights_of


@pytest.fixture(scope="module")
def teacher(corpus):
    """A teacher whose vector of a text says which topic words it holds: something the
    pooled layers can learn."""
    words = sorted({w for doc in corpus for w in doc.split()})[:12]
    vectors = np.array([[doc.split().count(w) for w in words] for doc in corpus], np.float32)
    vectors += 0.1
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_training_lowers_the_distillation_loss_and_leaves_the_model_given_alone(
        fitted, corpus, teacher):
    before = weights_of(fitted)
    result = distill(fitted, corpus, teacher, epochs=4, batch_size=16, learning_rate=1e-2)
    losses = [h["distillation_loss"] for h in result.history]
    assert len(losses) == 4 and all(h["complete"] for h in result.history)
    assert losses[-1] < 0.7 * losses[0]
    for name, tensor in fitted.language_model_.state_dict().items():
        assert torch.equal(tensor, before[name]), name
    changed = [n for n, t in result.bilm.language_model_.state_dict().items()
               if not torch.equal(t, before[n])]
    assert any("forward_lstm" in n for n in changed) and any("backward_lstm" in n for n in changed)
    # the head's vectors of the texts now point near the teacher's
    cosine = np.sum(result.embed(corpus) * teacher, 1) / np.linalg.norm(result.embed(corpus), axis=1)
    assert cosine.mean() > 1 - losses[-1] - 0.1


def test_lm_weight_zero_leaves_the_softmax_untouched_and_a_weight_trains_it(fitted, corpus, teacher):
    softmax = {k: v.clone() for k, v in fitted.language_model_.softmax.state_dict().items()}
    alone = distill(fitted, corpus, teacher, lm_weight=0.0, batch_size=32)
    both = distill(fitted, corpus, teacher, lm_weight=1.0, batch_size=32)
    for name, tensor in alone.bilm.language_model_.softmax.state_dict().items():
        assert torch.equal(tensor, softmax[name])
    assert any(not torch.equal(t, softmax[n])
               for n, t in both.bilm.language_model_.softmax.state_dict().items())


def test_same_seed_same_model_and_the_callers_random_state_is_kept(fitted, corpus, teacher):
    torch.manual_seed(123)
    state = torch.get_rng_state()
    first = distill(fitted, corpus, teacher, batch_size=32, random_state=3)
    assert torch.equal(torch.get_rng_state(), state)
    second = distill(fitted, corpus, teacher, batch_size=32, random_state=3)
    other = distill(fitted, corpus, teacher, batch_size=32, random_state=4)
    a, b, c = (r.bilm.language_model_.state_dict() for r in (first, second, other))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_a_stopped_run_resumes_to_the_uninterrupted_result(fitted, corpus, teacher, tmp_path):
    settings = dict(epochs=2, batch_size=16, checkpoint_every=3, random_state=1)
    whole = distill(fitted, corpus, teacher, **settings)
    path = tmp_path / "run.pt"
    stopped = distill(fitted, corpus, teacher, checkpoint=path, max_time=0.0, **settings)
    assert not stopped.history[-1]["complete"]  # stopped after its first step
    assert torch.load(path, weights_only=False)["state"]["step"] == 1
    resumed = distill(fitted, corpus, teacher, checkpoint=path, **settings)
    expected = whole.bilm.language_model_.state_dict()
    for name, tensor in resumed.bilm.language_model_.state_dict().items():
        assert torch.equal(tensor, expected[name]), name
    assert torch.equal(resumed.head.linear.weight, whole.head.linear.weight)
    assert [(h["epoch"], h["steps"], h["distillation_loss"]) for h in resumed.history] == \
        [(h["epoch"], h["steps"], h["distillation_loss"]) for h in whole.history]
    with pytest.raises(ValueError, match="other settings"):
        distill(fitted, corpus, teacher, checkpoint=path, **{**settings, "epochs": 3})


def test_embed_is_the_training_head_and_independent_of_the_batch(fitted, corpus, teacher):
    result = distill(fitted, corpus, teacher, batch_size=32)
    together = result.embed(corpus[:20])
    for i in (0, 7, 19):
        assert np.array_equal(result.embed([corpus[i]])[0], together[i])
    # the head module on a padded batch gives the same vectors (up to float rounding)
    from elmofeat.bilm.batching import make_batch
    tokens = result.bilm.tokenize(corpus[:5])
    windows = result.bilm._windows(tokens)
    batch = make_batch(windows, np.arange(5), None)
    with torch.no_grad():
        layers = result.bilm.language_model_.encoder.layer_representations(batch.inputs,
                                                                           batch.lengths)
        direct = result.head(layers, batch.lengths).numpy()
    np.testing.assert_allclose(direct, together[:5], atol=1e-5)


def test_a_text_without_tokens_gets_the_bias_not_nan(fitted, corpus, teacher):
    result = distill(fitted, corpus, teacher, batch_size=32)
    vectors = result.embed(["", corpus[0]])
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(vectors[0], result.head.linear.bias.detach().numpy(), atol=1e-6)
    empty = np.zeros((0, 3, fitted.output_dim_), np.float32)
    assert np.array_equal(head_vectors(result.head, empty, np.array([0, 0])),
                          vectors[:1])


def test_both_losses_are_registered_and_measure_what_they_say():
    assert set(LOSSES) >= {"cosine", "mse"}
    t = torch.tensor([[1.0, 0.0]])
    assert LOSSES["cosine"].function(torch.tensor([[3.0, 0.0]]), t).item() == pytest.approx(0)
    assert LOSSES["mse"].function(torch.tensor([[3.0, 0.0]]), t).item() == pytest.approx(4)


@pytest.mark.parametrize("kwargs, match", [
    (dict(targets=np.zeros((3, 4))), "texts but 3 target"),
    (dict(targets=np.full((160, 4), np.nan)), "NaN"),
    (dict(targets=np.zeros(160)), "2-D array"),
    (dict(loss="l1"), "unknown distillation loss"),
    (dict(lm_weight=-1.0), "lm_weight"),
    (dict(epochs=0), "epochs"),
])
def test_bad_input_is_named(fitted, corpus, teacher, kwargs, match):
    arguments = {"targets": teacher, **kwargs}
    with pytest.raises(ValueError, match=match):
        distill(fitted, corpus, **arguments)


def test_texts_must_be_strings_and_the_model_fitted(fitted, corpus, teacher):
    from elmofeat import BiLM

    with pytest.raises(TypeError, match="sequence of str"):
        distill(fitted, "one text", teacher)
    with pytest.raises(ValueError, match="fitted BiLM"):
        distill(BiLM(), corpus, teacher)


def test_head_scales_are_checked():
    with pytest.raises(ValueError, match="positive spreads"):
        DocumentHead(3, 8, 4, [1.0, 0.0, 1.0])


def test_the_students_layer_scales_are_its_own_spreads(fitted, corpus, teacher):
    """A student's layers are not its base's: the spreads it carries (what
    scale_layers="bilm" divides by) are measured on its own layers, not copied."""
    result = distill(fitted, corpus, teacher, epochs=2, batch_size=16, learning_rate=1e-2)
    layers, offsets = result.bilm.embed_flat(corpus)  # the whole (small) corpus is the sample
    pooled = np.stack([layers[a:b].mean(0) for a, b in zip(offsets[:-1], offsets[1:]) if b > a])
    expected = np.sqrt(pooled.astype(np.float64).var(axis=0).mean(axis=-1))
    np.testing.assert_allclose(result.bilm.layer_scales_, expected, rtol=1e-4)
    assert not np.allclose(result.bilm.layer_scales_, fitted.layer_scales_, rtol=1e-3)
    # the head keeps the spreads it was trained with
    np.testing.assert_allclose(result.head.scales.numpy(), fitted.layer_scales_)
    stopped = distill(fitted, corpus, teacher, epochs=2, batch_size=16, max_time=0.0)
    np.testing.assert_array_equal(stopped.bilm.layer_scales_, fitted.layer_scales_)


def test_the_word_table_trains_alike_for_a_loaded_and_a_fitted_model(fitted, corpus, teacher,
                                                                      tmp_path):
    """A model fitted here keeps its table frozen (freeze_embedding) and one loaded from
    a file does not: distill sets the table's training itself, so both train alike."""
    fitted.save(tmp_path / "m.pt")
    loaded = type(fitted).load(tmp_path / "m.pt")
    table = "encoder.token_layer.embedding.weight"
    start = fitted.language_model_.state_dict()[table].clone()
    for freeze in (False, True):
        results = [distill(model, corpus, teacher, batch_size=32, freeze_word_table=freeze)
                   for model in (fitted, loaded)]
        tables = [r.bilm.language_model_.state_dict()[table] for r in results]
        assert torch.equal(tables[0], tables[1])
        assert torch.equal(tables[0], start) == freeze
        # only rows of words the texts hold (and <bos>, <eos>) may move
        moved = (tables[0] != start).any(1).nonzero().ravel().tolist()
        read = set(fitted.vocabulary_.encode(fitted.tokenize(corpus)).ids.tolist())
        assert set(moved) <= read | {2, 3}
        assert len(moved) == 0 if freeze else len(moved) > 10
    with pytest.raises(TypeError, match="freeze_word_table must be True or False"):
        distill(fitted, corpus, teacher, freeze_word_table="yes")
