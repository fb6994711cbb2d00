"""The task suite behind ``elmofeat benchmark`` (elmofeat.suite): scores, reproducibility, the report."""

import json
from pathlib import Path

import numpy as np
import pytest

from elmofeat.cli import main
from elmofeat.suite import BenchmarkSettings, run_benchmark, write_report
from elmofeat.mixes import DEFAULT_LAYER_MIX, mix_names
from elmofeat.suite.bilms import GENERAL_MODEL
from elmofeat.suite.methods import METHODS, default_methods
from elmofeat.suite.methods import HYBRID_WEIGHTS
from elmofeat.suite.report import render_markdown, summarize

# Two tasks of the suite, small enough for CI; every method, those the default leaves
# out included (SVD's 300 components need a vocabulary of 300 words, which these
# slices have).
TINY = dict(datasets=("ag_news", "cr"), methods=METHODS.names(), folds=2,
            sizes={"ag_news_documents": 400, "cr_documents": 600}, bilm_dim=16, bilm_epochs=1,
            mix_epochs=1, mix_cv=2, finetune_epochs=1, search_cv=2)


@pytest.fixture(scope="module")
def results(data_home):
    settings = BenchmarkSettings(**TINY)
    return run_benchmark(settings, data_home=data_home, progress=False, log=lambda line: None)


def test_every_split_scores_every_method(results):
    assert list(results["datasets"]) == ["ag_news", "cr"]
    ag = results["datasets"]["ag_news"]
    assert [s["name"] for s in ag["splits"]] == ["fold 1/2", "fold 2/2"]
    assert sum(s["test_size"] for s in ag["splits"]) == 400
    for dataset in results["datasets"].values():
        n_classes = len(dataset["class_names"])
        for split in dataset["splits"]:
            assert list(split["methods"]) == list(results["settings"]["methods"])
            assert set(split["bilms"]) == {"default", "glove", "general", "adapted"}
            for which in ("default", "glove"):  # pretrained on the split, as told
                assert split["bilms"][which]["epochs"] == 1
            # the shipped model is loaded as it is; its adaptation adds one epoch
            assert split["bilms"]["adapted"]["epochs"] == split["bilms"]["general"]["epochs"] + 1
            for bilm in split["bilms"].values():
                assert bilm["history"]
            assert split["bilms"]["glove"]["pretrained_coverage"]["found"] > 100
            for row in split["methods"].values():
                matrix = np.asarray(row["confusion_matrix"])
                assert matrix.shape == (n_classes, n_classes)
                assert matrix.sum() == split["test_size"]
                assert row["accuracy"] == pytest.approx(np.trace(matrix) / matrix.sum())
                assert row["macro_f1"] == pytest.approx(np.mean(row["per_class"]["f1"]))
                assert row["per_class"]["support"] == matrix.sum(axis=1).tolist()
            for mix in ("elmo-trainable", "elmo-glove-trainable"):
                weights = split["methods"][mix]["layer_weights"]
                assert len(weights) == 3 and sum(weights) == pytest.approx(1, abs=1e-5)
            chosen = split["methods"]["hybrid-search"]["best_params"]
            assert chosen["featureunion__transformer_weights"]["elmo"] in HYBRID_WEIGHTS


def test_the_default_run_leaves_out_the_ablations_and_the_glove_started_elmo_rows():
    assert BenchmarkSettings().run_methods == default_methods()
    assert "elmo-frozen" in default_methods() and "elmo-mlp" in default_methods()
    # the general model: its default mix, fine-tuned, and its hybrid; its other mixes and
    # the adapted row on request
    assert {f"general-{DEFAULT_LAYER_MIX}", "general-finetuned", "general-hybrid",
            "general-stacked"} <= set(default_methods())
    other_mixes = {f"general-{mix}" for mix in mix_names()} - {f"general-{DEFAULT_LAYER_MIX}"}
    assert other_mixes and not other_mixes & set(default_methods())
    assert other_mixes <= set(BenchmarkSettings(methods=("general",)).run_methods)
    left_out = set(METHODS.names()) - set(default_methods()) - other_mixes
    assert left_out and all(m.startswith("elmo-glove") or m.endswith(("-unscaled", "-search"))
                            or m in ("tfidf-c10", "general-adapted")
                            for m in left_out)
    # the general rows name the shipped model they read
    assert all(GENERAL_MODEL in METHODS[m].label for m in METHODS.names()
               if METHODS[m].bilm in ("general", "adapted"))
    assert "minilm" in default_methods() and "tfidf" in default_methods()
    assert {"hybrid-search", "general-hybrid-search"} <= left_out
    assert BenchmarkSettings().bilms() == ("default", "general")


def test_the_reproduction_runs_on_ag_news_alone_and_only_there_pretrains_a_biLM():
    """Issue 70: SVD, skip-gram, the split's own biLM with its mixes and its hybrid (the
    experiment elmofeat grew from) run by default on AG News only; a task without them
    pretrains no biLM of its own. --methods runs them everywhere."""
    reproduction = {"svd", "skipgram", "hybrid", *(f"elmo-{mix}" for mix in mix_names())}
    settings = BenchmarkSettings()
    assert reproduction <= set(settings.methods_for("ag_news"))
    assert settings.bilms("ag_news") == ("default", "general")
    for task in ("r8", "cr", "mpqa", "20ng"):
        assert not reproduction & set(settings.methods_for(task))
        assert {"tfidf", "minilm", "general-finetuned"} <= set(settings.methods_for(task))
        assert settings.bilms(task) == ("general",)
    named = BenchmarkSettings(methods=("svd", "elmo", "tfidf"))
    assert set(named.methods_for("cr")) == set(named.methods_for("ag_news"))
    assert named.bilms("cr") == ("default",)


def test_every_row_chooses_C_by_inner_cross_validation_unless_it_fixes_it(results):
    from elmofeat.suite.methods import CLASSIFIER, PENALTIES

    assert results["classifier"] == CLASSIFIER and results["skipped_methods"] == {}
    for dataset in results["datasets"].values():
        for split in dataset["splits"]:
            for key, row in split["methods"].items():
                if METHODS[key].C is None and METHODS[key].grid is None:
                    assert row["C"] in PENALTIES
                else:
                    assert "C" not in row
                assert 0 < row["predict_seconds"] < row["seconds"]
    assert METHODS["tfidf-c10"].C == 10 and METHODS["tfidf"].C is None
    report = render_markdown(results, summarize(results), {})
    assert CLASSIFIER in report and "Seconds per split to predict the test part" in report


def test_the_classifier_searches_C_on_the_training_split_only():
    from sklearn.linear_model import LogisticRegression, LogisticRegressionCV

    from elmofeat.suite.methods import PENALTIES, Context, make_model

    context = Context(seed=3, settings=BenchmarkSettings())
    searched = make_model(METHODS["tfidf"], context)[-1]
    assert isinstance(searched, LogisticRegressionCV)
    assert searched.Cs == list(PENALTIES) and searched.cv.n_splits == 3
    assert searched.cv.shuffle and searched.cv.random_state == 3
    fixed = make_model(METHODS["tfidf-c10"], context)[-1]
    assert type(fixed) is LogisticRegression and fixed.C == 10
    # it refits on the whole training split with the C it chose
    rng = np.random.RandomState(0)
    X = rng.randn(300, 50)
    y = (X[:, :20].sum(axis=1) > 0).astype(int)
    chosen = float(np.ravel(searched.fit(X, y).C_)[0])
    assert chosen in PENALTIES
    refit = LogisticRegression(C=chosen, max_iter=3000).fit(X, y)
    np.testing.assert_allclose(searched.coef_, refit.coef_, atol=2e-3)  # solver tolerance


def test_a_row_whose_optional_extra_is_missing_is_skipped_and_said(data_home):
    from dataclasses import replace

    original = METHODS["minilm"]
    METHODS.register(replace(original, requires=("elmofeat_no_such_module",)), replace=True)
    lines = []
    small = dict(datasets=("cr",), folds=2, sizes={"cr_documents": 200})
    try:
        ran = run_benchmark(BenchmarkSettings(methods=("tfidf", "minilm"), **small),
                            data_home=data_home, progress=False, log=lines.append)
        with pytest.raises(ValueError, match="no method can run: all-MiniLM-L6-v2 .* needs "
                                             "elmofeat_no_such_module"):
            run_benchmark(BenchmarkSettings(methods=("minilm",), **small),
                          data_home=data_home, progress=False, log=lines.append)
    finally:
        METHODS.register(original, replace=True)
    assert ran["settings"]["methods"] == ["tfidf"]
    assert list(ran["datasets"]["cr"]["splits"][0]["methods"]) == ["tfidf"]
    assert "elmofeat_no_such_module" in ran["skipped_methods"]["minilm"]
    assert any(line.startswith("elmofeat benchmark: skipping all-MiniLM-L6-v2 + LR: needs "
                               "elmofeat_no_such_module") for line in lines)
    report = render_markdown(ran, summarize(ran), {})
    assert "Not run: all-MiniLM-L6-v2 + LR: needs elmofeat_no_such_module" in report


def test_the_same_seed_gives_the_same_table(results, data_home):
    # Run again on CR alone (every method, the same seed): the same table, so a task's
    # rows depend on neither the run nor the tasks before it (and the check costs one
    # task's run rather than two).
    again = run_benchmark(BenchmarkSettings(**{**TINY, "datasets": ("cr",)}),
                          data_home=data_home, progress=False, log=lambda line: None)
    assert list(again["datasets"]) == ["cr"]
    first_splits, second_splits = results["datasets"]["cr"]["splits"], again["datasets"]["cr"]["splits"]
    assert len(first_splits) == len(second_splits) == 2
    for first, second in zip(first_splits, second_splits):
        assert list(first["methods"]) == list(second["methods"])
        for method, row in first["methods"].items():
            assert row["confusion_matrix"] == second["methods"][method]["confusion_matrix"], method


def test_report_files(results, tmp_path):
    paths = write_report(results, tmp_path)
    saved = json.loads(paths["results.json"].read_text())
    assert saved["settings"]["folds"] == 2 and "torch" in saved["environment"]
    assert saved["summary"]["ag_news"]["svd"]["accuracy"]["std"] >= 0
    report = paths["report.md"].read_text()
    for needle in ("## The suite", "### Targets", "## AG News", "## CR", "ELMo, MLP mix",
                   "ELMo + GloVe, frozen mix", "TF-IDF + ELMo (make_hybrid)",
                   "Ordering of the methods", "Ordering of the mixes", "Against the reference",
                   "Per-class precision", "Learned layer weights", "biLM pretraining (defaults)",
                   "weight searched, C=10) row's search, split by split: elmo weight "):
        assert needle in report
    for name in ("suite_accuracy.png", "ag_news_confusion.png", "ag_news_layer_weights.png",
                 "cr_perplexity.png"):
        assert f"]({name})" in report
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_failed_report_keeps_the_previous_one(results, tmp_path, monkeypatch):
    write_report(results, tmp_path, figures=False)
    before = (tmp_path / "report.md").read_text()
    import elmofeat.suite.report as report

    def broken(*args):
        raise RuntimeError("disk full")

    monkeypatch.setattr(report, "render_markdown", broken)
    with pytest.raises(RuntimeError):
        write_report({**results, "wall_seconds": 1.0}, tmp_path, figures=False)
    assert (tmp_path / "report.md").read_text() == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_reference_comparison_names_bands_and_mix_order(results):
    summary = summarize(results)
    for method, accuracy in (("svd", 0.845), ("skipgram", 0.80), ("elmo-mlp", 0.89),
                             ("elmo-trainable", 0.885), ("elmo-frozen", 0.88)):
        summary["ag_news"][method]["accuracy"]["mean"] = accuracy
    text = render_markdown(results, summary, {})
    assert "SVDVectorizer: 84.50%, inside the reference's 83.0%–86.0%" in text
    assert "SkipGramVectorizer: 80.00%, below the reference's 85.0%–89.0%" in text
    assert ("Order of the mixes (ELMo): mlp > trainable > frozen, the same as the reference's"
            in text)
    assert "ELMo, MLP mix: 89.00%, inside the reference's 87.0%–90.5%" in text


def test_a_reference_range_selects_a_row_or_a_mix_group():
    from elmofeat.suite import TASKS

    reference = TASKS["ag_news"].reference
    methods = METHODS.names()
    assert reference.rows("svd", methods) == ["svd"]
    # A mix group: its rows only (not the ablations, the general model's or the hybrid's).
    assert reference.rows("elmo", methods) == ["elmo-trainable", "elmo-frozen", "elmo-concat",
                                               "elmo-mlp"]
    assert reference.rows("elmo-glove", ["svd", "elmo-glove-mlp", "general-mlp"]) == [
        "elmo-glove-mlp"]
    assert reference.rows("nothing", methods) == []


def test_settings_are_checked():
    with pytest.raises(ValueError, match="unknown method 'bert'"):
        BenchmarkSettings(methods=("bert",))
    with pytest.raises(ValueError, match="datasets must be among"):
        BenchmarkSettings(datasets=("imdb",))
    with pytest.raises(ValueError, match="folds must be"):
        BenchmarkSettings(folds=1)
    assert BenchmarkSettings(methods=("elmo", "svd")).methods == (
        "svd", "elmo-trainable", "elmo-frozen", "elmo-concat", "elmo-mlp")
    assert BenchmarkSettings(methods=("elmo-glove", "tfidf")).bilms() == ("glove",)
    assert BenchmarkSettings(methods=("anchors",)).bilms() == ()
    full = BenchmarkSettings()
    assert full.bilm_params() == {} and full.mix_params() == {}  # the suite uses defaults
    assert [full.n_folds(d) for d in full.datasets] == [3, None, 5, 5, None]


def test_benchmark_command_without_a_bilm(data_home, tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["benchmark", "--quick", "--methods", "tfidf", "svd", "--datasets", "ag_news",
                 "--data-home", str(data_home), "--output", str(out), "--no-progress"]) == 0
    saved = json.loads((out / "results.json").read_text())
    assert saved["settings"]["quick"] and saved["settings"]["methods"] == ["tfidf", "svd"]
    assert saved["command"].startswith("elmofeat benchmark --quick")
    assert "report written to" in capsys.readouterr().out
    assert "Quick smoke run" in (out / "report.md").read_text()
    assert (out / "ag_news_confusion.png").is_file() and not (out / "ag_news_perplexity.png").exists()


def test_targets_are_checked_against_the_better_tfidf_row():
    from elmofeat.suite.targets import evaluate_targets

    def stat(value):
        return {"accuracy": {"mean": value, "std": 0.0}}

    summary = {"ag_news": {"tfidf": stat(0.80), "tfidf-c10": stat(0.85), "svd": stat(0.82),
                           "skipgram": stat(0.78), "elmo-trainable": stat(0.87),
                           "elmo-frozen": stat(0.81), "hybrid": stat(0.855),
                           "hybrid-search": stat(0.861)}}
    checks = {(c.target, c.detail.split()[0]): c for c in evaluate_targets(summary, {"ag_news": "AG"})}
    hybrids = {c.detail.split(")")[0]: c for c in evaluate_targets(summary, {"ag_news": "AG"})
               if c.target == "hybrid 1 point above TF-IDF"}
    assert not checks[("SkipGramVectorizer within 3 points of SVDVectorizer", "skip-gram")].met
    best = checks[("best ELMo mix (defaults) 1 point above TF-IDF", "ELMo,")]
    assert best.met and "vs TF-IDF 0.8500" in best.detail  # C=10 row, not the weaker one
    assert not hybrids["TF-IDF + ELMo (make_hybrid"].met  # +0.005
    assert hybrids["TF-IDF + ELMo (make_hybrid, weight searched, C=10"].met  # +0.011
    frozen = [c for c in evaluate_targets(summary, {"ag_news": "AG"})
              if c.target.startswith("every ELMo mix") and "frozen" in c.detail]
    assert len(frozen) == 1 and not frozen[0].met and "-0.0100" in frozen[0].detail


def test_the_fine_tuned_rows_targets_apply_to_the_tasks_issue_70_set_them_for():
    from elmofeat.suite.targets import evaluate_targets

    def stat(value):
        return {"accuracy": {"mean": value, "std": 0.0}}

    row = {"tfidf": stat(0.80), "minilm": stat(0.84), f"general-{DEFAULT_LAYER_MIX}": stat(0.83),
           "general-finetuned": stat(0.82)}
    tasks = ("ag_news", "r8", "cr", "20ng")
    checks = evaluate_targets({t: row for t in tasks}, {t: t for t in tasks})
    fine_tuned = {(c.task, c.target.split(") ", 1)[1]): c.met for c in checks
                  if c.target.startswith("fine-tuned")}
    assert fine_tuned == {
        ("ag_news", "at or above all-MiniLM-L6-v2"): False,
        ("ag_news", "1 point above TF-IDF"): True,
        ("cr", "at or above all-MiniLM-L6-v2"): False,
        ("cr", "1 point above TF-IDF"): True,
        ("r8", "at or above TF-IDF"): True,
        ("20ng", "at or above the default ElmoVectorizer"): False}


def test_the_stacked_hybrid_is_held_to_the_better_of_its_own_blocks():
    from elmofeat.suite.targets import evaluate_targets

    def stat(value):
        return {"accuracy": {"mean": value, "std": 0.0}}

    default = f"general-{DEFAULT_LAYER_MIX}"
    summary = {
        # TF-IDF the better block: the stack above the default but below TF-IDF misses
        "20ng": {"tfidf": stat(0.69), default: stat(0.56), "minilm": stat(0.70),
                 "general-stacked": stat(0.68)},
        # the default the better block: above it, and a point above TF-IDF
        "mpqa": {"tfidf": stat(0.858), default: stat(0.875), "minilm": stat(0.875),
                 "general-stacked": stat(0.880)},
        # a run without the default row has no "better block" to compare with
        "cr": {"tfidf": stat(0.79), "minilm": stat(0.82), "general-stacked": stat(0.80)}}
    checks = {(c.task, c.target): c for c in evaluate_targets(summary, {t: t for t in summary})
              if c.target.startswith("stacked")}
    better = "stacked hybrid at or above the better of its blocks"
    assert not checks[("20ng", better)].met
    assert "vs the better block 0.6900" in checks[("20ng", better)].detail
    assert checks[("mpqa", better)].met and "vs the better block 0.8750" in checks[
        ("mpqa", better)].detail
    assert checks[("mpqa", "stacked hybrid 1 point above TF-IDF")].met
    assert checks[("mpqa", "stacked hybrid at or above all-MiniLM-L6-v2")].met
    assert ("cr", better) not in checks and ("cr", "stacked hybrid 1 point above TF-IDF") in checks


def test_a_stopped_run_resumes_from_its_finished_splits(data_home, tmp_path, monkeypatch):
    import elmofeat.suite.run as run

    settings = BenchmarkSettings(datasets=("ag_news",), methods=("tfidf", "svd"), folds=2,
                                  sizes={"ag_news_documents": 300})
    quiet = dict(data_home=data_home, progress=False, log=lambda line: None)
    first = run_benchmark(settings, splits_dir=tmp_path, **quiet)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ag_news-1.json", "ag_news-2.json"]
    # The second split's file is lost (as if the run had been killed during it).
    (tmp_path / "ag_news-2.json").unlink()
    calls = []
    evaluate = run._evaluate
    monkeypatch.setattr(run, "_evaluate", lambda key, *a: calls.append(key) or evaluate(key, *a))
    again = run_benchmark(settings, splits_dir=tmp_path, resume=True, **quiet)
    assert calls == ["tfidf", "svd"]  # only the missing split ran
    for old, new in zip(first["datasets"]["ag_news"]["splits"], again["datasets"]["ag_news"]["splits"]):
        assert old["name"] == new["name"]
        for method, row in old["methods"].items():
            assert row["confusion_matrix"] == new["methods"][method]["confusion_matrix"]
    # The kept split is the first run's, timings included.
    assert (again["datasets"]["ag_news"]["splits"][0]["methods"]["svd"]["seconds"]
            == first["datasets"]["ag_news"]["splits"][0]["methods"]["svd"]["seconds"])
    # Its report says that its wall time covers one split, and gives the time measured
    # split by split.
    assert "kept_splits" not in first and again["kept_splits"] == 1
    text = render_markdown(again, summarize(again), {})
    assert "1 of its splits were kept from an earlier run" in text
    measured = sum(row["seconds"] for split in again["datasets"]["ag_news"]["splits"]
                   for row in split["methods"].values())
    assert f"took {measured / 60:.1f} min in all, as measured split by split." in text
    assert "kept from an earlier run" not in render_markdown(first, summarize(first), {})
    # Other settings never reuse a split; without resume nothing is reused either.
    calls.clear()
    run_benchmark(BenchmarkSettings.from_dict({**settings.to_dict(), "seed": 1}), splits_dir=tmp_path,
                   resume=True, **quiet)
    assert calls == ["tfidf", "svd"] * 2
    calls.clear()
    run_benchmark(settings, splits_dir=tmp_path, **quiet)
    assert calls == ["tfidf", "svd"] * 2
    # Split files of another machine (CPU, bf16 training) are not joined to this one's.
    calls.clear()
    monkeypatch.setattr(run, "numerics_fingerprint",
                        lambda: {"cpu": "another CPU", "bf16_training": True, "device": "cpu"})
    with pytest.warns(UserWarning, match="measured on another machine"):
        run_benchmark(settings, splits_dir=tmp_path, resume=True, **quiet)
    assert calls == ["tfidf", "svd"] * 2


@pytest.mark.parametrize("content", ["[1, 2]", '{"entry": 3}', '{"settings": {}, "entry": {}}',
                                     '{"settings": {}, "entry": {"name": "x", "methods": [],'
                                     ' "train_size": 1, "test_size": 1}}', "null"])
def test_resume_with_a_split_file_of_another_shape_runs_the_split_again(data_home, tmp_path,
                                                                        content):
    """Valid JSON of the wrong shape in a split file gave a traceback on --resume."""
    settings = BenchmarkSettings(datasets=("ag_news",), methods=("tfidf",), folds=2,
                                  sizes={"ag_news_documents": 200})
    quiet = dict(data_home=data_home, progress=False, log=lambda line: None)
    (tmp_path / "ag_news-1.json").write_text(content)
    with pytest.warns(UserWarning, match="ag_news-1.json is not a split file of this suite"):
        results = run_benchmark(settings, splits_dir=tmp_path, resume=True, **quiet)
    assert len(results["datasets"]["ag_news"]["splits"]) == 2
    assert json.loads((tmp_path / "ag_news-1.json").read_text())["entry"]["methods"]


def test_rows_of_another_run_join_an_existing_report(data_home, tmp_path, capsys):
    out = tmp_path / "report"
    common = ["--quick", "--datasets", "ag_news", "--data-home", str(data_home),
              "--no-progress", "--no-figures"]
    assert main(["benchmark", *common, "--methods", "tfidf", "--output", str(out)]) == 0
    first = json.loads((out / "results.json").read_text())
    assert main(["benchmark", *common, "--methods", "svd", "--add-to", str(out)]) == 0
    joined = json.loads((out / "results.json").read_text())
    assert joined["settings"]["methods"] == ["tfidf", "svd"]
    for before, after in zip(first["datasets"]["ag_news"]["splits"],
                             joined["datasets"]["ag_news"]["splits"]):
        assert after["methods"]["tfidf"] == before["methods"]["tfidf"]  # kept as it was
        assert 0.25 < after["methods"]["svd"]["accuracy"] <= 1
    assert len(joined["added_runs"]) == 1 and joined["added_runs"][0]["methods"] == ["svd"]
    assert joined["wall_seconds"] > first["wall_seconds"]
    report = (out / "report.md").read_text()
    assert "Joined from a run of other methods" in report and "SVDVectorizer" in report
    # Runs on other splits or settings are refused, and the report is left as it was.
    capsys.readouterr()
    assert main(["benchmark", *common, "--methods", "skipgram", "--folds", "3",
                 "--add-to", str(out)]) == 1
    assert "other settings (folds differ)" in capsys.readouterr().err
    assert json.loads((out / "results.json").read_text()) == joined


def test_a_joined_run_keeps_its_labels_and_says_which_rows_a_later_run_replaced():
    from dataclasses import replace as changed

    from elmofeat.suite.report import _joined_methods
    from elmofeat.suite.run import merge_results

    def run(methods, started):
        split = {"name": "s", "train_size": 4, "test_size": 2, "seed": 0,
                 "methods": {m: {"accuracy": 0.5} for m in methods}}
        return {"settings": {"methods": methods, "seed": 0}, "command": f"run {started}",
                "started": started, "wall_seconds": 60.0, "estimated_seconds": 60.0,
                "environment": {"elmofeat": "x"}, "datasets": {"cr": {"splits": [split]}}}

    base = run(["tfidf"], "t0")
    first = merge_results(base, run(["svd", "skipgram"], "t1"))
    assert first["added_runs"][0]["labels"]["svd"] == METHODS["svd"].label
    # The SVD row changes its label after the first join, then is run again.
    original = METHODS["svd"]
    METHODS.register(changed(original, label="SVD, renamed"), replace=True)
    try:
        second = merge_results(first, run(["svd"], "t2"))
    finally:
        METHODS.register(original, replace=True)
    earlier, later = second["added_runs"]
    text = _joined_methods(earlier, [later])
    assert text.startswith(METHODS["skipgram"].label)
    assert f"its rows of {first['added_runs'][0]['labels']['svd']} were replaced" in text
    assert _joined_methods(later, []) == "SVD, renamed"
    # Runs joined before labels were stored: replaced rows go by their method name.
    del earlier["labels"]
    assert "its rows of `svd` were replaced" in _joined_methods(earlier, [later])
    # A run whose classifier chose C is not joined to one that fixed it.
    searched = {**run(["svd"], "t3"), "classifier": "LogisticRegressionCV(...)"}
    with pytest.raises(ValueError, match="classifiers differ"):
        merge_results(base, searched)


def _synthetic(accuracies: dict, seconds: float = 60.0) -> dict:
    """Results of one task whose splits score ``accuracies[method][i]``."""
    n = len(next(iter(accuracies.values())))
    splits = [{"methods": {m: {"accuracy": a[i], "seconds": seconds} for m, a in accuracies.items()},
               "bilms": {"general": {"seconds": 1.0}, "glove": {"seconds": 500.0}}}
              for i in range(n)]
    return {"settings": {"methods": tuple(accuracies)},
            "datasets": {"cr": {"title": "CR", "splits": splits}}}


def test_paired_differences_use_the_better_tfidf_row_split_by_split():
    from elmofeat.suite.paired import paired_differences
    from elmofeat.suite.report import paired_section

    results = _synthetic({"tfidf": [0.70, 0.80, 0.90], "tfidf-c10": [0.71, 0.81, 0.88],
                          "general-hybrid": [0.72, 0.80, 0.95]})
    gap = paired_differences(results)["cr"]["general-hybrid"]
    assert gap["against"] == "tfidf"  # mean 0.80 against 0.80 - 0.0033
    assert gap["mean"] == pytest.approx(np.mean([0.02, 0.0, 0.05]))
    assert gap["std"] == pytest.approx(np.std([0.02, 0.0, 0.05]))
    assert (gap["above"], gap["splits"]) == (2, 3)  # a tie is not above
    assert "tfidf" not in paired_differences(results)["cr"]
    table = "\n".join(paired_section(results))
    assert "+2.33 ± 2.05 (2/3)" in table
    assert "minus that of the better TF-IDF row" in table


def test_a_run_with_one_tfidf_row_calls_it_the_tfidf_row():
    from elmofeat.suite.paired import tfidf_reference
    from elmofeat.suite.report import paired_section

    results = _synthetic({"tfidf": [0.70, 0.80], "general-hybrid": [0.72, 0.80]})
    assert tfidf_reference(results) == "the TF-IDF row"
    assert "minus that of the TF-IDF row on the same split" in "\n".join(paired_section(results))


def test_a_default_run_counts_only_the_default_rows_and_their_biLMs():
    from elmofeat.suite.report import default_run_seconds

    results = _synthetic({"tfidf": [0.7, 0.8], f"general-{DEFAULT_LAYER_MIX}": [0.7, 0.8],
                          "general-frozen": [0.7, 0.8], "elmo-glove-frozen": [0.7, 0.8]})
    # tfidf and the general model's default mix (60 s each) and the general biLM (1 s)
    # on both splits; its other mixes, the GloVe-started rows and their biLM are not in a
    # default run
    assert default_run_seconds(results) == pytest.approx(2 * (60 + 60 + 1))


def test_a_default_run_counts_the_reproduction_and_its_biLM_on_ag_news_only():
    from elmofeat.suite.report import default_run_seconds

    split = {"methods": {"tfidf": {"accuracy": 0.8, "seconds": 1.0},
                         "svd": {"accuracy": 0.8, "seconds": 10.0}},
             "bilms": {"default": {"seconds": 100.0}, "general": {"seconds": 1.0}}}
    results = {"settings": {}, "datasets": {key: {"title": key, "splits": [split]}
                                            for key in ("ag_news", "cr")}}
    # AG News: every step; CR: TF-IDF and the general model only (a --methods run put
    # SVD and its biLM there)
    assert default_run_seconds(results) == pytest.approx((1 + 10 + 100 + 1) + (1 + 1))


def test_the_report_comparison_ignores_timings_and_finds_a_changed_result(tmp_path):
    """benchmarks/compare_reports.py: how a refactoring shows the suite unchanged."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "compare_reports.py"
    spec = importlib.util.spec_from_file_location("compare_reports", path)
    compare = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare)
    run = {"started": "a", "wall_seconds": 1.0, "datasets": {"cr": {"splits": [
        {"methods": {"tfidf": {"seconds": 0.5, "accuracy": 0.8}},
         "bilms": {"default": {"history": [{"tokens_per_second": 9.0, "epoch": 1}]}}}]}}}
    other = json.loads(json.dumps(run))
    other.update(started="b", wall_seconds=7.0)
    other["datasets"]["cr"]["splits"][0]["methods"]["tfidf"]["seconds"] = 3.0
    other["datasets"]["cr"]["splits"][0]["bilms"]["default"]["history"][0]["tokens_per_second"] = 1.0
    assert compare.differences(run, other) == []
    other["datasets"]["cr"]["splits"][0]["methods"]["tfidf"]["accuracy"] = 0.81
    assert compare.differences(run, other) == [".datasets.cr.splits[0].methods.tfidf.accuracy: 0.8 != 0.81"]
    for name, value in (("a.json", run), ("b.json", other)):
        (tmp_path / name).write_text(json.dumps(value))
    assert compare.main([str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 1
    with pytest.raises(SystemExit) as usage:  # one path: a usage error, not a traceback
        compare.main([str(tmp_path / "a.json")])
    assert usage.value.code == 2


def test_the_time_estimate_matches_the_published_run(data_home):
    # The estimate the suite announces (and its progress bar's weights) against the
    # seconds the run in docs/report measured: every step's total within a factor of 2,
    # the whole within 15% (benchmarks/suite_costs.py shows the table).
    from elmofeat.suite.run import estimate_against_measured

    report = Path(__file__).resolve().parents[1] / "docs" / "report" / "results.json"
    results = json.loads(report.read_text())
    rows = estimate_against_measured(results, BenchmarkSettings.from_dict(results["settings"]),
                                     data_home)
    assert {r["step"] for r in rows} >= {"tfidf", "bilm-default", f"elmo-{DEFAULT_LAYER_MIX}"}
    for row in rows:
        if row["measured_seconds"] > 60:  # below a minute, the constant terms decide
            assert 0.5 < row["measured_seconds"] / row["estimated_seconds"] < 2, row
    estimated = sum(r["estimated_seconds"] for r in rows)
    measured = sum(r["measured_seconds"] for r in rows)
    assert abs(estimated / measured - 1) < 0.15


def test_dense_features_are_centred_before_the_classifier_and_the_model_is_the_same():
    # Centring is absorbed by the unpenalised intercept: the same predictions, reached
    # in fewer iterations when the features share a large offset (as a from-scratch
    # biLM's do); sparse features pass through untouched.
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from elmofeat.suite.centring import CentreDense
    from elmofeat.suite.methods import Context, make_model

    model = make_model(METHODS["svd"], Context(seed=0, settings=BenchmarkSettings()))
    assert isinstance(model[-2], CentreDense)
    rng = np.random.RandomState(0)
    X = (rng.randn(400, 30) * np.logspace(-2, 0, 30) + 20).astype(np.float32)
    y = (X[:, -5:].sum(axis=1) > 100).astype(int)
    exact = {"C": 10, "solver": "newton-cholesky", "tol": 1e-10}  # the optimum itself
    plain = LogisticRegression(**exact).fit(X.astype(np.float64), y)
    centred = make_pipeline(CentreDense(), LogisticRegression(**exact)).fit(X.astype(np.float64), y)
    np.testing.assert_allclose(centred[0].mean_, X.mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(centred.predict_proba(X.astype(np.float64)),
                               plain.predict_proba(X.astype(np.float64)), atol=1e-6)
    np.testing.assert_allclose(centred[-1].coef_, plain.coef_, rtol=1e-3, atol=1e-4)
    quick = [LogisticRegression(C=10, max_iter=5000).fit(f, y).n_iter_[0]
             for f in (X, X - X.mean(axis=0))]
    assert quick[1] < quick[0] / 2

    sparse = sp.random(20, 8, density=0.3, format="csr", random_state=0)
    passthrough = CentreDense().fit(sparse)
    assert passthrough.mean_ is None and passthrough.transform(sparse) is not None
    assert (passthrough.transform(sparse) != sparse).nnz == 0
    with pytest.raises(ValueError, match="fitted on sparse features and given dense"):
        passthrough.transform(sparse.toarray())
    assert list(CentreDense().fit(X[:, :2]).get_feature_names_out()) == ["x0", "x1"]


def test_centre_dense_passes_scikit_learns_estimator_checks():
    from sklearn.utils.estimator_checks import check_estimator

    from elmofeat.suite.centring import CentreDense

    failed = [r["check_name"] for r in check_estimator(CentreDense(), on_fail=None)
              if r["status"] == "failed"]
    assert failed == []


def test_any_machine_joins_the_splits_of_another_cpu_of_the_same_precision(
        data_home, tmp_path, monkeypatch):
    # A run longer than a machine's lease resumes on the next machine: with any_machine
    # it keeps the splits of a CPU that trains in the same precision, never another
    # precision's, and its report names which machine ran which split.
    import elmofeat.suite.run as run

    settings = BenchmarkSettings(datasets=("ag_news",), methods=("tfidf",), folds=2,
                                 sizes={"ag_news_documents": 300})
    quiet = dict(data_home=data_home, progress=False, log=lambda line: None)
    real = run.numerics_fingerprint()
    run_benchmark(settings, splits_dir=tmp_path, **quiet)
    (tmp_path / "ag_news-2.json").unlink()
    # the machine is stored once, in the entry; an older file's copy beside it is read
    first = tmp_path / "ag_news-1.json"
    saved = json.loads(first.read_text())
    assert "machine" not in saved and saved["entry"]["machine"] == real
    saved["machine"] = saved["entry"].pop("machine")
    first.write_text(json.dumps(saved))
    calls = []
    evaluate = run._evaluate
    monkeypatch.setattr(run, "_evaluate", lambda key, *a: calls.append(key) or evaluate(key, *a))
    monkeypatch.setattr(run, "numerics_fingerprint", lambda: {**real, "cpu": "another CPU"})
    joined = run_benchmark(settings, splits_dir=tmp_path, resume=True, any_machine=True, **quiet)
    assert calls == ["tfidf"]  # the first machine's split is kept
    assert [s["machine"]["cpu"] for s in joined["datasets"]["ag_news"]["splits"]] == [
        real["cpu"], "another CPU"]
    text = render_markdown(joined, summarize(joined), {})
    assert "Its splits ran on 2 machines of one precision" in text
    assert f"{real['cpu']}: AG News 1/2; another CPU: AG News 1/2." in text
    # without any_machine, or on a machine of the other precision, nothing is kept
    calls.clear()
    with pytest.warns(UserWarning, match="measured on another machine"):
        run_benchmark(settings, splits_dir=tmp_path, resume=True, **quiet)
    assert calls == ["tfidf"]  # the other CPU's split, written by the run above, is kept
    monkeypatch.setattr(run, "numerics_fingerprint", lambda: {
        **real, "cpu": "a third CPU", "bf16_training": not real["bf16_training"]})
    calls.clear()
    with pytest.warns(UserWarning, match="measured on another machine"):
        run_benchmark(settings, splits_dir=tmp_path, resume=True, any_machine=True, **quiet)
    assert calls == ["tfidf", "tfidf"]
    alone = run_benchmark(settings, **quiet)
    assert "machines of one precision" not in render_markdown(alone, summarize(alone), {})


def test_any_machine_needs_resume_and_add_to_ignores_the_rows_tasks(tmp_path, capsys):
    from elmofeat.cli import main
    from elmofeat.cli.benchmark import check_joinable

    assert main(["benchmark", "--quick", "--any-machine", "--output", str(tmp_path)]) == 1
    assert "--any-machine says which finished splits --resume keeps" in capsys.readouterr().err
    report = BenchmarkSettings(datasets=("ag_news", "cr"), methods=("tfidf", "svd"),
                               only_on={"svd": ("ag_news",)})
    check_joinable(report.to_dict(), BenchmarkSettings(datasets=("ag_news", "cr"),
                                                       methods=("glove",)))  # does not raise
    with pytest.raises(ValueError, match="seed"):
        check_joinable(report.to_dict(), BenchmarkSettings(datasets=("ag_news", "cr"),
                                                           methods=("glove",), seed=1))


def test_the_smoke_run_runs_one_fold_of_each_cross_validated_task(data_home):
    """--quick used to run every fold of its slices and took 5.4 min on 2 cores with the
    fine-tuned and MiniLM rows: it runs the first of 2 folds, and says so."""
    from elmofeat.suite.data import load_dataset

    quick = BenchmarkSettings.quick_run(datasets=("cr", "r8"))
    assert quick.max_splits == 1 and quick.to_dict()["max_splits"] == 1
    cr = load_dataset("cr", quick, data_home)
    assert [s.name for s in cr.splits] == ["fold 1/2"]
    assert "2-fold cross-validation (seed 0), its first 1 fold run" in cr.protocol
    assert len(load_dataset("r8", quick, data_home).splits) == 1
    full = load_dataset("cr", BenchmarkSettings(datasets=("cr",), folds=2,
                                                sizes={"cr_documents": 240}), data_home)
    assert [s.name for s in full.splits] == ["fold 1/2", "fold 2/2"]
    assert full.splits[0].X_test == cr.splits[0].X_test  # the same first fold
    assert "max_splits" not in BenchmarkSettings().to_dict()
    with pytest.raises(ValueError, match="max_splits must be an integer >= 1"):
        BenchmarkSettings(max_splits=0)


def test_fine_tuning_epochs_and_search_folds_are_settings_of_a_small_run():
    """The tests' small run fine-tunes for one epoch and searches on 2 inner folds; the
    full suite leaves both to the defaults, and its results record neither."""
    from elmofeat.suite.methods import Context, make_model

    small = BenchmarkSettings(datasets=("cr",), finetune_epochs=1, search_cv=2)
    context = Context(seed=0, settings=small, bilms={"general": "en-base", "default": "en-base"})
    assert make_model(METHODS["general-finetuned"], context).epochs == 1
    assert make_model(METHODS["hybrid-search"], context).cv.get_n_splits() == 2
    assert small.to_dict()["finetune_epochs"] == 1 and small.to_dict()["search_cv"] == 2
    assert BenchmarkSettings.from_dict(small.to_dict()) == small
    full = Context(seed=0, settings=BenchmarkSettings(datasets=("cr",)), bilms={"general": "en-base", "default": "en-base"})
    assert make_model(METHODS["general-finetuned"], full).epochs == 3
    assert make_model(METHODS["hybrid-search"], full).cv.get_n_splits() == 3
    assert not {"finetune_epochs", "search_cv"} & set(BenchmarkSettings().to_dict())
    with pytest.raises(ValueError, match="search_cv must be >= 2"):
        BenchmarkSettings(search_cv=1)
    with pytest.raises(ValueError, match="finetune_epochs must be >= 1"):
        BenchmarkSettings(finetune_epochs=0)
