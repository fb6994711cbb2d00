"""Do pretrained weights depend on the torch thread count?

``BiLM(n_threads=None)`` (the default) keeps torch's thread count while pretraining, so
that the same texts and seed give the same weights however busy the machine is;
``n_threads="auto"`` follows the machine's load, which is much faster on a busy machine
(see ``busy_machine.py``) but may change how some kernels sum. This measures where that
happens, on this CPU:

* whole fits: one epoch on the 7,600 AG News texts with 1 and with 2 threads, same seed,
  for a few model widths and both precisions; the largest weight difference, and
  whether the two fits' held-out perplexities are equal;
* the kernel behind it: the weight gradient of a linear layer (``x.T @ grad``, a sum
  over the batch's rows) under bf16 autocast, at the row counts the adaptive softmax
  produces, for input widths 64 / 128 / 256; how many of these shapes sum differently
  with 2 threads than with 1.

Writes benchmarks/results/thread_invariance.{json,md}.
Run: python benchmarks/thread_invariance.py [--data-home DIR]
"""

from __future__ import annotations

import argparse

# first: the command's process settings (_common) apply before torch loads
from _common import markdown_table, write_results

import torch
from torch.nn import functional as F

from elmofeat import BiLM
from elmofeat.bilm.softmax import bucketed_rows
from elmofeat.datasets import load_ag_news

FITS = [(64, "bf16"), (128, "bf16"), (256, "bf16"), (64, "fp32"), (128, "fp32")]
WIDTHS = (64, 128, 256)
OUTPUTS = (300, 1100, 2000)  # adaptive-softmax head and cluster sizes of small corpora


def fit_pair(texts, width, precision):
    weights, perplexities = [], []
    for n_threads in (1, 2):
        bilm = BiLM(embedding_dim=width, hidden_dim=width, max_epochs=1, precision=precision,
                    n_threads=n_threads, random_state=0).fit(texts)
        weights.append(bilm.language_model_.state_dict())
        perplexities.append(bilm.history_[-1]["validation_perplexity"])
    one, two = weights
    differences = {name: float((one[name].float() - two[name].float()).abs().max())
                   for name in one}
    largest = max(differences, key=differences.get)
    return {"width": width, "precision": precision,
            "identical": all(v == 0 for v in differences.values()),
            "max_difference": differences[largest], "parameter": largest,
            "perplexity_1_thread": perplexities[0], "perplexity_2_threads": perplexities[1]}


def weight_gradient_shapes(width):
    """(shapes tried, shapes whose weight gradient differs with 2 threads vs 1)."""
    generator = torch.Generator().manual_seed(0)
    rows = sorted({bucketed_rows(n) for n in range(16, 20000, 37)})
    differing, tried = [], 0
    before = torch.get_num_threads()
    try:
        for n_out in OUTPUTS:
            for n in rows:
                x = torch.randn(n, width, generator=generator)
                w = torch.randn(n_out, width, generator=generator, requires_grad=True)
                g = torch.randn(n, n_out, generator=generator)
                grads = []
                for n_threads in (1, 2):
                    torch.set_num_threads(n_threads)
                    w.grad = None
                    with torch.autocast("cpu", dtype=torch.bfloat16):
                        y = F.linear(x, w)
                    y.backward(g.to(y.dtype))
                    grads.append(w.grad.clone())
                tried += 1
                if not torch.equal(*grads):
                    differing.append((n, n_out))
    finally:
        torch.set_num_threads(before)
    return tried, differing


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    texts = list(load_ag_news(data_home=args.data_home, subset="test").data)

    fits = []
    for width, precision in FITS:
        fits.append(fit_pair(texts, width, precision))
        print(fits[-1], flush=True)
    kernels = []
    for width in WIDTHS:
        tried, differing = weight_gradient_shapes(width)
        kernels.append({"width": width, "shapes": tried, "differing": len(differing),
                        "examples": differing[:4]})
        print(kernels[-1], flush=True)
    report(len(texts), fits, kernels)


def report(n_texts, fits, kernels):
    """Write the JSON results and their Markdown tables."""
    lines = [
        "### Pretrained weights with 1 and with 2 threads",
        "",
        f"One epoch on the {n_texts:,} AG News texts, seed 0, "
        "`BiLM(embedding_dim=w, hidden_dim=w, max_epochs=1, precision=p, n_threads=t)`.",
        "",
        markdown_table(
            ["width", "precision", "weights identical", "largest difference",
             "in parameter", "held-out perplexity, 1 / 2 threads"],
            [[f["width"], f["precision"], "yes" if f["identical"] else "**no**",
              f"{f['max_difference']:.2g}", "" if f["identical"] else f"`{f['parameter']}`",
              f"{f['perplexity_1_thread']:.2f} / {f['perplexity_2_threads']:.2f}"]
             for f in fits]),
        "",
        "The kernel: a linear layer's weight gradient under bf16 autocast, at every "
        "bucketed row count from 16 to 20,000 and output widths "
        f"{', '.join(map(str, OUTPUTS))}:",
        "",
        markdown_table(
            ["input width", "shapes", "summed differently with 2 threads",
             "examples (rows, outputs)"],
            [[k["width"], k["shapes"], k["differing"],
              ", ".join(f"({n:,}, {o})" for n, o in k["examples"]) or "none"]
             for k in kernels]),
    ]
    write_results("thread_invariance", {"fits": fits, "kernels": kernels}, "\n".join(lines))


if __name__ == "__main__":
    main()
