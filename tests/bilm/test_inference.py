"""Copying layer representations off the device (elmofeat.bilm.inference)."""

import numpy as np
import torch

from elmofeat.bilm.inference import _HostCopy


def _copy_all(gather, batches, lengths, layers_of):
    content_offsets = np.concatenate([[0], np.cumsum(lengths - 2)])
    out = np.full((content_offsets[-1], 3, 4), np.nan, np.float32)
    copy = _HostCopy("cpu", batches, lengths, out.shape[1:], gather=gather)
    for batch in batches:
        copy(layers_of(batch), batch, content_offsets, out)
    return out


def test_gathering_on_the_device_gives_the_row_by_row_copy():
    rng = np.random.default_rng(0)
    lengths = np.array([5, 2, 9, 3, 7, 4])  # a window of 2 has no content between <bos>, <eos>
    batches = [np.array([2, 0, 5]), np.array([4, 1]), np.array([3])]
    padded = {}
    for batch in batches:
        width = lengths[batch].max() + 3  # padding past the longest window
        padded[tuple(batch)] = torch.from_numpy(
            rng.standard_normal((len(batch), width, 3, 4)).astype(np.float32))
    def layers_of(batch):
        return padded[tuple(batch)]

    by_rows = _copy_all(False, batches, lengths, layers_of)
    gathered = _copy_all(True, batches, lengths, layers_of)
    assert not np.isnan(by_rows).any()  # every content position was written
    np.testing.assert_array_equal(gathered, by_rows)
    # Window 2 (third in the flat output order) starts after windows 0 and 1's content.
    np.testing.assert_array_equal(by_rows[3:10], padded[(2, 0, 5)][0, 1:8].numpy())


def test_the_staging_buffer_holds_the_largest_batch():
    lengths = np.array([5, 2, 9, 3])
    copy = _HostCopy("cpu", [np.array([0, 1]), np.array([2, 3])], lengths, (3, 4), gather=True)
    assert copy.staging.shape == (7 + 1, 3, 4)
    assert _HostCopy("cpu", [np.array([0])], lengths, (3, 4)).staging is None  # CPU: row by row


def test_copying_each_layers_states_gives_the_copy_of_their_stack():
    """On a CPU, ``embed_tokens`` copies the encoder's token vectors and each LSTM
    layer's states straight into the output (``copy_parts``); the result is the
    row-by-row copy of ``layer_representations``' stack of them, to the bit, bf16 states
    included."""
    rng = np.random.default_rng(1)
    lengths = np.array([5, 2, 9, 3, 7, 4])
    batches = [np.array([2, 0, 5]), np.array([4, 1]), np.array([3])]
    content_offsets = np.concatenate([[0], np.cumsum(lengths - 2)])
    stacked = np.full((content_offsets[-1], 3, 4), np.nan, np.float32)
    direct = stacked.copy()
    copy = _HostCopy("cpu", batches, lengths, stacked.shape[1:])
    for batch in batches:
        width = lengths[batch].max() + 2
        def states():
            return torch.from_numpy(rng.standard_normal((len(batch), width, 2)).astype(np.float32))
        tokens, forwards, backwards = states(), [states(), states()], [states().bfloat16(),
                                                                       states().bfloat16()]
        layers = torch.stack([torch.cat([tokens, tokens], -1)] + [
            torch.cat([f.float(), b.float()], -1) for f, b in zip(forwards, backwards)], dim=2)
        copy(layers, batch, content_offsets, stacked)
        copy.copy_parts((tokens, forwards, backwards), batch, content_offsets, direct)
    assert not np.isnan(direct).any()
    np.testing.assert_array_equal(direct, stacked)
