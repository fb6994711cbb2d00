"""The bidirectional LSTM language model: a token layer and two LSTM stacks.

Inputs are sentences wrapped in ``<bos> ... <eos>`` and right-padded. The forward
stack reads left to right, the backward stack right to left (each sentence is reversed
within its own length, so padding always comes after the content and never changes
the states of real tokens). At every position ``t`` the forward state has seen tokens
``<= t`` and the backward state tokens ``>= t``: predicting ``t + 1`` (forward) or
``t - 1`` (backward) from them never sees the target.
"""

from __future__ import annotations

import threading
import warnings

import torch
from torch import nn

from .dropout import ByteDropout
from .softmax import build_softmax
from .token_layers import CharCNN, WordEmbedding

# torch says this once per process, at the first projected LSTM run on a CPU
# (hidden_dim > embedding_dim): the plain kernel runs instead of oneDNN's, nothing a user
# can act on. It is silenced there, inside catch_warnings, and the user's filters stay.
_ONEDNN_NOTICE = "LSTM with projections is not supported with oneDNN"
_notice_lock = threading.Lock()
_notice_passed = False


#: The most memory one training call of an LSTM layer may ask for its oneDNN workspace.
TRAINING_WORKSPACE_BYTES = 16 * 2**20


def training_block_length(batch: int, hidden_dim: int, length: int) -> int:
    """Positions per LSTM call in training: the whole ``length`` or equal blocks of it.

    oneDNN's LSTM keeps a workspace for its backward of about ``16 x hidden_dim``
    floats per position and sequence (measured: 65 MB for 64 sequences of 66 positions
    at width 256). Above glibc's largest mmap threshold (32 MiB) every step had the
    kernel map and zero it afresh; blocks of at most :data:`TRAINING_WORKSPACE_BYTES`
    come from the heap and are reused step after step (``benchmarks/training_memory.py``).
    """
    per_position = batch * 16 * hidden_dim * 4
    most = max(1, TRAINING_WORKSPACE_BYTES // per_position)
    n_blocks = -(-length // most)
    return -(-length // n_blocks)


def lstm_call_length(lstm: nn.LSTM, x: torch.Tensor) -> int:
    """Positions per call of ``lstm`` on ``x`` (batch, time, in): the whole sequence, or
    :func:`training_block_length`'s blocks when it trains on a CPU (see :func:`_run_lstm`)."""
    batch, length = x.shape[:2]
    if lstm.training and torch.is_grad_enabled() and x.device.type == "cpu":
        return training_block_length(batch, lstm.hidden_size, length)
    return length


def _call_lstm(lstm: nn.LSTM, x: torch.Tensor, state):
    """``lstm(x, state)``, the first projected run of the process without torch's notice."""
    global _notice_passed
    if _notice_passed or not lstm.proj_size:
        return lstm(x, state)
    with _notice_lock, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_ONEDNN_NOTICE)
        out = lstm(x, state)
        _notice_passed = x.device.type == "cpu"  # where oneDNN (and the notice) lives
    return out


def _run_lstm(lstm: nn.LSTM, x: torch.Tensor) -> torch.Tensor:
    """``lstm(x)``'s output ``(batch, time, out)`` from a zero state.

    In training on a CPU the sequence runs in blocks of :func:`training_block_length`
    positions, each block starting from the last one's state: the same function, with
    bounded workspaces. Inference runs it whole (it keeps no workspace), and so does
    training on other devices: their allocators cache workspaces, and each block would
    be more kernel launches per step (at batch 512 and width 256 a block is 2 positions).
    """
    length = x.shape[1]
    block = lstm_call_length(lstm, x)
    if block >= length:
        return _call_lstm(lstm, x, None)[0]
    outputs, state = [], None
    for start in range(0, length, block):
        out, state = _call_lstm(lstm, x[:, start:start + block], state)
        outputs.append(out)
    return torch.cat(outputs, 1)


def reverse_padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each sequence of ``x`` (batch, time, ...) within its length.

    Positions past a sequence's length stay where they are. Applying it twice gives ``x``.
    """
    batch, time = x.shape[:2]
    positions = torch.arange(time, device=x.device).expand(batch, time)
    lengths = lengths.to(x.device).unsqueeze(1)
    index = torch.where(positions < lengths, lengths - 1 - positions, positions)
    # One row lookup in the flattened (batch * time, ...) view: its backward is an
    # index_add, cheaper than the scatter_add behind gather's.
    index = index + torch.arange(batch, device=x.device).unsqueeze(1) * time
    flat = x.reshape(batch * time, *x.shape[2:])
    return flat.index_select(0, index.reshape(-1)).view(x.shape)


class LSTMStack(nn.Module):
    """``n_layers`` one-directional LSTM layers, each exposed, with residual connections.

    Layer ``i > 0`` adds its input to its output (ELMo's residual from layer 1 to 2).
    Each layer may project its hidden state (``nn.LSTM``'s ``proj_size``). Dropout
    applies to the inputs of layers ``i > 0`` (the token layer's output is dropped out
    once, by :class:`BiLSTMEncoder`, for both directions).

    Shape
    -----
    ``(batch, time, dim) -> list of n_layers tensors (batch, time, dim)``
    """

    def __init__(self, dim: int, hidden_dim: int, n_layers: int, projection: bool, dropout: float):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.LSTM(dim, hidden_dim, batch_first=True, proj_size=dim if projection else 0)
            for _ in range(n_layers)
        )
        self.dropout = ByteDropout(dropout)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for lstm in self.layers:
            lstm.reset_parameters()
            # Forget-gate bias 1 (Jozefowicz et al. 2015): better gradient flow at start.
            for name, param in lstm.named_parameters():
                if name.startswith("bias_ih"):
                    hidden = param.shape[0] // 4
                    with torch.no_grad():
                        param[hidden : 2 * hidden].fill_(1.0)

    def extra_repr(self) -> str:
        return f"n_layers={len(self.layers)}, residual=True"

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        outputs = []
        for i, lstm in enumerate(self.layers):
            out = _run_lstm(lstm, self.dropout(x) if i > 0 else x)  # zero initial state: no carry-over
            if i > 0:
                out = out + x
            outputs.append(out)
            x = out
        return outputs


class BiLSTMEncoder(nn.Module):
    """Token layer + forward and backward LSTM stacks.

    Parameters
    ----------
    token_layer : nn.Module
        :class:`~elmofeat.bilm.token_layers.WordEmbedding` or
        :class:`~elmofeat.bilm.token_layers.CharCNN`, with ``output_dim``.
    hidden_dim : int
        LSTM cell width.
    n_layers : int
        LSTM layers per direction.
    projection : bool
        Project each LSTM's hidden state back to the token width (needed when
        ``hidden_dim`` differs from it, so that every layer has the same width).
    dropout : float

    Notes
    -----
    :meth:`run_directions` returns each direction's states in its own reading order
    (what the LM loss needs); :meth:`forward` the same with the backward states put back
    in left-to-right order; :meth:`layer_representations` returns ELMo's ``n_layers + 1``
    representations, each ``[forward; backward]`` of width ``2 * dim`` (the token layer
    duplicated).
    """

    def __init__(self, token_layer: nn.Module, hidden_dim: int, n_layers: int = 2,
                 projection: bool = False, dropout: float = 0.1):
        super().__init__()
        dim = token_layer.output_dim
        if not projection and hidden_dim != dim:
            raise ValueError(
                f"hidden_dim={hidden_dim} differs from the token width {dim}: use a projection"
            )
        self.dim = dim
        self.token_layer = token_layer
        self.dropout = ByteDropout(dropout)
        self.forward_lstm = LSTMStack(dim, hidden_dim, n_layers, projection, dropout)
        self.backward_lstm = LSTMStack(dim, hidden_dim, n_layers, projection, dropout)

    def reset_parameters(self) -> None:
        self.token_layer.reset_parameters()
        self.forward_lstm.reset_parameters()
        self.backward_lstm.reset_parameters()

    def extra_repr(self) -> str:
        return f"dim={self.dim}, n_layers={len(self.forward_lstm.layers)}"

    def run_directions(self, inputs: torch.Tensor, lengths: torch.Tensor):
        """Token vectors and every layer's states, each direction in its reading order.

        Parameters
        ----------
        inputs : LongTensor (batch, time) word ids, or (batch, time, chars) byte ids
        lengths : LongTensor (batch,)
            Real length of each sequence (``<bos>`` and ``<eos>`` included).

        Returns
        -------
        tokens : (batch, time, dim)
        forward_states : list of n_layers tensors (batch, time, dim)
        reversed_backward_states : list of n_layers tensors (batch, time, dim), position
            ``t`` holding the state at original position ``length - 1 - t`` (see
            :func:`reverse_padded`). The LM loss uses them as they are, which saves
            putting them back in order.
        """
        tokens = self.token_layer(inputs)
        dropped = self.dropout(tokens)  # one mask for both directions
        forward_states = self.forward_lstm(dropped)
        reversed_states = self.backward_lstm(reverse_padded(dropped, lengths))
        return tokens, forward_states, reversed_states

    def forward(self, inputs: torch.Tensor, lengths: torch.Tensor):
        """Like :meth:`run_directions`, with the backward states put back in order.

        Returns ``tokens, forward_states, backward_states``, every tensor
        ``(batch, time, dim)`` with position ``t`` holding original position ``t``.
        """
        tokens, forward_states, reversed_states = self.run_directions(inputs, lengths)
        backward_states = [reverse_padded(s, lengths) for s in reversed_states]
        return tokens, forward_states, backward_states

    def layer_representations(self, inputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """ELMo's representations: ``(batch, time, n_layers + 1, 2 * dim)``.

        Representation 0 is the token layer twice, ``i > 0`` is ``[forward; backward]``
        of LSTM layer ``i``, in the dtype ``torch.stack`` of them would have. Written
        into one tensor: concatenating and then stacking copied everything twice.
        """
        return stack_representations(*self(inputs, lengths))


def stack_representations(tokens: torch.Tensor, forward_states, backward_states) -> torch.Tensor:
    """ELMo's representations ``(batch, time, n_layers + 1, 2 * dim)`` from the token
    vectors ``(batch, time, dim)`` and each direction's states in left-to-right order
    (:meth:`BiLSTMEncoder.forward`'s outputs); see
    :meth:`BiLSTMEncoder.layer_representations`."""
    batch, time, dim = tokens.shape
    dtype = tokens.dtype
    for state in forward_states + backward_states:
        dtype = torch.promote_types(dtype, state.dtype)
    out = tokens.new_empty((batch, time, len(forward_states) + 1, 2 * dim), dtype=dtype)
    out[:, :, 0, :dim] = tokens
    out[:, :, 0, dim:] = tokens
    for i, (forward, backward) in enumerate(zip(forward_states, backward_states), start=1):
        out[:, :, i, :dim] = forward
        out[:, :, i, dim:] = backward
    return out


class LanguageModel(nn.Module):
    """The encoder and its output layer; ``forward`` returns the mean LM loss of a batch.

    Forward states at positions ``0 .. n-2`` predict tokens ``1 .. n-1``; backward
    states at ``1 .. n-1`` predict ``0 .. n-2``. One softmax serves both directions
    (as in ELMo).

    ``n_output_words``: the softmax predicts word ids below it; ids at or above it
    (words the model reads but does not predict, see ``BiLM.pretrained_words``) are
    scored as ``unknown_id``. None: every id is predicted.
    """

    def __init__(self, encoder: nn.Module, softmax: nn.Module, dropout: float = 0.1,
                 n_output_words: int | None = None, unknown_id: int = 1):
        super().__init__()
        self.encoder = encoder
        self.softmax = softmax
        self.dropout = ByteDropout(dropout)
        self.n_output_words = n_output_words
        self.unknown_id = unknown_id

    def extra_repr(self) -> str:
        return "" if self.n_output_words is None else f"n_output_words={self.n_output_words}"

    def _hidden_and_targets(self, inputs, word_ids, lengths):
        _, forward_states, reversed_states = self.encoder.run_directions(inputs, lengths)
        return self.hidden_and_targets(forward_states, reversed_states, word_ids, lengths)

    def hidden_and_targets(self, forward_states, reversed_states, word_ids, lengths):
        """The top layer's states at every predicting position ``(n_targets, dim)`` and
        the word ids they predict ``(n_targets,)``, from
        :meth:`BiLSTMEncoder.run_directions`' states (so that an objective that also
        needs the layers runs the encoder once)."""
        if self.n_output_words is not None:
            word_ids = word_ids.masked_fill(word_ids >= self.n_output_words, self.unknown_id)
        # The backward direction is scored in its own reading order: reversed, its
        # state at t predicts reversed token t + 1, just as the forward one does.
        reversed_ids = reverse_padded(word_ids, lengths)
        steps = word_ids.shape[1] - 1
        mask = torch.arange(steps, device=word_ids.device)[None, :] < (lengths - 1)[:, None]
        hidden = torch.cat([forward_states[-1][:, :-1][mask], reversed_states[-1][:, :-1][mask]])
        targets = torch.cat([word_ids[:, 1:][mask], reversed_ids[:, 1:][mask]])
        return hidden, targets

    def forward(self, inputs, word_ids, lengths) -> torch.Tensor:
        hidden, targets = self._hidden_and_targets(inputs, word_ids, lengths)
        return self.softmax.loss(self.dropout(hidden), targets)

    def log_likelihood(self, inputs, word_ids, lengths) -> tuple[float, int]:
        """Summed exact log-likelihood of both directions and the number of targets."""
        hidden, targets = self._hidden_and_targets(inputs, word_ids, lengths)
        return float(self.softmax.log_likelihood(hidden, targets).sum()), len(targets)


def build_language_model(n_words: int, *, token_layer: str, embedding_dim: int,
                         hidden_dim: int, n_layers: int, dropout: float, softmax: str,
                         n_samples: int, tie_weights: bool, char_dim: int, char_filters,
                         n_highway: int, pretrained=None, input_dim: int | None = None,
                         freeze_embedding: bool = False,
                         n_output_words: int | None = None) -> LanguageModel:
    """The language model a :class:`~elmofeat.BiLM` with these parameters trains.

    ``pretrained`` (n_words, width): starting word vectors; ``input_dim``: the width of
    the word embedding of a model rebuilt to load saved weights; ``freeze_embedding``:
    keep the word embedding at ``pretrained`` (not with ``tie_weights``, whose output
    layer is the embedding and must learn); ``n_output_words``: the softmax's size when
    the word embedding reads more words (``n_words``) than the model predicts.
    """
    n_output = n_words if n_output_words is None else n_output_words
    if token_layer == "word":
        tokens = WordEmbedding(n_words, embedding_dim, pretrained, input_dim,
                               freeze=freeze_embedding and not tie_weights)
    else:
        tokens = CharCNN(embedding_dim, char_dim, [tuple(f) for f in char_filters], n_highway)
    encoder = BiLSTMEncoder(tokens, hidden_dim, n_layers,
                            projection=hidden_dim != embedding_dim, dropout=dropout)
    tied = None
    if tie_weights:
        if tokens.projection is not None:
            raise ValueError(
                "tie_weights=True needs a word embedding of width embedding_dim; the "
                f"pretrained vectors are {tokens.embedding.weight.shape[1]} wide"
            )
        tied = tokens.embedding.weight
    if tied is not None and n_output != n_words:
        raise ValueError("tie_weights=True needs the softmax to predict every embedded word")
    output = build_softmax(softmax, embedding_dim, n_output, n_samples=n_samples, tied_weight=tied)
    return LanguageModel(encoder, output, dropout,
                         n_output_words=None if n_output == n_words else n_output)
