"""The pretraining step on a GPU at each width of the capacity curve (issue 52, item 3).

Each configuration of ``capacity.py`` (en-base's 128-wide stack; 256 and 512 cells
projected to 128) runs the engine's training step (bf16 autocast forward, backward,
gradient clipping, fused AdamW, the loss read back every step, the batch padded on the
CPU and copied over) on real windows: one shard of the capacity corpus, its word ids as
a leg carries them (``device_leg.py``), cut into length-bucketed batches as the
trainer cuts them. ``--batch-sizes``: the recipe's 64 and larger ones, which a GPU run
could use (the curve keeps 64). The LSTM's matmul work per second is set against the
GPU's measured bf16 matmul peak (an 8192 x 8192 product).

Writes benchmarks/results/gpu_step_speed.{json,md} on the machine that runs it.
Run (on a lent GPU): python benchmarks/gpu_step_speed.py --shard IDS.npy.xz --lengths LENGTHS.npy.xz
"""

from __future__ import annotations

import argparse
import time

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results

import numpy as np
import torch
from torch import nn

from elmofeat import BiLM
from elmofeat.bilm.batching import Windows, bucket_batches, make_batch
from elmofeat.bilm.model import build_language_model
from elmofeat.runtime.torch_helpers import adamw, autocast

import device_leg

#: (cells, width) of capacity.py's configurations
WIDTHS = {"w128": (128, 128), "w256p": (256, 128), "w512p": (512, 128)}
N_OUTPUT = 50_004  # the capacity runs' softmax (en-base's vocabulary)


def lstm_flops_per_position(cells: int, width: int, layers: int = 2) -> int:
    """Forward matmul work per position of the two directions' LSTM stacks: the gates
    (4 x cells outputs from the layer's input and the projected state, both ``width``
    wide) and, for cells above the width, the projection."""
    gates = 2 * 4 * cells * (width + width)
    projection = 2 * cells * width if cells != width else 0
    return (gates + projection) * layers * 2


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def measure(cells: int, width: int, batch_size: int, windows: Windows, seconds: float,
            n_words: int, device: str = "cuda") -> dict:
    rng = np.random.default_rng(0)
    build = {k: getattr(BiLM(embedding_dim=width, hidden_dim=cells), k)
             for k in device_leg.BUILD_PARAMS}
    vectors = rng.normal(size=(n_words, 100)).astype(np.float32)
    lm = build_language_model(n_words, **build, pretrained=vectors, freeze_embedding=True,
                              n_output_words=N_OUTPUT).to(device).train()
    optimizer = adamw(lm.parameters(), lr=1e-5)
    batches = bucket_batches(windows.lengths, batch_size, rng)

    def step(indices) -> int:
        batch = make_batch(windows, indices, None, device)
        with autocast(device, True):
            loss = lm(batch.inputs, batch.word_ids, batch.lengths)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(lm.parameters(), 1.0)
        optimizer.step()
        loss.item()  # the engine reads every step's loss
        return int((windows.lengths[indices] - 2).sum())

    for i in range(10):
        step(batches[i % len(batches)])
    synchronize(device)
    steps, tokens, positions, start = 0, 0, 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        indices = batches[steps % len(batches)]
        tokens += step(indices)
        positions += int(windows.lengths[indices].sum())
        steps += 1
    synchronize(device)
    elapsed = time.perf_counter() - start
    # backward = twice the forward (the first layer's input gradient is not needed, so
    # this slightly overstates the work: the share below is an upper bound)
    flops = 3 * lstm_flops_per_position(cells, width) * positions
    return {"steps_per_second": steps / elapsed, "tokens_per_second": tokens / elapsed,
            "lstm_flops_per_second": flops / elapsed, "steps": steps, "seconds": elapsed}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shard", required=True, help="a leg's packed word ids (.npy.xz)")
    parser.add_argument("--lengths", required=True, help="its window lengths (.npy.xz)")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--device", default="cuda", help="cpu: a quick check of the script")
    args = parser.parse_args()
    ids = device_leg.load_xz(args.shard).astype(np.int64)
    lengths = device_leg.load_xz(args.lengths).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    windows = Windows(ids, None, None, offsets, np.zeros(len(lengths), np.int64))
    n_words = int(ids.max()) + 1
    if args.device == "cpu":  # a check of the script, not a measurement: nothing written
        for name, (cells, width) in WIDTHS.items():
            print(name, measure(cells, width, args.batch_sizes[0], windows, args.seconds,
                                n_words, "cpu"))
        return
    peak = device_leg.gpu_matmul_peak()
    rows, table = {}, []
    for name, (cells, width) in WIDTHS.items():
        for batch_size in args.batch_sizes:
            row = measure(cells, width, batch_size, windows, args.seconds, n_words)
            row["lstm_share_of_peak"] = row["lstm_flops_per_second"] / peak
            rows[f"{name}/{batch_size}"] = {"cells": cells, "width": width,
                                            "batch_size": batch_size, **row}
            table.append([name, f"{cells} -> {width}", batch_size,
                          f"{row['steps_per_second']:.1f}", f"{row['tokens_per_second']:,.0f}",
                          f"{row['lstm_flops_per_second'] / 1e12:.2f}",
                          f"{100 * row['lstm_share_of_peak']:.2f}%"])
            print(table[-1], flush=True)
    gpu = torch.cuda.get_device_name()
    markdown = (
        f"## The pretraining step on a GPU ({gpu}, bf16)\n\n"
        "The engine's training step on real windows (one shard of the capacity corpus, "
        "length-bucketed batches), each width of the capacity curve; `batch` 64 is the "
        "recipe's. LSTM TFLOP/s counts the LSTM stacks' matmul work (forward x 3), an "
        f"upper bound; the peak is a bf16 8192 x 8192 product on the same GPU, "
        f"{peak / 1e12:.0f} TFLOP/s.\n\n"
        + markdown_table(["config", "cells -> width", "batch", "steps/s", "tokens/s",
                          "LSTM TFLOP/s", "share of peak"], table) + "\n")
    write_results("gpu_step_speed", {"gpu": gpu, "torch": torch.__version__,
                                     "bf16_matmul_peak_flops": peak, "rows": rows,
                                     "windows": len(lengths), "tokens": int((lengths - 2).sum())},
                  markdown)


if __name__ == "__main__":
    main()
