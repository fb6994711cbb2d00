"""Fine-tuning a biLM on labelled texts: ULMFiT's recipe for an ELMo-style biLM.

Today labels reach only a mix or a small head over frozen layers. ULMFiT (Howard &
Ruder 2018) measured what fine-tuning the language model itself buys on a classification
task, with three devices that keep it from forgetting what pretraining taught:
discriminative learning rates (each layer down the stack learns ``decay`` times slower),
gradual unfreezing (the top first, one more layer each epoch) and a slanted triangular
schedule (a short warm-up, then a long linear decay). LP-FT (Kumar et al. 2022) adds a
fourth: the head starts from the linear probe fitted on the frozen features, so
fine-tuning never starts below them, and the held-out rows decide whether it ended
above them (otherwise the probe is what :func:`fine_tune` returns).

:func:`fine_tune` trains a copy; the model given is never changed. Each training text is
read as its first ``max_len`` tokens (one window); :class:`FineTuned` reads whole texts.
"""

from __future__ import annotations

import copy
import math
import time
import weakref
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm
from torch.nn import functional as F

from ..runtime.torch_helpers import adamw, fill_rows, seeded
from .batching import bucket_batches, make_batch, make_windows
from .model import reverse_padded, stack_representations

#: ULMFiT's slanted triangular schedule: the share of steps that warm up, and how many
#: times smaller the lowest rate is than the highest.
CUT_FRACTION, RATIO = 0.1, 32


def concat_pool(layers: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """ULMFiT's concat pooling over every layer of each text's tokens (``<bos>`` and
    ``<eos>`` left out): each layer's mean, each layer's max, and the top layer's last
    states (the forward half at the last token, the backward half at the first).

    Shape
    -----
    ``layers (batch, time, n_representations, width), lengths (batch,) -> (batch,
    (2 * n_representations + 1) * width)``; ``lengths`` counts ``<bos>`` and ``<eos>``;
    a text without tokens pools to zeros.
    """
    batch, steps, _, width = layers.shape
    positions = torch.arange(steps, device=layers.device)
    content = (positions[None, :] >= 1) & (positions[None, :] < (lengths[:, None] - 1))
    mask = content[:, :, None, None]
    counts = content.sum(1).clamp(min=1).to(layers.dtype)[:, None, None]
    means = layers.masked_fill(~mask, 0).sum(1) / counts
    empty = ~content.any(1)
    maxima = layers.masked_fill(~mask, -math.inf).amax(1).masked_fill(empty[:, None, None], 0)
    rows = torch.arange(batch, device=layers.device)
    last = (lengths - 2).clamp(min=0)
    half = width // 2
    states = torch.cat([layers[rows, last, -1, :half], layers[rows, 1 % steps, -1, half:]], 1)
    states = states.masked_fill(empty[:, None], 0)
    return torch.cat([means.flatten(1), maxima.flatten(1), states], 1)


def concat_pool_flat(layers: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """:func:`concat_pool` of documents given as ``BiLM.embed_flat`` gives them:
    ``layers (n_tokens, n_representations, width)``, document ``i`` holding rows
    ``offsets[i]:offsets[i + 1]``; ``(n_documents, (2 * n_representations + 1) * width)``
    float32."""
    from .._pooling import pool_vectors

    n_tokens, n_repr, width = layers.shape
    half = width // 2
    offsets = np.asarray(offsets, dtype=np.int64)
    pooled = pool_vectors(layers.reshape(n_tokens, n_repr * width).astype(np.float32),
                          offsets, "meanmax")
    states = np.zeros((len(offsets) - 1, width), dtype=np.float32)
    full = np.diff(offsets) > 0
    states[full, :half] = layers[offsets[1:][full] - 1, -1, :half]
    states[full, half:] = layers[offsets[:-1][full], -1, half:]
    return np.hstack([pooled.astype(np.float32), states])


def class_scores(bilm, texts, mean, scale, weight, bias, batch_size: int = 256) -> np.ndarray:
    """A linear head's class scores of whole texts, ``(n_texts, n_classes)`` float32:
    :func:`concat_pool_flat` of the biLM's layers, standardised (``(pooled - mean) /
    scale``), times ``weight.T`` plus ``bias``; each text's scores independent of the
    others (at least ``MIN_PRODUCT_ROWS`` rows in every product)."""
    layers, offsets = bilm.embed_flat(texts, batch_size=batch_size)
    pooled = torch.from_numpy(concat_pool_flat(layers, offsets))
    standardised = (pooled - torch.as_tensor(mean)) / torch.as_tensor(scale)
    with torch.inference_mode():
        product = fill_rows(standardised) @ torch.as_tensor(weight).float().T
        return (product + torch.as_tensor(bias).float())[:len(pooled)].numpy()


class ClassifierHead(nn.Module):
    """Class scores from :func:`concat_pool`'s vector: standardised (the training
    texts' mean and spread, as buffers), dropped out, one linear map.

    Parameters
    ----------
    mean, scale : array of shape (n_features,)
        The pooled features' mean and standard deviation on the training texts.
    n_classes : int
    dropout : float

    Shape
    -----
    ``pooled (batch, n_features) -> (batch, n_classes)``
    """

    def __init__(self, mean, scale, n_classes: int, dropout: float = 0.1):
        super().__init__()
        self.register_buffer("mean", torch.as_tensor(np.asarray(mean, np.float32)))
        self.register_buffer("scale", torch.as_tensor(np.asarray(scale, np.float32)))
        self.dropout = nn.Dropout(dropout)
        self.linear = nn.Linear(len(self.mean), n_classes)

    def standardise(self, pooled: torch.Tensor) -> torch.Tensor:
        return (pooled - self.mean) / self.scale

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.linear(self.dropout(self.standardise(pooled)))


@dataclass
class FineTuned:
    """What :func:`fine_tune` returns: the fine-tuned copy of the biLM (or the model
    given, where the probe won), its head, the classes in the head's order and a record
    per epoch (``history``; epoch 0 is the linear probe)."""

    bilm: object
    head: ClassifierHead
    classes: np.ndarray
    history: list = field(default_factory=list)
    best_epoch: int = 0

    def decision_function(self, texts, batch_size: int = 256) -> np.ndarray:
        """Class scores ``(n_texts, n_classes)``, float32, each text read whole and
        independent of the batch."""
        head = self.head
        return class_scores(self.bilm, list(texts), head.mean.cpu().numpy(),
                            head.scale.cpu().numpy(), head.linear.weight.detach().cpu().numpy(),
                            head.linear.bias.detach().cpu().numpy(), batch_size)

    def predict_proba(self, texts) -> np.ndarray:
        scores = torch.from_numpy(self.decision_function(texts))
        return torch.softmax(scores, 1).numpy()

    def predict(self, texts) -> np.ndarray:
        return self.classes[self.decision_function(texts).argmax(1)]


def _check(bilm, texts, y, validation_fraction):
    if not hasattr(bilm, "language_model_"):
        raise ValueError("fine_tune needs a fitted BiLM (BiLM.from_pretrained or BiLM.fit)")
    if bilm.token_layer == "char":
        raise ValueError("fine_tune supports word-layer biLMs (token_layer='word')")
    if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a sequence of str")
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != len(texts):
        raise ValueError(f"y must hold one label per text: {len(texts)} texts, y of shape "
                         f"{y.shape}")
    classes, codes = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"y must hold at least 2 classes, got {len(classes)}")
    if not 0 < validation_fraction < 1:
        raise ValueError(f"validation_fraction must be in (0, 1), got {validation_fraction!r}")
    return classes, codes.astype(np.int64)


#: The probe's regularisation grid when ``probe_C=None`` (chosen by inner 3-fold CV).
PROBE_GRID = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)


def _probe(pooled: np.ndarray, codes: np.ndarray, n_classes: int, C, seed: int,
           class_weight=None):
    """The linear probe on the standardised frozen features: ``(mean, scale, weight,
    bias)``, the weight and bias as the head's linear map (one row per class). ``C``:
    a float, or None to choose it over :data:`PROBE_GRID` by stratified 3-fold CV;
    ``class_weight``: per class code, or None."""
    from .._logistic import logistic_regression

    mean = pooled.mean(0)
    scale = pooled.std(0) + 1e-6
    standardised = (pooled - mean) / scale
    if C is None and np.bincount(codes).min() < 3:  # too few rows of a class to search
        C = 1.0
    probe = logistic_regression(C, Cs=PROBE_GRID, seed=seed, class_weight=class_weight,
                                max_iter=2000).fit(standardised, codes)
    weight, bias = probe.coef_, probe.intercept_
    if n_classes == 2:  # one logit: as two softmax scores with the same difference
        weight, bias = np.vstack([-weight / 2, weight / 2]), np.array([-bias[0] / 2, bias[0] / 2])
    return mean, scale, weight.astype(np.float32), bias.astype(np.float32)


def layer_groups(lm, head) -> list[list[nn.Parameter]]:
    """The parameters by depth, top first: the head, each LSTM layer (both directions),
    the token layer's trainable part. Fine-tuning unfreezes them in this order."""
    encoder = lm.encoder
    stacks = [encoder.forward_lstm.layers, encoder.backward_lstm.layers]
    lstm = [[p for stack in stacks for p in stack[i].parameters()]
            for i in reversed(range(len(stacks[0])))]
    tokens = [p for p in encoder.token_layer.parameters()
              if p is not encoder.token_layer.embedding.weight]
    return [list(head.parameters()), *lstm, tokens]


def slanted_triangular(step: int, total: int) -> float:
    """ULMFiT's slanted triangular learning-rate factor at ``step`` of ``total``."""
    cut = max(1, int(total * CUT_FRACTION))
    p = step / cut if step < cut else 1 - (step - cut) / max(1, total - cut)
    return (1 + p * (RATIO - 1)) / RATIO


def _trainable_copy(bilm):
    """A copy of ``bilm`` whose encoder can train, its own parameters (``shared_copy``:
    ``bilm`` may be a model the whole process shares). Only the language model's
    modules are copied, and of them not the word table and the LM's softmax, which
    fine-tuning never changes: a fine-tuned en-base costs its LSTM and token layers
    (about 1.4M of its 21.8M parameters), not another word table."""
    lm = bilm.language_model_
    frozen = [*lm.softmax.parameters(), *lm.softmax.buffers()]
    table = lm.encoder.token_layer.embedding.weight
    student = bilm.shared_copy()
    student.__dict__.pop("_weights_key_", None)  # another model's digest
    with torch.inference_mode(False):
        student.language_model_ = copy.deepcopy(
            lm, memo={id(t): t for t in frozen} | {id(table): _frozen_table(table)})
    return student


# id of a model's word table -> (a weak reference to it, its version, its read-only
# twin), made once: every fine-tuned copy of a model shares it (a table that is already
# read-only, a shared model's, is its own twin). Keyed by id: tensors do not compare.
_FROZEN_TABLES: dict = {}


def _frozen_table(table: nn.Parameter) -> nn.Parameter:
    """``table`` as an inference tensor: what a shared fine-tuned copy needs (marking it
    shared would otherwise copy the table into one, copy after copy)."""
    if table.is_inference():
        return table
    key = id(table)
    alive, version, twin = _FROZEN_TABLES.get(key, (lambda: None, None, None))
    if alive() is not table or version != table._version:  # new, or changed in place
        with torch.inference_mode():
            twin = nn.Parameter(table.detach().clone(), requires_grad=False)
        reference = weakref.ref(table, lambda _: _FROZEN_TABLES.pop(key, None))
        _FROZEN_TABLES[key] = (reference, table._version, twin)
    return twin


def _snapshot(groups) -> list:
    return [p.detach().clone() for params in groups for p in params]


def _restore(groups, snapshot) -> None:
    with torch.no_grad():
        for p, value in zip((p for params in groups for p in params), snapshot):
            p.copy_(value)


def _train(lm, head, windows, codes, train_rows, held_rows, weights, *, epochs, learning_rate,
           decay, gradual_unfreezing, batch_size, random_state, verbose):
    """:func:`fine_tune`'s epochs: ``(history, best_epoch, best)``, ``best`` the
    trained parameters' values at the best epoch (None where the probe, epoch 0, won);
    every held-out number is None without held-out rows (then the last epoch is best)."""
    early_stopping = len(held_rows) > 0
    device = next(head.parameters()).device
    groups = layer_groups(lm, head)
    optimizer = adamw([{"params": params, "lr": learning_rate / decay ** depth}
                       for depth, params in enumerate(groups) if params], weight_decay=0.01)
    peaks = [group["lr"] for group in optimizer.param_groups]
    total = -(-len(train_rows) // batch_size) * epochs
    best_loss, best_acc = (_held_out_loss(lm, head, windows, held_rows, codes, batch_size,
                                          weights)
                           if early_stopping else (None, None))
    history = [{"epoch": 0, "held_out_loss": best_loss, "held_out_accuracy": best_acc,
                "trained_groups": 0, "seconds": 0.0}]
    best_epoch, best, step = 0, None, 0
    bar = tqdm(total=total, unit="batch", desc="fine-tuning", disable=not verbose, leave=False)
    with seeded(random_state, device), bar:
        for epoch in range(1, epochs + 1):
            trained = len(groups) if not gradual_unfreezing else min(len(groups), epoch + 1)
            for depth, params in enumerate(groups):
                for p in params:
                    p.requires_grad_(depth < trained)
            lm.train()
            head.train()
            start = time.perf_counter()
            rng = np.random.default_rng([random_state, epoch])
            for batch in bucket_batches(windows.lengths[train_rows], batch_size, rng):
                factor = slanted_triangular(step, total)
                for group, peak in zip(optimizer.param_groups, peaks):
                    group["lr"] = peak * factor
                rows = train_rows[batch]
                scores = _forward(lm, head, make_batch(windows, rows, None, device))
                loss = F.cross_entropy(scores, torch.from_numpy(codes[rows]).to(device),
                                       weight=weights)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_([p for g in groups for p in g], 1.0)
                optimizer.step()
                step += 1
                bar.update()
            held_loss, held_acc = (_held_out_loss(lm, head, windows, held_rows, codes,
                                                  batch_size, weights)
                                   if early_stopping else (None, None))
            history.append({"epoch": epoch, "held_out_loss": held_loss,
                            "held_out_accuracy": held_acc, "trained_groups": trained,
                            "seconds": time.perf_counter() - start})
            if verbose:
                held = (f"held-out loss {held_loss:.4f}, accuracy {held_acc:.4f} "
                        if early_stopping else "")
                bar.write(f"fine-tuning epoch {epoch}/{epochs}: {held}"
                          f"({history[-1]['seconds']:.0f} s)")
            if (not early_stopping and epoch == epochs) or (early_stopping
                                                             and held_loss < best_loss):
                best_loss, best_epoch, best = held_loss, epoch, _snapshot(groups)
    for p in (p for g in groups for p in g):
        p.requires_grad_(True)
    return history, best_epoch, best


def _class_weights(class_weight, classes, codes) -> torch.Tensor | None:
    """scikit-learn's ``class_weight`` as a tensor of one weight per class code."""
    if class_weight is None:
        return None
    from sklearn.utils.class_weight import compute_class_weight

    weights = compute_class_weight(class_weight, classes=classes, y=classes[codes])
    return torch.as_tensor(weights, dtype=torch.float32)


def _validation_split(codes: np.ndarray, fraction: float, seed: int):
    from sklearn.model_selection import train_test_split

    indices = np.arange(len(codes))
    counts = np.bincount(codes)
    stratify = codes if counts.min() >= 2 else None
    train, held = train_test_split(indices, test_size=fraction, random_state=seed,
                                   stratify=stratify)
    return np.sort(train), np.sort(held)


def _forward(lm, head, batch) -> torch.Tensor:
    tokens, forward_states, reversed_states = lm.encoder.run_directions(batch.inputs,
                                                                        batch.lengths)
    backward_states = [reverse_padded(s, batch.lengths) for s in reversed_states]
    layers = stack_representations(tokens, forward_states, backward_states)
    return head(concat_pool(layers, batch.lengths))


def _held_out_loss(lm, head, windows, rows, codes, batch_size,
                   weights=None) -> tuple[float, float]:
    """Mean cross-entropy (``weights``: per class, or None) and accuracy on the
    held-out rows, eval mode."""
    lm.eval()
    head.eval()
    device = next(head.parameters()).device
    loss, correct, total = 0.0, 0, 0.0
    with torch.no_grad():
        for batch in bucket_batches(windows.lengths[rows], batch_size):
            scores = _forward(lm, head, make_batch(windows, rows[batch], None, device))
            labels = torch.from_numpy(codes[rows[batch]]).to(device)
            loss += float(F.cross_entropy(scores, labels, weight=weights, reduction="sum"))
            total += float(weights[labels].sum()) if weights is not None else len(labels)
            correct += int((scores.argmax(1) == labels).sum())
    return loss / total, correct / len(rows)


def fine_tune(bilm, texts, y, *, epochs: int = 3, learning_rate: float = 1e-3,
              decay: float = 2.6, gradual_unfreezing: bool = True, dropout: float = 0.1,
              probe_C: float | None = None, early_stopping: bool = True,
              validation_fraction: float = 0.1, batch_size: int = 32, class_weight=None,
              random_state: int = 0, verbose: bool = False) -> FineTuned:
    """Fine-tune a copy of ``bilm`` and a classification head on ``(texts, y)``.

    Parameters
    ----------
    bilm : BiLM
        A fitted word-layer biLM (adapt it to the texts first, ``adapt_epochs``, as
        ULMFiT's second stage does). It is not changed. Its word table stays frozen.
    texts : sequence of str
        Each read as its first ``bilm.max_len`` tokens for training.
    y : array-like of shape (n_texts,)
        Class labels (at least 2 classes).
    epochs : int, default=3
        Passes over the training rows. With ``gradual_unfreezing`` the first trains the
        head and the top LSTM layer, each next one unfreezes one layer more.
    learning_rate : float, default=1e-3
        The head's peak rate; each layer down the stack gets ``decay`` times less
        (discriminative rates), all following :func:`slanted_triangular`.
    decay : float, default=2.6
    gradual_unfreezing : bool, default=True
        False: every layer trains from the first step.
    dropout : float, default=0.1
        On the pooled vector (the biLM keeps its own dropout).
    probe_C : float or None, default=None
        The linear probe's regularisation (``LogisticRegression(C=probe_C)`` on the
        standardised frozen features), where the head starts; None chooses it over
        :data:`PROBE_GRID` by stratified 3-fold cross-validation of the training rows.
    early_stopping : bool, default=True
        Hold out ``validation_fraction`` of the rows (stratified): after each epoch
        their loss is measured, and the best epoch, the probe included (epoch 0), is
        returned. False: every row trains, and the last epoch is returned.
    validation_fraction : float, default=0.1
    batch_size : int, default=32
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes in the loss and the probe, as scikit-learn's
        ``class_weight`` (``compute_class_weight``).
    random_state : int, default=0
    verbose : bool, default=False
        A progress bar over the training steps, with time left, and a line per epoch.

    Returns
    -------
    FineTuned
        ``bilm`` (the fine-tuned copy, or ``bilm`` itself where no epoch beat the probe
        on the held-out rows), ``head``, ``classes``, ``history`` and ``best_epoch``.

    Examples
    --------
    >>> from elmofeat import BiLM
    >>> from elmofeat.bilm.finetune import fine_tune
    >>> texts = ["a great phone , i love it", "awful , it broke at once"] * 20
    >>> y = ["good", "bad"] * 20
    >>> bilm = BiLM(embedding_dim=8, hidden_dim=8, max_epochs=1, random_state=0).fit(texts)
    >>> tuned = fine_tune(bilm, texts, y, epochs=2)
    >>> [h["epoch"] for h in tuned.history], tuned.predict(["i love it"]).shape
    ([0, 1, 2], (1,))
    """
    classes, codes = _check(bilm, texts, y, validation_fraction)
    for name, value in (("epochs", epochs), ("batch_size", batch_size)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    texts = list(texts)
    if early_stopping:
        train_rows, held_rows = _validation_split(codes, validation_fraction, random_state)
    else:
        train_rows, held_rows = np.arange(len(codes)), np.arange(0)
    student = _trainable_copy(bilm)
    lm = student.language_model_
    device = next(lm.parameters()).device
    # the frozen features and the probe on them: where the head starts
    layers, offsets = bilm.embed_flat(texts)
    pooled = concat_pool_flat(layers, offsets)
    weights = _class_weights(class_weight, classes, codes)
    mean, scale, weight, bias = _probe(
        pooled[train_rows], codes[train_rows], len(classes), probe_C, random_state,
        None if weights is None else dict(enumerate(weights.tolist())))
    with seeded(random_state):
        head = ClassifierHead(mean, scale, len(classes), dropout)
    with torch.no_grad():
        head.linear.weight.copy_(torch.from_numpy(weight))
        head.linear.bias.copy_(torch.from_numpy(bias))
    token_lists = [tokens[:student.max_len] or ["<unk>"] for tokens in student.tokenize(texts)]
    windows = make_windows(token_lists, student.vocabulary_, student.max_len, with_types=False)
    head.to(device)
    weights = None if weights is None else weights.to(device)
    embedding = lm.encoder.token_layer.embedding.weight
    trainable = embedding.requires_grad  # shared with bilm: put back as it was
    embedding.requires_grad_(False)
    try:
        history, best_epoch, best = _train(
            lm, head, windows, codes, train_rows, held_rows, weights, epochs=epochs,
            learning_rate=learning_rate, decay=decay, gradual_unfreezing=gradual_unfreezing,
            batch_size=batch_size, random_state=random_state, verbose=verbose)
    finally:
        embedding.requires_grad_(trainable)
    if best is None:  # the probe won: the model given, the probe's head
        with torch.no_grad():
            head.linear.weight.copy_(torch.from_numpy(weight))
            head.linear.bias.copy_(torch.from_numpy(bias))
        return FineTuned(bilm, head.cpu().eval(), classes, history, 0)
    _restore(layer_groups(lm, head), best)
    student.language_model_ = lm.eval()
    return FineTuned(student, head.cpu().eval(), classes, history, best_epoch)
