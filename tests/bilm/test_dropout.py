"""elmofeat.bilm.dropout: byte-sized dropout masks."""

import torch

from elmofeat.bilm.dropout import ByteDropout, random_bytes


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
