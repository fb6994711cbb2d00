"""Distillation: a biLM taught to reproduce a sentence encoder's vector of a text.

A language-model objective at the biLM's scale teaches its layers little of what
document-level tasks use. A sentence encoder (all-MiniLM-L6-v2, trained on about a
billion sentence pairs) has that sense; distillation passes it on without the pairs: a
small head over the biLM's pooled layers (:class:`DocumentHead`) learns to give the
encoder's vector of the same text, and the gradient reaches the LSTM layers and the
token layer (its projection, and its word table unless ``freeze_word_table``). The LM
loss stays beside it, weighted (``lm_weight``), so
that the layers remain a language model (held-out perplexity, and adaptation with
``adapt_epochs``, keep working).

:func:`distill` trains a copy of a fitted biLM so; the model given is never changed.
The teacher's vectors are the caller's: elmofeat never imports a sentence encoder
(``benchmarks/teacher_texts.py`` computes and stores them).
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .._pooling import pool_vectors
from .._registry import Registry
from ..runtime.torch_helpers import adamw, fill_rows, resolve_device, rng_state, seeded, set_rng_state
from .batching import bucket_batches, make_batch, make_windows
from .model import reverse_padded, stack_representations


class DocumentHead(nn.Module):
    """A text's vector from the biLM's layers: the mean and the max of each layer over
    the text's tokens (``<bos>`` and ``<eos>`` left out), each layer first divided by
    its spread (``scales``, as ``ElmoVectorizer`` divides it), side by side, then one
    linear map.

    Parameters
    ----------
    n_representations : int
        Layers per token (the token layer and each LSTM layer: ``n_layers + 1``).
    width : int
        Width of a representation (``2 * dim``).
    out_dim : int
        Width of the vector (the teacher's: 384 for all-MiniLM-L6-v2).
    scales : sequence of float
        Each layer's spread (``BiLM.layer_scales_``).

    Shape
    -----
    ``layers (batch, time, n_representations, width), lengths (batch,) -> (batch, out_dim)``;
    ``lengths`` counts ``<bos>`` and ``<eos>``. A text without tokens pools to zeros
    (its vector is the map's bias).

    Examples
    --------
    >>> import torch
    >>> from elmofeat.bilm.distillation import DocumentHead
    >>> head = DocumentHead(3, 8, out_dim=4, scales=[1.0, 1.0, 1.0])
    >>> layers = torch.randn(2, 6, 3, 8)  # 2 texts, 6 positions, 3 layers, 8 wide
    >>> head(layers, torch.tensor([6, 4])).shape
    torch.Size([2, 4])
    """

    def __init__(self, n_representations: int, width: int, out_dim: int, scales):
        super().__init__()
        scales = torch.as_tensor(np.asarray(scales, dtype=np.float32))
        if scales.shape != (n_representations,) or not bool(torch.all(scales > 0)):
            raise ValueError(f"scales must be {n_representations} positive spreads, got "
                             f"{scales.tolist()}")
        self.register_buffer("scales", scales)
        self.linear = nn.Linear(2 * n_representations * width, out_dim)

    def extra_repr(self) -> str:
        return f"pooling=mean+max, representations={len(self.scales)}"

    def pool(self, layers: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``(batch, 2 * n_representations * width)``: the means, then the maxima."""
        positions = torch.arange(layers.shape[1], device=layers.device)
        content = (positions[None, :] >= 1) & (positions[None, :] < (lengths[:, None] - 1))
        mask = content[:, :, None, None]
        scaled = layers / self.scales.to(layers.dtype)[None, None, :, None]
        counts = content.sum(1).clamp(min=1).to(layers.dtype)[:, None, None]
        means = scaled.masked_fill(~mask, 0).sum(1) / counts
        maxima = scaled.masked_fill(~mask, -math.inf).amax(1)
        maxima = maxima.masked_fill(~content.any(1)[:, None, None], 0)
        return torch.cat([means.flatten(1), maxima.flatten(1)], 1)

    def forward(self, layers: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self.linear(self.pool(layers, lengths))


@dataclass(frozen=True)
class DistillationLoss:
    """A loss between the head's vectors and the teacher's ``(batch, dim)``, averaged
    over the batch."""

    name: str
    function: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    description: str = ""


def _cosine(student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
    return (1 - F.cosine_similarity(student, teacher, dim=1)).mean()


def _mse(student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
    # summed over the dimensions: a unit teacher vector's squared error is on the
    # cosine loss's scale (|s - t|^2 = 2 - 2 cos for unit s, t)
    return ((student - teacher) ** 2).sum(1).mean()


LOSSES: Registry[DistillationLoss] = Registry("distillation loss", DistillationLoss)
LOSSES.register(DistillationLoss("cosine", _cosine, "1 - cosine similarity: the direction only"))
LOSSES.register(DistillationLoss("mse", _mse, "squared distance: direction and length"))


@dataclass
class Distilled:
    """What :func:`distill` returns: the trained copy of the biLM, its head, and a
    record per epoch (losses, seconds, texts).

    Examples
    --------
    >>> import numpy as np
    >>> from elmofeat import BiLM
    >>> from elmofeat.bilm.distillation import distill
    >>> texts = ["the cat sat on the mat .", "stocks fell on the news ."] * 8
    >>> bilm = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0).fit(texts)
    >>> teacher = np.array([[1.0, 0.0], [0.0, 1.0]] * 8)  # the teacher's vector of each text
    >>> result = distill(bilm, texts, teacher, epochs=2, batch_size=8)
    >>> [h["epoch"] for h in result.history]
    [1, 2]
    >>> result.embed(["the cat sat ."]).shape  # the head's vector of a text
    (1, 2)
    """

    bilm: object
    head: DocumentHead
    history: list = field(default_factory=list)

    def embed(self, texts, batch_size: int = 256) -> np.ndarray:
        """The head's vectors of ``texts`` ``(n_texts, out_dim)``, float32: every text
        read whole (windows of ``max_len`` tokens, each window's layers pooled with the
        others of its text, as ``ElmoVectorizer`` pools), independent of the batch."""
        layers, offsets = self.bilm.embed_flat(list(texts), batch_size=batch_size)
        return head_vectors(self.head, layers, offsets)


def pooled_layers(layers: np.ndarray, offsets: np.ndarray, scales) -> np.ndarray:
    """:class:`DocumentHead`'s pooled input, in NumPy: each document's mean and max of
    its tokens' layers ``(n_tokens, n_representations, width)`` divided by ``scales``,
    document ``i`` holding rows ``offsets[i]:offsets[i + 1]`` (``BiLM.embed_flat``'s
    output, without ``<bos>`` and ``<eos>``); ``(n_documents, 2 * n_representations *
    width)``, zeros for a document without tokens."""
    scaled = layers / np.asarray(scales, dtype=np.float32)[None, :, None]
    width = layers.shape[1] * layers.shape[2]
    return pool_vectors(scaled.reshape(len(layers), width), offsets, "meanmax")


def head_vectors(head: DocumentHead, layers: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The head's vectors ``(n_documents, out_dim)``, float32, of documents given as
    :func:`pooled_layers` takes them."""
    pooled = torch.from_numpy(pooled_layers(layers, offsets, head.scales.cpu().numpy()))
    with torch.inference_mode():
        weight = head.linear.weight.detach().cpu().float()
        bias = head.linear.bias.detach().cpu().float()
        # at least MIN_PRODUCT_ROWS rows, so that a row is summed alike whatever else
        # is in the call (see fill_rows)
        return (fill_rows(pooled) @ weight.T + bias)[:len(pooled)].numpy()


def _check_inputs(bilm, texts, targets):
    if not hasattr(bilm, "language_model_"):
        raise ValueError("distill needs a fitted BiLM (BiLM.from_pretrained or BiLM.fit)")
    if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a sequence of str")
    targets = np.asarray(targets)
    if targets.dtype.kind not in "fiu" or targets.ndim != 2:
        raise ValueError(f"targets must be a 2-D array of numbers (texts, dim), got shape "
                         f"{targets.shape} of {targets.dtype}")
    if len(targets) != len(texts):
        raise ValueError(f"{len(texts)} texts but {len(targets)} target vectors")
    if not np.isfinite(targets).all():
        raise ValueError("targets hold NaN or infinite values")
    return targets.astype(np.float32)


def _windows_of(bilm, texts):
    """One window a text (its first ``max_len`` tokens): the rows of the texts that have
    a token, and their windows."""
    token_lists = [tokens[:bilm.max_len] for tokens in bilm.tokenize(texts)]
    kept = np.array([i for i, tokens in enumerate(token_lists) if tokens], dtype=np.int64)
    return kept, make_windows([token_lists[i] for i in kept], bilm.vocabulary_, bilm.max_len,
                              with_types=False)


def distill(bilm, texts, targets, *, lm_weight: float = 1.0, loss: str = "cosine",
            freeze_word_table: bool = False, epochs: int = 1, batch_size: int = 64,
            learning_rate: float = 2e-3,
            clip_norm: float = 1.0, random_state: int = 0, device=None,
            checkpoint: str | Path | None = None, checkpoint_every: int = 500,
            max_time: float | None = None, verbose: bool = False) -> Distilled:
    """Train a copy of ``bilm`` so that :class:`DocumentHead` over its layers gives
    ``targets`` (the teacher's vector of each text), with the LM loss beside it.

    Parameters
    ----------
    bilm : BiLM
        A fitted biLM (``BiLM.from_pretrained("en-base")``). It is not changed: a copy
        trains.
    texts : sequence of str
        Each text is read as one window of its first ``bilm.max_len`` tokens; texts
        without a token are left out.
    targets : array of shape (n_texts, dim)
        The teacher's vector of each text.
    lm_weight : float, default=1.0
        Weight of the LM loss (both directions' mean negative log-likelihood) added to
        the distillation loss; 0 trains the head's objective alone.
    loss : {"cosine", "mse"} or a name registered in :data:`LOSSES`, default="cosine"
    freeze_word_table : bool, default=False
        Keep the word table at the given model's values (only the rows of words the
        texts hold receive a gradient otherwise). Set on the copy whatever the given
        model's own setting: a model loaded from a file and one fitted in this process
        train alike.
    epochs : int, default=1
        Passes over the texts, each in a new seeded order (texts of similar length
        batched together). The learning rate decays linearly to zero over all steps.
    batch_size, learning_rate, clip_norm : AdamW's settings, as ``BiLM``'s.
    random_state : int, default=0
        Seeds the head's initialisation, the batches and dropout.
    device : str or None, default=None
        Where to train (None: the biLM's device); the result comes back to the CPU.
    checkpoint : path or None, default=None
        A file where the training state is kept every ``checkpoint_every`` steps and at
        the end of each epoch; when it exists (from a stopped run with the same
        settings), training resumes from it.
    max_time : float or None, default=None
        Stop after this many seconds (the history says how far it went).
    verbose : bool, default=False
        Print the mean losses every ``checkpoint_every`` steps.

    Examples
    --------
    >>> import numpy as np
    >>> from elmofeat import BiLM
    >>> from elmofeat.bilm.distillation import distill
    >>> texts = ["the cat sat on the mat .", "stocks fell on the news ."] * 8
    >>> bilm = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0).fit(texts)
    >>> teacher = np.array([[1.0, 0.0], [0.0, 1.0]] * 8)
    >>> student = distill(bilm, texts, teacher, lm_weight=0.1, batch_size=8).bilm
    >>> student is bilm, student.embed(["the cat sat ."])[0].shape
    (False, (4, 3, 16))

    Returns
    -------
    Distilled
        ``bilm`` (the trained copy, eval mode, its ``layer_scales_`` measured again on
        ``texts`` when training ran to its end: :func:`measure_layer_scales`), ``head``
        and ``history``.
    """
    targets = _check_inputs(bilm, texts, targets)
    objective = LOSSES[loss]
    if not (isinstance(lm_weight, (int, float)) and math.isfinite(lm_weight) and lm_weight >= 0):
        raise ValueError(f"lm_weight must be a finite number >= 0, got {lm_weight!r}")
    if not isinstance(freeze_word_table, bool):
        raise TypeError(f"freeze_word_table must be True or False, got {freeze_word_table!r}")
    for name, value in (("epochs", epochs), ("batch_size", batch_size),
                        ("checkpoint_every", checkpoint_every)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if bilm.token_layer == "char":
        raise ValueError("distill supports word-layer biLMs (token_layer='word')")
    student = copy.deepcopy(bilm)
    where = resolve_device(device) if device is not None else next(
        student.language_model_.parameters()).device
    lm = student.language_model_.to(where)
    # explicit: a loaded model's table is trainable, one fitted with freeze_embedding not
    lm.encoder.token_layer.embedding.weight.requires_grad_(not freeze_word_table)
    kept, windows = _windows_of(student, list(texts))
    if not len(kept):
        raise ValueError("no text has a token the biLM reads")
    teacher = torch.from_numpy(targets[kept]).to(where)
    scales = student.layer_scales_
    if scales is None:
        raise ValueError("the biLM has no layer_scales_ (fit it, or load a saved model)")
    with seeded(random_state, where):
        head = DocumentHead(student.n_representations_, student.output_dim_,
                            targets.shape[1], scales).to(where)
    params = [p for p in lm.parameters() if p.requires_grad] + list(head.parameters())
    optimizer = adamw(params, lr=learning_rate, weight_decay=0.0)
    steps_per_epoch = -(-len(kept) // batch_size)
    total_steps = steps_per_epoch * epochs
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: max(0.0, 1 - step / total_steps))
    # sums of the epoch so far: distillation loss, LM loss, steps, seconds
    state = {"epoch": 0, "step": 0, "history": [], "sums": [0.0, 0.0, 0, 0.0]}
    settings = {"n_texts": len(kept), "lm_weight": float(lm_weight), "loss": loss,
                "freeze_word_table": bool(freeze_word_table),
                "epochs": epochs, "batch_size": batch_size, "learning_rate": learning_rate,
                "random_state": random_state}
    checkpoint = None if checkpoint is None else Path(checkpoint)
    saved = None
    if checkpoint is not None and checkpoint.is_file():
        try:  # tensors, numbers and strings only: loading runs no code
            saved = torch.load(checkpoint, map_location="cpu", weights_only=True)
        except Exception as exc:
            raise ValueError(f"{checkpoint} is not a distillation checkpoint, or it is "
                             f"damaged ({type(exc).__name__}); remove it or use another "
                             "file") from None
        if not isinstance(saved, dict) or "settings" not in saved:
            raise ValueError(f"{checkpoint} is not a distillation checkpoint; remove it or "
                             "use another file")
        if saved["settings"] != settings:
            raise ValueError(f"{checkpoint} holds a run with other settings "
                             f"({saved['settings']}); remove it or use another file")
        lm.load_state_dict(saved["lm"])
        head.load_state_dict(saved["head"])
        optimizer.load_state_dict(saved["optimizer"])
        schedule.load_state_dict(saved["schedule"])
        state = saved["state"]

    def save():
        if checkpoint is None:
            return
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        temporary = checkpoint.with_name(f".{checkpoint.name}.tmp")
        torch.save({"settings": settings, "lm": lm.state_dict(), "head": head.state_dict(),
                    "optimizer": optimizer.state_dict(), "schedule": schedule.state_dict(),
                    "state": state, **rng_state(where)}, temporary)
        temporary.replace(checkpoint)

    start = time.perf_counter()
    lm.train()
    head.train()
    # the caller's random state is left as it was (seeded forks it); a resumed run
    # continues the stream its checkpoint saved
    with seeded(random_state, where):
        if saved is not None:
            set_rng_state(saved, where)
        while state["epoch"] < epochs:
            rng = np.random.default_rng([random_state, state["epoch"]])
            batches = bucket_batches(windows.lengths, batch_size, rng)
            mark = time.perf_counter()
            for i in range(state["step"], len(batches)):
                batch = make_batch(windows, batches[i], None, where)
                distill_loss, lm_loss = _losses(lm, head, batch, teacher[batches[i]],
                                                objective.function)
                total = distill_loss + lm_weight * lm_loss
                if not torch.isfinite(total):
                    raise FloatingPointError(
                        f"the distillation loss became {total.item()} at step {i} of epoch "
                        f"{state['epoch'] + 1}; lower learning_rate or clip_norm")
                optimizer.zero_grad(set_to_none=True)
                total.backward()
                nn.utils.clip_grad_norm_(params, clip_norm)
                optimizer.step()
                schedule.step()
                sums, now = state["sums"], time.perf_counter()
                state["sums"] = [sums[0] + distill_loss.item(), sums[1] + lm_loss.item(),
                                 sums[2] + 1, sums[3] + now - mark]
                mark = now
                state["step"] = i + 1
                if state["step"] % checkpoint_every == 0:
                    save()
                    if verbose:
                        d, l, n, seconds = state["sums"]
                        print(f"epoch {state['epoch'] + 1} step {state['step']}/{len(batches)}:"
                              f" distillation {d / n:.4f}, LM {l / n:.3f} ({seconds:.0f} s)",
                              flush=True)
                if max_time is not None and time.perf_counter() - start > max_time:
                    break
            d, l, n, seconds = state["sums"]
            record = {"epoch": state["epoch"] + 1, "distillation_loss": d / max(n, 1),
                      "lm_loss": l / max(n, 1), "steps": n, "texts": len(kept),
                      "seconds": seconds, "complete": state["step"] == len(batches)}
            if not record["complete"]:  # stopped by max_time: kept for a resumed run
                save()
                break
            state["history"].append(record)
            if verbose:
                print(f"epoch {record['epoch']}: distillation {record['distillation_loss']:.4f}, "
                      f"LM {record['lm_loss']:.3f} ({seconds:.0f} s)", flush=True)
            state["epoch"], state["step"] = state["epoch"] + 1, 0
            state["sums"] = [0.0, 0.0, 0, 0.0]
            save()
    lm.eval()
    head.eval()
    student.language_model_ = lm.cpu()
    if all(h["complete"] for h in state["history"]) and state["epoch"] == epochs:
        student.layer_scales_ = measure_layer_scales(student, texts, random_state)
    history = state["history"] + ([] if state["epoch"] == epochs else [record])
    return Distilled(student, head.cpu(), history)


def measure_layer_scales(bilm, texts, random_state: int = 0) -> np.ndarray:
    """Each layer's spread ``(n_representations,)`` on a seeded sample of ``texts``, as
    :meth:`BiLM.fit` measures its own on its training texts (at most 2,048 texts,
    about 100,000 tokens; ``training_data.scale_sample_indices``).

    A distilled student's layers are not its base's: the spreads it was given with the
    base (``layer_scales_``, what ``ElmoVectorizer(scale_layers="bilm")`` divides by)
    are measured again on the texts it was distilled on. The head keeps the spreads it
    was trained with (its ``scales`` buffer).

    Examples
    --------
    >>> from elmofeat import BiLM
    >>> from elmofeat.bilm.distillation import measure_layer_scales
    >>> texts = ["the cat sat on the mat .", "stocks fell on the news ."] * 8
    >>> bilm = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0).fit(texts)
    >>> measure_layer_scales(bilm, texts).shape  # the token layer and each LSTM layer
    (3,)
    """
    from ..mixes.base import layer_spread
    from .training_data import scale_sample_indices

    token_lists = [tokens[:bilm.max_len] for tokens in bilm.tokenize(list(texts))]
    chosen = scale_sample_indices(token_lists, np.random.RandomState(random_state))
    layers, offsets = bilm.embed_tokens([token_lists[i] for i in chosen])
    return layer_spread(layers, offsets)


def _losses(lm, head, batch, teacher, function):
    """The distillation loss and the LM loss of one batch, from one encoder pass."""
    tokens, forward_states, reversed_states = lm.encoder.run_directions(batch.inputs,
                                                                        batch.lengths)
    hidden, word_ids = lm.hidden_and_targets(forward_states, reversed_states, batch.word_ids,
                                             batch.lengths)
    lm_loss = lm.softmax.loss(lm.dropout(hidden), word_ids)
    backward_states = [reverse_padded(s, batch.lengths) for s in reversed_states]
    layers = stack_representations(tokens, forward_states, backward_states)
    return function(head(layers, batch.lengths), teacher), lm_loss
