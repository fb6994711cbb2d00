"""PNG figures of a comparison: confusion matrices, layer weights, biLM perplexity."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._files import atomic_path
from .methods import METHODS


def _save(figure, path: Path) -> None:
    import matplotlib.pyplot as plt

    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)


def _confusion(dataset, summary, methods, path):
    import matplotlib.pyplot as plt

    names = dataset["class_names"]
    columns = min(len(methods), 4)
    rows = -(-len(methods) // columns)
    size = 1.0 + 0.45 * len(names)
    figure, axes = plt.subplots(rows, columns, figsize=(size * columns, size * rows + 0.4),
                                squeeze=False)
    for ax in axes.flat[len(methods):]:
        ax.axis("off")
    for ax, method in zip(axes.flat, methods):
        counts = np.asarray(summary[method]["confusion_matrix"], dtype=float)
        shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
        ax.imshow(shares, cmap="Blues", vmin=0, vmax=1)
        for i in range(len(names)):
            for j in range(len(names)):
                ax.text(j, i, f"{shares[i, j]:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if shares[i, j] > 0.6 else "black")
        ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=7)
        ax.set_yticks(range(len(names)), names, fontsize=7)
        ax.set_title(METHODS[method].label, fontsize=8)
        ax.set_xlabel("predicted", fontsize=7)
        ax.set_ylabel("true", fontsize=7)
    figure.suptitle(f"{dataset['title']}: confusion matrices (row-normalised, summed over splits)",
                    fontsize=9)
    figure.tight_layout()
    _save(figure, path)


def _layer_weights(dataset, path):
    import matplotlib.pyplot as plt

    splits = [s for s in dataset["splits"] if "elmo-trainable" in s["methods"]]
    weights = np.asarray([s["methods"]["elmo-trainable"]["layer_weights"] for s in splits])
    layers = ["token layer", *[f"LSTM {i}" for i in range(1, weights.shape[1])]]
    figure, ax = plt.subplots(figsize=(4.5, 3))
    ax.bar(layers, weights.mean(axis=0), yerr=weights.std(axis=0) if len(weights) > 1 else None,
           color="tab:blue", capsize=4)
    ax.axhline(1 / weights.shape[1], color="grey", linestyle=":", label="uniform")
    ax.set_ylabel("softmax weight s_j")
    ax.set_title(f"{dataset['title']}: trainable mix (mean over {len(weights)} split(s))",
                 fontsize=9)
    ax.legend(fontsize=7)
    figure.tight_layout()
    _save(figure, path)


def _perplexity(dataset, path):
    import matplotlib.pyplot as plt

    figure, ax = plt.subplots(figsize=(5, 3.2))
    for i, split in enumerate(dataset["splits"]):
        history = split["bilm"]["history"]
        epochs = np.arange(1, len(history) + 1)
        color = f"C{i % 10}"
        ax.plot(epochs, [h["train_perplexity"] for h in history], color=color, linestyle="--",
                alpha=0.7)
        validation = [h["validation_perplexity"] for h in history]
        if all(v is not None for v in validation):
            ax.plot(epochs, validation, color=color, marker="o", label=split["name"])
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("perplexity (dashed: train, solid: validation)")
    ax.set_title(f"{dataset['title']}: biLM pretraining", fontsize=9)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=6)
    figure.tight_layout()
    _save(figure, path)


def draw_figures(results: dict, summary: dict, output: Path) -> dict:
    """Draw every figure the results allow; return ``{(dataset, kind): file name}``."""
    import matplotlib

    matplotlib.use("Agg", force=False)  # files only, never a window
    methods = results["settings"]["methods"]
    drawn = {}
    for key, dataset in results["datasets"].items():
        name = f"{key}_confusion.png"
        _confusion(dataset, summary[key], methods, output / name)
        drawn[(key, "confusion")] = name
        if "elmo-trainable" in methods:
            name = f"{key}_layer_weights.png"
            _layer_weights(dataset, output / name)
            drawn[(key, "layer_weights")] = name
        if "bilm" in dataset["splits"][0]:
            name = f"{key}_perplexity.png"
            _perplexity(dataset, output / name)
            drawn[(key, "perplexity")] = name
    return drawn
