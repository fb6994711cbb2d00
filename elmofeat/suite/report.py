"""Write a benchmark's results: ``results.json``, ``report.md`` and PNG figures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .._files import atomic_path
from .bilms import BILM_SOURCES
from .methods import METHODS, default_methods, learned_weight_rows
from .paired import TFIDF_ROWS, best_tfidf, has_row, paired_differences, tfidf_reference
from .targets import evaluate_targets
from .tasks import TASKS


def _write_text(path: Path, text: str) -> None:
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


def dataset_methods(results: dict, key: str) -> list[str]:
    """The run's methods that every split of dataset ``key`` has, in the run's order (a
    run may give a method some tasks only: ``BenchmarkSettings.only_on``)."""
    return [m for m in results["settings"]["methods"] if has_row(results["datasets"][key], m)]


def summarize(results: dict) -> dict:
    """Mean and std over splits of every score, per dataset and the methods it has."""
    summary = {}
    for key, dataset in results["datasets"].items():
        summary[key] = {}
        for method in dataset_methods(results, key):
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


def _mix_groups(methods) -> dict[str, list[str]]:
    """The rows of each group of mixes (``MethodSpec.mix_group``), in report order."""
    found: dict[str, list[str]] = {}
    for method in methods:
        if METHODS[method].mix_group is not None:
            found.setdefault(METHODS[method].mix_group, []).append(method)
    return found


def _reference_lines(reference, summary_of_dataset, methods) -> list[str]:
    """The run against a reference experiment's ranges (each for the rows its selector
    names, :meth:`Reference.rows`) and its order of the mixes."""
    lines = []
    for selector, (low, high) in reference.ranges.items():
        for method in reference.rows(selector, methods):
            accuracy = summary_of_dataset[method]["accuracy"]["mean"]
            where = "inside" if low <= accuracy <= high else ("below" if accuracy < low else "above")
            lines.append(f"- {METHODS[method].label}: {accuracy:.2%}, {where} the reference's "
                         f"{low:.1%}–{high:.1%}")
    for group in _mix_groups(methods).values():
        by_mix = {METHODS[m].mix: m for m in group}
        mixes = [by_mix[mix] for mix in reference.mix_order if mix in by_mix]
        if len(mixes) > 1:
            ours = sorted(mixes, key=lambda m: -summary_of_dataset[m]["accuracy"]["mean"])
            same = "the same as" if ours == mixes else "different from"
            name = METHODS[mixes[0]].label.split(",")[0]
            lines.append(f"- Order of the mixes ({name}): "
                         f"{' > '.join(METHODS[m].mix for m in ours)}, {same} the reference's "
                         f"{' > '.join(METHODS[m].mix for m in mixes)}")
    return lines


def markdown_table(header, rows) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _pm(stat, n_splits) -> str:
    return f"{stat['mean']:.4f} ± {stat['std']:.4f}" if n_splits > 1 else f"{stat['mean']:.4f}"


def _suite_tables(results: dict, summary: dict) -> list[str]:
    keys = list(results["datasets"])
    titles = [results["datasets"][k]["title"] for k in keys]
    # a row no task has whole (stopped in its first task's splits) has no line
    methods = [m for m in results["settings"]["methods"] if any(m in summary[k] for k in keys)]
    accuracy, seconds = [], []
    for m in methods:  # "—": a row the run does not give that task
        accuracy.append([METHODS[m].label, *[
            _pm(summary[k][m]["accuracy"], len(results["datasets"][k]["splits"]))
            if m in summary[k] else "—" for k in keys]])
        seconds.append([METHODS[m].label, *[f"{summary[k][m]['seconds']['mean']:.1f}"
                                            if m in summary[k] else "—" for k in keys]])
    bilm_rows = []
    for which, source in BILM_SOURCES.items():
        label = source.time_label
        if all(which in s.get("bilms", {}) for k in keys for s in results["datasets"][k]["splits"]):
            bilm_rows.append([label, *[
                f"{np.mean([s['bilms'][which]['seconds'] for s in results['datasets'][k]['splits']]):.1f}"
                for k in keys]])
    splits = ", ".join(f"{t}: {len(results['datasets'][k]['splits'])}" for k, t in zip(keys, titles))
    out = [markdown_table(["method", *titles], accuracy), "",
           f"Accuracy, mean ± std over splits ({splits}).", "",
           "Wall time per split (seconds, 2 CPU cores): fit on the training part and predict "
           "the test part; the biLMs of a split are pretrained once and shared by its ELMo "
           "rows (their pretraining is the last rows).", "",
           markdown_table(["method", *titles], seconds + bilm_rows)]
    predict = _predict_seconds(results, methods)
    if predict:
        sizes = ", ".join(
            f"{t}: {np.mean([s['test_size'] for s in results['datasets'][k]['splits']]):,.0f}"
            for k, t in zip(keys, titles))
        out += ["", "Seconds per split to predict the test part (its features, then the "
                f"classifier; test documents per split: {sizes}): what each row's "
                "`transform` costs a user.", "", markdown_table(["method", *titles], predict)]
    return out


def _predict_seconds(results: dict, methods) -> list[list[str]]:
    """Rows of mean test-part prediction seconds, for the methods whose every split
    recorded them (runs before they were recorded have none)."""
    rows = []
    for m in methods:
        values = [[s["methods"][m].get("predict_seconds") for s in d["splits"]]
                  if has_row(d, m) else None
                  for d in results["datasets"].values()]
        if all(v is not None for split_values in values if split_values is not None
               for v in split_values):
            rows.append([METHODS[m].label, *("—" if v is None else f"{np.mean(v):.1f}"
                                             for v in values)])
    return rows


def _targets_section(results: dict, summary: dict) -> list[str]:
    titles = {k: d["title"] for k, d in results["datasets"].items()}
    checks = evaluate_targets(summary, titles)
    if not checks:
        return []
    met = sum(c.met for c in checks)
    out = ["", "### Targets", "",
           f"{met} of {len(checks)} checks met. TF-IDF is "
           + ("the better of its two rows (C=1, C=10) on each task." if "tfidf-c10" in
              results["settings"]["methods"] else "its row, C chosen like every row's."),
           ""]
    for target in dict.fromkeys(c.target for c in checks):
        out.append(f"- **{target}**:")
        for c in (c for c in checks if c.target == target):
            out.append(f"  - {c.task}: {'✅' if c.met else '❌'} {c.detail}")
    return out


def paired_section(results: dict) -> list[str]:
    """The report's table of paired differences (Markdown lines)."""
    gaps = paired_differences(results)
    keys = [k for k in results["datasets"] if k in gaps]
    if not keys:
        return []
    methods = [m for m in results["settings"]["methods"] if m not in TFIDF_ROWS]
    rows = []
    for method in methods:
        cells = []
        for key in keys:
            gap = gaps[key].get(method)
            cells.append("" if gap is None else (
                f"{100 * gap['mean']:+.2f}" if gap["splits"] == 1 else
                f"{100 * gap['mean']:+.2f} ± {100 * gap['std']:.2f} ({gap['above']}/{gap['splits']})"))
        if any(cells):
            rows.append([METHODS[method].label, *cells])
    against = ", ".join(f"{results['datasets'][k]['title']}: "
                        f"{METHODS[best_tfidf(results['datasets'][k])].label}" for k in keys)
    return ["", "### Against TF-IDF, split by split", "",
            f"Accuracy minus that of {tfidf_reference(results)} on the same split, in points: "
            "mean ± std of the paired differences, and (in brackets) the splits on which the row is "
            f"above TF-IDF ({against}). A mean inside its spread is not a win.", "",
            markdown_table(["method", *(results["datasets"][k]["title"] for k in keys)], rows)]


def render_markdown(results: dict, summary: dict, figures: dict) -> str:
    settings = results["settings"]
    out = ["# elmofeat benchmark report", ""]
    if settings["quick"]:
        out += ["> **Quick smoke run.** Small slices of the data, the first of 2 folds, a "
                "64-wide biLM for 2 epochs: these numbers show that everything runs, not how the methods "
                "compare. Run `elmofeat benchmark` without `--quick` for evidence.", ""]
    out.append(f"Command: `{results.get('command', 'elmofeat benchmark')}`  ")
    env = results["environment"]
    added_runs = results.get("added_runs", [])
    own_seconds = results["wall_seconds"] - sum(a["wall_seconds"] for a in added_runs)
    out.append(f"Started {results['started']}; wall time {own_seconds / 60:.1f} min "
               + (f"({results['wall_seconds'] / 60:.1f} min with the runs joined below) "
                  if added_runs else f"(estimated {results['estimated_seconds'] / 60:.0f} min) ")
               + f"on {env['cpus']} CPUs; "
               f"elmofeat {env['elmofeat']}, torch {env['torch']}, scikit-learn "
               f"{env['scikit-learn']}, gensim {env['gensim']}.")
    for i, added in enumerate(added_runs):
        joined = _joined_methods(added, added_runs[i + 1:])
        out.append(f"Joined from a run of other methods on the same splits "
                   f"(`{added.get('command') or 'elmofeat benchmark'}`, started "
                   f"{added['started']}, {added['wall_seconds'] / 60:.1f} min, elmofeat "
                   f"{added['environment']['elmofeat']}): {joined}.")
    kept = results.get("kept_splits", 0)
    if kept:
        out.append(f"{kept} of its splits were kept from an earlier run with the same "
                   "settings (`--resume`): its wall time covers the others.")
    machines = split_machines(results)
    if len(machines) > 1:
        out.append(f"Its splits ran on {len(machines)} machines of one precision (`--resume "
                   "--any-machine`: their numbers differ by floating-point rounding, and "
                   "timings compare within one machine): " + "; ".join(
                       f"{cpu}: {', '.join(where)}" for cpu, where in machines.items()) + ".")
    if added_runs or kept:
        minutes = default_run_seconds(results) / 60
        out.append(f"The rows of a default run (`elmofeat benchmark` without `--methods`) and "
                   f"their biLMs took {minutes:.1f} min in all, as measured split by split"
                   + (" in these runs." if added_runs else "."))
    out.append("")
    out.append(
        "Every estimator runs with its library defaults and feeds "
        + (f"`{results['classifier']}`. ELMo: per " if "classifier" in results else
           "`LogisticRegression(max_iter=3000)` (C=1; the second TF-IDF row and the hybrid "
           "use C=10). ELMo: per ")
        + "training split one `BiLM()` (word embedding started from the split's own SVD "
        "vectors) and, for the \"+ GloVe\" rows, one `BiLM(pretrained_vectors=<GloVe 6B "
        "50d>)`, each shared by its mixes. The hybrid is `make_hybrid()` (TF-IDF "
        "and ELMo features side by side); its \"weight searched\" row chooses the ELMo "
        "block's weight (0, 0.05, 0.1, 0.2 or 0.35; 0 is TF-IDF alone) by `GridSearchCV` "
        "(stratified 3-fold, training documents only) on the split's pretrained biLM. "
        f"Seed {settings['seed']}."
        + (f" Overrides for this run: {_overrides(settings)}." if _overrides(settings) else ""))
    restricted: dict[tuple, list[str]] = {}  # one line per set of tasks
    for method, tasks in settings.get("only_on", {}).items():
        restricted.setdefault(tuple(tasks), []).append(method)
    for tasks, methods in restricted.items():
        labels = "; ".join(METHODS[m].label if m in METHODS else m for m in methods)
        names = ", ".join(results["datasets"][k]["title"] for k in tasks
                          if k in results["datasets"])
        out.append(f"\n{labels}: on {names} only (their cost; `--methods "
                   f"{' '.join(methods)}` runs them on every task)." if len(methods) > 1 else
                   f"\n{labels}: on {names} only (its row's cost; `--methods {methods[0]}` "
                   "runs it on every task).")
    for key, reason in results.get("skipped_methods", {}).items():
        label = METHODS[key].label if key in METHODS else key
        out.append(f"\nNot run: {label}: {reason}.")
    # a single split of a single task needs no suite tables, unless the run is the smoke
    # run, which shows every part of a report
    if settings["quick"] or sum(len(d["splits"]) for d in results["datasets"].values()) > 1:
        out += ["", "## The suite", ""]
        out += [f"- **{d['title']}** ({TASKS[k].description}): {d['protocol']}."
                for k, d in results["datasets"].items()]
        out += [""] + _suite_tables(results, summary)
        if "suite" in figures:
            out += ["", f"![Each row minus TF-IDF, by task]({figures['suite']})"]
        out += _targets_section(results, summary)
        out += paired_section(results)
    for key, dataset in results["datasets"].items():
        out += _dataset_section(key, dataset, summary[key], list(summary[key]), figures)
    return "\n".join(out) + "\n"


def split_machines(results: dict) -> dict[str, list[str]]:
    """``{cpu: ["AG News 5/5", ...]}``: which machine ran how many splits of each task (a
    split entry records its ``machine``; runs before it did: none)."""
    found: dict[str, dict[str, int]] = {}
    for dataset in results["datasets"].values():
        for split in dataset["splits"]:
            machine = split.get("machine")
            if isinstance(machine, dict):
                tasks = found.setdefault(str(machine.get("cpu")), {})
                tasks[dataset["title"]] = tasks.get(dataset["title"], 0) + 1
    counts = {d["title"]: len(d["splits"]) for d in results["datasets"].values()}
    return {cpu: [f"{title} {n}/{counts[title]}" for title, n in tasks.items()]
            for cpu, tasks in found.items()}


def default_run_seconds(results: dict) -> float:
    """The measured seconds of the rows (and the biLMs they need) that a run with the
    default methods has, summed over every split of the results."""
    from .settings import BenchmarkSettings

    default = BenchmarkSettings(datasets=[k for k in results["datasets"] if k in TASKS] or None)
    total = 0.0
    for key, dataset in results["datasets"].items():
        known = key in TASKS  # a task the registry lost keeps every default row
        methods = default.methods_for(key) if known else default_methods()
        bilms = default.bilms(key) if known else default.bilms()
        total += sum(sum(row["seconds"] for method, row in split["methods"].items()
                         if method in methods)
                     + sum(row["seconds"] for which, row in split.get("bilms", {}).items()
                           if which in bilms) for split in dataset["splits"])
    return float(total)


def _joined_methods(added: dict, later_runs: list) -> str:
    """The methods of one joined run, by the labels they had when it ran; rows a later
    run replaced are named so. Runs joined before labels were stored: the rows still
    shown take today's labels (as the tables do), replaced ones their method name."""
    stored = added.get("labels", {})
    replaced = {m for run in later_runs for m in run["methods"]}
    kept = [stored.get(m) or (METHODS[m].label if m in METHODS else m)
            for m in added["methods"] if m not in replaced]
    gone = [stored.get(m) or f"`{m}`" for m in added["methods"] if m in replaced]
    text = ", ".join(kept) if kept else "no rows left"
    return text + (f" (its rows of {', '.join(gone)} were replaced by a later run)" if gone else "")


def _overrides(settings) -> str:
    from .settings import BenchmarkSettings

    names = ("folds", *BenchmarkSettings.size_settings(), "bilm_dim", "bilm_epochs", "mix_epochs",
             "mix_cv", "skipgram_epochs")
    return ", ".join(f"{n}={settings[n]}" for n in names if settings.get(n) is not None)


def _chosen(params: dict) -> str:
    """``{"a__transformer_weights": {"elmo": 0.2}}`` -> ``"elmo weight 0.2"``."""
    parts = []
    for name, value in params.items():
        if name.endswith("transformer_weights"):
            parts += [f"{block} weight {weight:g}" for block, weight in value.items()]
        else:
            parts.append(f"{name.split('__')[-1]} {value}")
    return ", ".join(parts)


def _dataset_section(key, dataset, stats, methods, figures) -> list[str]:
    n_splits = len(dataset["splits"])
    out = ["", f"## {dataset['title']}", "", dataset["protocol"] + ".", ""]
    rows = [[METHODS[m].label, _pm(stats[m]["accuracy"], n_splits),
             _pm(stats[m]["macro_precision"], n_splits), _pm(stats[m]["macro_recall"], n_splits),
             _pm(stats[m]["macro_f1"], n_splits), f"{stats[m]['seconds']['mean']:.0f}"]
            for m in methods]
    unit = "mean ± std over splits" if n_splits > 1 else "one split"
    out.append(markdown_table(["method", f"accuracy ({unit})", "macro precision", "macro recall",
                               "macro F1", "seconds per split"], rows))
    for which, source in BILM_SOURCES.items():
        label = source.curve_label
        if label is None:  # a loaded model: no pretraining of its own to report
            continue
        bilms = [s["bilms"][which] for s in dataset["splits"] if which in s.get("bilms", {})]
        if bilms:
            perplexities = [b["history"][-1]["validation_perplexity"] for b in bilms]
            out += ["", f"biLM ({label}) pretraining: {np.mean([b['seconds'] for b in bilms]):.0f} s "
                    f"and {np.mean([b['epochs'] for b in bilms]):.1f} epochs per split; final "
                    f"validation perplexity {np.mean(perplexities):.1f} (mean over splits)."]
    out += ["", "**Ordering of the methods** (mean accuracy): " + _ordering(stats, methods)]
    for mixes in _mix_groups(methods).values():
        if len(mixes) > 1:
            out += ["", f"**Ordering of the mixes** ({METHODS[mixes[0]].label.split(',')[0]}): "
                    + _ordering(stats, mixes)]
        # Layer weights learned from labels (a learned scalar mix records them).
        trainable = learned_weight_rows(mixes, dataset)
        weights = [s["methods"][m]["layer_weights"] for s in dataset["splits"] for m in trainable]
        if weights:
            mean = np.mean(weights, axis=0)
            out += ["", f"Learned layer weights softmax(s)_j of the {METHODS[trainable[0]].label} "
                    "(token layer, LSTM 1, LSTM 2; mean over splits): "
                    + ", ".join(f"{w:.3f}" for w in mean)]
    for method in (m for m in methods if METHODS[m].grid is not None):
        chosen = [s["methods"][method]["best_params"] for s in dataset["splits"]]
        out += ["", f"Chosen by the {METHODS[method].label} row's search, split by split: "
                + "; ".join(_chosen(params) for params in chosen) + "."]
    reference = TASKS[key].reference if key in TASKS else None
    if reference is not None:
        lines = _reference_lines(reference, stats, methods)
        if lines:
            out += ["", f"**Against the reference** ({reference.note}; here "
                    f"{dataset['splits'][0]['train_size']:,} training documents "
                    "per split):", ""] + lines
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
                          ("Learned layer weights of the trainable mixes", "layer_weights"),
                          ("biLM perplexity per epoch", "perplexity")):
        if (key, name) in figures:
            out += ["", f"![{caption}, {dataset['title']}]({figures[(key, name)]})"]
    return out


def write_report(results: dict, output, figures=True) -> dict:
    """Write ``results.json``, ``report.md`` and (with matplotlib) the figures.

    Returns the paths written, by name. Files are replaced atomically: an interrupted
    write leaves the previous report as it was.

    Examples
    --------
    >>> import tempfile
    >>> from elmofeat.suite import BenchmarkSettings, run_benchmark, write_report
    >>> settings = BenchmarkSettings(datasets=("ag_news",), methods=("tfidf",), folds=2,
    ...                               sizes={"ag_news_documents": 100})
    >>> results = run_benchmark(settings, progress=False, log=lambda line: None)
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
        paths.update({(key if isinstance(key, str) else "_".join(key)): output / name
                      for key, name in drawn.items()})
    paths["results.json"] = output / "results.json"
    _write_text(paths["results.json"],
                      json.dumps({**results, "summary": summary}, indent=1))
    paths["report.md"] = output / "report.md"
    _write_text(paths["report.md"], render_markdown(results, summary, drawn))
    return paths
