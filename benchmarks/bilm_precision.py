"""biLM pretraining in bfloat16 autocast against float32: speed and held-out perplexity.

``BiLM(precision="auto")`` trains with bf16 autocast on CPUs that support it. This
checks that choice: the default-size model (embedding = hidden = 256, 2 layers per
direction) is pretrained on the same AG News documents, with the same seed and the
same number of epochs, once with ``precision="fp32"`` and once with ``"bf16"``, and
both are scored on the same held-out documents (exact perplexity, computed in float32
for both). Throughput counts LM targets of both directions per second.

Writes benchmarks/results/bilm_precision.{json,md}.
Run: python benchmarks/bilm_precision.py [--epochs 3] [--data-home DIR]
"""

from __future__ import annotations

import argparse

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results

import numpy as np
import torch

from elmofeat import BiLM
from elmofeat.datasets import load_ag_news


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()

    texts = load_ag_news(args.data_home, subset="test").data
    held_out = np.random.default_rng(args.seed).permutation(len(texts))[: len(texts) // 20]
    mask = np.zeros(len(texts), dtype=bool)
    mask[held_out] = True
    train = [t for t, m in zip(texts, mask) if not m]
    test = [t for t, m in zip(texts, mask) if m]

    results = {}
    for precision in ("fp32", "bf16"):
        bilm = BiLM(max_epochs=args.epochs, patience=None, validation_fraction=0.0,
                    precision=precision, random_state=args.seed).fit(train)
        seconds = sum(h["seconds"] for h in bilm.history_)
        targets = sum(h["tokens_per_second"] * h["seconds"] for h in bilm.history_)
        bilm.set_params(precision="fp32")  # score both the same way
        results[precision] = {
            "targets_per_second": targets / seconds, "train_seconds": seconds,
            "perplexity": bilm.perplexity(test), "history": bilm.history_,
        }
        print(precision, {k: v for k, v in results[precision].items() if k != "history"},
              flush=True)

    speedup = results["bf16"]["targets_per_second"] / results["fp32"]["targets_per_second"]
    rows = [[p, f"{r['targets_per_second']:,.0f}", f"{r['train_seconds']:.0f}",
             f"{r['perplexity']:.1f}"] for p, r in results.items()]
    markdown = (
        "### biLM pretraining: bf16 autocast vs fp32\n\n"
        f"Default BiLM (256/256, adaptive softmax), {len(train):,} AG News training documents, "
        f"{args.epochs} epochs, seed {args.seed}; perplexity on {len(test)} held-out documents, "
        f"computed in fp32 for both; {torch.get_num_threads()} threads.\n\n"
        + markdown_table(["training precision", "targets/s", "training seconds",
                          "held-out perplexity"], rows)
        + f"\n\nbf16 speed-up: **{speedup:.2f}x**; held-out perplexity "
        f"{results['bf16']['perplexity']:.1f} (bf16) vs {results['fp32']['perplexity']:.1f} "
        "(fp32).\n"
    )
    write_results("bilm_precision", {"epochs": args.epochs, "seed": args.seed,
                                     "results": results, "speedup": speedup}, markdown)


if __name__ == "__main__":
    main()
