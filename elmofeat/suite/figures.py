"""PNG figures of a benchmark run: each row's difference from TF-IDF by task, confusion
matrices, layer weights, biLM perplexity."""

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


#: Above this many classes a grid's cells are too small for two-decimal shares: they get
#: whole percents, and only where the share is large enough to matter.
_FULL_NUMBERS_UP_TO = 8


def _cell_labels(ax, shares) -> None:
    n = len(shares)
    many = n > _FULL_NUMBERS_UP_TO
    for i in range(n):
        for j in range(n):
            if many and shares[i, j] < 0.05:
                continue  # a blank cell reads as "about none"; a 20 x 20 grid of 0.00 does not
            text = f"{100 * shares[i, j]:.0f}" if many else f"{shares[i, j]:.2f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=5 if many else 7,
                    color="white" if shares[i, j] > 0.6 else "black")


#: The largest side of a confusion grid, in inches (under 2,000 pixels at the figures' dpi).
_MAX_INCHES = 1990 / 110


def _confusion(dataset, summary, methods, path):
    import textwrap

    import matplotlib.pyplot as plt

    names = dataset["class_names"]
    many = len(names) > _FULL_NUMBERS_UP_TO
    columns = min(len(methods), 3 if many else 4)
    rows = -(-len(methods) // columns)
    # a panel's side grows with the classes up to a cap, so that a 20-class grid stays a
    # readable page rather than thousands of pixels a side
    size = min(1.4 + 0.5 * len(names), 5.5)
    # and the whole grid within _MAX_INCHES a side, however many rows the run has
    size = min(size, _MAX_INCHES / columns, (_MAX_INCHES - 0.8) / rows - 0.5)
    figure, axes = plt.subplots(rows, columns, figsize=(size * columns, (size + 0.5) * rows + 0.8),
                                squeeze=False)
    for ax in axes.flat[len(methods):]:
        ax.axis("off")
    label_size = 5 if many else 7
    for index, (ax, method) in enumerate(zip(axes.flat, methods)):
        counts = np.asarray(summary[method]["confusion_matrix"], dtype=float)
        shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
        ax.imshow(shares, cmap="Blues", vmin=0, vmax=1)
        _cell_labels(ax, shares)
        row, column = divmod(index, columns)
        ax.set_xticks(range(len(names)), names if row == rows - 1 or index + columns >= len(methods)
                      else [""] * len(names), rotation=60, ha="right", fontsize=label_size)
        ax.set_yticks(range(len(names)), [f"{n} ({int(c)})" for n, c in zip(names, counts.sum(1))]
                      if column == 0 else [""] * len(names), fontsize=label_size)
        accuracy = summary[method]["accuracy"]["mean"]
        # wrapped to the panel's width, so that neighbouring titles never overlap
        title = textwrap.fill(METHODS[method].label, width=max(int(size * 9), 18))
        ax.set_title(f"{title}\naccuracy {accuracy:.3f}", fontsize=7)
    figure.supxlabel("predicted class", fontsize=8)
    figure.supylabel("true class (documents)", fontsize=8)
    figure.suptitle(f"{dataset['title']}: confusion matrices (row shares"
                    + (", in percent, shown from 5" if many else "") + "; summed over splits)",
                    fontsize=9)
    # room above the panels for the title (tight_layout leaves none for a suptitle)
    figure.tight_layout(rect=(0, 0, 1, 1 - 0.5 / figure.get_figheight()))
    _save(figure, path)


_FAMILY_COLORS = {"anchor": "tab:gray", "svd": "tab:blue", "skipgram": "tab:cyan",
                  "elmo": "tab:orange", "elmo-glove": "tab:red", "hybrid": "tab:green",
                  "ablation": "tab:brown", "general": "tab:purple"}
_FAMILY_NAMES = {"anchor": "anchors (GloVe, MiniLM)", "svd": "SVD", "skipgram": "skip-gram",
                 "elmo": "ELMo", "elmo-glove": "ELMo + GloVe", "hybrid": "TF-IDF + ELMo",
                 "ablation": "ablations", "general": "the shipped biLM"}


def _suite(results, summary, path):
    """The headline: each row's paired difference from the task's TF-IDF row, in points
    (mean ± std over splits), every task on one common scale; dots and intervals, coloured
    by family, with a legend."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from .paired import paired_differences

    gaps = paired_differences(results)
    keys = [k for k in results["datasets"] if gaps.get(k)]
    methods = [m for m in results["settings"]["methods"] if any(m in gaps[k] for k in keys)]
    if not keys or not methods:
        return False
    values = [100 * (g["mean"] + sign * g["std"]) for k in keys for g in gaps[k].values()
              for sign in (-1, 1)]
    low, high = min(min(values), 0), max(max(values), 0)
    margin = 0.05 * (high - low or 1)
    figure, axes = plt.subplots(1, len(keys), figsize=(2.6 * len(keys) + 2.6, 0.3 * len(methods) + 1.6),
                                sharey=True, sharex=True, squeeze=False)
    positions = np.arange(len(methods))[::-1]
    families = []
    for ax, key in zip(axes[0], keys):
        for position, method in zip(positions, methods):
            gap = gaps[key].get(method)
            if gap is None:
                continue
            family = METHODS[method].family
            families += [family] if family not in families else []
            ax.errorbar(100 * gap["mean"], position, xerr=100 * gap["std"] if gap["splits"] > 1 else None,
                        fmt="o", color=_FAMILY_COLORS.get(family, "black"), markersize=4,
                        capsize=2, linewidth=1)
        ax.axvline(0, color="black", linewidth=0.8)
        n = len(results["datasets"][key]["splits"])
        ax.set_title(f"{results['datasets'][key]['title']}\n({n} split{'s' * (n > 1)})", fontsize=8)
        ax.set_xlabel("points from TF-IDF", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(axis="x", alpha=0.3)
        ax.set_xlim(low - margin, high + margin)
    axes[0][0].set_yticks(positions, [METHODS[m].label for m in methods], fontsize=7)
    handles = [Line2D([], [], marker="o", linestyle="", color=_FAMILY_COLORS.get(f, "black"),
                      label=_FAMILY_NAMES.get(f, f)) for f in families]
    figure.legend(handles=handles, loc="lower center", ncol=min(len(handles), 4), fontsize=7,
                  frameon=False, bbox_to_anchor=(0.5, -0.02))
    figure.suptitle("Accuracy minus the better TF-IDF row, split by split (points; dot: mean, "
                    "bar: std over splits; 0: TF-IDF)", fontsize=9)
    figure.tight_layout(rect=(0, 0.05, 1, 1))
    _save(figure, path)
    return True


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
    # the legend names each line style drawn; the title promises none
    ax.set_title(f"{dataset['title']}: biLM pretraining", fontsize=8)
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
    if _suite(results, summary, output / "suite_accuracy.png"):
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
