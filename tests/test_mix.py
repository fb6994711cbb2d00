"""The layer mixes of elmofeat.mixes: torch modules, their fitted NumPy form, the MLP
alignment and the head-training loop."""

import pickle

import numpy as np
import pytest
import torch

from elmofeat.elmo.labels import check_targets
from elmofeat._pooling import pool_vectors
from elmofeat.mixes import get_mix
from elmofeat.mixes.base import MixData, MixSettings
from elmofeat.mixes.concat import ConcatMix, fit_concat
from elmofeat.mixes.mlp import MLPMix, ReluMix, alignment_documents, fit_alignment
from elmofeat.mixes.scalar import LinearMix, ScalarMix, frozen_mix


def test_scalar_mix_is_elmo_equation():
    mix = ScalarMix(3)
    with torch.no_grad():
        mix.scalars.copy_(torch.tensor([0.0, 1.0, 2.0]))
        mix.gamma.fill_(2.0)
    layers = torch.randn(4, 3, 5)
    weights = torch.softmax(torch.tensor([0.0, 1.0, 2.0]), 0)
    expected = 2.0 * (weights[:, None] * layers).sum(1)
    torch.testing.assert_close(mix(layers), expected)
    fitted = mix.to_fitted(dim=5)
    assert isinstance(fitted, LinearMix) and fitted.n_features == 5
    np.testing.assert_allclose(fitted.apply(layers.numpy()), expected.numpy(), rtol=1e-5)
    np.testing.assert_allclose(fitted.shares, weights.numpy(), rtol=1e-6)


def _mixes(rng):
    return {"linear": LinearMix(np.array([0.2, 0.3, 0.5], np.float32), 1.5, [0.2, 0.3, 0.5], dim=4),
            "relu": ReluMix(rng.randn(12, 6).astype(np.float32), rng.randn(6).astype(np.float32)),
            "concat": ConcatMix(np.array([0.5, 0.25, 2.0], np.float32), [1 / 3] * 3, dim=4)}


@pytest.mark.parametrize("kind, pooling", [("linear", "mean"), ("linear", "max"),
                                           ("relu", "mean"), ("relu", "meanmax"),
                                           ("concat", "mean"), ("concat", "meanmax")])
def test_pooling_a_mix_equals_mixing_every_token_then_pooling(kind, pooling):
    rng = np.random.RandomState(0)
    layers = rng.randn(20, 3, 4).astype(np.float32)
    offsets = np.array([0, 5, 5, 20])
    mix = _mixes(rng)[kind]
    direct = pool_vectors(mix.apply(layers), offsets, pooling)
    np.testing.assert_allclose(mix.pool(layers, offsets, pooling), direct, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(direct[1], 0)  # the empty document
    assert direct.shape[1] == mix.n_features * (2 if pooling == "meanmax" else 1)


@pytest.mark.parametrize("kind", ["linear", "relu", "concat"])
def test_streamed_pieces_pool_like_the_whole_document(kind):
    rng = np.random.RandomState(1)
    mix = _mixes(rng)[kind]
    if kind == "relu":  # with an alignment too
        mix = mix.aligned(rng.randn(7, 6).astype(np.float32))
    layers = rng.randn(30, 3, 4).astype(np.float32)
    pieces = [layers[:7], layers[7:7], layers[7:30]]
    # (an alignment is fitted for one pooling's width: test it with mean and max)
    for pooling in ("mean", "max") if kind == "relu" else ("mean", "max", "meanmax"):
        whole = mix.pool(layers, np.array([0, 30]), pooling)[0]
        np.testing.assert_allclose(mix.pool_stream(iter(pieces), pooling), whole,
                                   rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="at least one token"):
        mix.pool_stream([layers[:0]], "mean")


def test_an_aligned_mix_keeps_empty_documents_at_zero():
    rng = np.random.RandomState(2)
    mix = _mixes(rng)["relu"].aligned(np.ones((7, 6), np.float32))
    features = mix.pool(rng.randn(4, 3, 4).astype(np.float32), np.array([0, 0, 4]), "mean")
    np.testing.assert_array_equal(features[0], 0)
    assert np.all(features[1] != 0)


def test_mlp_alignment_is_identity_for_an_untrained_mix():
    rng = np.random.RandomState(0)
    layers = rng.randn(40, 3, 4).astype(np.float32)
    offsets = np.arange(0, 41, 2)
    mix = ReluMix(rng.randn(12, 6).astype(np.float32), rng.randn(6).astype(np.float32))
    features = pool_vectors(mix.apply(layers), offsets, "mean")
    aligned = fit_alignment(mix, features, features)
    np.testing.assert_allclose(aligned.alignment[:-1], np.eye(6), atol=1e-4)
    np.testing.assert_allclose(aligned.pool(layers, offsets, "mean"),
                               mix.pool(layers, offsets, "mean"), atol=1e-4)


def test_a_fit_may_mix_a_chunk_in_one_product_for_its_own_least_squares():
    # batch_invariant=False (what fit_mlp's alignment uses): one product for every token,
    # the same features up to float rounding; the default keeps one product per document.
    rng = np.random.RandomState(0)
    layers = rng.randn(300, 3, 64).astype(np.float32)
    offsets = np.array([0, 1, 7, 40, 41, 120, 300])
    mix = ReluMix(rng.randn(192, 32).astype(np.float32), rng.randn(32).astype(np.float32))
    for pooling in ("mean", "max", "meanmax"):
        alone = mix.pool(layers, offsets, pooling)
        together = mix.pool(layers, offsets, pooling, batch_invariant=False)
        np.testing.assert_allclose(together, alone, rtol=1e-5, atol=1e-5)
        # a document's default features are those it has alone
        np.testing.assert_array_equal(mix.pool(layers[40:41], np.array([0, 1]), pooling)[0],
                                      alone[3])


def test_mix_modules_divide_each_layer_by_its_scale():
    scales = np.array([0.5, 2.0, 4.0], np.float32)
    layers = torch.randn(6, 3, 4)
    scaled = layers / torch.from_numpy(scales)[:, None]
    torch.manual_seed(0)
    plain = MLPMix(3, 4, 5)
    torch.manual_seed(0)
    with_scales = MLPMix(3, 4, 5, layer_scales=scales)
    torch.testing.assert_close(with_scales(layers), plain(scaled))
    # The NumPy form applies to the raw layers: the scales are folded in.
    np.testing.assert_allclose(with_scales.to_fitted().apply(layers.numpy()),
                               plain(scaled).detach().numpy(), rtol=1e-5, atol=1e-6)
    mix = ScalarMix(3, layer_scales=scales)
    torch.testing.assert_close(mix(layers), ScalarMix(3)(scaled))
    fitted = mix.to_fitted(dim=4)
    np.testing.assert_allclose(fitted.shares, [1 / 3] * 3, rtol=1e-6)
    np.testing.assert_allclose(fitted.apply(layers.numpy()),
                               ScalarMix(3)(scaled).detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="layer_scales must be 3 positive numbers"):
        ScalarMix(3, layer_scales=[1.0, 0.0, 1.0])


def test_frozen_mix_is_a_linear_mix_with_fixed_shares():
    scales = np.array([1.0, 2.0, 4.0], np.float32)
    rng = np.random.RandomState(0)
    uniform = frozen_mix(None, scales, 8, rng)
    assert isinstance(uniform, LinearMix) and uniform.n_features == 8 and uniform.gamma == 1
    np.testing.assert_allclose(uniform.shares, [1 / 3] * 3)
    np.testing.assert_allclose(uniform.weights, uniform.shares / scales)
    given = frozen_mix([0, 0, 1], scales, 8, rng)
    np.testing.assert_allclose(given.weights, [0, 0, 0.25])
    drawn = frozen_mix("random", scales, 8, np.random.RandomState(3))
    assert np.all((drawn.shares >= 0.5) & (drawn.shares <= 1))
    for bad, match in [("uniform", "None, 'random' or a sequence"), ([1, 2], "3 finite numbers"),
                       ([0, 0, 0], "all zero")]:
        with pytest.raises(ValueError, match=match):
            frozen_mix(bad, scales, 8, rng)


def test_concat_mix_puts_the_frozen_mix_terms_side_by_side():
    scales = np.array([1.0, 2.0, 4.0], np.float32)
    layers = np.random.RandomState(5).randn(7, 3, 8).astype(np.float32)
    settings = MixSettings(pooling="mean", seed=0)
    mix = fit_concat(MixData(scales, 8), None, settings)
    assert isinstance(mix, ConcatMix) and mix.n_features == 24 and mix.gamma is None
    np.testing.assert_allclose(mix.layer_weights, [1 / 3] * 3)
    features = mix.apply(layers)
    # Block j is layer j divided by its scale, times its share ...
    for j in range(3):
        np.testing.assert_allclose(features[:, 8 * j: 8 * (j + 1)], layers[:, j] / scales[j] / 3,
                                   rtol=1e-6)
    # ... so the blocks add up to the frozen mix of the same weights.
    frozen = get_mix("frozen").fit_mix(MixData(scales, 8), None, settings)
    np.testing.assert_allclose(features.reshape(7, 3, 8).sum(1), frozen.apply(layers),
                               rtol=1e-5, atol=1e-6)
    # The frozen mix's weights and their checks.
    given = fit_concat(MixData(scales, 8), None, MixSettings("mean", 0, mix_weights=[0, 0, 1]))
    np.testing.assert_array_equal(given.apply(layers)[:, :16], 0)
    with pytest.raises(ValueError, match="all zero"):
        fit_concat(MixData(scales, 8), None, MixSettings("mean", 0, mix_weights=[0, 0, 0]))
    with pytest.raises(ValueError, match="3 layers of width 8"):
        mix.apply(layers[:, :2])


def test_fitted_mixes_pickle_as_numpy_arrays():
    rng = np.random.RandomState(4)
    for mix in _mixes(rng).values():
        copy = pickle.loads(pickle.dumps(mix))
        layers = rng.randn(5, 3, 4).astype(np.float32)
        np.testing.assert_array_equal(copy.apply(layers), mix.apply(layers))
        assert all(not isinstance(v, torch.Tensor) for v in vars(copy).values())


def test_alignment_documents_add_unlabelled_ones_only_when_the_labelled_are_too_few():
    docs, unlabelled = np.arange(0, 40), np.arange(40, 200)
    # 6 features: 70 rows wanted, 30 unlabelled join; the same seed picks the same ones.
    chosen = alignment_documents(docs, unlabelled, 6, seed=0)
    assert len(chosen) == 70 and np.array_equal(chosen[:40], docs)
    assert set(chosen[40:]) <= set(unlabelled) and len(set(chosen[40:])) == 30
    assert np.array_equal(chosen, alignment_documents(docs, unlabelled, 6, seed=0))
    assert not np.array_equal(chosen, alignment_documents(docs, unlabelled, 6, seed=1))
    # Enough labelled documents, or no unlabelled one: the labelled documents alone.
    assert alignment_documents(docs, unlabelled, 2, seed=0) is docs
    assert alignment_documents(docs, unlabelled[:0], 6, seed=0) is docs
    assert len(alignment_documents(docs, unlabelled[:10], 6, seed=0)) == 50


@pytest.mark.parametrize("native", [False, True])
def test_the_mlp_mix_trains_in_bfloat16_only_where_the_cpu_has_it(monkeypatch, native):
    # Emulated bfloat16 is several times slower than float32 (AVX2-only CPUs), so the
    # MLP mix's per-token autocast follows the CPU's native support.
    from elmofeat.mixes import head, mlp

    monkeypatch.setattr(mlp, "bf16_supported", lambda device: native)
    seen = []
    real_autocast = torch.autocast

    def recording_autocast(*args, **kwargs):
        seen.append(kwargs.get("enabled", True))
        return real_autocast(*args, **kwargs)

    monkeypatch.setattr(head.torch, "autocast", recording_autocast)
    rng = np.random.default_rng(0)
    layers = rng.normal(size=(40, 3, 8)).astype(np.float32)
    offsets = np.arange(0, 41, 4)
    settings = MixSettings(pooling="mean", seed=0, mlp_dim=6, epochs=1, learning_rate=0.01,
                           batch_size=5)
    data = MixData(np.ones(3, np.float32), 8, layers, offsets,
                   targets=check_targets(np.array([0, 1] * 5), 10))
    mix = get_mix("mlp").fit_mix(data, np.arange(10), settings)
    assert seen and set(seen) == {native}
    assert np.isfinite(mix.pool(layers, offsets, "mean")).all()
