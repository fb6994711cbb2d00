"""elmofeat.bilm.model: the two LSTM stacks, padding and the LM's targets."""

import pytest
import torch

from elmofeat.bilm.model import BiLSTMEncoder, reverse_padded
from elmofeat.bilm.softmax import FullSoftmax
from elmofeat.bilm.token_layers import WordEmbedding
from elmofeat.bilm.model import LanguageModel


def test_reverse_padded_reverses_within_length_only():
    x = torch.arange(10).reshape(2, 5)
    out = reverse_padded(x, torch.tensor([3, 5]))
    assert out.tolist() == [[2, 1, 0, 3, 4], [9, 8, 7, 6, 5]]
    assert torch.equal(reverse_padded(out, torch.tensor([3, 5])), x)


@pytest.mark.parametrize("projection", [False, True])
def test_directions_never_see_the_token_they_predict(projection):
    torch.manual_seed(0)
    module = BiLSTMEncoder(WordEmbedding(50, 8), hidden_dim=12 if projection else 8,
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
    module = BiLSTMEncoder(WordEmbedding(30, 8), hidden_dim=8, dropout=0.0).eval()
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
    bilm = BiLSTMEncoder(WordEmbedding(40, 8), hidden_dim=8, dropout=0.0)
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


def test_hidden_dim_without_projection_is_rejected():
    with pytest.raises(ValueError, match="projection"):
        BiLSTMEncoder(WordEmbedding(10, 8), hidden_dim=16, projection=False)


@pytest.mark.parametrize("bf16", [False, True])
def test_layer_representations_are_the_layers_side_by_side(bf16):
    # Token layer twice, then [forward; backward] of each LSTM layer, in the dtype that
    # stacking them would give (float32 under bf16 autocast: the embedding is float32).
    from elmofeat.runtime.torch_helpers import bf16_runs

    torch.manual_seed(0)
    module = BiLSTMEncoder(WordEmbedding(30, 8), hidden_dim=8, dropout=0.0).eval()
    ids, lengths = torch.randint(4, 30, (2, 6)), torch.tensor([6, 4])
    if bf16 and not bf16_runs("cpu"):
        # No bfloat16 LSTM on this CPU: torch fails deep inside oneDNN, which is why
        # BiLM(precision="bf16") checks first (test_estimator).
        with pytest.raises(RuntimeError), torch.autocast("cpu", dtype=torch.bfloat16):
            module(ids, lengths)
        return
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        tokens, forward, backward = module(ids, lengths)
        layers = module.layer_representations(ids, lengths)
    expected = torch.stack([torch.cat([tokens, tokens], -1)]
                           + [torch.cat(pair, -1) for pair in zip(forward, backward)], dim=2)
    assert layers.dtype == expected.dtype and layers.shape == (2, 6, 3, 16)
    assert torch.equal(layers, expected)


def test_training_runs_the_lstm_in_blocks_with_the_same_outputs_and_gradients(monkeypatch):
    # Blocks of 3 positions carry the state over: the outputs and every gradient are
    # those of one run over the whole sequence.
    from elmofeat.bilm import model as model_module

    torch.manual_seed(0)
    stack = model_module.LSTMStack(8, 8, 2, projection=False, dropout=0.0).train()
    x = torch.randn(4, 10, 8, requires_grad=True)

    def outputs_and_grads():
        outputs = stack(x)
        grads = torch.autograd.grad(sum(o.square().sum() for o in outputs),
                                    [x, *stack.parameters()])
        return outputs, grads

    whole_outputs, whole_grads = outputs_and_grads()
    monkeypatch.setattr(model_module, "TRAINING_WORKSPACE_BYTES", 4 * 16 * 8 * 4 * 3)
    assert model_module.training_block_length(4, 8, 10) == 3  # blocks of 3, 3, 3, 1 ...
    block_outputs, block_grads = outputs_and_grads()
    for whole, blocks in zip(whole_outputs + list(whole_grads), block_outputs + list(block_grads)):
        torch.testing.assert_close(blocks, whole)


def test_training_block_length_bounds_the_workspace_and_splits_evenly():
    from elmofeat.bilm.model import TRAINING_WORKSPACE_BYTES, training_block_length

    for batch, hidden, length in [(64, 256, 66), (64, 128, 66), (64, 1024, 40), (8, 64, 30)]:
        block = training_block_length(batch, hidden, length)
        n_blocks = -(-length // block)
        assert block == length or block * batch * 16 * hidden * 4 <= TRAINING_WORKSPACE_BYTES
        assert n_blocks * block - length < n_blocks  # equal blocks, the last one short by < 1 each
    assert training_block_length(64, 256, 66) == 14  # 5 blocks (at most 16 positions each)
    assert training_block_length(8, 64, 30) == 30  # small enough to run whole


def test_only_cpu_training_runs_the_lstm_in_blocks():
    # The blocks bound oneDNN's workspace on a CPU; a GPU's allocator caches its own, and
    # blocks there only multiply launches. Meta tensors stand for another device.
    from elmofeat.bilm.model import lstm_call_length, training_block_length

    lstm = torch.nn.LSTM(256, 256, batch_first=True).train()
    on_cpu, elsewhere = torch.empty(512, 66, 256), torch.empty(512, 66, 256, device="meta")
    assert lstm_call_length(lstm, on_cpu) == training_block_length(512, 256, 66) == 2
    assert lstm_call_length(lstm, elsewhere) == 66
    with torch.no_grad():
        assert lstm_call_length(lstm, on_cpu) == 66  # inference keeps no workspace
    assert lstm_call_length(lstm.eval(), on_cpu) == 66
