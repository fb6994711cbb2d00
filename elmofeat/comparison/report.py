"""Write a comparison's results: ``results.json``, ``report.md`` and PNG figures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .._files import atomic_path
from .methods import METHODS

# Test accuracy of the reference experiment (AG News, 120k training sentences).
REFERENCE = {"svd": (0.83, 0.86), "skipgram": (0.85, 0.89), "elmo": (0.87, 0.905)}
REFERENCE_MIX_ORDER = ("elmo-mlp", "elmo-trainable", "elmo-frozen")


def _write_text(path: Path, text: str) -> None:
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


def summarize(results: dict) -> dict:
    """Mean and std over splits of every score, per dataset and method."""
    summary = {}
    for key, dataset in results["datasets"].items():
        summary[key] = {}
        for method in results["settings"]["methods"]:
            rows = [split["methods"][method] for split in dataset["splits"]]
            summary[key][method] = {
                name: {"mean": float(np.mean([r[name] for r in rows])),
                       "std": float(np.std([r[name] for r in rows]))}
                for name in ("accuracy", "macro_precision", "macro_recall", "macro_f1", "seconds")
            }
            per_class = {name: np.mean([r["per_class"][name] for r in rows], axis=0).tolist()
                         for name in ("precision", "recall", "f1")}
            summary[key][method]["per_class"] = per_class
            summary[key][method]["confusion_matrix"] = np.sum(
                [r["confusion_matrix"] for r in rows], axis=0).tolist()
    return summary


def _ordering(summary_of_dataset, methods) -> str:
    ranked = sorted(methods, key=lambda m: -summary_of_dataset[m]["accuracy"]["mean"])
    return " > ".join(f"{METHODS[m].label} ({summary_of_dataset[m]['accuracy']['mean']:.4f})"
                      for m in ranked)


def _reference_lines(summary_of_dataset, methods) -> list[str]:
    lines = []
    families = {"svd": ["svd"], "skipgram": ["skipgram"],
                "elmo": [m for m in methods if METHODS[m].family == "elmo"]}
    for family, (low, high) in REFERENCE.items():
        for method in families[family]:
            if method not in methods:
                continue
            accuracy = summary_of_dataset[method]["accuracy"]["mean"]
            where = "inside" if low <= accuracy <= high else ("below" if accuracy < low else "above")
            lines.append(f"- {METHODS[method].label}: {accuracy:.2%}, {where} the reference's "
                         f"{low:.1%}–{high:.1%}")
    mixes = [m for m in REFERENCE_MIX_ORDER if m in methods]
    if len(mixes) > 1:
        ours = sorted(mixes, key=lambda m: -summary_of_dataset[m]["accuracy"]["mean"])
        same = "the same as" if ours == list(mixes) else "different from"
        lines.append(f"- Order of the mixes: {' > '.join(m.split('-')[1] for m in ours)}, {same} "
                     f"the reference's {' > '.join(m.split('-')[1] for m in mixes)}")
    return lines


def markdown_table(header, rows) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _pm(stat, n_splits) -> str:
    return f"{stat['mean']:.4f} ± {stat['std']:.4f}" if n_splits > 1 else f"{stat['mean']:.4f}"


def render_markdown(results: dict, summary: dict, figures: dict) -> str:
    settings = results["settings"]
    methods = settings["methods"]
    out = ["# elmofeat benchmark report", ""]
    out.append(f"Command: `{results.get('command', 'elmofeat benchmark')}`  ")
    env = results["environment"]
    out.append(f"Started {results['started']}; wall time {results['wall_seconds'] / 60:.1f} min "
               f"(estimated {results['estimated_seconds'] / 60:.0f} min) on {env['cpus']} CPUs; "
               f"elmofeat {env['elmofeat']}, torch {env['torch']}, scikit-learn "
               f"{env['scikit-learn']}, gensim {env['gensim']}.")
    out.append("")
    glove = " initialised from GloVe 6B 50d" if settings["glove_init"] else ""
    out.append(
        f"Every method feeds the same `LogisticRegression(max_iter=3000)`. ELMo: one biLM per "
        f"training split (word token layer{glove}, embedding = hidden = {settings['bilm_dim']}, "
        f"2 LSTM layers per direction, at most {settings['bilm_epochs']} epochs), shared by the "
        f"three mixes; supervised mixes trained for {settings['mix_epochs']} epochs and "
        f"cross-fitted with {settings['mix_cv']} folds; mean pooling. Skip-gram: "
        f"{settings['skipgram_epochs']} epochs, min_count=2. Seed {settings['seed']}"
        + (" (**quick run**: reduced data and model)." if settings["quick"] else "."))
    for key, dataset in results["datasets"].items():
        stats = summary[key]
        n_splits = len(dataset["splits"])
        out += ["", f"## {dataset['title']}", "", dataset["protocol"] + ".", ""]
        rows = [[METHODS[m].label, _pm(stats[m]["accuracy"], n_splits),
                 _pm(stats[m]["macro_precision"], n_splits), _pm(stats[m]["macro_recall"], n_splits),
                 _pm(stats[m]["macro_f1"], n_splits), f"{stats[m]['seconds']['mean']:.0f}"]
                for m in methods]
        unit = "mean ± std over splits" if n_splits > 1 else "one split"
        out.append(markdown_table(["method", f"accuracy ({unit})", "macro precision", "macro recall",
                           "macro F1", "seconds per split"], rows))
        if "bilm" in dataset["splits"][0]:
            bilms = [s["bilm"] for s in dataset["splits"]]
            perplexities = [b["history"][-1]["validation_perplexity"] for b in bilms]
            out += ["", f"biLM pretraining: {np.mean([b['seconds'] for b in bilms]):.0f} s and "
                    f"{np.mean([b['epochs'] for b in bilms]):.1f} epochs per split; final validation "
                    f"perplexity {np.mean(perplexities):.1f} (mean over splits)."]
        out += ["", "**Ordering of the methods** (mean accuracy): " + _ordering(stats, methods)]
        mixes = [m for m in methods if METHODS[m].family == "elmo"]
        if len(mixes) > 1:
            out += ["", "**Ordering of the mixes**: " + _ordering(stats, mixes)]
        weights = [s["methods"]["elmo-trainable"]["layer_weights"] for s in dataset["splits"]
                   if "elmo-trainable" in s["methods"]]
        if weights:
            mean = np.mean(weights, axis=0)
            out += ["", "Learned layer weights of the trainable mix (token layer, LSTM 1, LSTM 2; "
                    "mean over splits): " + ", ".join(f"{w:.3f}" for w in mean)]
        if key == "ag_news":
            out += ["", "**Against the reference** (AG News test accuracy with 120k training "
                    f"sentences; here {dataset['splits'][0]['train_size']:,} training documents "
                    "per split):", ""]
            out += _reference_lines(stats, methods)
        out += ["", "Per-class precision / recall / F1 (mean over splits):", ""]
        header = ["class", *[METHODS[m].label for m in methods]]
        rows = []
        for c, name in enumerate(dataset["class_names"]):
            rows.append([name, *[
                "{:.2f} / {:.2f} / {:.2f}".format(*(stats[m]["per_class"][s][c]
                                                    for s in ("precision", "recall", "f1")))
                for m in methods]])
        out.append(markdown_table(header, rows))
        for caption, name in (("Confusion matrices (summed over splits)", "confusion"),
                              ("Learned layer weights of the trainable mix", "layer_weights"),
                              ("biLM perplexity per epoch", "perplexity")):
            if (key, name) in figures:
                out += ["", f"![{caption}, {dataset['title']}]({figures[(key, name)]})"]
    return "\n".join(out) + "\n"


def write_report(results: dict, output, figures=True) -> dict:
    """Write ``results.json``, ``report.md`` and (with matplotlib) the figures.

    Returns the paths written, by name. Files are replaced atomically: an interrupted
    write leaves the previous report as it was.

    Examples
    --------
    >>> import tempfile
    >>> from elmofeat.comparison import ComparisonSettings, run_comparison, write_report
    >>> settings = ComparisonSettings(datasets=("ag_news",), methods=("tfidf",), folds=2,
    ...                               ag_news_documents=100)
    >>> results = run_comparison(settings, progress=False, log=lambda line: None)
    >>> paths = write_report(results, tempfile.mkdtemp(), figures=False)
    >>> sorted(paths)
    ['report.md', 'results.json']
    """
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    summary = summarize(results)
    paths = {}
    drawn = {}
    if figures:
        from .figures import draw_figures

        drawn = draw_figures(results, summary, output)
        paths.update({f"{k}_{n}": output / f for (k, n), f in drawn.items()})
    paths["results.json"] = output / "results.json"
    _write_text(paths["results.json"],
                      json.dumps({**results, "summary": summary}, indent=1))
    paths["report.md"] = output / "report.md"
    _write_text(paths["report.md"], render_markdown(results, summary, drawn))
    return paths
