"""The suite's tasks, methods and biLMs come from registries: a toy task, a toy method and
a toy biLM, each declared in one place, run through `elmofeat benchmark --quick` like the
built-in ones (command-line choices, splits, report, targets)."""

import json

import pytest

from elmofeat.cli import main
from elmofeat.suite import METHODS, TASKS, BenchmarkSettings, register_method, register_task
from elmofeat.suite.bilms import BILM_SOURCES

from . import toy_suite


@pytest.fixture
def toys():
    register_task(toy_suite.TASK)
    register_method(toy_suite.METHOD)
    yield
    TASKS.unregister("toy-topics")
    METHODS.unregister("toy-counts")


def test_a_toy_task_and_method_run_through_the_quick_command(toys, tmp_path, capsys):
    out = tmp_path / "report"
    main(["benchmark", "--quick", "--datasets", "toy-topics", "--methods", "toy-counts", "tfidf",
          "elmo-frozen", "--output", str(out), "--no-progress", "--no-figures"])
    results = json.loads((out / "results.json").read_text())
    assert results["settings"]["datasets"] == ["toy-topics"]
    assert results["settings"]["methods"] == ["tfidf", "elmo-frozen", "toy-counts"]
    assert results["settings"]["toy-topics_documents"] == 160  # the task's quick slice
    splits = results["datasets"]["toy-topics"]["splits"]
    assert [s["name"] for s in splits] == ["fold 1/2"]  # the smoke run's first fold
    assert sum(s["test_size"] for s in splits) == 80
    assert all(s["methods"]["toy-counts"]["accuracy"] > 0.5 for s in splits)  # easy topics
    report = (out / "report.md").read_text()
    assert "| Binary counts + LR |" in report
    assert "**Toy topics** (synthetic topics, 4 classes, ~10 words): 160 documents of 240 " \
           "synthetic topic documents" in report
    # A topic task gets the suite's topic targets (against the better TF-IDF row).
    assert "default ElmoVectorizer" not in report
    assert "- **every ELMo mix (defaults) above SVDVectorizer**" not in report  # no SVD row


@pytest.fixture
def toy_bilm():
    BILM_SOURCES.register(toy_suite.BILM)
    register_method(toy_suite.BILM_METHOD)
    yield
    METHODS.unregister("toy-tiny-elmo")
    BILM_SOURCES.unregister("toy-tiny")


def test_a_toy_biLM_is_made_once_per_split_and_reported(toys, toy_bilm, tmp_path):
    out = tmp_path / "report"
    main(["benchmark", "--quick", "--datasets", "toy-topics", "--methods", "tfidf",
          "toy-tiny-elmo", "--output", str(out), "--no-progress"])
    results = json.loads((out / "results.json").read_text())
    assert BenchmarkSettings(methods=("toy-tiny-elmo",)).bilms() == ("toy-tiny",)
    for split in results["datasets"]["toy-topics"]["splits"]:
        assert list(split["bilms"]) == ["toy-tiny"]
        assert split["bilms"]["toy-tiny"]["epochs"] == 2
        assert 0 <= split["methods"]["toy-tiny-elmo"]["accuracy"] <= 1
    report = (out / "report.md").read_text()
    assert "| tiny biLM pretraining |" in report
    assert "biLM (tiny) pretraining:" in report
    assert (out / "toy-topics_perplexity.png").stat().st_size > 0


def test_a_method_must_read_a_registered_biLM():
    from elmofeat.suite.methods import MethodSpec

    with pytest.raises(ValueError, match="reads the biLM 'nowhere', which is not registered"):
        register_method(MethodSpec("lost", "lost", "elmo", lambda context: None, bilm="nowhere"))
    assert "lost" not in METHODS
    assert list(BILM_SOURCES) == ["default", "glove", "general", "adapted"]


def test_the_command_line_offers_what_is_registered(toys, capsys):
    with pytest.raises(SystemExit):
        main(["benchmark", "--help"])
    help_text = capsys.readouterr().out
    assert "toy-topics" in help_text and "toy-counts" in help_text and "toys" in help_text
    assert BenchmarkSettings(methods=("toys",)).methods == ("toy-counts",)
    assert "toy-counts" not in BenchmarkSettings().run_methods  # not a default row
    assert "toy-topics" in BenchmarkSettings().datasets  # every registered task by default


def test_unregistered_names_are_refused(capsys):
    with pytest.raises(ValueError, match="datasets must be among"):
        BenchmarkSettings(datasets=("toy-topics",))
    with pytest.raises(ValueError, match="unknown method 'toy-counts'"):
        BenchmarkSettings(methods=("toy-counts",))
    with pytest.raises(SystemExit):
        main(["benchmark", "--datasets", "toy-topics"])
    assert "invalid choice" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown size settings"):
        BenchmarkSettings(sizes={"toy-topics_documents": 10})


def test_the_elmo_rows_follow_the_mix_registry():
    from elmofeat import mixes
    from elmofeat.suite.methods import elmo_rows

    from . import toy_mix

    keys = [key for key, spec in METHODS.items() if spec.mix_group == "elmo"]
    assert keys == [f"elmo-{mix}" for mix in mixes.mix_names()]
    assert [k for k in METHODS if k.startswith("general-") and METHODS[k].mix] == [
        *(f"general-{mix}" for mix in mixes.mix_names()), "general-adapted"]
    mixes.register(toy_mix.SPEC)  # a mix registered before the suite declares its rows
    try:
        rows = {spec.key: spec for spec in elmo_rows("elmo", "ELMo", "default", "elmo")}
    finally:
        mixes.unregister("top")
    assert list(rows) == ["elmo-trainable", "elmo-frozen", "elmo-concat", "elmo-mlp", "elmo-top"]
    assert rows["elmo-top"].label == "ELMo, top-layer mix" and rows["elmo-top"].mix_group == "elmo"


def test_twenty_newsgroups_is_a_task_with_a_sampled_standard_split(data_home):
    """The fifth task: the full suite takes the sample its protocol declares (the whole
    split would take the suite past its 2 hours), stratified and seeded, and says so."""
    from elmofeat.suite.data import load_dataset
    from elmofeat.suite.tasks import NEWSGROUPS_TEST, NEWSGROUPS_TRAIN

    assert TASKS["20ng"].kind == "topic"
    settings = BenchmarkSettings()
    assert settings.datasets[-1] == "20ng"  # in the default suite
    assert BenchmarkSettings(datasets=("cr",)).to_dict()["20ng_train_documents"] is None  # not run
    assert settings.size("20ng_train_documents") == NEWSGROUPS_TRAIN
    assert settings.to_dict()["20ng_test_documents"] == NEWSGROUPS_TEST
    assert settings.to_dict()["ag_news_documents"] is None  # all of them
    dataset = load_dataset("20ng", settings, data_home)
    (split,) = dataset.splits
    assert (len(split.X_train), len(split.X_test)) == (NEWSGROUPS_TRAIN, NEWSGROUPS_TEST)
    assert len(set(split.y_train)) == len(set(split.y_test)) == 20  # stratified
    assert not set(split.X_train) & set(split.X_test)
    assert f"{NEWSGROUPS_TRAIN:,} of its 11,314 training" in dataset.protocol
    assert "a stratified sample, seed 0" in dataset.protocol
    again = load_dataset("20ng", settings, data_home).splits[0]
    assert again.X_train == split.X_train  # seeded
    other = load_dataset("20ng", BenchmarkSettings(seed=1), data_home).splits[0]
    assert other.X_train != split.X_train


def test_explicit_sizes_override_a_tasks_own_and_round_trip(data_home):
    from elmofeat.suite.data import load_dataset

    settings = BenchmarkSettings(datasets=("20ng", "r8"),
                                 sizes={"20ng_train_documents": 100, "20ng_test_documents": 60})
    assert settings.size("20ng_train_documents") == 100
    assert settings.size("r8_train_documents") is None  # R8 runs whole
    assert BenchmarkSettings.from_dict(settings.to_dict()) == settings
    full = BenchmarkSettings(datasets=("20ng",))
    assert BenchmarkSettings.from_dict(full.to_dict()).to_dict() == full.to_dict()
    r8 = load_dataset("r8", settings, data_home)
    assert "standard split: 5,485 training and 2,189 test documents;" in r8.protocol
    (split,) = load_dataset("20ng", settings, data_home).splits
    assert (len(split.X_train), len(split.X_test)) == (100, 60)
    quick = BenchmarkSettings.quick_run()
    assert (quick.size("20ng_train_documents"), quick.size("20ng_test_documents")) == (60, 40)


def test_the_readme_command_may_write_the_committed_report():
    # `elmofeat benchmark --output docs/report` refuses to write over a report of other
    # settings: the default settings must be those the committed report was run with
    # (a task added to the registry joins the defaults with a new report).
    from pathlib import Path

    from elmofeat.cli.benchmark import refuse_other_report

    report = Path(__file__).resolve().parents[1] / "docs" / "report"
    refuse_other_report(report, BenchmarkSettings())  # does not raise
    with pytest.raises(FileExistsError, match="datasets"):
        refuse_other_report(report, BenchmarkSettings(datasets=("ag_news", "cr")))


@pytest.fixture
def two_toy_tasks(toys):
    from dataclasses import replace

    register_task(replace(toy_suite.TASK, key="toy-more", title="More toy topics"))
    register_method(replace(toy_suite.METHOD, key="toy-some", label="Counts on some tasks",
                            default=True, default_tasks=("toy-topics",)))
    yield
    METHODS.unregister("toy-some")
    TASKS.unregister("toy-more")


def test_a_default_run_gives_a_method_only_the_tasks_it_declares(two_toy_tasks):
    from dataclasses import replace

    both = ("toy-topics", "toy-more")
    default = BenchmarkSettings(datasets=both)
    assert default.only_on is None and default.restrictions == {"toy-some": ("toy-topics",)}
    assert "toy-some" in default.methods_for("toy-topics")
    assert "toy-some" not in default.methods_for("toy-more")
    assert BenchmarkSettings.from_dict(default.to_dict()) == default
    # named (as on the command line), it runs everywhere; on none of the run's tasks,
    # nowhere
    everywhere = BenchmarkSettings(datasets=both, methods=("tfidf", "toy-some"))
    assert everywhere.restrictions == {} and "toy-some" in everywhere.methods_for("toy-more")
    assert everywhere != replace(everywhere, only_on={"toy-some": ("toy-topics",)})
    alone = BenchmarkSettings(datasets=("toy-more",))
    assert "toy-some" not in alone.run_methods and alone.restrictions == {}
    assert BenchmarkSettings(datasets=("toy-topics",)).restrictions == {}  # all the run's tasks
    # replace derives the restrictions again: the fields keep what was asked
    assert replace(default, methods=("tfidf",)).run_methods == ("tfidf",)
    assert replace(alone, datasets=both) == default and replace(default, seed=0) == default
    with pytest.raises(ValueError, match="unknown tasks"):
        BenchmarkSettings(datasets=both, methods=("tfidf",), only_on={"tfidf": ("toy",)})
    with pytest.raises(ValueError, match="does not have"):
        BenchmarkSettings(datasets=both, methods=("tfidf",), only_on={"svd": ("toy-more",)})


def test_a_row_run_on_some_tasks_is_reported_on_those_only(two_toy_tasks, tmp_path):
    from elmofeat.suite import run_benchmark, write_report
    from elmofeat.suite.run import merge_results

    sizes = {"toy-topics_documents": 120, "toy-more_documents": 120}
    settings = BenchmarkSettings(datasets=("toy-topics", "toy-more"),
                                 methods=("tfidf", "toy-counts"), folds=2, sizes=sizes,
                                 only_on={"toy-counts": ("toy-more",)})
    results = run_benchmark(settings, progress=False, log=lambda line: None)
    for key, has in (("toy-topics", False), ("toy-more", True)):
        for split in results["datasets"][key]["splits"]:
            assert ("toy-counts" in split["methods"]) is has and "tfidf" in split["methods"]
    paths = write_report(results, tmp_path / "report")
    report = paths["report.md"].read_text()
    assert "Binary counts + LR: on More toy topics only" in report
    row = next(line for line in report.splitlines() if line.startswith("| Binary counts + LR |"))
    assert row.split(" | ")[1] == "—" and row.split(" | ")[2][0].isdigit()  # Toy topics first
    stored = json.loads(paths["results.json"].read_text())
    assert set(stored["summary"]["toy-topics"]) == {"tfidf"}
    assert stored["settings"]["only_on"] == {"toy-counts": ["toy-more"]}
    assert paths["suite"].stat().st_size > 0 and paths["toy-topics_confusion"].stat().st_size > 0
    # a row that only some splits of a task have is not that task's row, in every table
    partial = json.loads(json.dumps(results))
    del partial["datasets"]["toy-more"]["splits"][1]["methods"]["toy-counts"]
    assert "Binary counts + LR |" not in render_report(partial, tmp_path / "partial")
    # a joined run that gives the row every task: the report has it everywhere
    everywhere = run_benchmark(BenchmarkSettings(
        datasets=settings.datasets, methods=("toy-counts",), folds=2, sizes=sizes),
        progress=False, log=lambda line: None)
    merged = merge_results(results, everywhere)
    assert "only_on" not in merged["settings"]
    assert "— |" not in render_report(merged, tmp_path / "merged")


def render_report(results, folder):
    from elmofeat.suite import write_report

    return write_report(results, folder, figures=False)["report.md"].read_text()
