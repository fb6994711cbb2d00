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
    assert [s["name"] for s in splits] == ["fold 1/2", "fold 2/2"]
    assert sum(s["test_size"] for s in splits) == 160
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
    assert "toy-counts" not in BenchmarkSettings().methods  # not a default row
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
