"""PNG figures of a benchmark run: accuracy by method and task, confusion matrices,
layer weights, biLM perplexity."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._files import atomic_path
from .bilms import BILM_SOURCES
from .methods import METHODS, learned_weight_rows


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
    size = 1.4 + 0.5 * len(names)
    figure, axes = plt.subplots(rows, columns, figsize=(size * columns, size * rows + 0.6),
                                squeeze=False)
    for ax in axes.flat[len(methods):]:
        ax.axis("off")
    for index, (ax, method) in enumerate(zip(axes.flat, methods)):
        counts = np.asarray(summary[method]["confusion_matrix"], dtype=float)
        shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
        ax.imshow(shares, cmap="Blues", vmin=0, vmax=1)
        if len(names) <= 8:
            for i in range(len(names)):
                for j in range(len(names)):
                    ax.text(j, i, f"{shares[i, j]:.2f}", ha="center", va="center", fontsize=7,
                            color="white" if shares[i, j] > 0.6 else "black")
        row, column = divmod(index, columns)
        ax.set_xticks(range(len(names)), names if row == rows - 1 or index + columns >= len(methods)
                      else [""] * len(names), rotation=60, ha="right", fontsize=7)
        ax.set_yticks(range(len(names)), [f"{n} ({int(c)})" for n, c in zip(names, counts.sum(1))]
                      if column == 0 else [""] * len(names), fontsize=7)
        accuracy = summary[method]["accuracy"]["mean"]
        ax.set_title(f"{METHODS[method].label}\naccuracy {accuracy:.3f}", fontsize=8)
    figure.supxlabel("predicted class", fontsize=8)
    figure.supylabel("true class (documents)", fontsize=8)
    figure.suptitle(f"{dataset['title']}: confusion matrices (row shares, summed over splits)",
                    fontsize=9)
    figure.tight_layout()
    _save(figure, path)


_FAMILY_COLORS = {"anchor": "tab:gray", "svd": "tab:blue", "skipgram": "tab:cyan",
                  "elmo": "tab:orange", "elmo-glove": "tab:red", "hybrid": "tab:green",
                  "ablation": "tab:brown"}


def _suite(results, summary, path):
    """One panel per task: each method's mean accuracy with its std over splits."""
    import matplotlib.pyplot as plt

    keys = list(results["datasets"])
    methods = results["settings"]["methods"]
    figure, axes = plt.subplots(1, len(keys), figsize=(3.0 * len(keys) + 2.2, 0.32 * len(methods) + 1.4),
                                sharey=True, squeeze=False)
    positions = np.arange(len(methods))[::-1]
    for ax, key in zip(axes[0], keys):
        here = [i for i, m in enumerate(methods) if m in summary[key]]  # rows the task has
        means = np.array([summary[key][methods[i]]["accuracy"]["mean"] for i in here])
        stds = np.array([summary[key][methods[i]]["accuracy"]["std"] for i in here])
        colors = [_FAMILY_COLORS.get(METHODS[methods[i]].family, "black") for i in here]
        ax.barh(positions[here], means - means.min() + 0.02, left=means.min() - 0.02,
                color=colors, alpha=0.35, height=0.7)
        ax.errorbar(means, positions[here], xerr=stds, fmt="o", color="black", markersize=3,
                    capsize=2, linewidth=0.8)
        tfidf = [summary[key][m]["accuracy"]["mean"] for m in ("tfidf", "tfidf-c10")
                 if m in summary[key]]
        if tfidf:
            ax.axvline(max(tfidf), color="tab:gray", linestyle=":", linewidth=1)
        n = len(results["datasets"][key]["splits"])
        ax.set_title(f"{results['datasets'][key]['title']} ({n} split{'s' * (n > 1)})", fontsize=9)
        ax.set_xlabel("accuracy", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(positions, [METHODS[m].label for m in methods], fontsize=8)
    figure.suptitle("Accuracy by method and task (mean ± std over splits; dotted: best TF-IDF)",
                    fontsize=9)
    figure.tight_layout()
    _save(figure, path)


def _layer_weights(dataset, mixes, path):
    import matplotlib.pyplot as plt

    figure, ax = plt.subplots(figsize=(4.8, 3))
    width = 0.8 / len(mixes)
    for i, mix in enumerate(mixes):
        weights = np.asarray([s["methods"][mix]["layer_weights"] for s in dataset["splits"]
                              if mix in s["methods"]])
        x = np.arange(weights.shape[1]) + (i - (len(mixes) - 1) / 2) * width
        ax.bar(x, weights.mean(axis=0), width, yerr=weights.std(axis=0) if len(weights) > 1 else None,
               capsize=3, label=METHODS[mix].label.split(",")[0],
               color=_FAMILY_COLORS.get(METHODS[mix].family, "black"))
    n_layers = weights.shape[1]
    ax.set_xticks(range(n_layers), ["token layer", *[f"LSTM {i}" for i in range(1, n_layers)]])
    ax.axhline(1 / n_layers, color="grey", linestyle=":", label="uniform")
    ax.set_ylabel("layer weight softmax(s)_j")
    ax.set_title(f"{dataset['title']}: trainable mix weights (mean over splits)", fontsize=9)
    ax.legend(fontsize=7)
    figure.tight_layout()
    _save(figure, path)


def _perplexity(dataset, path):
    import matplotlib.pyplot as plt
    from matplotlib.ticker import LogLocator, ScalarFormatter

    from matplotlib.lines import Line2D

    figure, ax = plt.subplots(figsize=(5.4, 3.3))
    styles = {which: (source.linestyle, source.curve_label)
              for which, source in BILM_SOURCES.items() if source.curve_label is not None}
    # One colour per split, one line style per biLM; the legend names the styles and how
    # many splits each has, since ten split labels would hide the curves.
    handles = []
    for which, (linestyle, label) in styles.items():
        n_drawn = 0
        for i, split in enumerate(dataset["splits"]):
            if which not in split.get("bilms", {}):
                continue
            history = split["bilms"][which]["history"]
            validation = [h["validation_perplexity"] for h in history]
            if all(v is not None for v in validation):
                ax.plot(np.arange(1, len(history) + 1), validation, color=f"C{i % 10}",
                        linestyle=linestyle, marker="o", markersize=3)
                n_drawn += 1
        if n_drawn:
            handles.append(Line2D([], [], color="black", linestyle=linestyle,
                                  label=f"{label}, {n_drawn} split{'s' * (n_drawn > 1)}"))
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(ScalarFormatter())
    ax.set_xlabel("epoch")
    ax.set_ylabel("validation perplexity")
    ax.set_title(f"{dataset['title']}: biLM pretraining (solid: defaults, dashed: GloVe start)",
                 fontsize=8)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(handles=handles, fontsize=6, loc="upper right", title="colour: split",
              title_fontsize=6, handlelength=3)
    figure.tight_layout()
    _save(figure, path)


def draw_figures(results: dict, summary: dict, output: Path) -> dict:
    """Draw every figure the results allow; return ``{name or (dataset, kind): file name}``."""
    import matplotlib

    matplotlib.use("Agg", force=False)  # files only, never a window
    methods = results["settings"]["methods"]
    drawn = {}
    _suite(results, summary, output / "suite_accuracy.png")
    drawn["suite"] = "suite_accuracy.png"
    for key, dataset in results["datasets"].items():
        name = f"{key}_confusion.png"
        _confusion(dataset, summary[key], list(summary[key]), output / name)
        drawn[(key, "confusion")] = name
        learned = learned_weight_rows(methods, dataset)
        if learned:
            name = f"{key}_layer_weights.png"
            _layer_weights(dataset, learned, output / name)
            drawn[(key, "layer_weights")] = name
        if dataset["splits"][0].get("bilms"):
            name = f"{key}_perplexity.png"
            _perplexity(dataset, output / name)
            drawn[(key, "perplexity")] = name
    return drawn
