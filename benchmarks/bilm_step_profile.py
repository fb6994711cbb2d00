"""The biLM training step against the machine's matmul peak, part by part.

The default BiLM (256/256, adaptive softmax) is pretrained one epoch on AG News (so
its weights and the softmax's cluster sizes are those of a real run); then the same
sample of training batches goes through:

* the whole step, exactly as the engine runs it (autocast forward, backward, gradient
  clipping, fused AdamW);
* each part alone, on the same batches: the token layer (forward, and backward where
  it learns: the default ``freeze_embedding=True`` keeps the word embedding), the four
  LSTM layers (forward, then backward), the adaptive softmax (forward + backward on
  the real hidden states and targets) and the optimizer (clipping + AdamW).

Achieved FLOP/s count the matmul work each part does (LSTM: 2 x 4h x (d + h) per
position, layer and direction; softmax: the head and tail projections of the rows
actually computed; backward = 2 x forward, less the first layers' input gradients
when the token layer does not learn), divided by the measured peak of a 2048 x
2048 matmul in the same precision (the best of several timings, before and after).
The embedding and the optimizer move memory rather than multiply: their share of the
step's time is what counts.

Writes benchmarks/results/bilm_step_profile.{json,md}.
Run: python benchmarks/bilm_step_profile.py [--batches 60] [--precision bf16|fp32]
     [--data-home DIR]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn

from _common import bare_lstm_flops, markdown_table, matmul_peak, write_results
from elmofeat import BiLM
from elmofeat._torch import adamw, autocast
from elmofeat.bilm.batching import bucket_batches, make_batch
from elmofeat.bilm.model import reverse_padded
from elmofeat.bilm.softmax import bucketed_rows
from elmofeat.datasets import load_ag_news


def lstm_flops(batch, d, h, n_layers) -> float:
    """Forward matmul FLOPs of every LSTM layer of both directions on a padded batch."""
    positions = batch.word_ids.numel()
    return positions * 2 * 4 * h * (d + h) * n_layers * 2


def softmax_flops(adaptive, targets) -> float:
    """Forward matmul FLOPs of the adaptive softmax on these targets (bucketed rows)."""
    dim = adaptive.in_features
    flops = bucketed_rows(len(targets)) * 2 * dim * adaptive.head_size
    for i, tail in enumerate(adaptive.tail):
        low, high = adaptive.cutoffs[i], adaptive.cutoffs[i + 1]
        rows = int(((targets >= low) & (targets < high)).sum())
        if rows:
            hidden, out = tail[0].out_features, tail[1].out_features
            flops += bucketed_rows(rows) * 2 * (dim * hidden + hidden * out)
    return flops


def timed(function, batches, repeats=2) -> float:
    """Best total seconds of ``repeats`` passes of ``function`` over ``batches``."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for batch in batches:
            function(batch)
        best = min(best, time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=60)
    parser.add_argument("--precision", choices=["bf16", "fp32"], default="bf16")
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    bf16 = args.precision == "bf16"
    dtype = torch.bfloat16 if bf16 else torch.float32
    peak_before = matmul_peak(dtype)

    texts = load_ag_news(args.data_home, subset="test").data
    bilm = BiLM(max_epochs=1, validation_fraction=0.0, random_state=0,
                precision=args.precision).fit(texts)
    lm = bilm.language_model_.train()
    encoder, adaptive = lm.encoder, lm.softmax.adaptive
    windows = bilm._windows(bilm._tokenize(texts))
    order = bucket_batches(windows.lengths, bilm.batch_size, np.random.default_rng(0))
    batches = [make_batch(windows, idx, None) for idx in order[: args.batches]]
    optimizer = adamw(lm.parameters(), lr=1e-5)

    def step(batch):
        with autocast("cpu", bf16):
            loss = lm(batch.inputs, batch.word_ids, batch.lengths)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(lm.parameters(), 1.0)
        optimizer.step()

    # The default keeps the word embedding frozen (freeze_embedding=True): then the token
    # layer runs forward only and the LSTMs compute no gradient for their inputs.
    token_layer_learns = any(p.requires_grad for p in encoder.token_layer.parameters())

    def token_layer(batch):
        with autocast("cpu", bf16):
            tokens = encoder.token_layer(batch.inputs)
        if token_layer_learns:
            tokens.backward(torch.ones_like(tokens))

    lstm_inputs, lstm_outputs, softmax_inputs = {}, {}, {}
    for i, batch in enumerate(batches):  # the real inputs of each part, computed once
        with torch.no_grad(), autocast("cpu", bf16):
            tokens = encoder.token_layer(batch.inputs)
        # Inputs that need gradients where the token layer's output does in a real step.
        lstm_inputs[i] = (tokens.detach().requires_grad_(token_layer_learns),
                          reverse_padded(tokens, batch.lengths).detach()
                          .requires_grad_(token_layer_learns))
        with torch.no_grad(), autocast("cpu", bf16):
            hidden, targets = lm._hidden_and_targets(batch.inputs, batch.word_ids, batch.lengths)
        softmax_inputs[i] = (hidden.detach(), targets)
    index = {id(batch): i for i, batch in enumerate(batches)}

    def lstm_forward(batch):
        forward_in, backward_in = lstm_inputs[index[id(batch)]]
        with autocast("cpu", bf16):
            outputs = encoder.forward_lstm(forward_in) + encoder.backward_lstm(backward_in)
        lstm_outputs[index[id(batch)]] = outputs

    def lstm_backward(batch):
        outputs = lstm_outputs.pop(index[id(batch)])
        tops = [outputs[bilm.n_layers - 1], outputs[-1]]  # each direction's top layer
        torch.autograd.backward(tops, [torch.ones_like(o) for o in tops])

    def softmax(batch):
        hidden, targets = softmax_inputs[index[id(batch)]]
        hidden = hidden.requires_grad_()
        with autocast("cpu", bf16):
            loss = lm.softmax.loss(hidden, targets)
        loss.backward()

    def optimizer_step(batch):
        nn.utils.clip_grad_norm_(lm.parameters(), 1.0)
        optimizer.step()

    for batch in batches[:5]:  # warm-up: oneDNN builds its kernels once per shape
        step(batch)
    d, h = bilm.embedding_dim, bilm.hidden_dim
    forward_lstm = sum(lstm_flops(b, d, h, bilm.n_layers) for b in batches)
    forward_softmax = sum(softmax_flops(adaptive, softmax_inputs[i][1]) for i in range(len(batches)))
    seconds = {"step": timed(step, batches), "token layer": timed(token_layer, batches)}

    def lstm_pass(batch):
        lstm_forward(batch)
        lstm_backward(batch)

    timed(lstm_pass, batches, repeats=1)  # warm-up of the separate passes
    lstm_seconds = {"forward": float("inf"), "backward": float("inf")}
    for _ in range(2):
        f = timed(lstm_forward, batches, repeats=1)
        b = timed(lstm_backward, batches, repeats=1)
        lstm_seconds = {"forward": min(lstm_seconds["forward"], f),
                        "backward": min(lstm_seconds["backward"], b)}
    seconds["LSTM forward"], seconds["LSTM backward"] = lstm_seconds["forward"], lstm_seconds["backward"]
    seconds["adaptive softmax"] = timed(softmax, batches)
    seconds["optimizer (clipping + AdamW)"] = timed(optimizer_step, batches)
    mean_width = int(round(np.mean([b.word_ids.shape[1] for b in batches])))
    bare = bare_lstm_flops(bilm.batch_size, mean_width, h, bf16, backward=True)
    peak = max(peak_before, matmul_peak(dtype))

    backward_lstm = 2 * forward_lstm
    if not token_layer_learns:  # no gradient for the first layers' inputs
        backward_lstm -= sum(b.word_ids.numel() * 2 * 4 * h * d * 2 for b in batches)
    flops = {"step": forward_lstm + backward_lstm + 3 * forward_softmax,
             "LSTM forward": forward_lstm, "LSTM backward": backward_lstm,
             "adaptive softmax": 3 * forward_softmax}
    parts = ["token layer", "LSTM forward", "LSTM backward", "adaptive softmax",
             "optimizer (clipping + AdamW)"]
    rows = []
    for part in ["step"] + parts:
        achieved = flops[part] / seconds[part] if part in flops else None
        rows.append([
            "whole step" if part == "step" else part, f"{seconds[part]:.2f}",
            "" if part == "step" else f"{100 * seconds[part] / seconds['step']:.0f}%",
            "" if achieved is None else f"{achieved / 1e9:.0f}",
            "(memory-bound)" if achieved is None else f"{100 * achieved / peak:.0f}%",
        ])
    targets = sum(2 * int((b.lengths - 1).sum()) for b in batches)
    share = flops["step"] / seconds["step"] / peak
    markdown = (
        f"### biLM training step against the {args.precision} matmul peak\n\n"
        f"Default BiLM (256/256, adaptive softmax, word embedding "
        f"{'learning' if token_layer_learns else 'frozen'}), {args.precision}, {len(batches)} training "
        f"batches of AG News ({targets:,} LM targets), {torch.get_num_threads()} threads; "
        f"matmul peak {peak / 1e9:.0f} GFLOP/s (2048 x 2048, best timing). Parts are timed "
        "alone on the same batches, so their sum differs from the whole step (what lies between the parts: masks, casts, reversals).\n\n"
        + markdown_table(["part", "seconds", "of the step's time", "achieved GFLOP/s",
                          "of matmul peak"], rows)
        + f"\n\nThe whole step reaches **{100 * share:.0f}%** of the {args.precision} matmul "
        f"peak ({targets / seconds['step']:,.0f} targets/s). Target: 50%.\n\n"
        f"The ceiling of the kernel the step is mostly made of: one bare `nn.LSTM({h}, {h})`, "
        f"forward + backward on a random ({bilm.batch_size}, {mean_width}, {h}) input (the "
        f"batches' mean width), reaches {bare / 1e9:.0f} GFLOP/s, "
        f"**{100 * bare / peak:.0f}%** of the peak. "
        + ("A step made of nothing but these kernels could not reach the target on this "
           "machine. " if bare / peak < 0.5 else "The kernel itself is above the target "
           "here: the gap is in how the step uses it. ")
        + "The step's LSTM parts run below the "
        "bare kernel; their batches have every width from 3 to 66 positions, the bare "
        "kernel's one width.\n"
    )
    write_results("bilm_step_profile", {
        "precision": args.precision, "batches": len(batches), "targets": targets,
        "peak_flops": peak, "seconds": seconds, "flops": flops, "fraction_of_peak": share,
        "bare_lstm_flops": bare, "bare_lstm_fraction_of_peak": bare / peak,
    }, markdown)


if __name__ == "__main__":
    main()
