"""``elmofeat benchmark``: the suite report (see :mod:`elmofeat.suite`)."""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from pathlib import Path

from ._inputs import seed_argument
from ._outputs import check_output_folder


def default_output(quick: bool) -> str:
    """The report folder when ``--output`` names none (both are in the repository's
    ``.gitignore``: a run from a clone never writes into tracked files)."""
    return "elmofeat-report-quick" if quick else "elmofeat-report"


def add_arguments(parser) -> None:
    # The choices and their help come from the suite's registries (plain Python: --help
    # loads no estimator).
    from ..suite.methods import METHODS, default_methods, groups
    from ..suite.tasks import TASKS, CrossValidation

    datasets, defaults, aliases = TASKS.names(), default_methods(), groups()
    folds = ", ".join(f"{task.title} {task.protocol.folds}" for task in TASKS.values()
                      if isinstance(task.protocol, CrossValidation))

    parser.add_argument("-o", "--output", default=None,
                        help="report folder (default: ./elmofeat-report, with --quick "
                        "./elmofeat-report-quick); a folder that holds files this command "
                        "did not write, or the report of a run with other settings, is "
                        "refused unless --force")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run (small slices, 2 folds, a small biLM; its report "
                        "gives its wall time): its numbers are not evidence")
    parser.add_argument("--force", action="store_true",
                        help="write over the report of a run with other settings in --output")
    parser.add_argument("--folds", type=int, help="folds of every cross-validated dataset "
                        f"(default: {folds}; quick: 2)")
    in_suite = [key for key, task in TASKS.items() if task.default]
    others = [key for key in datasets if key not in in_suite]
    parser.add_argument("--datasets", nargs="+", choices=datasets, metavar="NAME",
                        help=(f"datasets to run: {', '.join(others)} when named; " if others
                              else "datasets to run (") + f"default: {', '.join(in_suite)}"
                        + ("" if others else ")"))
    parser.add_argument("--methods", nargs="+", metavar="NAME", choices=[*METHODS, *aliases],
                        help=f"methods to run (default: {', '.join(defaults)}; the "
                        f"others: {', '.join(m for m in METHODS if m not in defaults)}; "
                        f"{', '.join(aliases)} select groups)")
    parser.add_argument("--bilm-epochs", type=int, help="most biLM pretraining epochs "
                        "(default: BiLM's default; quick: 2)")
    parser.add_argument("--seed", type=seed_argument, default=0, help="random seed (default: 0)")
    parser.add_argument("--data-home", help="dataset folder (default: $ELMOFEAT_DATA or "
                        "~/elmofeat_data); GloVe is read from <data-home>/glove/")
    parser.add_argument("--resume", action="store_true",
                        help="keep the splits that an earlier run with the same settings "
                        "finished on this machine (each finished split is saved under "
                        "<output>/splits/)")
    parser.add_argument("--any-machine", action="store_true",
                        help="with --resume, also keep splits another machine finished in "
                        "the same precision (bf16 training or not, same device kind): a run "
                        "longer than one machine's lease; the report names each machine")
    parser.add_argument("--add-to", metavar="REPORT",
                        help="run only --methods and join them into the report folder REPORT "
                        "(its results.json must have the same settings and splits); the "
                        "report is written again there")
    parser.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def settings_from(args):
    from ..suite import BenchmarkSettings

    changes = {"seed": args.seed}
    if args.folds is not None:
        changes["folds"] = args.folds
    if args.datasets:
        changes["datasets"] = tuple(args.datasets)
    if args.methods:
        # methods named on the command line run on every task of the run
        changes["methods"] = tuple(args.methods)
    if args.bilm_epochs is not None:
        changes["bilm_epochs"] = args.bilm_epochs
    base = BenchmarkSettings.quick_run() if args.quick else BenchmarkSettings()
    return replace(base, **changes)


def check_joinable(saved: dict, settings) -> None:
    """Refuse, before anything runs, to join rows run with other settings than the
    report's (only the methods may differ)."""
    import json

    ours = json.loads(json.dumps(settings.to_dict()))
    # the rows (methods, and the tasks some of them run on) are what a joined run adds
    changed = sorted(k for k in saved.keys() | ours.keys()
                     if k not in ("methods", "only_on") and saved.get(k) != ours.get(k))
    if changed:
        raise ValueError(f"--add-to: the report was run with other settings ({', '.join(changed)} "
                         "differ): give the options it was run with")


def refuse_other_report(output: Path, settings) -> None:
    """A report folder holding a run with other settings (a full run's, under a quick
    run) is not written over without ``--force``: its report, results and figures would
    be replaced, its split files mixed with the new ones."""
    import json

    try:
        saved = json.loads((output / "results.json").read_text(encoding="utf-8"))["settings"]
    except (OSError, ValueError, KeyError, TypeError):
        return  # no report there (or none that can be read)
    ours = json.loads(json.dumps(settings.to_dict()))
    changed = sorted(k for k in saved.keys() | ours.keys() if saved.get(k) != ours.get(k))
    if changed:
        kind = "quick" if saved.get("quick") else "full"
        raise FileExistsError(
            f"--output {output} holds the report of a {kind} run with other settings "
            f"({', '.join(changed)} differ): this run would replace its report, results and "
            "figures. Choose another --output (a quick run's default is "
            "./elmofeat-report-quick), or pass --force to write over it")


# What a report folder holds when this command wrote it: these names only, each checked
# by content where it can be (an allow-list: anything else is a user's file).
_REPORT_HEADER = "# elmofeat benchmark report"
_FIGURE = re.compile(r"(suite_accuracy|[a-z0-9_]+_(confusion|layer_weights|perplexity))\.png")


def _foreign(path: Path) -> str | None:
    """Why ``path`` (an entry of a report folder) is not this command's, or None."""
    import json

    name = path.name
    if name == "splits" and path.is_dir() and not path.is_symlink():
        for entry in path.rglob("*"):
            if entry.is_symlink() or (entry.is_file() and entry.suffix != ".json"):
                return f"{entry} is not a finished split"
        return None
    if not path.is_file() or path.is_symlink():
        return f"{name} is not a file this command writes"
    if name == "report.md":
        with open(path, encoding="utf-8", errors="replace") as handle:
            if handle.readline().rstrip("\n") != _REPORT_HEADER:
                return "report.md is not an elmofeat report"
        return None
    if name == "results.json":
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return "results.json is not an elmofeat report's results"
        if not (isinstance(saved, dict) and isinstance(saved.get("settings"), dict)):
            return "results.json is not an elmofeat report's results"
        return None
    if _FIGURE.fullmatch(name):
        return None
    return f"{name} is not a file this command writes"


def refuse_foreign_files(output: Path, option: str = "--output") -> None:
    """A folder that holds files this command did not write (a user's own report.md, a
    data set) is not written into without ``--force``: the command writes report.md,
    results.json, figures and splits/ there, replacing files of those names."""
    if not output.is_dir():
        return
    reasons = [reason for entry in sorted(output.iterdir())
               if (reason := _foreign(entry)) is not None]
    if reasons:
        shown = "; ".join(reasons[:3]) + ("; ..." if len(reasons) > 3 else "")
        raise FileExistsError(
            f"{option} {output} holds files this command did not write ({shown}): it "
            "writes report.md, results.json, its figures and splits/ there and would "
            "replace or mix with them. Choose a new or empty folder, or pass --force to "
            "write there anyway")


def refuse_missing_data(settings, data_home) -> None:
    """Before anything runs: the data the settings read, all of it in the data home, or
    one line that says which command fetches what is missing."""
    from ..datasets import dataset_names, get_data_home, missing_datasets

    needed = [key for key in settings.datasets if key in dataset_names()]
    needed += ["glove-50d"] if settings.uses_glove else []
    missing = missing_datasets(needed, data_home)
    if missing:
        home = get_data_home(data_home)
        raise FileNotFoundError(
            f"missing from the data home {home}: {', '.join(missing)}; fetch them with: "
            f"elmofeat download {' '.join(missing)}"
            + (f" --data-home {shlex.quote(str(data_home))}" if data_home is not None else ""))


def run(args) -> int:
    from ..suite import run_benchmark, write_report

    settings = settings_from(args)
    if args.any_machine and not args.resume:
        raise ValueError("--any-machine says which finished splits --resume keeps: pass "
                         "--resume too")
    if args.output is None:
        args.output = default_output(args.quick)
    output = Path(args.output)
    if args.add_to is None:
        check_output_folder(output, what="the report")
        if not args.force:
            refuse_foreign_files(output)
            refuse_other_report(output, settings)
    if not args.no_figures:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise ValueError("the figures need matplotlib: pip install 'elmofeat[plot]', "
                             "or pass --no-figures") from None
    base = None
    if args.add_to is not None:
        import json

        from ..suite.run import merge_results

        source = Path(args.add_to) / "results.json"
        if not source.is_file():
            raise FileNotFoundError(f"--add-to: no results.json in {args.add_to}")
        output = Path(args.add_to)
        try:
            base = json.loads(source.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ValueError(f"--add-to: {source} is not a report's results (not JSON: "
                             f"{exc})") from None
        if not (isinstance(base, dict) and isinstance(base.get("settings"), dict)
                and isinstance(base.get("datasets"), dict)):
            raise ValueError(f"--add-to: {source} is not a report's results (no settings "
                             "and datasets): give the folder of an elmofeat benchmark report")
        base.pop("summary", None)
        if not args.force:
            refuse_foreign_files(output, option="--add-to")
        check_output_folder(output, what="the report")
        check_joinable(base["settings"], settings)
    refuse_missing_data(settings, args.data_home)
    splits = output / "splits" / ("added" if base is not None else "")
    results = run_benchmark(settings, data_home=args.data_home, progress=not args.no_progress,
                             splits_dir=splits, resume=args.resume,
                             any_machine=args.any_machine)
    results["command"] = "elmofeat " + shlex.join(args.argv)
    if base is not None:
        results = merge_results(base, results)
    paths = write_report(results, output, figures=not args.no_figures)
    print(f"report written to {paths['report.md']} ({results['wall_seconds'] / 60:.1f} min)")
    return 0
