"""elmofeat.bilm.token_layers and highway: word embedding and character CNN."""

import numpy as np
import torch

from elmofeat.bilm.highway import Highway
from elmofeat.bilm.token_layers import CharCNN, WordEmbedding


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
